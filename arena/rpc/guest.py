"""`run`: `trio.run`, with trio as a guest on an asyncio loop, so gRPC needs no thread.

`arena.rpc.bridge.serve_grpc` serves gRPC from a ``grpc.aio`` server, which needs an asyncio
loop. Under a plain `trio.run` it starts one on a thread of its own, and every message
crosses between that thread and trio's (and the two share the GIL). Under `run`, the main
thread runs an asyncio loop and trio runs on it as a guest (`trio.lowlevel.start_guest_run`):
trio's tasks run in callbacks of that same loop, `serve_grpc` finds the loop running and
serves on it, and a message hops to asyncio with a plain ``loop.call_soon``. trio stays the
referee's world: its clock, cancel scopes and nurseries are unchanged. When trio has nothing
to run it waits for I/O on a helper thread of its own (that is how guest mode works), so
waking it from asyncio still touches that thread, but nothing else does.

Ctrl-C: asyncio installs no handler here; trio's reaches trio's main task at its next
checkpoint as `KeyboardInterrupt` (never in the middle of asyncio's or grpc's code), and
`run` raises what trio's main function raised, as `trio.run` does.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

import outcome
import trio

T = TypeVar("T")


def run(async_fn: Callable[..., Awaitable[T]], *args: object) -> T:
    """Run ``async_fn(*args)`` under trio, hosted on a fresh asyncio loop on this thread;
    return its result or raise its exception (like `trio.run`)."""
    loop = asyncio.new_event_loop()
    done: list[outcome.Outcome[T]] = []

    def finished(result: outcome.Outcome[T]) -> None:
        done.append(result)
        loop.stop()

    try:
        trio.lowlevel.start_guest_run(
            async_fn, *args,
            run_sync_soon_threadsafe=loop.call_soon_threadsafe,
            run_sync_soon_not_threadsafe=loop.call_soon,
            done_callback=finished,
            restrict_keyboard_interrupt_to_checkpoints=True,
        )
        while not done:  # stops only when trio is done (a callback could stop it earlier)
            loop.run_forever()
    finally:
        try:
            _cancel_leftovers(loop)
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.run_until_complete(loop.shutdown_default_executor())
        finally:
            loop.close()
    return done[0].unwrap()


def _cancel_leftovers(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel the asyncio tasks still pending (as `asyncio.run` does) and let them end."""
    tasks = [task for task in asyncio.all_tasks(loop) if not task.done()]
    if not tasks:
        return
    for task in tasks:
        task.cancel()
    loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
