"""What the referee says to a seat, and the narrow interface through which it says it.

A `SeatLink` is one seat's line to its bot: over gRPC (`arena.rpc`) or in-process (tests,
benchmarks). The referee owns time: it wraps `ask` in a deadline and cancels it when the time
is up; a link never times out on its own and must discard an answer that arrives after `ask`
was cancelled.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from arena.referee.outcome import Outcome
from arena.rules import Action, Event, HandSummary, Options, SeatView
from arena.rules.signals import Signal


@dataclass(frozen=True, slots=True)
class TimeControl:
    """Per-decision deadline, plus an optional chess-clock bank with increment, plus a grace.

    A seat is told it has ``decision_ms`` + what is left of its bank; the referee waits
    ``grace_ms`` longer before it calls a timeout, for the answer's trip over the network
    (lag compensation). Time past ``decision_ms`` is taken from the bank, the grace included
    (the bank never goes below zero); ``increment_ms`` is added after every decision answered
    in time.

    With ``fixed_pace``, every decision answered within ``decision_ms`` looks, to every other
    seat, as if it took all of it: the referee holds the answer's moves and the next request
    until ``decision_ms`` after it asked. Otherwise a bot's seats can talk through how long
    each one waits before it answers, which every other seat sees (a hostile review, round
    6, passed hidden cards between partners at 5 bits a decision with signals off, and
    between the two seats of one bot on opposite sides in rotating gallo)."""

    decision_ms: int = 1000
    bank_ms: int = 0
    increment_ms: int = 0
    grace_ms: int = 50
    fixed_pace: bool = False


@dataclass(frozen=True, slots=True)
class MatchStart:
    """Told to each seat when its match starts."""

    match_id: str
    variant: str
    options: Options
    seat: int
    team: int
    seat_names: tuple[str, ...]
    team_of: tuple[int, ...]
    time_control: TimeControl


@dataclass(frozen=True, slots=True)
class DecisionRequest:
    """A seat must act: its view, its legal actions, and its time."""

    request_id: str
    match_id: str
    seat: int
    view: SeatView
    legal_actions: tuple[Action, ...]
    deadline_unix_ms: int
    time_left_ms: int


@dataclass(frozen=True, slots=True)
class Answer:
    """What a bot answered, unchecked: an index into the legal actions, or an action, and
    optionally a signal for its partners (RULES.md §4.9)."""

    action_index: int | None = None
    action: Action | None = None
    signal: Signal | None = None
    # Why a signal sent with the action could not even be read (an unknown kind): refused
    # like a signal the match refuses, a strike, and the action goes ahead unsigned.
    unreadable_signal: str = ""


@dataclass(frozen=True, slots=True)
class Fault:
    """A strike against a seat, as the seat is told it: which request, what kind of fault
    ("timeout" or "illegal_action"), why, and the seat's strikes so far (this one included)
    out of the strikes that forfeit the match."""

    request_id: str
    seat: int
    kind: str
    detail: str
    strikes: int
    max_strikes: int
class Interrupted(Exception):
    """Raised by `PendingAnswer.wait` when `PendingAnswer.interrupt` ended the wait."""


class PendingAnswer(Protocol):
    """A request sent over a wire, as a link that can report its times hands it back
    (`post`). Times are time.monotonic() seconds noted where the wire is (not when the
    referee's task got round to it); the link reports them, the referee alone judges them."""

    sent_at: float | None  # when the request left for the bot (None: not yet)
    # when it was handed to the transport, before that write returned (None: not yet): where
    # the bot's time starts (`sent_at` can be noted after the answer was read)
    handed_at: float | None
    received_at: float | None  # when the answer arrived (set once `wait` has returned)

    def unread_since(self) -> float | None:
        """When the oldest message from the bot arrived that is not routed yet (None: none)."""
        ...

    async def wait(self) -> Answer:
        """The answer; can be cancelled and awaited again. Raises like `SeatLink.ask`, and
        `Interrupted` if `interrupt` was called while it waited."""
        ...

    def interrupt(self) -> None:
        """End the current `wait` (if a task is waiting and its answer has not come) with
        `Interrupted`: the referee's deadline passed (`arena.referee.deadlines`). A later
        `wait` waits again. Never blocks."""
        ...

    def abandon(self) -> None:
        """No answer is wanted any more (the deadline passed)."""
        ...


class SeatLink(Protocol):
    """One seat's line to its bot."""

    @property
    def bot_name(self) -> str: ...

    async def start(self, start: MatchStart) -> None:
        """Tell the seat its match started."""

    async def ask(self, request: DecisionRequest) -> Answer:
        """Ask the seat to act and wait for its answer (no deadline of its own). Raises
        `BotDisconnected` if the bot is gone, `ProtocolViolation` for a malformed answer."""

    def tell(self, item: Event | HandSummary) -> None:
        """Pass on an event or hand summary the seat may see (never blocks)."""

    def fault(self, fault: Fault) -> None:
        """Tell the seat about a strike the referee just counted against it (never blocks).
        Called for every strike, before the default action is played or the match ends."""

    async def reconnect(self) -> None:
        """After `BotDisconnected`: wait for the bot to come back (the referee bounds the
        wait) and re-send it the match start; raise `BotDisconnected` if it never can."""

    async def finish(self, outcome: Outcome) -> None:
        """Tell the seat its match is over."""
