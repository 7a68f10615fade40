"""The `arena` command line: tournament, serve, match, check, replay, standings, ladder,
variants."""

from __future__ import annotations

import contextlib
import json
import secrets
import shlex
import shutil
import sys
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import Any, NoReturn

import click
import structlog
import trio
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from arena import check as checking
from arena import logging as arena_logging
from arena.cli_database import DATABASE
from arena.cli_database import exists as db_exists
from arena.errors import ArenaError, ConfigError
from arena.referee import MatchReport
from arena.replay import describe, load_replay, verify_replay
from arena.rules import find_variant, variant_names
from arena.rules.variants import VARIANTS, OptionSpec
from arena.safe_text import printable
from arena.terminal import LiveStandings, live_view, match_line
from arena.tournament import (
    BotSpec,
    Pairing,
    Store,
    TournamentConfig,
    TournamentRunner,
    formats,
    load_config,
    standings,
)
from arena.tournament.backend import DatabaseError, Target, driver_errors
from arena.tournament.backend import describe as describe_db
from arena.tournament.config import (
    ExecutorSpec,
    check_listen,
    parse_config,
    preflight,
    split_command,
)
from arena.tournament.launcher import own_folders, shared_folders
from arena.tournament.runner import bot_logs
from arena.tournament.standings import Line, crosstable, variant_order
from arena.tournament.storage import StorageError
from arena.tournament.store import MatchRow, bot_results

# soft_wrap: when the output is not a terminal (a pipe, a file, a test), rich would otherwise
# fold lines at 80 columns and cut paths in two (`replay: /long/pa\nth.jsonl`). emoji off:
# text from the user or a bot is shown as written (`remote:x:` is not `remote❌`).
out = Console(soft_wrap=True, emoji=False)
if not out.is_terminal:  # piped: wide enough for the standings tables
    out = Console(soft_wrap=True, width=160, emoji=False)
err = Console(stderr=True, soft_wrap=True, emoji=False)


def _warn_unsandboxed(runner: TournamentRunner) -> None:
    """Say LOUDLY that launched bots run without a sandbox (the config allowed it)."""
    if runner.unsandboxed:
        err.print(
            "[bold red]WARNING: launched bots run WITHOUT a sandbox[/] ([sandbox] mode = "
            f"{runner.config.sandbox.mode!r}): they can read the config, the database and "
            "each other's files, see every process, and use the network. Recorded in the "
            "tournament's row."
        )


def _warn_shared_folders(runner: TournamentRunner) -> None:
    """Say which launched bots can read another bot's files: a bot's own folder (bound into
    its sandbox) that is another's, or inside it, unless the config's `dir`s share it on
    purpose."""
    explicit = [bot.name for bot in runner.config.bots if bot.dir is not None]
    owners = own_folders((bot.name, bot.command, bot.cwd, bot.dir)
                         for bot in runner.config.bots if bot.launched)
    for a, b, folder in shared_folders(runner.bot_dirs, explicit, owners):
        same = runner.bot_dirs[a].resolve() == runner.bot_dirs[b].resolve()
        where = (f"bots {a} and {b} share the folder {folder}, so each can read the other's "
                 "files" if same else
                 f"bot {a}'s folder {folder} is inside bot {b}'s, so {a} can read {b}'s "
                 "files there")
        err.print(printable(
            f"warning: {where} (a bot's own folder is its program's, found from its "
            f"command); give each bot a folder of its own, or set [[bot]] dir on both to "
            f"share one on purpose"
        ), style="yellow", markup=False, highlight=False)
        structlog.get_logger().warning("bots_share_a_folder", bot=a, other=b,
                                       folder=str(folder))


def _fail(message: str, status: int = 2) -> NoReturn:
    """Print `message` as one error line (brackets kept: `[[bot]]` is not markup) and exit;
    a log file this command opened and never wrote to is removed, with the folders made for
    it."""
    arena_logging.discard_if_unused()
    err.print(f"[bold red]error:[/] {escape(printable(message))}")
    sys.exit(status)


class _ArenaGroup(click.Group):
    """The `arena` group: a database that cannot be used (newer schema, unreachable server)
    is one error line and exit status 2, whatever the command."""

    def invoke(self, ctx: click.Context) -> Any:
        if not structlog.is_configured():  # events (a schema migrated) on stderr, not stdout
            arena_logging.configure()
        try:
            return super().invoke(ctx)
        except DatabaseError as exc:
            _fail(str(exc))
        except (KeyboardInterrupt, BaseExceptionGroup) as exc:
            # Ctrl-C in any command (arena match, sprt, web...): one line and 130, as the
            # commands that say more (tournament, serve, check) do; not a traceback and 1,
            # which says a bot was at fault (an outside walkthrough's scripts misread it).
            if not _interrupted(exc):
                raise
            err.print("interrupted")
            sys.exit(130)


@click.group(cls=_ArenaGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="truco-arena")
def main() -> None:
    """Truco Arena: a referee for Truco bot tournaments.

    Bots are programs in any language that speak the gRPC protocol in proto/arena/v1/arena.proto,
    or plain lines on stdin/stdout (docs/stdio.md: `protocol = "stdio"` in the config,
    `stdio:COMMAND` in `arena match`, `arena check --stdio`, `arena stdio` for a remote bot).
    Start with `arena tournament sample_bots/tournament.toml`.
    """


def _print_standings(
    store: Store, tournament: str, variants: tuple[str, ...], fmt: str = "table"
) -> None:
    _print_tables(store.matches(tournament), tournament, variants, fmt)


def _print_tables(
    rows: list[MatchRow], label: str, variants: tuple[str, ...], fmt: str = "table"
) -> None:
    """A standings table and a crosstable per variant played and overall ones, titled
    `label: ...`, as rich tables or as JSON, CSV or Markdown (`formats.FORMATS`)."""
    played = variant_order((r.variant for r in rows), variants)
    data: dict[str, dict[str, list[dict[str, object]]]] = {}
    for title, variant in [*((v, v) for v in played), ("overall", None)]:
        lines = standings(rows, variant)
        order = [line.bot for line in lines]
        cross = crosstable(rows, variant)
        heading = f"{label}: {title}"
        if fmt == "json":
            data[heading] = {"standings": formats.standings_rows(lines),
                             "crosstable": formats.crosstable_rows(cross, order)}
        elif fmt == "csv":
            out.print(formats.to_csv(heading, formats.standings_rows(lines)), end="",
                      markup=False, highlight=False)
            out.print(formats.to_csv(f"{heading} crosstable",
                                     formats.crosstable_rows(cross, order)),
                      end="", markup=False, highlight=False)
        elif fmt == "markdown":
            out.print(formats.to_markdown(heading, formats.standings_rows(lines)),
                      markup=False, highlight=False)
            out.print(formats.to_markdown(f"{heading} crosstable",
                                          formats.crosstable_rows(cross, order)),
                      markup=False, highlight=False)
        else:
            _print_rich_tables(heading, lines, formats.crosstable_grid(cross, order))
    if fmt == "json":
        out.print(formats.to_json(data), end="", markup=False, highlight=False)
        return
    if fmt != "table":
        return
    out.print("Elo: a Bradley-Terry fit of the wins and losses in each table, centred on the "
              "field's average; ±95%: its 95 % error bar. faults: strikes; t/o, ill, disc: "
              "timeouts, illegal actions, disconnects; p50, p99: decision latency in ms (median, "
              "99th percentile). Crosstable: the row bot's wins-losses against the column bot.")
    bad = [r for r in rows if r.termination != "normal"]
    if bad:
        out.print(f"{len(bad)} of {len(rows)} matches ended by a fault:")
        for r in bad:
            out.print(f"  {r.id}: {r.termination} by {r.faulty_bot}", markup=False)


def _latency(ms: float | None) -> str:
    """A latency cell, about 3 significant figures (the stored histograms are good to 2 %)."""
    if ms is None:
        return "-"
    return f"{ms:.0f}" if ms >= 100 else f"{ms:.1f}" if ms >= 10 else f"{ms:.2f}"


def _print_rich_tables(heading: str, lines: list[Line], grid: list[list[str]]) -> None:
    table = Table(title=escape(heading), title_justify="left")  # names are not markup
    for name in ("#", "bot", "played", "won", "lost", "win%", "Elo", "±95%", "pts+",
                 "pts-", "diff", "faults", "forfeits", "t/o", "ill", "disc", "p50", "p99"):
        table.add_column(name, justify="left" if name == "bot" else "right",
                         no_wrap=name == "bot")
    for rank, line in enumerate(lines, 1):
        rating = line.rating
        table.add_row(
            str(rank), escape(line.bot), str(line.matches), str(line.wins), str(line.losses),
            f"{100 * line.score:.0f}",
            f"{rating.elo:+.0f}" if rating else "-", f"{rating.error:.0f}" if rating else "-",
            str(line.points_for), str(line.points_against),
            f"{line.points_for - line.points_against:+d}", str(line.faults),
            str(line.forfeits), str(line.fault_kinds.get("timeout", 0)),
            str(line.fault_kinds.get("illegal_action", 0)),
            str(line.fault_kinds.get("disconnect", 0)), _latency(line.p50_ms),
            _latency(line.p99_ms),
        )
    out.print(table)
    if len(grid) > 2:
        cross = Table(title=escape(f"{heading} crosstable"), title_justify="left")
        for i, name in enumerate(grid[0]):
            cross.add_column(escape(name), justify="left" if i == 0 else "right",
                             no_wrap=i == 0)
        for row in grid[1:]:
            cross.add_row(*(escape(cell) for cell in row))
        out.print(cross)


def _run(
    config: TournamentConfig, *, progress: bool, announce: bool = False, web: str | None = None,
    listed: tuple[str, ...] = (),
) -> None:
    """Play `config`'s tournament, then print its standings: the variants of `listed` (the
    config's own order, before a `--variant` narrowed it) in that order."""
    arena_logging.configure(path=config.logs / f"{config.name}.jsonl")
    try:
        runner = TournamentRunner(config)
        _warn_unsandboxed(runner)
        _warn_shared_folders(runner)
        if config.duplicate and config.games % 2:  # (an outside walkthrough found it silent)
            err.print(f"warning: matches_per_pair = {config.games} is odd: with duplicate = "
                      "true each pair's last match has no twin (its deals are played from "
                      "one side only); use an even number", style="yellow", markup=False,
                      highlight=False)
        plan = runner.pending()
    except DatabaseError as exc:  # not a database SQLite can use (a damaged file)
        _fail(f"tournament.database: {str(exc).removeprefix('database: ')}")
    except driver_errors() as exc:  # locked past the busy timeout, or broken, at start
        _fail(f"tournament.database: {describe_db(config.database)}: {exc}; nothing was "
              "played, run the same command again when the database is free", status=1)
    todo, done = plan.todo, plan.stored
    if done:
        err.print(f"resuming {config.name}: {done} matches already stored, {todo} to play",
                  markup=False, highlight=False)
    elif not progress and not announce:  # announcing: the first line is the address
        err.print(f"{config.name}: {todo} matches to play", markup=False, highlight=False)
    bar = Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
        TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(), console=err,
        disable=not progress, transient=False,
    )
    task = bar.add_task(escape(config.name), total=todo)  # a name is not markup
    standings = LiveStandings(escape(config.name))  # drawn live above the bar on a terminal
    if done:  # resuming: the live table counts the stored matches too, as the final one does
        standings.add_stored(runner.store.matches(config.name))
    begun = time.monotonic()
    finished = [0]

    def on_done(pairing: Pairing, report: MatchReport) -> None:
        bar.advance(task)
        o = report.outcome
        finished[0] += 1
        bots = (pairing.teams[0].name, pairing.teams[1].name)
        accounts = find_variant(pairing.variant).accounts(pairing.options)
        side, points, _games = bot_results(report, bots, accounts)
        standings.add(bots, side, points)
        if not err.is_terminal:  # a log, not a bar: one line per finished match, with an ETA
            n = finished[0]
            eta = (time.monotonic() - begun) / n * (todo - n)
            winner = "nobody" if side is None else bots[side]
            err.print(match_line(n, todo, pairing.match_id, o.termination.name.lower(),
                                 winner, bots, points, eta), highlight=False, markup=False)
        if not o.normal:
            who = ("no winner" if o.faulty_seat is None
                   else f"seat {o.faulty_seat}, {report.seat_names[o.faulty_seat]}")
            bar.console.print(escape(
                f"{pairing.match_id}: {o.termination.name.lower()} "
                f"({who}): {printable(o.detail.splitlines()[0]) if o.detail else ''}"
            ), style="yellow", highlight=False)

    def on_listening(address: str) -> None:
        if announce:
            err.print(f"referee listening on {address}; waiting for bots")

    def on_presence(connected: list[str], missing: list[str], left: list[str]) -> None:
        if not announce:
            return
        never = [name for name in missing if name not in left]
        why = []
        if never:  # a no-show forfeits every match it has, for good (stored as played)
            why.append(f"{', '.join(never)}: a bot not here {config.no_show_ms} ms after the "
                       "start forfeits every match it has (no_show_ms)")
        if left:
            why.append(f"{', '.join(left)}: left; its seats forfeit unless it is back within "
                       f"{config.policy.reconnect_ms} ms (reconnect_ms)")
        err.print(
            f"bots connected: {', '.join(connected) or 'none'}; missing: "
            f"{', '.join(missing) or 'none'}" + (f" ({'; '.join(why)})" if why else ""),
            markup=False, highlight=False,
        )

    runner.on_match_done = on_done
    runner.on_listening = on_listening
    runner.on_presence = on_presence
    runner.storage.on_state = lambda text: bar.console.print(
        escape(text), style="yellow", highlight=False
    )
    started = time.monotonic()

    async def run_with_web() -> None:
        from arena.web.app import POLL_S
        from arena.web.app import serve as serve_web  # only with --web
        from arena.web.spectate import Spectators

        assert web is not None
        watch = Spectators(lambda: runner.live, config.spectator_delay_s)
        runner.demand.append(watch.wanted)  # worker matches' moves while a page shows them
        async with trio.open_nursery() as nursery:
            url = await nursery.start(partial(serve_web, spectators=watch), config.database, web)
            err.print(f"arena web: {url}/t/{config.name} (until the tournament ends)",
                      markup=False)
            await runner.run()
            # The pages poll for changes (web.app.POLL_S): let open ones see the last match
            # and the finished state before the server goes (an outside walkthrough's page
            # stayed on "5/6 matches" for good).
            await trio.sleep(2 * POLL_S + 0.5)
            nursery.cancel_scope.cancel()

    try:
        with live_view(err, bar, standings, enabled=progress):
            trio.run(run_with_web if web else runner.run)
    except (KeyboardInterrupt, BaseExceptionGroup) as exc:
        if not _interrupted(exc):
            raise
        err.print(
            f"\ninterrupted. Finished matches are saved in {describe_db(config.database)}; "
            f"{_resume_hint()}", markup=False, highlight=False,
        )
        sys.exit(130)
    except StorageError as exc:
        _fail(str(exc), status=1)
    err.print(f"played {todo} matches in {time.monotonic() - started:.1f} s; "
              f"results in {describe_db(config.database)}, replays in {config.replays}",
              markup=False)
    _print_standings(runner.store, config.name, (*listed, *config.variants))


def _say_notes(config: TournamentConfig) -> None:
    """Warnings about a config that works but says something the old way."""
    for note in config.notes:
        err.print(f"warning: {note}", style="yellow", markup=False, highlight=False)


def _resume_hint() -> str:
    """How to resume: this very command, without --fresh (which would forget the matches
    just saved)."""
    args = [a for a in sys.argv[1:] if a != "--fresh"]
    if len(args) < len(sys.argv) - 1:
        again = shlex.join(["arena", *args])
        return f"run the same command again without --fresh to resume: {again}"
    return "run the same command again to resume."


def _interrupted(exc: BaseException) -> bool:
    """Whether `exc` is a Ctrl-C: trio reports one inside a tournament's nurseries as a group
    of them."""
    if isinstance(exc, BaseExceptionGroup):
        interrupts, others = exc.split(KeyboardInterrupt)
        return interrupts is not None and others is None
    return isinstance(exc, KeyboardInterrupt)


def _executor_override(spec: ExecutorSpec, kind: str | None, workers: int | None) -> ExecutorSpec:
    """[executor] with --executor and --workers applied (--workers: processes only)."""
    from dataclasses import replace

    kind = kind or spec.kind
    if workers and kind not in ("auto", "processes"):
        raise ConfigError(f"--workers: only for the processes executor, not {kind!r}")
    return replace(spec, kind=kind, workers=workers or spec.workers)


def _override(config: TournamentConfig, **changes: Any) -> TournamentConfig:
    from dataclasses import replace

    given = {k: v for k, v in changes.items() if v is not None}
    return replace(config, **given) if given else config


@main.command()
@click.argument("config_file", type=click.Path(path_type=Path))
@click.option("--concurrency", type=click.IntRange(min=1), help="Matches at the same time.")
@click.option("--matches-per-pair", "--games", "games", type=click.IntRange(min=1),
              help="Matches per pair per variant (the config's matches_per_pair; --games is "
              "its old name).")
@click.option("--variant", "variants", multiple=True, help="Only these variants (repeatable).")
@click.option("--database", type=DATABASE,
              help="SQLite file or postgresql://user@host:port/db URL for results.")
@click.option("--decision-ms", type=click.IntRange(min=1), help="Per-decision deadline.")
@click.option("--no-progress", is_flag=True, help="No progress bar.")
@click.option("--fresh", is_flag=True,
              help="Forget this tournament's stored matches and play it all again (with a "
              "new secret, unless a key file is given).")
@click.option("--secret-file", type=click.Path(path_type=Path),
              help="Key file of the deals' secret (created, mode 0600, if missing); "
              "overrides tournament.secret_file. Default: the secret is kept in the database.")
@click.option("--replay-legal", is_flag=True, default=None,
              help="Replays list each decision's legal actions (tournament.replay_legal).")
@click.option("--web", "web", metavar="[HOST:]PORT",
              help="Also serve the web pages (arena web) while the tournament runs.")
@click.option("--executor", "executor_kind",
              type=click.Choice(["auto", "local", "processes", "ray"]),
              help="Where matches run (executor.kind): this process, worker processes, or a "
              "Ray cluster.")
@click.option("--workers", type=click.IntRange(min=1),
              help="Worker processes of the processes executor (executor.workers; default "
              "one per core).")
def tournament(
    config_file: Path, concurrency: int | None, games: int | None, variants: tuple[str, ...],
    database: Target | None, decision_ms: int | None, no_progress: bool, fresh: bool,
    secret_file: Path | None, replay_legal: bool | None, web: str | None,
    executor_kind: str | None, workers: int | None,
) -> None:
    """Play the round robin described by CONFIG_FILE (TOML, see README) and print standings.

    Running the same command again after an interruption resumes: finished matches are kept.
    """
    try:
        config = load_config(config_file)
        listed = config.variants
        _say_notes(config)
        if variants:
            for v in variants:
                find_variant(v)
            config = _override(config, variants=variants)
        if decision_ms:
            from dataclasses import replace
            config = _override(
                config, time_control=replace(config.time_control, decision_ms=decision_ms)
            )
        config = _override(config, concurrency=concurrency, games=games, database=database,
                           secret_file=secret_file, replay_legal=replay_legal)
        if executor_kind or workers:
            config = _override(config, executor=_executor_override(
                config.executor, executor_kind, workers))
        preflight(config)  # nothing is created before every check passed
        if fresh:
            # The store's events (a new database's migrations) go to the tournament's log
            # file, as everything else the run logs, not onto the organizer's console.
            arena_logging.configure(path=config.logs / f"{config.name}.jsonl")
            Store(config.database).forget_tournament(config.name)
            from arena.tournament.runner import begun_marks
            shutil.rmtree(begun_marks(config), ignore_errors=True)
        # With remote bots the organizer must know where they connect: say it at once.
        _run(config, progress=not no_progress and err.is_terminal,
             announce=any(not bot.launched for bot in config.bots),
             web=_web_arg(web) if web else None, listed=listed)
    except ArenaError as exc:
        _fail(str(exc))


@main.command()
@click.argument("config_file", type=click.Path(path_type=Path))
@click.option("--listen", help="host:port to listen on (overrides tournament.listen).")
@click.option("--web", "web", metavar="[HOST:]PORT",
              help="Also serve the web pages (arena web) while the tournament runs.")
def serve(config_file: Path, listen: str | None, web: str | None) -> None:
    """Referee a tournament of remote bots: listen and wait for bots to connect with their
    tokens (from the config's [[bot]] tables), then play the round robin."""
    try:
        config = _override(load_config(config_file), listen=listen)
        _say_notes(config)
        preflight(config)
        if any(b.launched for b in config.bots):
            err.print("note: bots with a command are launched by the referee as usual")
        _run(config, progress=err.is_terminal, announce=True,
             web=_web_arg(web) if web else None)
    except ArenaError as exc:
        _fail(str(exc))


def _bot_arg(text: str, index: int, cwd: Path, where: str = "") -> BotSpec:
    """NAME=COMMAND, COMMAND, or remote:NAME:TOKEN; stdio: before a command marks a bot that
    speaks lines on stdin/stdout (docs/stdio.md). Errors name `where` (default: bot N)."""
    where = where or f"bot {index + 1}"
    if text.startswith("stdio:"):
        from dataclasses import replace
        return replace(_bot_arg(text.removeprefix("stdio:"), index, cwd, where),
                       protocol="stdio")
    if text.startswith("remote:"):
        parts = text.split(":", 2)
        if len(parts) != 3 or not parts[1] or not parts[2]:
            raise ConfigError(f"{where}: write remote:NAME:TOKEN, got {text!r}")
        return BotSpec(name=parts[1], token=parts[2], cwd=cwd)
    name, sep, command = text.partition("=")
    if not sep or " " in name:
        command, name = text, ""
    if name and command.startswith("stdio:"):  # NAME=stdio:COMMAND as well as stdio:NAME=...
        from dataclasses import replace
        return replace(_bot_arg(f"{name}={command.removeprefix('stdio:')}", index, cwd, where),
                       protocol="stdio")
    argv = split_command(command, where)
    if not argv:
        raise ConfigError(f"{where}: empty command")
    if not name:
        name = _program_name(argv)
    return BotSpec(name=name, command=tuple(argv), cwd=cwd)


def _program_name(argv: list[str]) -> str:
    """A bot's default name: its program's file name without suffix — the first argument
    after the interpreter that names a file (`python bots/mc.py 12` is mc, `java -jar
    bot.jar` is bot), else the command itself (`./mybot --level 3` is mybot)."""
    for arg in argv[1:]:
        if not arg.startswith("-") and Path(arg).suffix:
            return Path(arg).stem
    return Path(argv[0]).stem


def _option_args(options: tuple[str, ...]) -> dict[str, Any]:
    """`--option KEY=VALUE` arguments as a variant's options table."""
    opts: dict[str, Any] = {}
    for item in options:
        key, sep, value = item.partition("=")
        if not sep:
            raise ConfigError(f"--option {item!r}: write KEY=VALUE")
        opts[key] = _option_value(value)
    return opts


def _option_value(text: str) -> Any:
    """A variant option's value from the command line, typed as TOML would type it: true /
    false, a whole number, a decimal number (`leak=0.5`), else text."""
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if text.lstrip("-").isdigit():
        return int(text)
    try:
        return float(text)
    except ValueError:
        return text


@main.command()
@click.argument("variant")
@click.argument("bot_a")
@click.argument("bot_b")
@click.option("--seed", type=int, default=0, show_default=True, help="Match seed.")
@click.option("--option", "options", multiple=True, help="Variant option KEY=VALUE.")
@click.option("--decision-ms", type=click.IntRange(min=1), default=1000, show_default=True)
@click.option("--database", type=DATABASE, default="arena.db",
              show_default=True)
@click.option("--listen", default="127.0.0.1:0", show_default=True)
@click.option("--pass-env", "pass_env", multiple=True, metavar="NAME",
              help="A variable of this environment the launched bots also get (repeatable; "
              "[sandbox] pass_env).")
@click.option("--writable", "writable", multiple=True, metavar="DIR",
              type=click.Path(file_okay=False, path_type=Path),
              help="A folder the launched bots may write in (repeatable; [sandbox] writable).")
@click.option("--secret-file", type=click.Path(path_type=Path),
              help="Key file of the deals' secret (created if missing): with the same file "
              "and --seed the deals repeat. Default: a new random secret every run.")
def match(
    variant: str, bot_a: str, bot_b: str, seed: int, options: tuple[str, ...],
    decision_ms: int, database: Target, listen: str, pass_env: tuple[str, ...],
    writable: tuple[Path, ...], secret_file: Path | None,
) -> None:
    """Play one match of VARIANT: BOT_A on team 0 against BOT_B on team 1.

    A bot is a command the referee launches (one process per seat), optionally named:
    'random=python sample_bots/random_bot.py'; a bot that speaks lines on stdin/stdout
    (docs/stdio.md), behind 'stdio:': 'stdio:./mybot' or 'mine=stdio:./mybot'; or a remote
    bot: 'remote:NAME:TOKEN'.
    The deal derives from --seed and a secret (see --secret-file): the seed alone, which a
    bot may know, does not determine it.
    """
    try:
        find_variant(variant)
        cwd = Path.cwd()
        bots = [_bot_arg(bot_a, 0, cwd), _bot_arg(bot_b, 1, cwd)]
        if bots[0].name == bots[1].name:
            from dataclasses import replace
            bots = [replace(bots[0], name=bots[0].name + "-a"),
                    replace(bots[1], name=bots[1].name + "-b")]
        opts = _option_args(options)
        raw: dict[str, Any] = {
            "tournament": {
                # Unique per run: two matches started in the same second share a database
                # without colliding (the match id, and so the stored row, derive from it).
                "name": f"match-{int(time.time())}-{secrets.token_hex(3)}", "seed": seed,
                "games": 1,
                "variants": [variant], "database": str(database), "listen": listen,
                **({"secret_file": str(secret_file)} if secret_file is not None else {}),
            },
            "options": {variant: opts} if opts else {},
            "time_control": {"decision_ms": decision_ms},
            "sandbox": {"pass_env": list(pass_env),
                        "writable": [str(w.resolve()) for w in writable]},
            "bot": [
                {"name": b.name, **({"command": list(b.command), "protocol": b.protocol}
                                     if b.launched else {"token": b.token})}
                for b in bots
            ],
        }
        config = parse_config(raw, base=cwd)
        preflight(config)
        arena_logging.configure(path=config.logs / f"{config.name}.jsonl")
        runner = TournamentRunner(config)
        _warn_unsandboxed(runner)
        pairing = next(iter(runner.pending()))
        if any(not b.launched for b in bots):
            runner.on_listening = lambda a: err.print(f"listening on {a}; waiting for bots")
        played: list[MatchReport] = []
        runner.on_match_done = lambda _pairing, report: played.append(report)
        try:
            trio.run(runner.run, [pairing])
        except StorageError as exc:
            _fail(str(exc), status=1)
        row = runner.store.matches(config.name)[0]
        out.print(
            f"{pairing.match_id}: {row.termination}; winner: "
            f"{[row.bot0, row.bot1][row.winner_bot] if row.winner_bot is not None else 'none'}"
            f"; points {row.bot0} {row.points0} - {row.points1} {row.bot1}",
            highlight=False, markup=False,
        )
        faults = _faults_by_bot(row)
        if faults:  # strikes that did not end the match still cost the default action
            out.print("faults: " + "; ".join(
                f"{bot} {', '.join(f'{n} {kind}' for kind, n in sorted(kinds.items()))}"
                for bot, kinds in faults.items()
            ), highlight=False, markup=False)
        from arena.tournament.runner import replay_path
        out.print(f"replay: {replay_path(config, pairing.match_id)}", markup=False)
        if row.termination != "normal":
            # Not a plain win: say how it ended, who was at fault and why; exit 1 (a bot was:
            # one, or both when neither took its place).
            outcome = played[0].outcome if played else None
            seat = outcome.faulty_seat if outcome is not None else None
            at_fault = row.faulty_bot or "both bots"
            if seat is not None:
                at_fault += f" (seat {seat})"
            detail = printable(outcome.detail) if outcome is not None else ""
            # A bot's own lines (the tail of its output) are quoted, one "| " a line: it
            # printed a line in this command's own format once, a forged "normal; winner"
            # (hostile review round 5).
            detail = "\n  | ".join(detail.splitlines())
            out.print(
                f"ended by {row.termination}: at fault {at_fault}"
                + (f": {detail}" if detail else ""),
                highlight=False, markup=False,
            )
            out.print(f"bots' output: {bot_logs(config)}", highlight=False, markup=False)
            if (row.termination == "forfeit" and "exited with code 0 before connecting" in
                    detail and any(bot.protocol != "stdio" for bot in config.bots)):
                # A stdio program given as a gRPC bot reads nothing on stdin, and ends (an
                # outside walkthrough: the C kit without stdio:, "exited with code 0").
                out.print("a bot that speaks lines on stdin/stdout (docs/stdio.md), not gRPC, "
                          "is given as stdio:CMD (or NAME=stdio:CMD)", highlight=False,
                          markup=False)
            sys.exit(1)
    except ArenaError as exc:
        # In the words of this command's arguments, not a config file's (an outside
        # walkthrough read "bot[0].command" and "options.argentine-1v1" for its BOT_A and
        # --option).
        text = str(exc).replace("bot[0]", "BOT_A").replace("bot[1]", "BOT_B")
        _fail(text.replace(f"options.{variant}:", "--option:"))


def _faults_by_bot(row: MatchRow) -> dict[str, dict[str, int]]:
    """Each bot's faults in a stored match by kind (every seat it held), bots without any
    left out."""
    found: dict[str, dict[str, int]] = {}
    for seat, kinds in enumerate(row.faults):
        bot = row.seat_bots[seat] if seat < len(row.seat_bots) else f"seat {seat}"
        for kind, n in kinds.items():
            found.setdefault(bot, {})[kind] = found.get(bot, {}).get(kind, 0) + n
    return found


@main.command()
@click.argument("command", metavar="COMMAND")
@click.option("--variant", "variants", multiple=True,
              help="Only these variants (repeatable). Default: every variant.")
@click.option("--matches-per-pair", "--games", "games", type=click.IntRange(min=1), default=2,
              show_default=True,
              help="Matches per variant (sides alternate; --games is its old name).")
@click.option("--decision-ms", type=click.IntRange(min=1), default=1000, show_default=True,
              help="Per-decision deadline.")
@click.option("--seed", type=click.IntRange(min=0), default=1, show_default=True,
              help="Seed of the deals.")
@click.option("--keep", type=click.Path(file_okay=False, path_type=Path),
              help="Keep the database, replays and logs in this folder (default: a "
              "temporary folder, deleted at the end).")
@click.option("--stdio", is_flag=True,
              help="COMMAND speaks lines on stdin/stdout (docs/stdio.md), not gRPC.")
@click.option("--pass-env", "pass_env", multiple=True, metavar="NAME",
              help="A variable of this environment your bot also gets in its sandbox "
              "(repeatable).")
@click.option("--writable", "writable", multiple=True, metavar="DIR",
              type=click.Path(file_okay=False, path_type=Path),
              help="A folder your bot may write in (repeatable).")
@click.option("--option", "options", multiple=True, metavar="KEY=VALUE",
              help="A variant option, for every checked variant that has it (repeatable): "
              "blind_iron_hand=true, signals=leaky, gallo=fixed... (`arena variants`).")
def check(
    command: str, variants: tuple[str, ...], games: int, decision_ms: int, seed: int,
    keep: Path | None, stdio: bool, pass_env: tuple[str, ...], writable: tuple[Path, ...],
    options: tuple[str, ...],
) -> None:
    """Check that the bot COMMAND plays the protocol correctly in every variant.

    COMMAND is the bot's command line as one string ('python my_bot.py'); the referee
    launches it, one process per seat, against the sample random bot. Checks: it connects
    and says hello, answers every decision in time, only with legal actions, stays
    connected, and every match reaches its natural end. Exit status 0 if every check
    passed, 1 if one failed, 2 for bad usage.
    """
    try:
        if command.startswith("remote:"):
            raise ConfigError("COMMAND: give the command that starts your bot (arena check "
                              "launches it), not remote:NAME:TOKEN")
        if not command.strip():
            raise ConfigError("COMMAND: empty; give the command that starts your bot")
        candidate = _bot_arg(("stdio:" if stdio else "") + command, 0, Path.cwd(), "COMMAND")
        chosen = tuple(find_variant(v).name for v in variants) or variant_names()
        asked = _option_args(options)
        per_variant = {v: {k: value for k, value in asked.items()
                           if k in {o.name for o in find_variant(v).option_specs}}
                       for v in chosen}
        unused = [k for k in asked if not any(k in o for o in per_variant.values())]
        if unused:
            raise ConfigError(f"--option {unused[0]}: no checked variant has this option "
                              "(`arena variants` lists each variant's)")
        if keep is not None:
            try:
                (keep / "logs").mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise ConfigError(f"--keep: cannot make a folder there: {keep}: "
                                  f"{exc.strerror}") from None
        with tempfile.TemporaryDirectory(prefix="arena-check-") as scratch:
            folder = keep.resolve() if keep is not None else Path(scratch)
            config = checking.check_config(
                candidate, name=f"check-{int(time.time())}-{secrets.token_hex(3)}",
                folder=folder, variants=chosen, games=games, decision_ms=decision_ms,
                seed=seed, pass_env=pass_env, writable=writable,
                options={v: o for v, o in per_variant.items() if o},
            )
            passed = _check(config, " ".join(candidate.command), keep is not None)
        sys.exit(0 if passed else 1)
    except ArenaError as exc:
        _fail(str(exc))


def _check(config: TournamentConfig, command: str, kept: bool) -> bool:
    """Play the check's matches, print the report; True if every check passed."""
    arena_logging.configure(path=config.logs / f"{config.name}.jsonl")
    runner = TournamentRunner(config)
    _warn_unsandboxed(runner)
    todo = runner.pending().todo
    out.print(
        f"checking {command!r} against the sample random bot: "
        f"{checking.plural(len(config.variants), 'variant')} x "
        f"{checking.plural(config.games, 'match', 'matches')}, "
        f"{config.time_control.decision_ms} ms a decision, seed {config.seed}",
        highlight=False, markup=False,
    )
    bar = Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
        TimeElapsedColumn(), console=err, disable=not err.is_terminal, transient=True,
    )
    task = bar.add_task("check", total=todo)
    runner.on_match_done = lambda _pairing, _report: bar.advance(task)
    try:
        with bar:
            trio.run(runner.run)
    except (KeyboardInterrupt, BaseExceptionGroup) as exc:
        if not _interrupted(exc):
            raise
        err.print("\ninterrupted")
        sys.exit(130)
    finally:
        arena_logging.configure(stream=sys.stderr, level="error")  # closes the log file
    matches = checking.load_matches(runner.store, config)
    fallbacks = checking.count_fallbacks(config, (row.id for row, _ in matches))
    refused = checking.count_refused(config.logs / f"{config.name}.jsonl")
    reports = checking.analyse(matches, config.variants, fallbacks=fallbacks, refused=refused)
    runner.store.close()
    out.print(checking.report_table(reports))
    for line in [*checking.check_lines(reports), *checking.action_lines(reports)]:
        out.print(printable(line), highlight=False, markup=False)  # details: a bot's output
    verdict = checking.summary(reports)
    passed = all(r.passed for r in reports)
    out.print(verdict, style="bold green" if passed else "bold red", highlight=False,
              markup=False)
    if not passed:
        candidate = next(b for b in config.bots if b.name == checking.CANDIDATE)
        if candidate.protocol != "stdio" and any(  # findings[0]: "connects and says hello"
                "before connecting" in r.findings[0].detail for r in reports):
            out.print("if your bot speaks lines on stdin/stdout (docs/stdio.md), not gRPC, "
                      "run the check with --stdio", highlight=False, markup=False)
        bad, first = checking.stdio_bad_lines(config, (row.id for row, _ in matches))
        if bad:  # the stored details speak of gRPC fields: say what a stdio bot did
            out.print(printable(
                f"your bot wrote {checking.plural(bad, 'line')} on stdout that "
                f"{'is' if bad == 1 else 'are'} not a reply (each answered its decision "
                f"with no choice: an illegal answer); print debug output to stderr, or as "
                f"'log TEXT' (docs/stdio.md); the first: {first}"
            ), highlight=False, markup=False)
        if kept:
            out.print(f"your bot's own output (stdout and stderr), one file per seat: "
                      f"{bot_logs(config)}/*.{checking.CANDIDATE}.log; replays in "
                      f"{config.replays}", highlight=False, markup=False)
        else:
            out.print("run again with --keep DIR to keep your bot's output (stdout and "
                      "stderr), the replays and the database", highlight=False, markup=False)
    return passed


@main.command(context_settings={"ignore_unknown_options": True})
@click.option("--server", help="Referee address HOST:PORT (env ARENA_SERVER).")
@click.option("--token", help=(
    "Admission token (env ARENA_TOKEN_FD: a file descriptor to read it from, which the "
    "referee sets for a bot it launches; or ARENA_TOKEN)."))
@click.option("--name", help="Bot name (env ARENA_BOT_NAME).")
@click.option("--tls-ca", help="PEM certificate to trust: connect over TLS (env ARENA_TLS_CA).")
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
def stdio(
    server: str | None, token: str | None, name: str | None, tls_ca: str | None,
    command: tuple[str, ...],
) -> None:
    """Connect a bot that speaks lines on stdin/stdout (docs/stdio.md) to a referee.

    arena stdio --server HOST:PORT --token TOKEN -- ./mybot ARGS...
    """
    from arena.stdio.adapter import serve

    arena_logging.configure(stream=sys.stderr)
    sys.exit(serve(list(command), server=server, token=token, name=name, tls_ca=tls_ca))


@main.command()
@click.argument("replay_file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--quiet", is_flag=True, help="Only check; print nothing but the verdict.")
def replay(replay_file: Path, quiet: bool) -> None:
    """Print a match from its replay file (format 1 or 2, docs/replay.md) and check that it
    replays through the rules engine to the same lines, awards and result."""
    try:
        data = load_replay(replay_file)
        if not quiet:
            for line in describe(data):  # a fault's detail may quote a bot
                out.print(printable(line), highlight=False, markup=False)
        verify_replay(data)
        what = ("every line regenerated by the engine" if data.format >= 2
                else "every action legal, same awards")
        out.print(f"replay check: OK (format {data.format}: {what}, same result)")
    except ArenaError as exc:
        _fail(f"replay check failed: {exc}")


@main.command(name="standings")
@click.argument("tournament_name")
@click.option("--database", type=DATABASE, default="arena.db", show_default=True,
              help="SQLite file or postgresql:// URL.")
@click.option("--format", "fmt", type=click.Choice(formats.FORMATS), default="table",
              show_default=True, help="Rich tables, or data: JSON, CSV or Markdown.")
def standings_cmd(tournament_name: str, database: Target, fmt: str) -> None:
    """Print the standings and crosstables of a stored tournament."""
    if not db_exists(database):
        _fail(f"--database: {describe_db(database)} does not exist")
    store = Store(database)
    if not store.matches(tournament_name):
        known = ", ".join(store.tournaments()) or "none"
        _fail(f"no matches of tournament {tournament_name!r} in {describe_db(database)} "
              f"(tournaments there: {known})")
    _print_standings(store, tournament_name, variant_names(), fmt)


@main.group(invoke_without_command=True)
@click.option("--database", type=DATABASE, default="arena.db", show_default=True,
              help="SQLite file or postgresql:// URL.")
@click.option("--variant", "only", multiple=True,
              help="Only matches of these variants (repeatable). Default: every variant.")
@click.option("--format", "fmt", type=click.Choice(formats.FORMATS), default="table",
              show_default=True, help="Rich tables, or data: JSON, CSV or Markdown.")
@click.pass_context
def ladder(ctx: click.Context, database: Target, only: tuple[str, ...], fmt: str) -> None:
    """Print the ladder. With a ladder service's database (`arena ladder serve`), its table
    (as `arena ladder show`); otherwise every bot's standing and Elo over every match of
    every tournament in the database (the same bot name is the same bot)."""
    if ctx.invoked_subcommand is not None:
        return
    if not db_exists(database):
        _fail(f"--database: {describe_db(database)} does not exist")
    if ladder_cli.has_ladder(database):
        ladder_cli.show_only_ladder(database, only, fmt)
        return
    store = Store(database)
    try:
        chosen = {find_variant(v).name for v in only}
    except ArenaError as exc:
        _fail(str(exc))
    rows = [r for r in store.matches() if not chosen or r.variant in chosen]
    if not rows:
        _fail(f"no matches in {describe_db(database)}"
              + (f" of {', '.join(sorted(chosen))}" if chosen else ""))
    tournaments = len({r.tournament for r in rows})
    label = (f"ladder ({checking.plural(tournaments, 'tournament')}, "
             f"{checking.plural(len(rows), 'match', 'matches')})")
    _print_tables(rows, label, variant_names(), fmt)


@main.command()
def variants() -> None:
    """List the variants and their options."""
    table = Table(title="variants")
    for name in ("variant", "seats", "description", "options (default first)"):
        table.add_column(name)
    for name, v in VARIANTS.items():
        opts = "; ".join(
            f"{o.name}: {', '.join(map(toml_value, option_choices(o)))}" for o in v.option_specs
        )
        table.add_row(name, str(v.num_seats), v.description, opts)
    out.print(table)


def toml_value(value: Any) -> str:
    """A value as it is written in a config file (TOML): true, 15, 0.25, "team"."""
    return json.dumps(value)


def option_choices(spec: OptionSpec) -> list[Any]:
    """An option's values as `arena variants` lists them: the default first."""
    return [spec.default, *(c for c in spec.choices if c != spec.default)]


def _web_arg(text: str) -> str:
    """--web PORT or HOST:PORT (a bare port listens on 127.0.0.1)."""
    if text.isdigit():
        text = f"127.0.0.1:{text}"
    return _listen_arg(text, "--web")


def _listen_arg(text: str, option: str = "--listen") -> str:
    """HOST:PORT that can be listened on now; else one error line naming `option` (a busy
    --web port was a traceback once the tournament had begun: outside walkthrough)."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        _fail(f"{option}: expected HOST:PORT (port 0-65535), got {text!r}")
    address = f"{host or '127.0.0.1'}:{port}"
    try:
        check_listen(address, option)
    except ConfigError as exc:
        _fail(str(exc))
    return address


@main.command()
@click.option("--database", type=DATABASE, default="arena.db", show_default=True,
              help="The results database, a file or a postgresql:// URL (opened read-only).")
@click.option("--listen", default="127.0.0.1:8000", show_default=True,
              help="HOST:PORT to serve on (port 0: any free port).")
@click.option("--replays-while-playing", is_flag=True,
              help="Serve a match's replay (all cards) as soon as it is stored, before its "
                   "tournament is over (default: once it is over; a ladder's at once).")
@click.option("--trusted-proxy", "trusted_proxies", multiple=True, metavar="ADDRESS",
              help="A reverse proxy in front (an address or network, repeatable): its "
                   "requests are held to the limits of the client its X-Forwarded-For names, "
                   "not all to one.")
def web(database: Target, listen: str, replays_while_playing: bool,
        trusted_proxies: tuple[str, ...]) -> None:
    """Serve the contest in a browser: tournaments, live standings, matches, replays."""
    from arena.web.app import serve  # starlette and hypercorn only for this command
    from arena.web.limits import parse_proxies

    try:
        proxies = parse_proxies(trusted_proxies)
    except ValueError as exc:
        _fail(f"--trusted-proxy: {exc}")
    if not db_exists(database):
        _fail(f"--database: {describe_db(database)} does not exist (run a tournament first)")
    address = _listen_arg(listen)  # before anything is written: the migrations below
    Store(database).close()  # an older database is migrated once, before serving read-only
    arena_logging.configure()

    async def run() -> None:
        async with trio.open_nursery() as nursery:
            url = await nursery.start(partial(
                serve, replays_while_playing=replays_while_playing,
                trusted_proxies=proxies), database, address)
            out.print(f"arena web: {url}/ (database {describe_db(database)}; Ctrl-C to stop)",
                      highlight=False, markup=False)

    with contextlib.suppress(KeyboardInterrupt):
        trio.run(run)


@main.command()
@click.argument("tournament_name")
@click.option("--database", type=DATABASE, default="arena.db", show_default=True,
              help="SQLite file or postgresql:// URL.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path),
              default=Path("report.html"), show_default=True, help="The HTML file to write.")
@click.option("--replays", type=click.IntRange(min=0), default=20, show_default=True,
              help="How many replays to embed (the latest matches first).")
@click.option("--replays-while-playing", is_flag=True,
              help="Embed replays of a tournament still being played (by default none: "
              "they show every seat's hidden cards).")
def report(tournament_name: str, database: Target, output: Path, replays: int,
           replays_while_playing: bool) -> None:
    """Write one self-contained HTML file with a tournament's results."""
    from arena import report as reporting
    from arena.web.data import Database

    if not db_exists(database):
        _fail(f"--database: {describe_db(database)} does not exist")
    Store(database).close()  # an older database is migrated once, before it is read
    try:
        missing: list[str] = []
        size = reporting.write_report(database, tournament_name, output, replays=replays,
                                      missing=missing, while_playing=replays_while_playing)
    except ArenaError as exc:
        _fail(str(exc))
    out.print(f"report: {output} ({size:,} bytes)", highlight=False, markup=False)
    held = Database(database).tournament(tournament_name)
    if held is not None and reporting.replays_held(held) and not replays_while_playing:
        err.print(f"note: {tournament_name} is still being played: no replay embedded (they "
                  "show every seat's hidden cards; --replays-while-playing to embed them)",
                  style="yellow", markup=False, highlight=False)
    if missing:
        err.print(f"warning: {len(missing)} replay files could not be read (the first: "
                  f"{missing[0]}); the report shows the others", style="yellow",
                  markup=False, highlight=False)

from arena import ladder_cli  # noqa: E402 (it uses this module's consoles)

ladder_cli.register(main, ladder)

if __name__ == "__main__":
    main()
