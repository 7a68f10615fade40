"""`arena sprt`: play pairs of matches of A against B (one from each side, duplicate deals
with `duplicate = true`) until the SPRT decides.

The statistics are arena/tournament/sprt.py (pure); this module plays the pairs with the
tournament runner, over the config's variants in turn, `concurrency` matches at a time (both
matches of a pair one after the other), and feeds each finished pair to the test. When the test
decides, or `max_pairs` are in, the pairs still in flight are abandoned: the verdict counts only
whole pairs (a match of an abandoned pair that had already finished stays stored, uncounted:
`stored_uncounted`). A pair with a match lost by forfeit (a bot never took its seat: a
remote bot that did not connect, a bot that could not start) is not counted either: it says
nothing of strength (an outside walkthrough saw H1 "accepted" after 23 pairs of no-shows,
not one game played); `FORFEITS_IN_A_ROW` such pairs in a row stop the test.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import trio

from arena.errors import ConfigError
from arena.referee import Termination
from arena.tournament.config import BotSpec, TournamentConfig
from arena.tournament.ladder import match_score, serving
from arena.tournament.runner import TournamentRunner
from arena.tournament.schedule import Pairing, match_id
from arena.tournament.sprt import Sprt, SprtResult, Verdict

FORFEITS_IN_A_ROW = 3
"""Pairs in a row with a forfeit (not counted) after which the test stops, undecided."""


@dataclass
class SprtRun:
    """A running test: the pairs seen so far (A's score in each of the two matches)."""

    config: TournamentConfig
    a: BotSpec
    b: BotSpec
    test: Sprt
    max_pairs: int
    on_pair: Callable[[int, str, SprtResult], None] | None = None
    on_forfeit: Callable[[str, str], None] | None = None  # (variant, the forfeit's detail)
    on_listening: Callable[[str], None] | None = None  # where remote bots connect
    pairs: list[tuple[float, float]] = field(default_factory=list)
    result: SprtResult | None = None
    forfeited: int = 0  # pairs not counted: a match lost by forfeit
    stopped: str = ""  # why the test stopped undecided, if it did (forfeits in a row)
    matches_stored: int = 0
    _in_a_row: int = 0

    @classmethod
    def create(cls, config: TournamentConfig, a: str, b: str, test: Sprt,
               max_pairs: int) -> SprtRun:
        """A test of the config's bots named `a` and `b`, stored as its own tournament."""
        bots = {bot.name: bot for bot in config.bots}
        for flag, name in (("--a", a), ("--b", b)):
            if name not in bots:
                raise ConfigError(f"{flag}: no bot {name!r} in the config "
                                  f"(bots: {', '.join(bots)})")
        if a == b:
            raise ConfigError("--b: name a bot other than --a")
        run_name = f"sprt-{a}-{b}-{int(time.time())}-{secrets.token_hex(3)}"
        config = replace(config, name=run_name, bots=(bots[a], bots[b]))
        return cls(config, bots[a], bots[b], test, max_pairs)

    @property
    def stored_uncounted(self) -> int:
        """Matches stored but in no counted pair: forfeited pairs', and those of pairs still
        in flight when the test decided."""
        return self.matches_stored - 2 * len(self.pairs)

    async def run(self) -> SprtResult | None:
        cfg = self.config
        runner = TournamentRunner(cfg)
        runner.store.begin_tournament(cfg.name, {
            "sprt": {"a": self.a.name, "b": self.b.name, "elo0": self.test.elo0,
                     "elo1": self.test.elo1, "alpha": self.test.alpha, "beta": self.test.beta},
            "variants": list(cfg.variants)})
        for bot in (self.a, self.b):
            runner.store.add_bot(bot.name, "launched" if bot.launched else "remote",
                                 " ".join(bot.command))
            if not bot.launched:
                runner.hub.admit(bot.token, bot.name)
        slots = trio.Semaphore(cfg.concurrency)  # pairs; one match of each at once
        async with serving(runner) as address, trio.open_nursery() as nursery:
            if self.on_listening and not (self.a.launched and self.b.launched):
                self.on_listening(address)
            for number in range(self.max_pairs):
                await slots.acquire()
                nursery.start_soon(self._pair, runner, slots, number, nursery.cancel_scope)
        runner.store.finish_tournament(cfg.name)
        return self.result

    async def _pair(self, runner: TournamentRunner, slots: trio.Semaphore, number: int,
                    done: trio.CancelScope) -> None:
        cfg = self.config
        variant = cfg.variants[number % len(cfg.variants)]
        # One seed for both sides with duplicate = true (the same deals, sides swapped),
        # else one each (README "Deals": a bot can remember a match's deals).
        first = secrets.randbits(63)
        seeds = (first, first if cfg.duplicate else secrets.randbits(63))
        scores = [0.0, 0.0]
        forfeit = ""

        async def side(index: int) -> None:
            nonlocal forfeit
            teams = (self.a, self.b) if index == 0 else (self.b, self.a)
            # Unique by construction (schedule.match_id escapes every part).
            pairing = Pairing(match_id(cfg.name, variant, self.a.name, self.b.name,
                                       2 * number + index),
                              variant, cfg.options[variant], seeds[index], teams, index)
            report = await runner.play(pairing)
            self.matches_stored += 1
            scores[index] = match_score(report, pairing, self.a.name)
            if report.outcome.termination is Termination.FORFEIT and not forfeit:
                forfeit = report.outcome.detail or "a bot did not take its seat"

        try:
            # One side after the other, never both at once: with duplicate deals (the same,
            # sides swapped) a bot in both would hold, in one, its opponent's cards in the other.
            await side(0)
            await side(1)
        finally:
            slots.release()
        if forfeit:
            self.forfeited += 1
            self._in_a_row += 1
            if self.on_forfeit:
                self.on_forfeit(variant, forfeit)
            if self._in_a_row >= FORFEITS_IN_A_ROW:
                self.stopped = (f"{self._in_a_row} pairs in a row lost a match by forfeit "
                                f"(the last: {forfeit})")
                done.cancel()
            return
        self._in_a_row = 0
        self.pairs.append((scores[0], scores[1]))
        self.result = self.test.result(self.pairs)
        if self.on_pair:
            self.on_pair(len(self.pairs), variant, self.result)
        if self.result.verdict is not Verdict.CONTINUE or len(self.pairs) >= self.max_pairs:
            done.cancel()
