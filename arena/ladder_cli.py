"""The ladder and SPRT commands: `arena ladder serve|add|retire|show` and `arena sprt`.

Registered on the `arena` group by arena/cli.py (`register`); kept apart so that the ladder
service's commands live beside each other.
"""

from __future__ import annotations

import shlex
import signal
import sys
from collections.abc import Callable
from pathlib import Path

import click
import trio
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from arena import logging as arena_logging
from arena.cli_database import DATABASE
from arena.cli_database import exists as db_exists
from arena.errors import ArenaError, ConfigError
from arena.rules import find_variant
from arena.safe_text import printable
from arena.tournament import formats, load_config
from arena.tournament.backend import Target
from arena.tournament.backend import describe as describe_db
from arena.tournament.config import GOOD_TOKEN, check_bot_command
from arena.tournament.ladder import LadderService, load_ladder_config
from arena.tournament.ladder_book import Entry, LadderBook, LadderBot, find_ladder, make_bot
from arena.tournament.ladder_ratings import ladder_tables
from arena.tournament.launcher import own_folders, program_dir, shared_folders
from arena.tournament.sprt import Sprt, SprtResult, Verdict
from arena.tournament.sprt_run import SprtRun
from arena.tournament.standings import variant_order


def _consoles() -> tuple[Console, Console, Callable[[str], None]]:
    """arena/cli.py's consoles and its error exit (imported late: cli imports this module)."""
    from arena.cli import _fail, err, out

    return out, err, _fail


def _target(config: Path | None, database: Target, ladder: str | None) -> tuple[Target, str]:
    """The database and ladder name a command acts on: from a ladder config, or from
    --database and --ladder (default: the database's only ladder)."""
    if config is not None:
        cfg = load_ladder_config(config)
        return cfg.tournament.database, ladder or cfg.name
    if not db_exists(database):
        raise ConfigError(f"--database: {describe_db(database)} does not exist")
    return database, find_ladder(database, ladder)


def show_ladder(database: Target, ladder: str, only: tuple[str, ...], fmt: str,
                include: tuple[str, ...]) -> None:
    """Print the ladder table per variant played and overall, or only the variants of
    `only` (rank, bot@version, mu, sigma, mu - k*sigma, games, faults, retired)."""
    out, _, fail = _consoles()
    book = LadderBook(database)
    settings = book.settings(ladder) or {}
    k = float(settings.get("k", 3.0))
    min_games = int(settings.get("min_games", 10))
    retired = {e.bot.identity for e in book.entries(ladder) if e.retired_at is not None}
    rows = book.matches(ladder, include)
    chosen = {find_variant(v).name for v in only}
    if chosen:
        rows = [r for r in rows if r.variant in chosen]
    played = variant_order((r.variant for r in rows), settings.get("variants", ()))
    tables = {f"ladder {ladder}: {title}": table for title, table in ladder_tables(
        rows, played, settings, book.predecessors(ladder), retired,
        overall=not chosen).items()}
    if not rows:
        fail(f"no matches of ladder {ladder!r} in {database} yet")
    if fmt == "json":
        data = {title: {"standings": t} for title, t in tables.items()}
        out.print(formats.to_json(data), end="", markup=False, highlight=False)
        return
    for title, table_data in tables.items():
        if fmt == "csv":
            out.print(formats.to_csv(title, table_data), end="", markup=False, highlight=False)
        elif fmt == "markdown":
            out.print(formats.to_markdown(title, table_data), markup=False, highlight=False)
        else:
            table = Table(title=title, title_justify="left")
            for name in ("#", "bot", "mu", "sigma", f"mu-{k:g}sigma", "games", "won", "lost",
                         "faults", "retired"):
                table.add_column(name, justify="left" if name in ("bot", "retired") else "right",
                                 no_wrap=name == "bot")
            for r in table_data:
                table.add_row(
                    "-" if r["rank"] is None else str(r["rank"]),
                    escape(" ".join(printable(str(r["bot"])).split())),  # one line, no codes
                    f"{r['mu']:.2f}", f"{r['sigma']:.2f}", f"{r['conservative']:.2f}",
                    str(r["games"]), str(r["won"]), str(r["lost"]), str(r["faults"]),
                    "yes" if r["retired"] else "")
            out.print(table)
    if fmt == "table":
        out.print(f"OpenSkill (Plackett-Luce) ratings; ranked by mu - {k:g}*sigma once a bot "
                  f"has {min_games} games (\"-\": not yet); retired versions get no new "
                  "games.")


def register(main: click.Group, ladder: click.Group) -> None:
    """Add the ladder subcommands to `ladder` and `arena sprt` to `main`."""
    ladder.add_command(serve)
    ladder.add_command(add)
    ladder.add_command(retire)
    ladder.add_command(show)
    main.add_command(sprt)


_DATABASE = click.option("--database", type=DATABASE, default="arena.db", show_default=True,
                         help="The ladder's database, a file or a postgresql:// URL (or give "
                         "--config).")
# Not click.Path(exists=True): its multi-line usage error; load_ladder_config says in one line.
_CONFIG = click.option("--config", type=click.Path(path_type=Path),
                       help="The ladder's config (names its database and the ladder).")
_LADDER = click.option("--ladder", "ladder_name",
                       help="Which ladder of the database (default: its only one).")


@click.command()
@click.argument("config_file", type=click.Path(path_type=Path))
@click.option("--duration", type=click.FloatRange(min=0),
              help="Stop scheduling after this many seconds, finish the matches in flight "
              "and exit (default: run until stopped).")
def serve(config_file: Path, duration: float | None) -> None:
    """Run the ladder of CONFIG_FILE until stopped (Ctrl-C or SIGTERM: the matches in
    flight finish; a second one abandons them). Bots are entered and retired while it
    runs with `arena ladder add/retire`; SIGHUP re-reads the config's bots."""
    _, err, fail = _consoles()
    try:
        config = load_ladder_config(config_file)
        arena_logging.configure(path=config.tournament.logs / f"{config.name}.jsonl")
        service = LadderService(config, duration=duration)
        service.on_listening = lambda a: err.print(
            f"ladder {config.name} listening on {a}; results in "
            f"{describe_db(config.tournament.database)}")
        service.on_note = lambda text: err.print(
            printable(f"ladder {config.name}: {text}"), markup=False, highlight=False)
        # The service handles SIGINT/SIGTERM itself (first: drain, second: abandon). Once it
        # returns, a late Ctrl-C (the second of two pressed quickly, after the matches have
        # already drained) must not kill the process while it reports: a handler that does
        # nothing is what trio restores when its signal receiver closes.
        # The same for SIGTERM: the second of two sent 0.3 s apart (a service manager, the
        # tests) killed the process (-15) when the first had already drained.
        for stop in (signal.SIGINT, signal.SIGTERM):
            signal.signal(stop, _ignore_signal)
        try:
            trio.run(service.serve)
        finally:
            # Ignored by the OS from now on: at exit Python puts the default handler back in
            # place of a Python one, and a late Ctrl-C then killed the process (-2).
            for stop in (signal.SIGINT, signal.SIGTERM):
                signal.signal(stop, signal.SIG_IGN)
    except ArenaError as exc:
        fail(str(exc))
    err.print(f"ladder {config.name} stopped: {service.played} matches played now, "
              f"{service.abandoned} abandoned (not stored); run the same command to continue")


def _ignore_signal(_signum: int, _frame: object) -> None:
    """A Ctrl-C once the ladder has stopped: it is stopping already."""


@click.command()
@click.argument("name")
@click.option("--version", "version", default="", help="The version (a separate identity).")
@click.option("--command", help="The command line the ladder launches (one process per seat).")
@click.option("--token", help="The token a remote bot connects with.")
@click.option("--stdio", is_flag=True,
              help="The command speaks lines on stdin/stdout (docs/stdio.md), not gRPC.")
@click.option("--dir", "folder", help="The bot's own folder, readable in its sandbox "
              "(default: its program's: the command, or an interpreter's first argument "
              "that is not an option).")
@click.option("--env", "env", multiple=True, metavar="NAME=VALUE",
              help="An environment variable for the bot (repeatable).")
@_CONFIG
@_DATABASE
@_LADDER
def add(name: str, version: str, command: str | None, token: str | None, stdio: bool,
        folder: str | None, env: tuple[str, ...], config: Path | None, database: Target,
        ladder_name: str | None) -> None:
    """Enter bot NAME (at --version) in a ladder, running or not: it gets games from the
    ladder's next poll. A retired version comes back. --command, --stdio, --dir and --env
    are a config's [[bot]] command, protocol = "stdio", dir and env."""
    out, err, fail = _consoles()
    try:
        db, ladder = _target(config, database, ladder_name)
        entry: dict[str, object] = {"name": name, "version": version,
                                    "command": command or [], "token": token or ""}
        if stdio:
            entry["protocol"] = "stdio"
        if folder is not None:
            entry["dir"] = folder
        if env:
            entry["env"] = _env_table(env)
        bot = make_bot(entry, Path.cwd(), where="bot")
        if bot.command:  # as a tournament checks its bots: a broken program never enters
            check_bot_command(0, bot.spec(), where=f"--command (bot {bot.identity!r})")
        book = LadderBook(db)
        before = book.enter(ladder, bot)
        out.print(printable(_entered(ladder, bot, before)), markup=False, highlight=False)
        for a, b, shared, same in _folder_sharers(book, ladder, bot):
            other = b if a == bot.name else a
            where = (f"{bot.name} and {other} run from one folder ({shared}), so each may "
                     "read the other's files" if same else
                     f"{a}'s folder ({shared}) is inside {b}'s, so {a} can read {b}'s files "
                     "there")
            err.print(printable(
                f"warning: {where} (a bot's own folder is its program's): give {bot.name} "
                "a folder of its own, or --dir"
            ), style="yellow", markup=False, highlight=False)
        if token and len(token) < GOOD_TOKEN:
            err.print(f"warning: --token: {len(token)} characters; anyone who can reach the "
                      f"ladder may guess it and play this bot's seats: use {GOOD_TOKEN} or "
                      "more random characters", style="yellow", markup=False, highlight=False)
    except ArenaError as exc:
        fail(str(exc))


def _entered(ladder: str, bot: LadderBot, before: Entry | None) -> str:
    """What `arena ladder add` did: entered a new version, re-entered a retired one, updated
    one (what changed), or nothing (the same entry, active)."""
    if before is None:
        return f"entered {bot.identity} in ladder {ladder}"
    again = " (it was retired)" if before.retired_at is not None else ""
    changes = _changes(before.bot, bot)
    if changes:
        return f"updated {bot.identity} in ladder {ladder}{again}: {'; '.join(changes)}"
    if again:
        return f"re-entered {bot.identity} in ladder {ladder}{again}"
    return f"{bot.identity} is already entered in ladder {ladder}, unchanged"


def _changes(old: LadderBot, new: LadderBot) -> list[str]:
    """How `new` differs from `old`, field by field (a token is never shown)."""

    def how(bot: LadderBot) -> str:
        return shlex.join(bot.command) if bot.command else "none (remote, with a token)"

    def env(bot: LadderBot) -> str:
        return " ".join(f"{k}={v}" for k, v in bot.env) or "none"

    def folder(bot: LadderBot) -> str:
        return str(bot.dir) if bot.dir is not None else "its program's folder"

    changes = [f"{what} {now} (was {was})" for what, now, was in (
        ("command", how(new), how(old)), ("protocol", new.protocol, old.protocol),
        ("dir", folder(new), folder(old)), ("env", env(new), env(old)),
    ) if now != was]
    if new.token and old.token and new.token != old.token:
        changes.append("token changed")
    if new.command and old.command and new.cwd != old.cwd:
        changes.append(f"run from {new.cwd} (was {old.cwd})")
    return changes


def _env_table(items: tuple[str, ...]) -> dict[str, str]:
    """`--env NAME=VALUE` options as a `[[bot]] env` table (its rules: config.parse_bot)."""
    table: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep:
            raise ConfigError(f"--env: NAME=VALUE, got {item!r}")
        table[key] = value
    return table


def _folder_sharers(
    book: LadderBook, ladder: str, bot: LadderBot
) -> list[tuple[str, str, Path, bool]]:
    """The pairs `(a, b, folder, same)` of `bot` and another active bot (by name: a bot's
    versions share its folder) where `a` can read `b`'s files: their own folders (`dir`,
    else the program's) are one (`same`), or `a`'s, `folder`, lies inside `b`'s; unless both
    set `dir` (`launcher.shared_folders`, as a tournament warns)."""
    if not bot.command:
        return []
    bots = {e.bot.name: e.bot for e in book.entries(ladder)
            if e.retired_at is None and e.bot.command and e.bot.name != bot.name}
    bots[bot.name] = bot
    dirs = {name: b.dir or program_dir(b.command, b.cwd) for name, b in bots.items()}
    explicit = [name for name, b in bots.items() if b.dir is not None]
    owners = own_folders((name, b.command, b.cwd, b.dir) for name, b in bots.items())
    return sorted({(a, b, folder, _resolved(dirs[a]) == _resolved(dirs[b]))
                   for a, b, folder in shared_folders(dirs, explicit, owners)
                   if bot.name in (a, b)})


def _resolved(folder: Path) -> Path:
    try:
        return folder.resolve()
    except (OSError, RuntimeError):
        return folder


@click.command()
@click.argument("name")
@click.option("--version", "version", default=None, help="Only this version (default: all).")
@_CONFIG
@_DATABASE
@_LADDER
def retire(name: str, version: str | None, config: Path | None, database: Target,
           ladder_name: str | None) -> None:
    """Retire bot NAME (all its versions, or --version) from a ladder: no new games; its
    matches and rating stay."""
    out, _, fail = _consoles()
    try:
        db, ladder = _target(config, database, ladder_name)
        gone = LadderBook(db).retire(ladder, name, version)
        if not gone:
            fail(f"NAME: no active bot {name!r}"
                 + (f" at version {version!r}" if version is not None else "")
                 + f" in ladder {ladder}")
        out.print(f"retired {', '.join(gone)} from ladder {ladder}", markup=False,
                  highlight=False)
    except ArenaError as exc:
        fail(str(exc))


@click.command()
@_CONFIG
@_DATABASE
@_LADDER
@click.option("--variant", "only", multiple=True,
              help="Only these variants' tables (repeatable; no overall table).")
@click.option("--include", multiple=True,
              help="Also rate the matches of these tournaments (patterns: 'match-*' takes "
              "ad-hoc `arena match` results), which stay out otherwise.")
@click.option("--format", "fmt", type=click.Choice(formats.FORMATS), default="table",
              show_default=True, help="A rich table, or data: JSON, CSV or Markdown.")
def show(config: Path | None, database: Target, ladder_name: str | None, only: tuple[str, ...],
         include: tuple[str, ...], fmt: str) -> None:
    """Print a ladder, per variant and overall: rank, bot@version, mu, sigma, mu - k*sigma,
    games, faults, and whether the version is retired."""
    _, _, fail = _consoles()
    try:
        db, ladder = _target(config, database, ladder_name)
        show_ladder(db, ladder, only, fmt, include)
    except ArenaError as exc:
        fail(str(exc))


def _describe(number: int, variant: str, r: SprtResult) -> str:
    p, u = r.paired, r.unpaired
    return (f"pair {number} ({variant}): LLR {r.llr:+.3f} [{r.lower:+.3f}, {r.upper:+.3f}]  "
            f"pentanomial {list(r.pentanomial)}  Elo paired {p.elo:+.1f} "
            f"[{p.low:+.1f}, {p.high:+.1f}]  unpaired {u.elo:+.1f} [{u.low:+.1f}, {u.high:+.1f}]")


@click.command()
@click.argument("config_file", type=click.Path(path_type=Path))
@click.option("--a", "bot_a", required=True, help="The bot under test (a [[bot]] name).")
@click.option("--b", "bot_b", required=True, help="Its opponent (a [[bot]] name).")
@click.option("--elo0", type=float, default=0.0, show_default=True, help="H0: Elo at most this.")
@click.option("--elo1", type=float, default=50.0, show_default=True, help="H1: at least this.")
@click.option("--alpha", type=float, default=0.05, show_default=True, help="False H1 rate.")
@click.option("--beta", type=float, default=0.05, show_default=True, help="False H0 rate.")
@click.option("--max-pairs", type=click.IntRange(min=1), default=500, show_default=True,
              help="Stop undecided after this many duplicate pairs.")
def sprt(config_file: Path, bot_a: str, bot_b: str, elo0: float, elo1: float, alpha: float,
         beta: float, max_pairs: int) -> None:
    """Is A stronger than B? Play duplicate pairs of A against B (the config's variants in
    turn, its concurrency) until the SPRT accepts H0 or H1, or --max-pairs. Prints each
    pair's LLR, bounds, pentanomial counts and Elo (paired and unpaired, 95 %); the verdict
    is the last line. Results are stored as a tournament named sprt-A-B-..."""
    out, _, fail = _consoles()
    try:
        try:
            test = Sprt(elo0, elo1, alpha, beta)
        except ValueError as exc:
            raise ConfigError(f"--elo0/--elo1/--alpha/--beta: {exc}") from None
        config = load_config(config_file)
        run = SprtRun.create(config, bot_a, bot_b, test, max_pairs)
        arena_logging.configure(path=config.logs / f"{run.config.name}.jsonl")
        out.print(f"SPRT {bot_a} vs {bot_b}: H0 Elo <= {elo0:g}, H1 Elo >= {elo1:g}, "
                  f"alpha {alpha:g}, beta {beta:g}; stored as {run.config.name} in "
                  f"{describe_db(config.database)}", markup=False, highlight=False)
        run.on_pair = lambda n, v, r: out.print(_describe(n, v, r), markup=False,
                                                highlight=False)
        run.on_forfeit = lambda v, why: out.print(
            printable(f"pair ({v}): not counted, a match lost by forfeit: {why}"),
            markup=False, highlight=False)
        run.on_listening = lambda address: out.print(
            f"referee listening on {address}: remote bots connect there with their tokens "
            f"(each has [faults] no_show_ms = {config.no_show_ms} to come)",
            markup=False, highlight=False)
        result = trio.run(run.run)
    except ArenaError as exc:
        fail(str(exc))
    if run.stored_uncounted:
        some = "1 stored match is" if run.stored_uncounted == 1 else (
            f"{run.stored_uncounted} stored matches are")
        out.print(f"{some} in no counted pair ({run.forfeited} pairs with a forfeit; the "
                  "rest of pairs unfinished when the test ended)", markup=False,
                  highlight=False)
    if run.stopped:
        out.print(f"verdict: none: the test stopped after {len(run.pairs)} counted pairs: "
                  f"{printable(run.stopped)}", markup=False, highlight=False)
        sys.exit(1)
    if result is None or result.verdict is Verdict.CONTINUE:
        pairs = len(run.pairs)
        llr = f"{result.llr:+.3f}" if result else "n/a"
        out.print(f"verdict: none after {pairs} pairs (max-pairs reached; LLR {llr})",
                  markup=False, highlight=False)
    else:
        meaning = (f"{bot_a} is at least {elo1:g} Elo stronger than {bot_b}"
                   if result.verdict is Verdict.H1
                   else f"{bot_a} is at most {elo0:g} Elo stronger than {bot_b}")
        out.print(f"verdict: {result.verdict.value} accepted after {len(run.pairs)} pairs "
                  f"({meaning})", markup=False, highlight=False)
    sys.exit(0)


def has_ladder(database: Target) -> bool:
    """Whether `database` holds a ladder service's tables with at least one ladder."""
    from arena.tournament.ladder_book import has_table

    return has_table(database, "ladders") and bool(LadderBook(database).ladders())


def show_only_ladder(database: Target, only: tuple[str, ...], fmt: str) -> None:
    """`arena ladder` without a subcommand on a ladder service's database: its one ladder
    (`show --ladder` picks one of several)."""
    _, _, fail = _consoles()
    try:
        show_ladder(database, find_ladder(database, None), only, fmt, ())
    except ArenaError as exc:
        fail(str(exc))
