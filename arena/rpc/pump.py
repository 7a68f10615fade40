"""An asyncio loop driven from a trio task, on trio's own thread (the default host of the
gRPC loop; ``ARENA_GRPC_HOST=thread`` for the other).

`arena.rpc.bridge` serves gRPC from a ``grpc.aio`` server, which needs an asyncio loop. On a
thread of its own, every message crosses between that thread and trio's: a thread wake-up
and a GIL hand-over each way. Here the loop does not run by
itself: a trio task (`pump`) runs one pass of it (`_run_once`, what ``run_forever`` repeats)
whenever it has work, and otherwise waits, in trio, for the loop's selector to become
readable (an epoll file descriptor is itself pollable) or for its next timer. gRPC's own
poller thread wakes the loop as it always does (a write to the loop's self-pipe), which
wakes trio's thread instead of another; callbacks of the loop run inside the pump task, so
a message crosses to trio with a direct call. trio stays the referee's world: nothing of
asyncio runs but inside a pass, and no asyncio loop is "running" outside one.

Fair clocks (`arena.referee.match`): a bot's answer is stamped with the time it came off the
wire, and here it is read only when trio's thread gets to a pass of the loop; a referee whose
thread was busy (a long step, a collection, a stall) would charge its bots for that. So what a
pass reads is stamped not with the pass's time but with the earliest its messages can have
come (`arrival_time`), plus at most `CHARGED_LAG_S`, and no later than it is read: the
latest of when the pass before looked, the last moment the loop's selector was seen with
nothing to read (`_Waits`: trio's I/O waits while the pump waits for that selector), the end
of such a wait that slept until the selector woke it, and when the request it may answer was
handed to gRPC (an answer read in the very pass that wrote its request came after it). And
before a referee calls a timeout it looks at the wire (`look`): a pass then reads what came
in time but was not read yet. A pass on time is stamped with its own time, as the gRPC
thread would stamp it.

This reaches into three private parts of CPython's selector event loop, which have not
changed from 3.8 to 3.13: ``_run_once``, ``_ready``/``_scheduled`` and ``_selector``;
`supported` says whether this interpreter's loop has them.
"""

from __future__ import annotations

import asyncio
import math
import select
import threading
import time
from asyncio import events
from contextlib import suppress
from typing import Any

import trio


def supported(loop: asyncio.AbstractEventLoop) -> bool:
    """Whether `loop` can be pumped (CPython's selector event loop)."""
    return all(hasattr(loop, name) for name in ("_run_once", "_ready", "_scheduled", "_selector"))


def noop() -> None:
    """Does nothing: the callback of a wake-up."""


PASSES = 8
"""Passes of the loop run back to back while one leaves work ready for the next, before the
pump lets trio's other tasks run."""


CHARGED_LAG_S = 0.002
"""The most of trio's own lag a message's stamp may include: a pass that comes later than
this after the earliest its messages can have arrived stamps them as if it had come this
soon. (On its own thread, gRPC's loop waits as long for the GIL: the interpreter's switch
interval is 5 ms.)"""

SLEPT_S = 0.0005
"""A wait of trio's this long or longer slept: what woke it came at its end."""


class _Waits(trio.abc.Instrument):
    """Watches trio's I/O waits while the pump waits for the loop's selector (`Pump.floor`).

    After such a wait, one poll of the selector's fd, without blocking: if nothing is there,
    nothing had come by the wait's end; if something is and the wait slept, it came as the
    wait ended (it woke trio). Otherwise it came since the floor known before."""

    __slots__ = ("_began", "_poll", "_pump")

    def __init__(self, pump: Pump, fd: int) -> None:
        self._pump = pump
        self._poll = select.poll()
        self._poll.register(fd, select.POLLIN)
        self._began = 0.0

    def before_io_wait(self, timeout: float) -> None:
        self._began = time.monotonic() if self._pump._parked else 0.0

    def after_io_wait(self, timeout: float) -> None:
        pump = self._pump
        if not self._began or not pump._parked:
            return
        end = time.monotonic()
        # (A wait with no timeout to sleep did not sleep, however long it seemed to take.)
        if not self._poll.poll(0) or (timeout > 0 and end - self._began >= SLEPT_S):
            pump.floor = end


class Pump:
    """Drives `loop` from the trio task `run` until `stop` is called."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        if not supported(loop):
            raise RuntimeError(f"this asyncio loop cannot be pumped from trio: {loop!r}")
        self.loop: Any = loop
        self._stopping = False
        self._done = trio.Event()
        self._wake_at = math.inf  # when the waiting pump task wakes for a timer (loop.time())
        self._parked = False  # the pump task waits for the loop's selector (or a timer)
        self._in_pass = False
        now = time.monotonic()
        self.floor = now
        """The latest moment the loop's selector is known to have had nothing new to read
        (time.monotonic()): a pass's start, or the end of one of trio's waits (`_Waits`)."""
        self._floor_then = now  # `floor` as the current pass began

    def arrival_time(self, after: float) -> float:
        """The time.monotonic() to stamp a message read in the current pass with, which came
        `after` then (the request it may answer was handed to gRPC): the earliest it can have
        come (`floor` as the pass began, or `after`), plus at most `CHARGED_LAG_S`, and no
        later than now."""
        now = time.monotonic()
        earliest = (after if after > self._floor_then else self._floor_then) + CHARGED_LAG_S
        return earliest if earliest < now else now

    def look(self) -> None:
        """Read what came off the wire and is not read yet: a pass, unless one is running (a
        referee about to call a timeout looks first)."""
        if not self._in_pass and not self.loop.is_closed():
            self.passes(PASSES)

    def pass_once(self) -> None:
        """Run the callbacks ready now and those of due timers and I/O, without blocking."""
        self.passes(1)

    def passes(self, most: int) -> None:
        """One pass, then more back to back while one leaves work ready, up to `most`: as
        one span in which the loop counts as running (setting and clearing that costs about
        a microsecond each way, and a pass rarely runs alone)."""
        loop = self.loop
        self._floor_then = self.floor
        self.floor = time.monotonic()
        self._in_pass = True
        events._set_running_loop(loop)
        loop._thread_id = threading.get_ident()  # is_running(), as in run_forever
        loop._stopping = True  # _run_once polls its selector without blocking
        try:
            loop._run_once()
            spins = 1
            while loop._ready and spins < most:  # callbacks that made more work
                loop._run_once()
                spins += 1
        finally:
            loop._stopping = False
            loop._thread_id = None
            events._set_running_loop(None)
            self._in_pass = False

    def run_ready(self) -> None:
        """Run what trio's tasks left ready on the loop (`arena.rpc.bridge` posts with
        ``call_soon`` when pumped), called by trio's scheduler once its tasks have run and
        before it waits for I/O (an instrument's ``before_io_wait``). So a message a task
        queued goes out in this same pass of trio's loop: no self-pipe write to wake the pump
        task and no further pass of trio's loop for it. Never raises (trio would drop the
        instrument): an error is left for the pump task to meet, woken for it, as is work
        still ready after `PASSES` passes (trio must not sleep with work ready)."""
        loop = self.loop
        if not self._parked or not loop._ready or loop.is_closed() or self._stopping:
            # Not parked, the pump task runs soon anyway (it is due to run: trio will not
            # sleep), and more work then gathers per pass; stopping, the wake-up `stop`
            # posted is the pump task's, to end on.
            return
        try:
            self.passes(PASSES)
            if not loop._ready and not (
                loop._scheduled and loop._scheduled[0].when() < self._wake_at
            ):
                return
            # Work left, or a timer set that is due before the pump task would wake.
        except Exception:  # the pump task's next pass meets it again, in a task
            pass
        with suppress(RuntimeError):  # closed meanwhile: nothing left to run
            loop.call_soon_threadsafe(noop)  # the self-pipe: wakes the pump task

    async def run(self) -> None:
        """Pump until `stop`; then until the loop has nothing ready."""
        loop = self.loop
        fd = loop._selector.fileno()
        waits = _Waits(self, fd)
        trio.lowlevel.add_instrument(waits)
        try:
            while True:
                self.passes(PASSES)
                if loop._ready:
                    await trio.lowlevel.checkpoint()
                    continue
                if self._stopping:
                    return
                if loop._scheduled:
                    self._wake_at = loop._scheduled[0].when()
                    wait = self._wake_at - loop.time()
                    if wait <= 0:
                        await trio.lowlevel.checkpoint()
                        continue
                    self._parked = True
                    try:
                        with trio.move_on_after(wait):
                            await trio.lowlevel.wait_readable(fd)
                    finally:
                        self._wake_at = math.inf
                        self._parked = False
                else:
                    self._parked = True
                    try:
                        await trio.lowlevel.wait_readable(fd)
                    finally:
                        self._parked = False
        finally:
            trio.lowlevel.remove_instrument(waits)
            self._done.set()

    def stop(self) -> None:
        """End `run` once the loop has nothing ready (a wake-up, as from another thread)."""
        self._stopping = True
        if not self.loop.is_closed():
            self.loop.call_soon_threadsafe(lambda: None)

    async def wait_done(self) -> None:
        await self._done.wait()

    def close(self) -> None:
        """Cancel what is left on the loop, let it end, and close the loop."""
        loop = self.loop
        tasks = [task for task in asyncio.all_tasks(loop) if not task.done()]
        for task in tasks:
            task.cancel()
        for _ in range(100):
            if all(task.done() for task in tasks) and not loop._ready:
                break
            self.pass_once()
        loop.close()
