"""The referee's deadlines (arena/referee/deadlines.py): one heap and one watcher per trio run
instead of a cancel scope per decision (issue 14). The waits here are the rpc layer's real
answer slots (`arena.rpc.server._AnswerSlot`), on trio's MockClock: a deadline fires exactly
at its time, an answer that came first wins, and nothing is left armed behind."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from arena.referee import Answer, Interrupted
from arena.referee import deadlines as deadlines_module
from arena.referee.deadlines import Deadlines, within
from arena.rpc.server import _AnswerSlot


class Slot:
    """An answer slot under the `PendingAnswer` names `within` uses (`wait`, `interrupt`)."""

    def __init__(self) -> None:
        self.slot = _AnswerSlot()
        self.interrupts = 0

    async def wait(self) -> Answer:
        value = await self.slot.receive()
        assert isinstance(value, Answer)
        return value

    def interrupt(self) -> None:
        self.interrupts += 1
        self.slot.interrupt()


def _run(fn: object) -> None:
    trio.run(fn, clock=trio.testing.MockClock(autojump_threshold=0))  # type: ignore[arg-type]


def _deadlines() -> Deadlines:
    return deadlines_module._deadlines.get()


def test_a_wait_with_no_answer_ends_exactly_at_its_deadline() -> None:
    """No answer: `within` returns (False, None) at the deadline's trio time, not before."""

    async def main() -> None:
        t0 = trio.current_time()
        came, value = await within(Slot(), t0 + 2.5)
        assert (came, value) == (False, None)
        assert trio.current_time() == t0 + 2.5

    _run(main)


def test_an_answer_before_the_deadline_wins_and_disarms_it() -> None:
    """The answer at 1 s of a 3 s deadline is returned at 1 s; the deadline is disarmed, so
    when its time passes nothing is interrupted (the slot's next wait is not cut short)."""

    async def main() -> None:
        slot = Slot()
        t0 = trio.current_time()

        async def answer() -> None:
            await trio.sleep(1)
            slot.slot.send_nowait(Answer(action_index=2))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(answer)
            came, value = await within(slot, t0 + 3)
        assert (came, value) == (True, Answer(action_index=2))
        assert trio.current_time() == t0 + 1
        assert _deadlines()._armed == 0
        await trio.sleep(5)  # past the old deadline
        assert slot.interrupts == 0

    _run(main)


def test_deadlines_fire_in_order_whatever_order_they_were_armed_in() -> None:
    """Waits armed late-first (10 s, then 4 s, then 7 s: each earlier deadline lowers the
    watcher's sleep) each end at their own deadline."""

    async def main() -> None:
        t0 = trio.current_time()
        ended: dict[float, float] = {}

        async def wait(after: float) -> None:
            came, _ = await within(Slot(), t0 + after)
            assert not came
            ended[after] = trio.current_time() - t0

        async with trio.open_nursery() as nursery:
            for after in (10.0, 4.0, 7.0):
                nursery.start_soon(wait, after)
                await trio.sleep(0)
        assert ended == {10.0: 10.0, 4.0: 4.0, 7.0: 7.0}

    _run(main)


def test_an_interrupt_that_loses_the_race_to_the_answer_costs_nothing() -> None:
    """The deadline interrupts the wait, and the answer arrives before the waiting task runs:
    that wait ends `Interrupted` (the referee then looks at the wire's clock), and the next
    wait returns the answer at once."""

    async def main() -> None:
        slot = _AnswerSlot()
        results: list[object] = []

        async def waiter() -> None:
            try:
                await slot.receive()
            except Interrupted:
                results.append("interrupted")
            results.append(await slot.receive())

        async with trio.open_nursery() as nursery:
            nursery.start_soon(waiter)
            await trio.testing.wait_all_tasks_blocked()
            slot.interrupt()
            slot.send_nowait(Answer(action_index=0))
        assert results == ["interrupted", Answer(action_index=0)]
        with pytest.raises(trio.WouldBlock):  # one answer per request
            slot.send_nowait(Answer(action_index=1))

    _run(main)


def test_an_interrupt_with_nobody_waiting_does_nothing() -> None:
    """`interrupt` between waits (the deadline of a wait that already returned) is ignored:
    the next wait waits for its answer."""

    async def main() -> None:
        slot = _AnswerSlot()
        slot.interrupt()

        async def answer() -> None:
            await trio.sleep(1)
            slot.send_nowait(Answer(action_index=3))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(answer)
            assert await slot.receive() == Answer(action_index=3)

    _run(main)


def test_cancelling_a_wait_disarms_its_deadline_and_the_slot_stays_usable() -> None:
    """A wait cancelled from outside (the match's nursery) raises Cancelled, leaves nothing
    armed, and the slot can still be answered and awaited (no task left registered)."""

    async def main() -> None:
        slot = Slot()
        with trio.move_on_after(1):
            await within(slot, trio.current_time() + 10)
        assert _deadlines()._armed == 0
        slot.slot.send_nowait(Answer(action_index=1))
        assert await slot.wait() == Answer(action_index=1)

    _run(main)


def test_a_closed_slot_ends_the_wait_with_end_of_channel() -> None:
    """The connection went away while the referee waited: the wait raises EndOfChannel (the
    link turns it into BotDisconnected), before the deadline."""

    async def main() -> None:
        slot = Slot()
        t0 = trio.current_time()

        async def close() -> None:
            await trio.sleep(1)
            slot.slot.close()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(close)
            with pytest.raises(trio.EndOfChannel):
                await within(slot, trio.current_time() + 10)
        assert trio.current_time() == t0 + 1

    _run(main)


def test_disarmed_entries_do_not_pile_up() -> None:
    """Thousands of waits answered long before their (distant) deadlines: the heap is rebuilt
    without the disarmed entries instead of keeping one per decision until its time."""

    async def main() -> None:
        for _ in range(10_000):
            slot = Slot()
            slot.slot.send_nowait(Answer(action_index=0))
            came, _ = await within(slot, trio.current_time() + 3600)
            assert came
        deadlines = _deadlines()
        assert deadlines._armed == 0
        assert len(deadlines._heap) <= 2 * Deadlines._COMPACT_AT

    _run(main)


def test_a_wait_that_cannot_be_interrupted_gets_a_cancel_scope() -> None:
    """Something without `interrupt` is waited for under a cancel scope, with the same
    results."""

    class Plain:
        async def wait(self) -> str:
            await trio.sleep_forever()
            return "never"

    async def main() -> None:
        t0 = trio.current_time()
        assert await within(Plain(), t0 + 1.5) == (False, None)
        assert trio.current_time() == t0 + 1.5

    _run(main)


def test_the_watcher_does_not_wake_for_deadlines_that_were_disarmed() -> None:
    """A thousand waits answered in time, one every 10 ms with a 1 s deadline each (a
    match's steady state): the watcher wakes only for deadlines still armed, not once per
    decision whose deadline has since passed (each wake costs trio a cancellation)."""
    steps = 0

    class Steps(trio.abc.Instrument):
        def before_task_step(self, task: trio.lowlevel.Task) -> None:
            nonlocal steps
            if task.name == "arena.referee.deadlines":
                steps += 1

    async def main() -> None:
        trio.lowlevel.add_instrument(Steps())
        for _ in range(1000):
            slot = Slot()

            async def answer(slot: Slot = slot) -> None:
                await trio.sleep(0.005)
                slot.slot.send_nowait(Answer(action_index=0))

            async with trio.open_nursery() as nursery:
                nursery.start_soon(answer)
                came, _ = await within(slot, trio.current_time() + 1)
            assert came
            await trio.sleep(0.005)
        await trio.sleep(2)  # every deadline's time has passed

    _run(main)
    assert steps <= 20, steps
