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
import threading
from asyncio import events
from typing import Any

import trio


def supported(loop: asyncio.AbstractEventLoop) -> bool:
    """Whether `loop` can be pumped (CPython's selector event loop)."""
    return all(hasattr(loop, name) for name in ("_run_once", "_ready", "_scheduled", "_selector"))


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

    def pass_once(self) -> None:
        """Run the callbacks ready now and those of due timers and I/O, without blocking."""
        loop = self.loop
        events._set_running_loop(loop)
        loop._thread_id = threading.get_ident()  # is_running(), as in run_forever
        loop._stopping = True  # _run_once polls its selector without blocking
        try:
            loop._run_once()
        finally:
            loop._stopping = False
            loop._thread_id = None
            events._set_running_loop(None)

    async def run(self) -> None:
        """Pump until `stop`; then until the loop has nothing ready."""
        loop = self.loop
        fd = loop._selector.fileno()
        try:
            while True:
                self.pass_once()
                spins = 1
                while loop._ready and spins < PASSES:  # callbacks that made more work
                    self.pass_once()
                    spins += 1
                if loop._ready:
                    await trio.lowlevel.checkpoint()
                    continue
                if self._stopping:
                    return
                if loop._scheduled:
                    wait = loop._scheduled[0].when() - loop.time()
                    if wait <= 0:
                        await trio.lowlevel.checkpoint()
                        continue
                    with trio.move_on_after(wait):
                        await trio.lowlevel.wait_readable(fd)
                else:
                    await trio.lowlevel.wait_readable(fd)
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
