"""`arena ladder serve`: a ladder that schedules its own matches, for as long as it runs.

Bots are identities `name@version` (a bot without a version is just `name`), kept in the
ladder's own tables (ladder_book.py) beside the store's. The service reads `ladder_bots`
every `poll_ms`, so `arena ladder add/retire` (which only write
there) take effect while it runs; SIGHUP re-reads the config's `[[bot]]` tables.

Each pairing is a pair of matches, one from each side, stored in the ordinary `matches` table
under the ladder's name; with `duplicate = true` the two share one seed (the same deals, sides
swapped), otherwise each has its own (README "Deals": a bot can remember a match's deals). Pair
numbers only grow (the next one is one past the largest in `ladder_pairs`), so a restart
continues where the last run stopped and a match is never stored twice. A match cut short by a
stop is not stored; a pair whose first side was stored and second was not (`HalfPair`) gets
its second side first after a restart.

Ratings are OpenSkill (Plackett-Luce; it rates teams, and each side of a Truco match is one
bot), recomputed from the stored matches in match-id order, per variant and overall, ranked
by the conservative mu - k*sigma once a bot has `min_games`. A new version may start from its
predecessor's rating (mu kept, sigma widened) instead of the default prior.
"""

from __future__ import annotations

import contextlib
import random
import secrets
import shlex
import signal
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import structlog
import trio

from arena.errors import ArenaError, ConfigError
from arena.referee import MatchReport, Termination
from arena.rules import Match
from arena.tournament.config import (
    BotSpec,
    TournamentConfig,
    check_bot_command,
    parse_config,
    read_toml,
)
from arena.tournament.ladder_book import LadderBook, LadderBot, make_bot
from arena.tournament.ladder_ratings import LadderLine, line_of, rate, record
from arena.tournament.launcher import program_dir
from arena.tournament.pairing_policy import Skill, choose_pair
from arena.tournament.runner import TournamentRunner, launch_argv
from arena.tournament.schedule import Pairing
from arena.tournament.store import bot_results

log = structlog.get_logger("arena.ladder")


@dataclass(frozen=True, slots=True)
class LadderConfig:
    """A validated ladder config: the `[ladder]` table and the bots of the config file."""

    tournament: TournamentConfig  # name, variants, concurrency, database, time control...
    bots: tuple[LadderBot, ...]
    min_games: int = 10
    k: float = 3.0
    inherit: bool = True
    poll_ms: int = 1000
    path: Path | None = None

    @property
    def name(self) -> str:
        return self.tournament.name


_LADDER = {"name", "variants", "concurrency", "min_games", "database", "replays", "logs",
           "listen", "k", "inherit", "poll_ms", "duplicate"}


def load_ladder_config(path: Path) -> LadderConfig:
    """Read and validate a ladder config; raise `ConfigError` naming the bad field."""
    return replace(parse_ladder_config(read_toml(path), base=path.parent), path=path)


def parse_ladder_config(raw: dict[str, Any], base: Path = Path(".")) -> LadderConfig:
    """Validate a parsed ladder config. The tables other than `[ladder]` and `[[bot]]`
    (time_control, faults, limits, options, tls) mean what they mean in a tournament."""
    raw = dict(raw)
    if "tournament" in raw:
        raise ConfigError("tournament: a ladder config has a [ladder] table instead")
    table = raw.pop("ladder", None)
    if not isinstance(table, dict):
        raise ConfigError("ladder: a ladder config needs a [ladder] table")
    for key in table:
        if key not in _LADDER:
            raise ConfigError(f"ladder: unknown field {key!r}; allowed fields: "
                              f"{', '.join(sorted(_LADDER))}")
    k = table.get("k", 3.0)
    if isinstance(k, bool) or not isinstance(k, int | float) or k < 0:
        raise ConfigError(f"ladder.k: must be a number at least 0, got {k!r}")
    inherit = table.get("inherit", True)
    if not isinstance(inherit, bool):
        raise ConfigError(f"ladder.inherit: must be true or false, got {inherit!r}")
    duplicate = table.get("duplicate", False)
    if not isinstance(duplicate, bool):
        raise ConfigError(f"ladder.duplicate: must be true or false, got {duplicate!r}")
    min_games = _whole(table, "min_games", 10, 0)
    poll_ms = _whole(table, "poll_ms", 1000, 10)
    bots = tuple(_bot(i, entry, base) for i, entry in enumerate(raw.pop("bot", [])))
    seen: set[str] = set()
    for i, bot in enumerate(bots):
        if bot.identity in seen:
            raise ConfigError(f"bot[{i}]: {bot.identity!r} is entered twice")
        seen.add(bot.identity)
    tournament = {key: table[key] for key in
                  ("variants", "concurrency", "database", "replays", "logs", "listen")
                  if key in table}
    tournament["name"] = table.get("name", "ladder")
    tournament["games"] = 2
    tournament["duplicate"] = duplicate
    # parse_config wants two bots; the ladder's own come and go while it runs.
    placeholders = [{"name": f"placeholder{i}", "token": f"-{i}"} for i in range(2)]
    config = parse_config({**raw, "tournament": tournament, "bot": placeholders}, base=base)
    if ":" in config.name:
        raise ConfigError(f"ladder.name: no ':' in a ladder's name, got {config.name!r}")
    return LadderConfig(replace(config, bots=()), bots, min_games, float(k), inherit, poll_ms)


def _whole(table: dict[str, Any], key: str, default: int, minimum: int) -> int:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ConfigError(f"ladder.{key}: must be a whole number at least {minimum}, "
                          f"got {value!r}")
    return value


def _bot(index: int, entry: Any, base: Path) -> LadderBot:
    # An absolute folder: the entry is stored, and `arena ladder add` of the same bot from
    # the config's folder (stored with its absolute working folder) finds it unchanged.
    return make_bot(entry, base.absolute(), where=f"bot[{index}]")


@asynccontextmanager
async def serving(runner: TournamentRunner) -> AsyncIterator[str]:
    """Serve `runner`'s referee for as long as the block runs (`TournamentRunner.serving`:
    the sandbox, the storage worker, the listeners), so `runner.play` can launch bots that
    connect to it; yield the address."""
    async with runner.serving() as address:
        yield address


def enter_bot(runner: TournamentRunner, bot: BotSpec) -> None:
    """Make `bot` playable by `runner` while it runs (its command resolved as a tournament's,
    a stdio bot's behind the adapter, or its token admitted); raises `ConfigError` if a
    launched bot's program is missing."""
    if bot.launched:
        runner.argv[bot.name] = launch_argv(bot)
        runner.bot_dirs[bot.name] = bot.dir or program_dir(bot.command, bot.cwd)
    else:
        runner.hub.admit(bot.token, bot.name)
        with contextlib.suppress(RuntimeError):  # outside trio: entered before the start
            runner.entered_at[bot.token] = trio.current_time()
    runner.store.add_bot(bot.name, "launched" if bot.launched else "remote",
                         shlex.join(bot.command))


def pair_match_id(ladder: str, number: int, variant: str, a: str, b: str, side: int) -> str:
    """The id of side `side` (0: `a` first, 1: `b` first) of pair `number`."""
    return f"{ladder}:{number:07d}:{variant}:{a}-{b}:{side}"


@dataclass(frozen=True, slots=True)
class HalfPair:
    """A pair whose first side is stored and whose second is not (the service was killed,
    or stopped twice, between them): played first when both bots can play."""

    number: int
    variant: str
    a: str
    b: str
    seed: int


def half_pairs(ladder: str, scheduled: list[tuple[int, str, str, str, int]],
               stored: set[str]) -> list[HalfPair]:
    """The pairs of `scheduled` with side 0 in `stored` and side 1 not."""
    return [HalfPair(n, v, a, b, seed) for n, v, a, b, seed in scheduled
            if pair_match_id(ladder, n, v, a, b, 0) in stored
            and pair_match_id(ladder, n, v, a, b, 1) not in stored]


def match_score(report: MatchReport, pairing: Pairing, first: str) -> float:
    """`first`'s score in a finished match: 1 a win, 0 a loss, ½ no winner."""
    teams = (pairing.teams[0].name, pairing.teams[1].name)
    accounts = Match(pairing.variant, pairing.options, pairing.seed).team_of
    winner, _, _ = bot_results(report, teams, accounts)
    if winner is None:
        return 0.5
    return 1.0 if teams[winner] == first else 0.0


BENCH_AFTER = 3
"""Matches in a row a launched bot never took its seat in, after which the ladder stops
pairing it until its entry changes (`LadderService._count_starts`)."""


@dataclass
class LadderService:
    """The running ladder: schedules pairs (one match from each side) until stopped."""

    config: LadderConfig
    duration: float | None = None  # seconds of scheduling, then drain (None: until stopped)
    rng: random.Random = field(default_factory=lambda: random.Random(secrets.randbits(64)))
    on_listening: Callable[[str], None] | None = None
    on_note: Callable[[str], None] | None = None
    """Told, in a line for the organizer's console, what the log says of a reload, of an
    entry refused and of a bot benched (the console said nothing of a SIGHUP: an outside
    walkthrough)."""

    def __post_init__(self) -> None:
        self.book = LadderBook(self.config.tournament.database)
        self.runner = TournamentRunner(self.config.tournament, launches=True)
        self.bots: dict[str, BotSpec] = {}
        self.skills: dict[str, dict[str, LadderLine]] = {}  # variant -> bot -> line
        self.games: dict[str, int] = {}  # stored + in flight, all variants
        self.scheduling = trio.CancelScope()
        self.played = 0
        self.abandoned = 0
        self.refused: dict[str, BotSpec] = {}  # identity -> the spec refused (logged once)
        self.benched: set[str] = set()  # identities that failed to start BENCH_AFTER times
        self._no_starts: dict[str, int] = {}  # identity -> forfeits at start in a row
        self.halves: list[HalfPair] = []  # pairs to finish, found at start
        self._in_flight: dict[str, int] = {}  # remote token -> its pairs in flight
        self._withdrawn: dict[str, str] = {}  # token -> why, closed once its pairs end

    async def serve(self) -> None:
        cfg = self.config
        name = cfg.name
        self.book.save_settings(name, {"k": cfg.k, "min_games": cfg.min_games,
                                       "inherit": cfg.inherit,
                                       "variants": list(cfg.tournament.variants)})
        self.runner.store.begin_tournament(name, {"ladder": True,
                                                  "variants": list(cfg.tournament.variants)})
        for bot in cfg.bots:
            self.book.enter(name, bot, revive=False)
        self._recompute()
        if self.duration is not None:
            self.scheduling.deadline = trio.current_time() + self.duration
        abandon = trio.CancelScope()  # the second stop signal: matches in flight too
        # The signals are handled until the very end (the listeners' and the store's
        # clean-up included): a second Ctrl-C during it must not kill the process.
        async with trio.open_nursery() as outer:
            outer.start_soon(self._signals, abandon)
            async with serving(self.runner) as address:
                log.info("ladder_start", ladder=name, address=address,
                         stored=sum(self.games.values()) // 2,
                         next_pair=self.book.next_pair(name))
                if self.on_listening:
                    self.on_listening(address)
                with abandon:
                    async with trio.open_nursery() as top:
                        top.start_soon(self._poll)
                        async with trio.open_nursery() as pairs:
                            with self.scheduling:
                                await self._schedule(pairs)
                            log.info("ladder_draining", ladder=name)
                        top.cancel_scope.cancel()
            outer.cancel_scope.cancel()
        log.info("ladder_stop", ladder=name, played=self.played, abandoned=self.abandoned)

    def _recompute(self) -> None:
        """Ratings and game counts from the stored matches (at start: a restart resumes)."""
        rows = self.book.matches(self.config.name)
        inherit = self.book.predecessors(self.config.name) if self.config.inherit else {}
        self.skills = {v: rate(rows, variant=v, predecessors=inherit)
                       for v in self.config.tournament.variants}
        self.games = {}
        for row in rows:
            for bot in (row.bot0, row.bot1):
                self.games[bot] = self.games.get(bot, 0) + 1
        self.halves = half_pairs(self.config.name, self.book.pairs(self.config.name),
                                 {row.id for row in rows})
        if self.halves:
            log.info("ladder_half_pairs", pairs=[h.number for h in self.halves])
            self._note(f"{len(self.halves)} pairs stored with one side only (a stop cut "
                       "them): their second sides are played first, once both bots can play")
        self._refresh_bots()

    def _refresh_bots(self) -> None:
        active = {e.bot.identity: e.bot for e in self.book.entries(self.config.name)
                  if e.retired_at is None}
        for ident in list(self.bots):
            if ident not in active:
                self._revoke(self.bots.pop(ident).token, active,
                             f"{ident} was retired from ladder {self.config.name!r}")
                log.info("ladder_bot_retired", bot=ident)
        for ident, bot in active.items():
            spec = bot.spec()
            before = self.bots.get(ident)
            if before == spec or self.refused.get(ident) == spec:
                continue
            try:
                if spec.launched:
                    check_bot_command(0, spec, where=f"bot {ident!r}")
                enter_bot(self.runner, spec)
            except (ArenaError, OSError) as exc:  # unattended: one bad entry stops nothing
                self.refused[ident] = spec  # said once, not at every poll
                log.warning("ladder_bot_refused", bot=ident, error=str(exc))
                self._note(f"bot {ident} refused: {exc}")
                continue
            self.refused.pop(ident, None)
            self.benched.discard(ident)  # a new entry gets its chance again
            self._no_starts.pop(ident, None)
            self.bots[ident] = spec
            if before is not None and before.token != spec.token:
                self._revoke(before.token, active,  # a new token: the old one is void
                             f"{ident} was given a new token in ladder {self.config.name!r}")
            log.info("ladder_bot_entered", bot=ident, launched=spec.launched)

    def _revoke(self, token: str, active: Mapping[str, LadderBot], why: str) -> None:
        """No new connection with `token` (a retired bot's, or one replaced by a new token),
        unless an active entry still has it; its connections finish their matches in play,
        then are told `why` and closed. Kept admitted, a retired entrant kept a door to the
        referee (hostile review, round 5)."""
        if token and all(bot.token != token for bot in active.values()):
            if self._in_flight.get(token):  # a pair's second side still needs it
                self.runner.hub.revoke(token)
                self._withdrawn[token] = why
            else:
                self.runner.hub.retire(token, why)
            log.info("ladder_token_revoked")

    def _present(self) -> list[str]:
        """The bots that can play now: every launched one, and the remote ones connected. A
        remote bot away (not connected yet, gone, its token just changed) is not paired:
        paired, it held a slot for `no_show_ms` and lost both matches by forfeit, counted in
        its rating (outside walkthrough 2: with concurrency 2, two such pairs stopped the
        whole ladder for a minute)."""
        hub = self.runner.hub
        return sorted(ident for ident, spec in self.bots.items()
                      if ident not in self.benched
                      and (spec.launched or hub.is_connected(spec.token)))

    def _count_starts(self, report: MatchReport) -> None:
        """A launched bot that never took its seat `BENCH_AFTER` matches in a row (a program
        that crashes at start) is benched: not paired again until its entry changes. Paired
        first for having the fewest games, it lost every match of a run at once, and no
        real game was played (outside walkthrough 2: 66 forfeits in 20 s)."""
        o = report.outcome
        faulty = report.seat_names[o.faulty_seat] if o.faulty_seat is not None else None
        for name in set(report.seat_names):
            if o.termination is Termination.FORFEIT and name == faulty:
                self._no_starts[name] = self._no_starts.get(name, 0) + 1
                if (self._no_starts[name] >= BENCH_AFTER and name in self.bots
                        and self.bots[name].launched and name not in self.benched):
                    self.benched.add(name)
                    log.warning("ladder_bot_benched", bot=name, forfeits=self._no_starts[name],
                                detail=o.detail[:300])
                    self._note(f"bot {name} benched: it did not take its seat "
                               f"{self._no_starts[name]} matches in a row ({o.detail[:200]}); "
                               "it plays again once its entry changes")
            else:
                self._no_starts.pop(name, None)

    async def _poll(self) -> None:
        while True:
            await trio.sleep(self.config.poll_ms / 1000)
            self._refresh_bots()

    async def _signals(self, everything: trio.CancelScope) -> None:
        """First SIGINT/SIGTERM: stop scheduling, finish the matches in flight. Second:
        abandon them (they are not stored). SIGHUP: re-read the config's bots."""
        with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM, signal.SIGHUP) as sigs:
            stops = 0
            async for signum in sigs:
                if signum == signal.SIGHUP:
                    self._reload()
                    continue
                stops += 1
                log.info("ladder_signal", signal=signal.Signals(signum).name, stops=stops)
                self.scheduling.cancel()
                if stops >= 2:
                    everything.cancel()

    def _reload(self) -> None:
        if self.config.path is None:
            return
        try:
            fresh = load_ladder_config(self.config.path)
        except ConfigError as exc:
            log.warning("ladder_reload_failed", error=str(exc))
            self._note(f"reload failed, the bots stay as they were: {exc}")
            return
        for bot in fresh.bots:
            try:
                self.book.enter(self.config.name, bot, revive=False)
            except ConfigError as exc:  # a token another entry has, say: never fatal here
                log.warning("ladder_reload_failed", bot=bot.identity, error=str(exc))
                self._note(f"reload: bot {bot.identity} refused: {exc}")
        self._refresh_bots()
        log.info("ladder_reloaded", bots=len(fresh.bots))
        self._note(f"reloaded {self.config.path}: {len(fresh.bots)} bots in the config, "
                   f"{len(self.bots)} playing")

    def _note(self, text: str) -> None:
        if self.on_note is not None:
            self.on_note(text)

    async def _schedule(self, pairs: trio.Nursery) -> None:
        cfg = self.config
        slots = trio.Semaphore(cfg.tournament.concurrency)  # pairs; one match of each at once
        limiter = trio.CapacityLimiter(cfg.tournament.concurrency)
        while True:
            await slots.acquire()
            present = self._present()
            half = next((h for h in self.halves if h.a in present and h.b in present), None)
            if half is not None:
                self.halves.remove(half)
                for bot in (half.a, half.b):
                    self.games[bot] = self.games.get(bot, 0) + 1
                log.info("ladder_pair", pair=half.number, variant=half.variant,
                         bots=[half.a, half.b], sides=[1])
                self._start_pair(pairs, slots, limiter, half.number, half.variant,
                                 (self.bots[half.a], self.bots[half.b]), half.seed, (1,))
                continue
            number = self.book.next_pair(cfg.name)
            variants = cfg.tournament.variants
            variant = variants[number % len(variants)]
            skills = {b: Skill(x.mu, x.sigma) for b, x in self.skills[variant].items()}
            chosen = choose_pair(present, skills, self.games, self.rng)
            if chosen is None:
                slots.release()
                await trio.sleep(cfg.poll_ms / 1000)
                continue
            a, b = chosen
            seed = secrets.randbits(63)
            self.book.schedule_pair(cfg.name, number, variant, a, b, seed)
            for bot in chosen:
                self.games[bot] = self.games.get(bot, 0) + 2
            specs = (self.bots[a], self.bots[b])
            log.info("ladder_pair", pair=number, variant=variant, bots=[a, b])
            self._start_pair(pairs, slots, limiter, number, variant, specs, seed, (0, 1))

    def _start_pair(
        self, pairs: trio.Nursery, slots: trio.Semaphore, limiter: trio.CapacityLimiter,
        number: int, variant: str, specs: tuple[BotSpec, BotSpec], seed: int,
        sides: tuple[int, ...],
    ) -> None:
        """Play the pair's `sides` in `pairs`; a remote bot's token withdrawn meanwhile is
        not closed before they are played (`_revoke`)."""
        for spec in specs:
            if spec.token:
                self._in_flight[spec.token] = self._in_flight.get(spec.token, 0) + 1
        pairs.start_soon(self._play_pair, slots, limiter, number, variant, specs, seed, sides)

    async def _play_pair(
        self, slots: trio.Semaphore, limiter: trio.CapacityLimiter, number: int,
        variant: str, specs: tuple[BotSpec, BotSpec], seed: int,
        sides: tuple[int, ...] = (0, 1),
    ) -> None:
        # The second side's deals: the first's with duplicate = true, else its own.
        seeds = (seed, seed if self.config.tournament.duplicate else secrets.randbits(63))
        tokens = [spec.token for spec in specs if spec.token]  # counted by `_start_pair`
        try:
            # One side after the other, never both at once: with duplicate deals, a bot in
            # both would hold, in one, its opponent's cards in the other.
            for side in sides:
                teams = specs if side == 0 else (specs[1], specs[0])
                pairing = Pairing(
                    match_id=pair_match_id(self.config.name, number, variant,
                                           specs[0].name, specs[1].name, side),
                    variant=variant, options=self.config.tournament.options[variant],
                    seed=seeds[side], teams=teams, index=side,
                )
                await self._play_one(limiter, pairing)
        finally:
            slots.release()
            for token in tokens:
                self._in_flight[token] -= 1
                if not self._in_flight[token] and token in self._withdrawn:
                    # withdrawn while this pair played: closed now, its sides both played
                    self.runner.hub.retire(token, self._withdrawn.pop(token))

    async def _play_one(self, limiter: trio.CapacityLimiter, pairing: Pairing) -> None:
        report: MatchReport | None = None
        async with limiter:
            try:
                report = await self.runner.play(pairing)
            finally:
                if report is None:  # cut short by a stop: not stored, not counted
                    self.abandoned += 1
                    for bot in pairing.teams:
                        self.games[bot.name] -= 1
        self.played += 1
        self._count_starts(report)
        first = pairing.teams[0].name
        score = match_score(report, pairing, first)
        winner = None if score == 0.5 else 0 if score == 1.0 else 1
        lines = self.skills[pairing.variant]
        inherit = self.book.predecessors(self.config.name) if self.config.inherit else {}
        record(line_of(lines, first, inherit),
               line_of(lines, pairing.teams[1].name, inherit), winner)
