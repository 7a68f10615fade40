"""An in-process seat link: a Python function plays the seat, no wire involved.

Used by tests (with trio's MockClock, so timeouts never sleep) and by benchmarks that measure
the referee without the network. It is a real `SeatLink`: the referee cannot tell it apart
from a remote bot.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable

from arena.errors import BotDisconnected
from arena.referee.links import Answer, DecisionRequest, Fault, MatchStart
from arena.referee.outcome import Outcome
from arena.rules import Event, HandSummary

Policy = Callable[[DecisionRequest], Answer | Awaitable[Answer]]


class LocalLink:
    """A seat played by `policy`, a function from a request to an answer (sync or async)."""

    def __init__(self, bot_name: str, policy: Policy) -> None:
        self._name = bot_name
        self._policy = policy
        self.started: MatchStart | None = None
        self.requests: list[DecisionRequest] = []
        self.told: list[Event | HandSummary] = []
        self.outcome: Outcome | None = None
        self.faults: list[Fault] = []

    @property
    def bot_name(self) -> str:
        return self._name

    async def start(self, start: MatchStart) -> None:
        self.started = start

    async def ask(self, request: DecisionRequest) -> Answer:
        self.requests.append(request)
        answer = self._policy(request)
        if inspect.isawaitable(answer):
            return await answer
        return answer

    def tell(self, item: Event | HandSummary) -> None:
        self.told.append(item)

    def fault(self, fault: Fault) -> None:
        self.faults.append(fault)

    async def reconnect(self) -> None:
        raise BotDisconnected(f"{self._name} cannot reconnect: it is in-process")

    async def finish(self, outcome: Outcome) -> None:
        self.outcome = outcome


def first_legal(request: DecisionRequest) -> Answer:
    """The simplest policy: always the first legal action."""
    return Answer(action_index=0)
