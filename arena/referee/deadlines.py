"""Every decision's deadline in one structure per trio run, instead of a cancel scope each.

A match waits for an answer at every decision, under a deadline. A trio `CancelScope` per
wait registers the deadline with trio's runner on entry, removes it on exit and walks the
task's cancel state both times: a few µs for every decision, almost always for nothing (the
answer comes in time). Here a run's deadlines share one heap, watched by one system task that
sleeps until the earliest of them: arming a deadline is a heap push, disarming it sets a field.
When a deadline passes, the watcher calls `interrupt()` on what is waited for, and the waiting
task's `PendingAnswer.wait` raises `Interrupted`; a wait whose answer came first is left alone
(the answer wins, as it did with a scope: a task already rescheduled with its answer is not
interrupted).

Only the referee knows about time: the rpc layer's pending answer knows nothing of deadlines,
it only lets its wait be interrupted. A wait for something that cannot be interrupted falls
back to a cancel scope (`within`).
"""

from __future__ import annotations

import heapq
import math
from typing import Any

import trio

from arena.referee.links import Interrupted


class Deadlines:
    """The deadlines of one trio run, and the system task that enforces them."""

    _COMPACT_AT = 1024
    """Disarmed entries stay in the heap until their time; past this many (and more than the
    armed ones), the heap is rebuilt without them."""

    def __init__(self) -> None:
        # Entries are lists [deadline, sequence, interrupt or None]: the sequence is unique,
        # so the heap never compares two interrupts.
        self._heap: list[list[Any]] = []
        self._sequence = 0
        self._armed = 0
        self._sleep: trio.CancelScope | None = None  # the watcher's, while it sleeps

    def arm(self, deadline: float, interrupt: Any) -> list[Any]:
        """Call `interrupt()` at trio time `deadline` unless `disarm`-ed first."""
        self._sequence += 1
        entry = [deadline, self._sequence, interrupt]
        heap = self._heap
        heapq.heappush(heap, entry)
        self._armed += 1
        sleep = self._sleep
        if sleep is not None and deadline < sleep.deadline:
            sleep.deadline = deadline  # the watcher sleeps until this one instead
        elif len(heap) > self._COMPACT_AT and len(heap) > 2 * self._armed:
            self._heap = [e for e in heap if e[2] is not None]
            heapq.heapify(self._heap)
        return entry

    def disarm(self, entry: list[Any]) -> None:
        if entry[2] is not None:
            entry[2] = None
            self._armed -= 1

    async def watch(self) -> None:
        """The watcher: sleep until the earliest armed deadline, interrupt what is due, again.
        Disarmed entries are dropped when they reach the top: the watcher never sleeps
        towards one (each wake costs a cancellation), only towards a deadline still armed."""
        while True:
            now = trio.current_time()
            heap = self._heap
            while heap and (heap[0][2] is None or heap[0][0] <= now):
                entry = heapq.heappop(heap)
                interrupt = entry[2]
                if interrupt is not None:
                    entry[2] = None
                    self._armed -= 1
                    interrupt()
            with trio.CancelScope(deadline=heap[0][0] if heap else math.inf) as sleep:
                self._sleep = sleep
                try:
                    await trio.sleep_forever()
                finally:
                    self._sleep = None


_deadlines: trio.lowlevel.RunVar[Deadlines] = trio.lowlevel.RunVar("arena_deadlines")


def _current() -> Deadlines:
    try:
        return _deadlines.get()
    except LookupError:
        deadlines = Deadlines()
        _deadlines.set(deadlines)
        trio.lowlevel.spawn_system_task(deadlines.watch, name="arena.referee.deadlines")
        return deadlines


async def within(waited: Any, deadline: float) -> tuple[bool, Any]:
    """``await waited.wait()`` until trio time `deadline`: (True, its result) if it came in
    time, (False, None) if the deadline passed first. Cancellation and `wait`'s own errors
    pass through. `waited` without `interrupt` is waited for under a cancel scope."""
    interrupt = getattr(waited, "interrupt", None)
    if interrupt is None:
        with trio.CancelScope(deadline=deadline) as scope:
            result = await waited.wait()
        return (False, None) if scope.cancelled_caught else (True, result)
    deadlines = _current()
    entry = deadlines.arm(deadline, interrupt)
    try:
        return True, await waited.wait()
    except Interrupted:
        return False, None
    finally:
        deadlines.disarm(entry)
