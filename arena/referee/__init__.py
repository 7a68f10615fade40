"""The referee (trio): drives a match, owns every deadline, checks every answer.

Only this layer knows about time. It talks to seats through `SeatLink`s and never decides a
rule itself: `arena.rules.Match` does.
"""

from arena.referee.links import (
    Answer,
    DecisionRequest,
    Fault,
    Interrupted,
    MatchStart,
    PendingAnswer,
    SeatLink,
    TimeControl,
)
from arena.referee.match import Decision, FaultPolicy, MatchReport, run_match
from arena.referee.outcome import Outcome, Termination

__all__ = [
    "Answer",
    "Decision",
    "DecisionRequest",
    "Fault",
    "FaultPolicy",
    "Interrupted",
    "MatchReport",
    "MatchStart",
    "Outcome",
    "PendingAnswer",
    "SeatLink",
    "Termination",
    "TimeControl",
    "run_match",
]
