"""Live spectating of the matches a tournament is playing in this process: public
information only, shown `delay_s` late (`[spectators] delay_s`).

`public_state` is what every seat at the table knows — the cards played, the calls and
answers, envido announcements, scores — and nothing any single seat holds: no hand, no
partner's cards, no gallo's discard, no sign. `Spectators` samples the live matches (the
runner's `live` map) in the trio thread, keeps each state with the time it was seen, and
hands out the newest one at least `delay_s` old.
"""

from __future__ import annotations

import bisect
import json
import math
from collections import Counter, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import trio

from arena.rules import Match
from arena.rules.public import held, public_view
from arena.web.replaydata import view_json

SAMPLE_S = 0.2  # how often the live matches are looked at
KEEP = 2_000  # states kept per match (covers a long delay at one change per sample)


def public_state(match: Match) -> dict[str, Any]:
    """The table as a spectator may see it now."""
    state = view_json(public_view(match))
    state.update(seat=None, hand=[], hand_size=0, partner_cards=[], discard=None, legal=[],
                 signals=[])
    state["hands"] = [None] * match.num_seats
    state["held"] = list(held(match))
    state["over"] = match.is_over
    return state


@dataclass
class _Feed:
    header: dict[str, Any]
    states: deque[tuple[float, int, dict[str, Any]]] = field(
        default_factory=lambda: deque(maxlen=KEEP))
    ended: float = math.inf  # when the match left the live map
    text: tuple[int, str] = (-1, "")  # the last event text made, by state number


class Spectators:
    """Delayed public states of the live matches of `live()` (match id -> (bots, Match))."""

    def __init__(self, live: Callable[[], Mapping[str, tuple[tuple[str, ...], Match]]],
                 delay_s: float = 0.0, *, clock: Callable[[], float] = trio.current_time) -> None:
        self.live = live
        self.delay_s = delay_s
        self.clock = clock
        self.feeds: dict[str, _Feed] = {}
        self.viewers: Counter[str] = Counter()  # match id -> live pages streaming it now
        self._sampled = trio.Event()

    def wanted(self) -> set[str] | None:
        """The matches a live page streams now (None: every match, with a delay: each
        state is kept for whoever opens a page later)."""
        if self.delay_s > 0:
            return None
        return {match_id for match_id, count in list(self.viewers.items()) if count > 0}

    def sample(self) -> None:
        """Record the current public state of every live match (when it changed)."""
        now = self.clock()
        current = dict(self.live())
        for match_id, (bots, match) in current.items():
            feed = self.feeds.get(match_id)
            if feed is None:
                feed = self.feeds[match_id] = _Feed({
                    "match_id": match_id, "variant": match.variant.name,
                    "deck": match.variant.deck.value, "seats": match.num_seats,
                    "bots": list(bots), "team_of": list(match.team_of), "finished": False})
            state = public_state(match)
            if not feed.states or feed.states[-1][2] != state:
                feed.states.append((now, len(feed.states), state))
        for match_id, feed in list(self.feeds.items()):
            if match_id not in current and feed.ended == math.inf:
                feed.ended = now
            if feed.ended + self.delay_s + 60 < now:  # long gone, even for late watchers
                del self.feeds[match_id]

    def running(self) -> list[dict[str, Any]]:
        """The matches a spectator may watch now (started at least `delay_s` ago)."""
        now = self.clock()
        return [f.header for f in self.feeds.values()
                if f.states and f.states[0][0] + self.delay_s <= now
                and f.ended + self.delay_s > now]

    def state(self, match_id: str) -> tuple[dict[str, Any], int, dict[str, Any]] | None:
        """(header, number, state): the newest state of `match_id` at least `delay_s` old."""
        feed = self.feeds.get(match_id)
        if feed is None:
            return None
        cutoff = self.clock() - self.delay_s
        # The states are in the order seen: the newest at or before the cutoff, by bisection
        # (every open live page asks for it at every sample).
        at = bisect.bisect_right(feed.states, cutoff, key=lambda kept: kept[0])
        if at == 0:
            return None
        _, number, state = feed.states[at - 1]
        return feed.header, number, state

    def event(self, match_id: str) -> tuple[int, str, bool] | None:
        """(number, event text, over): `state(match_id)` as one server-sent event, made once
        per state however many pages stream it."""
        got = self.state(match_id)
        if got is None:
            return None
        header, number, state = got
        feed = self.feeds[match_id]
        if feed.text[0] != number:
            feed.text = (number, event_text(header, number, state))
        return number, feed.text[1], bool(state["over"])

    async def next_sample(self) -> None:
        """Wait until the live matches have been looked at again (`run`)."""
        await self._sampled.wait()

    async def run(self) -> None:
        """Sample forever (a task of the web server's nursery)."""
        while True:
            self.sample()
            self._sampled.set()  # every live page waiting looks once
            self._sampled = trio.Event()
            await trio.sleep(SAMPLE_S)


def event_text(header: dict[str, Any], number: int, state: dict[str, Any]) -> str:
    """One server-sent event with a spectator's state."""
    body = {"header": header, "step": number, "state": state}
    return f"event: state\ndata: {json.dumps(body)}\n\n"
