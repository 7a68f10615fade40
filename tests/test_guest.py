"""trio as a guest on the asyncio loop that serves gRPC (`arena.rpc.guest.run`): the same
bridge (`serve_grpc`) with no gRPC thread, real gRPC clients on a real port, and Ctrl-C
delivered to a real process."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest
import trio
from test_bridge import ECHO, Client, in_thread

from arena.rpc import guest
from arena.rpc.bridge import THREAD_NAME, StreamClosed, serve_grpc


def test_a_guest_run_serves_grpc_on_its_own_thread_with_no_grpc_thread() -> None:
    """Under `guest.run`, `serve_grpc` serves on the loop trio is a guest of: no
    ``arena-grpc`` thread is started, trio's tasks and the gRPC handlers run on the main
    thread, and streams work as under `trio.run` (echo round trips from three concurrent
    clients, then a clean end); `run` returns what trio's main function returned."""
    main_thread = threading.get_ident()
    seen: list[tuple[int, set[str]]] = []

    async def echo(stream: object) -> None:
        try:
            while True:
                message = await stream.receive()  # type: ignore[attr-defined]
                await stream.send(message.upper())  # type: ignore[attr-defined]
        except StreamClosed:
            pass
        await stream.aclose()  # type: ignore[attr-defined]

    def client(port: int, name: str) -> list[bytes]:
        c = Client(port)
        try:
            replies = []
            for i in range(20):
                c.send(f"{name}-{i}".encode())
                replies.append(c.receive())
            c.done_sending()
            assert c.rest() == []
            return replies
        finally:
            c.close()

    async def main() -> list[list[bytes]]:
        async with serve_grpc("127.0.0.1:0", [ECHO]) as server, trio.open_nursery() as nursery:
            seen.append((threading.get_ident(), {t.name for t in threading.enumerate()}))

            async def accept() -> None:
                async for stream in server.incoming:
                    nursery.start_soon(echo, stream)

            nursery.start_soon(accept)
            results: list[list[bytes]] = [[], [], []]

            async def one(i: int) -> None:
                results[i] = await in_thread(lambda: client(server.port, f"c{i}"))

            async with trio.open_nursery() as clients:
                for i in range(3):
                    clients.start_soon(one, i)
            nursery.cancel_scope.cancel()
            return results

    results = guest.run(main)
    assert results == [[f"C{i}-{k}".encode() for k in range(20)] for i in range(3)]
    (ident, names), = seen
    assert ident == main_thread
    assert THREAD_NAME not in names


def test_a_guest_run_raises_what_trio_raised() -> None:
    """An exception out of trio's main function comes out of `guest.run`, as out of
    `trio.run`, and the loop is closed (a second run starts afresh)."""

    async def fails() -> None:
        await trio.sleep(0.01)
        raise ValueError("bad config: decision_ms")

    with pytest.raises(ValueError, match="decision_ms"):
        guest.run(fails)

    async def works() -> int:
        await trio.sleep(0)
        return 7

    assert guest.run(works) == 7


def test_ctrl_c_reaches_trio_as_keyboard_interrupt_with_cleanup() -> None:
    """A process serving gRPC under `guest.run`, sent SIGINT: trio's main task gets
    `KeyboardInterrupt` at its checkpoint, its `finally` blocks run (a shielded cleanup
    that still awaits, as the tournament's storage does), the server stops, and the
    exception comes out of `guest.run` (the process ends by SIGINT, after a KeyboardInterrupt
    traceback, as under `trio.run`)."""
    script = textwrap.dedent(
        """
        import sys, trio
        from arena.rpc import guest
        from arena.rpc.bridge import StreamRoute, serve_grpc

        async def main():
            async with serve_grpc("127.0.0.1:0", [StreamRoute("t.E", "C")]) as server:
                try:
                    print("ready", server.port, flush=True)
                    await trio.sleep_forever()
                finally:
                    with trio.CancelScope(shield=True):
                        await trio.sleep(0.05)
                        print("cleaned up", flush=True)

        guest.run(main)
        """
    )
    process = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        ready = process.stdout.readline()
        assert ready.startswith("ready"), (ready, process.stderr.read() if process.stderr else "")
        time.sleep(0.2)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
    finally:
        process.kill()
        process.wait()
    assert "cleaned up" in out, err
    assert process.returncode == -signal.SIGINT, err  # Python re-raises an uncaught Ctrl-C
    assert err.rstrip().endswith("KeyboardInterrupt"), err

