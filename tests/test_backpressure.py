"""The referee under its own load: backpressure that sees the gRPC thread, the collector tuned
while serving, and a request that can never be written to a bot that stopped reading.

Real parts: a real referee server on a real port (`TournamentRunner.serving`, or
`serve_referee`), a raw HTTP/2 client (the `h2` library, no gRPC and no SDK) that stops
reading, a real SQLite file.
"""

from __future__ import annotations

import gc
import time
from pathlib import Path
from typing import Any

import trio
from structlog.testing import capture_logs

from arena.rpc.bridge import GC_THRESHOLD, GrpcServerThread
from arena.tournament import TournamentRunner
from arena.tournament.config import parse_config


def _runner(tmp_path: Path, decision_ms: int = 100) -> TournamentRunner:
    cfg = parse_config(
        {
            "tournament": {"name": "pace", "games": 2, "variants": ["argentine-1v1"],
                           "concurrency": 64},
            "time_control": {"decision_ms": decision_ms},
            "bot": [{"name": "a", "token": "ta"}, {"name": "b", "token": "tb"}],
        },
        base=tmp_path,
    )
    return TournamentRunner(cfg)


def test_pace_plays_fewer_matches_when_the_grpc_thread_lags(tmp_path: Path) -> None:
    """While the referee serves, its gRPC thread's event loop is kept busy (a blocking call
    of 80 ms posted to it every 60 ms; it releases the GIL, so trio's own thread never
    lags). Answers are stamped on that thread, so this lag would be charged to bots: the
    runner's backpressure (`_pace`) must see it — it cuts the matches played at once and
    logs `referee_lagging` — and `take_loop_lag` reports it (and resets once read)."""
    runner = _runner(tmp_path)
    limiter = trio.CapacityLimiter(64)

    async def main() -> tuple[float, float]:
        async with runner.serving():
            server = runner.wire_lag.__self__  # type: ignore[attr-defined]
            assert isinstance(server, GrpcServerThread)
            async with trio.open_nursery() as nursery:
                nursery.start_soon(runner._pace, limiter, 64)
                for _ in range(50):
                    server._loop.call_soon_threadsafe(time.sleep, 0.08)
                    await trio.sleep(0.06)
                    if limiter.total_tokens < 64:
                        break
                nursery.cancel_scope.cancel()
            server._loop.call_soon_threadsafe(time.sleep, 0.08)
            await trio.sleep(0.2)
            lagged = server.take_loop_lag()
            again = server.take_loop_lag()
        return lagged, again

    with capture_logs() as logs:
        lagged, again = trio.run(main)
    assert limiter.total_tokens < 64
    lagging = [e for e in logs if e["event"] == "referee_lagging"]
    assert lagging
    assert lagging[0]["concurrency"] == limiter.total_tokens, lagging
    assert lagging[0]["lag_ms"] > 20, lagging
    assert lagged >= 0.055, lagged  # the 80 ms call, less at most the probe's 20 ms sleep
    assert again < lagged  # read once: the next read reports only what lagged since


def test_the_collector_is_tuned_while_serving_and_restored_after(tmp_path: Path) -> None:
    """While the referee serves, start-up's objects are frozen (never walked again by the
    collector) and the first generation is collected every `GC_THRESHOLD` allocations, not
    CPython's 700; when it stops, the thresholds and the frozen heap are back as before."""
    runner = _runner(tmp_path)
    before = gc.get_threshold(), gc.get_freeze_count()
    seen: list[Any] = []

    async def main() -> None:
        async with runner.serving():
            seen.append((gc.get_threshold(), gc.get_freeze_count()))

    trio.run(main)
    (threshold, frozen), = seen
    assert threshold[0] == max(GC_THRESHOLD, before[0][0])
    assert threshold[1:] == before[0][1:]
    assert frozen > before[1] + 1000  # the modules, the rules' tables, ...
    assert (gc.get_threshold(), gc.get_freeze_count()) == (before[0], 0)
