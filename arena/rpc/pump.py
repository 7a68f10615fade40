"""An asyncio loop driven from a trio task, on trio's own thread (`ARENA_GRPC_HOST=pump`).

`arena.rpc.bridge` serves gRPC from a ``grpc.aio`` server, which needs an asyncio loop. By
default that loop runs on a thread of its own, and every message crosses between it and
trio's thread: a thread wake-up and a GIL hand-over each way. Here the loop does not run by
itself: a trio task (`pump`) runs one pass of it (`_run_once`, what ``run_forever`` repeats)
whenever it has work, and otherwise waits, in trio, for the loop's selector to become
readable (an epoll file descriptor is itself pollable) or for its next timer. gRPC's own
poller thread wakes the loop as it always does (a write to the loop's self-pipe), which
wakes trio's thread instead of another; callbacks of the loop run inside the pump task, so
a message crosses to trio with a direct call. trio stays the referee's world: nothing of
asyncio runs but inside a pass, and no asyncio loop is "running" outside one.

This reaches into three private parts of CPython's selector event loop, which have not
changed from 3.8 to 3.13: ``_run_once``, ``_ready``/``_scheduled`` and ``_selector``;
`supported` says whether this interpreter's loop has them.
"""

from __future__ import annotations

import asyncio
import math
import threading
from asyncio import events
from contextlib import suppress
from typing import Any

import trio


def supported(loop: asyncio.AbstractEventLoop) -> bool:
    """Whether `loop` can be pumped (CPython's selector event loop)."""
    return all(hasattr(loop, name) for name in ("_run_once", "_ready", "_scheduled", "_selector"))


def _noop() -> None:
    pass


PASSES = 8
"""Passes of the loop run back to back while one leaves work ready for the next, before the
pump lets trio's other tasks run."""


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

    def pass_once(self) -> None:
        """Run the callbacks ready now and those of due timers and I/O, without blocking."""
        self.passes(1)

    def passes(self, most: int) -> None:
        """One pass, then more back to back while one leaves work ready, up to `most`: as
        one span in which the loop counts as running (setting and clearing that costs about
        a microsecond each way, and a pass rarely runs alone)."""
        loop = self.loop
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
            loop.call_soon_threadsafe(_noop)  # the self-pipe: wakes the pump task

    async def run(self) -> None:
        """Pump until `stop`; then until the loop has nothing ready."""
        loop = self.loop
        fd = loop._selector.fileno()
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
