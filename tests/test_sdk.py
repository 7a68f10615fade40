"""The Python SDK's side of the contract (arena.sdk), fed the messages the referee's own link
builds (no network)."""

from __future__ import annotations

from typing import Any

import trio
from test_privacy_property import RecordingConnection

from arena.referee import MatchStart, TimeControl
from arena.rpc.server import RemoteSeatLink
from arena.rules import Action, Match, SeatView
from arena.sdk import Bot, MatchInfo, _handle


class _Keeps(Bot):
    started: list[MatchInfo] = []

    def on_match_start(self, info: MatchInfo) -> None:
        self.started.append(info)

    def act(self, view: SeatView, legal: tuple[Action, ...]) -> int:
        return 0


def test_match_start_tells_the_bot_its_seat_and_whole_time_control() -> None:
    """`on_match_start` gets the match, variant, options, seat, team, the seats' names and
    the whole time control the referee announced: decision time, bank, increment and grace."""
    game = Match("argentine-2v2", {"target": 15}, seed=4)
    conn: Any = RecordingConnection()
    link = RemoteSeatLink(conn, "m7", 3, "bot3", reconnect=False)
    tc = TimeControl(decision_ms=800, bank_ms=5000, increment_ms=100, grace_ms=40)
    names = ("a", "b", "c", "d")
    trio.run(link.start, MatchStart("m7", "argentine-2v2", game.options, 3, 1, names,
                                    game.team_of, tc))
    (message,) = conn.sent
    seats: dict[Any, Any] = {}
    _Keeps.started = []
    assert _handle(message, seats, _Keeps) is None
    (info,) = _Keeps.started
    assert (info.match_id, info.variant, info.seat, info.team) == ("m7", "argentine-2v2", 3, 1)
    assert info.options == game.options
    assert info.seat_names == names
    assert (info.decision_ms, info.bank_ms, info.increment_ms, info.grace_ms) == (
        800, 5000, 100, 40
    )
    assert ("m7", 3) in seats
