"""Fair clocks under load: do bots that answer at once ever get a timeout?

For each number of concurrent matches (1, 16, 64, 256; ``BENCH_FAIRNESS`` overrides, e.g.
``BENCH_FAIRNESS=1,16``), the real referee runs in its own process (`arena serve` with two
remote bots, decision_ms = 100, argentine-1v1 to 15 points, ``concurrency`` = N), and this
process is both bots: one load generator (grpc.aio, one stream per bot, every seat of every
match on it) that answers each `DecisionRequest` with ``action_index = 0`` as soon as it reads
it, echoing its ids. After ``BENCH_SECONDS`` of play (at least 5) the referee is interrupted
and the bench reads its JSON-lines log.

Columns: ``timeouts`` — `fault` events with fault = timeout in the referee's log (the goal:
zero); ``late`` — LATE_ANSWER errors the bots were sent; ``dec/s`` — decisions answered per
second; ``add p50/p99 ms`` — the referee's added latency as the bots see it: from a bot's
answer (or the match start) to the next request of the same match; ``bot p99 ms`` — the load
generator's own time from reading a request to having written its answer (the bots must be
honest: within 5 ms); ``min conc`` — the fewest matches the referee allowed at once
(`referee_lagging` events: its backpressure); ``load`` — the machine's 1-minute load
average at the end (a row with a high load and ``bot p99 ms`` over 5 ms measured starved
bots, not the referee).

Run alone: ``python -m bench fairness``.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import grpc

from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

CONCURRENCY = (1, 16, 64, 256)
DECISION_MS = 100
ARENA = Path(sys.executable).parent / "arena"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _config(folder: Path, concurrency: int, seconds: float) -> Path:
    games = 2 * concurrency + int(seconds * 40)
    path = folder / "fairness.toml"
    path.write_text(
        f'[tournament]\nname = "fairness"\nseed = 7\ngames = {games}\n'
        f'variants = ["argentine-1v1"]\nconcurrency = {concurrency}\n'
        "[options.argentine-1v1]\ntarget = 15\nchicos = 1\n"
        f"[time_control]\ndecision_ms = {DECISION_MS}\ngrace_ms = 50\n"
        "[faults]\nmax_strikes = 1000\nno_show_ms = 60000\n"
        '[[bot]]\nname = "a"\ntoken = "bench-a"\n[[bot]]\nname = "b"\ntoken = "bench-b"\n'
    )
    return path


class _Bots:
    """The load generator's books."""

    def __init__(self) -> None:
        self.decisions = 0
        self.late = 0
        self.added: list[float] = []  # seconds, from an answer (or start) to the next request
        self.own: list[float] = []  # seconds, from reading a request to its answer written
        self.last: dict[str, float] = {}  # match id -> when the bots last answered / started
        self.counting = False
        self.elapsed = 0.0


async def _bot(port: int, token: str, books: _Bots, stop: asyncio.Event) -> None:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        call = pb_grpc.RefereeStub(channel).Play()  # type: ignore[no-untyped-call]
        await call.write(pb.BotMessage(hello=pb.Hello(
            bot_name=token, token=token, protocol_version=1, accepts_batches=True)))
        answers: asyncio.Queue[tuple[pb.BotMessage, float, float | None]] = asyncio.Queue()

        async def write() -> None:  # one writer, so reading never waits for a write
            while True:
                reply, read_at, before = await answers.get()
                await call.write(reply)
                written = time.monotonic()
                books.last[reply.action.match_id] = written
                if books.counting:
                    books.decisions += 1
                    books.own.append(written - read_at)
                    if before is not None:
                        books.added.append(read_at - before)

        writer = asyncio.create_task(write())
        try:
            while not stop.is_set():
                message = await call.read()
                if message is grpc.aio.EOF:
                    return
                read_at = time.monotonic()
                items = message.batch.messages if message.HasField("batch") else [message]
                for item in items:
                    body = item.WhichOneof("body")
                    if body == "game_started":
                        books.last[item.game_started.match_id] = read_at
                    elif body == "error" and item.error.code == pb.ERROR_CODE_LATE_ANSWER:
                        books.late += 1
                    elif body == "decision":
                        d = item.decision
                        answers.put_nowait((pb.BotMessage(action=pb.ActionReply(
                            request_id=d.request_id, match_id=d.match_id, seat=d.seat,
                            action_index=0)), read_at, books.last.get(d.match_id)))
        except grpc.aio.AioRpcError:
            return
        finally:
            writer.cancel()
            call.cancel()


def _pct(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] * 1000


async def _drive(port: int, seconds: float, referee: subprocess.Popen[bytes]) -> _Bots:
    books = _Bots()
    stop = asyncio.Event()
    tasks = [asyncio.create_task(_bot(port, t, books, stop)) for t in ("bench-a", "bench-b")]
    await asyncio.sleep(1.0)  # let every match start
    books.counting = True
    started = time.monotonic()
    while time.monotonic() - started < seconds and referee.poll() is None:
        await asyncio.sleep(0.1)
    books.counting = False
    books.elapsed = time.monotonic() - started
    referee.send_signal(signal.SIGINT)
    stop.set()
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    return books


def _wait_listening(port: int, referee: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and referee.poll() is None:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("the referee did not start listening")


def measure(concurrency: int, seconds: float) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="fairness-") as tmp:
        folder = Path(tmp)
        config = _config(folder, concurrency, seconds)
        port = _free_port()
        with (folder / "referee.err").open("wb") as err:
            referee = subprocess.Popen(
                [str(ARENA), "serve", str(config), "--listen", f"127.0.0.1:{port}"],
                cwd=folder, stdout=subprocess.DEVNULL, stderr=err,
            )
            try:
                _wait_listening(port, referee)
                books = asyncio.run(_drive(port, seconds, referee))
                referee.wait(timeout=60)
            finally:
                if referee.poll() is None:
                    referee.kill()
                    referee.wait()
        if os.environ.get("BENCH_KEEP"):  # keep the referee's log to look at
            shutil.copy(folder / "logs" / "fairness.jsonl", f"/tmp/fairness-{concurrency}.jsonl")
        timeouts = 0
        fewest = concurrency
        for line in (folder / "logs" / "fairness.jsonl").read_text().splitlines():
            if '"fault"' not in line and "referee_lagging" not in line:
                continue
            event = json.loads(line)
            if event.get("event") == "fault" and event.get("fault") == "timeout":
                timeouts += 1
            elif event.get("event") == "referee_lagging":
                fewest = min(fewest, int(event["concurrency"]))
    elapsed = books.elapsed
    return {
        "matches": concurrency,
        "timeouts": timeouts,
        "late": books.late,
        "dec/s": books.decisions / elapsed if elapsed else 0.0,
        "add p50 ms": _pct(books.added, 0.5),
        "add p99 ms": _pct(books.added, 0.99),
        "bot p99 ms": _pct(books.own, 0.99),
        "min conc": fewest,
        "decisions": books.decisions,
        "load": os.getloadavg()[0],
    }


def part(seconds: float) -> list[dict[str, object]]:
    """One row per number of concurrent matches."""
    chosen = os.environ.get("BENCH_FAIRNESS")
    counts = tuple(int(c) for c in chosen.split(",")) if chosen else CONCURRENCY
    return [measure(n, max(5.0, seconds)) for n in counts]


if __name__ == "__main__":
    from bench.__main__ import format_table

    print(format_table("fairness", part(float(os.environ.get("BENCH_SECONDS", "5")))))
