"""How a match ended: a typed termination and a frozen outcome (python-chess `Outcome` style)."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from arena.rules import MatchResult


class Termination(enum.IntEnum):
    """How a match ended. Numbers match the wire enum `arena.v1.Termination`."""

    NORMAL = 1  # played to the end under the rules
    TIMEOUT = 2  # a seat ran out of time (the fault that ended it)
    ILLEGAL_ACTION = 3  # a seat answered with something not legal or not well formed
    DISCONNECT = 4  # a seat's connection dropped
    FORFEIT = 5  # a seat never took its place (crashed at start, never connected)


@dataclass(frozen=True, slots=True)
class Outcome:
    """The end of a match: how, who won, which seat was at fault, and the points."""

    termination: Termination
    winner_team: int | None
    faulty_seat: int | None
    detail: str
    result: MatchResult | None  # the engine's result for a NORMAL ending
    strikes: tuple[int, ...]  # faults per seat
    points: tuple[int, ...]  # points scored per team over the whole match
    games_won: tuple[int, ...]

    @property
    def normal(self) -> bool:
        return self.termination is Termination.NORMAL
