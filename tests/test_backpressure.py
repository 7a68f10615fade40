"""The referee under its own load: backpressure that sees the gRPC thread, the collector tuned
while serving, and a request that can never be written to a bot that stopped reading.

Real parts: a real referee server on a real port (`TournamentRunner.serving`, or
`serve_referee`), a raw HTTP/2 client (the `h2` library, no gRPC and no SDK) that stops
reading, a real SQLite file.
"""

from __future__ import annotations

import gc
import socket
import struct
import threading
import time
from pathlib import Path
from typing import Any

import h2.config
import h2.connection
import h2.events
import h2.settings
import pytest
import structlog
import trio
import trio.testing
from structlog.testing import capture_logs

from arena.referee import FaultPolicy, Termination, TimeControl, run_match
from arena.referee import match as referee_match
from arena.referee.local import LocalLink, first_legal
from arena.rpc.bridge import GC_THRESHOLD, HOST_ENV, GrpcServerThread
from arena.rpc.server import PLAY_ROUTE, Hub, serve_referee
from arena.rules import Match
from arena.tournament import TournamentRunner
from arena.tournament.config import parse_config
from arena.v1 import arena_pb2 as pb


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


@pytest.mark.parametrize("host", ["pump", "thread"])
def test_pace_plays_fewer_matches_when_the_grpc_loop_lags(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, host: str,
) -> None:
    """While the referee serves, the gRPC loop is kept busy (a blocking call of 80 ms posted
    to it every 60 ms). Answers are stamped there, so this lag would be charged to bots: the
    runner's backpressure (`_pace`) must see it — it cuts the matches played at once and
    logs `referee_lagging`. With the loop on a thread of its own (the default; the call
    releases the GIL, so trio's own thread never lags) it is `take_loop_lag` that reports it
    (and resets once read); pumped on trio's thread (ARENA_GRPC_HOST=pump) the loop lags as
    trio does, and trio's own lag says it."""
    monkeypatch.setenv(HOST_ENV, host)
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
            if host == "thread":  # a loaded machine may run the call or the probe later
                with trio.move_on_after(30):
                    while server._loop_lag < 0.055:
                        await trio.sleep(0.05)
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
    if host == "thread":
        assert lagged >= 0.055, lagged  # the 80 ms call, less at most the probe's 20 ms sleep
        assert again < lagged  # read once: the next read reports only what lagged since
    else:
        assert (lagged, again) == (0.0, 0.0)  # no loop of its own to lag


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


# ---------------------------------------------------------------- a bot that stops reading


class _StalledClient:
    """A bot speaking raw HTTP/2 (the `h2` library: no gRPC, no SDK) that opens the Play
    stream, sends its hello, and then never reads its stream: it grants the server no
    flow-control window (its SETTINGS say 0 bytes per stream and it never sends a
    WINDOW_UPDATE), so not one byte of any response message can be written to it. It still
    answers the connection's own frames (PING, SETTINGS), as a live but stuck process would:
    its socket is read on a thread only to keep the connection alive."""

    def __init__(self, port: int, token: str) -> None:
        self._sock = socket.create_connection(("127.0.0.1", port))
        self._h2 = h2.connection.H2Connection(
            h2.config.H2Configuration(client_side=True, header_encoding="utf-8")
        )
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self.response_bytes = 0  # DATA the server managed to send (should stay 0)
        with self._lock:
            self._h2.initiate_connection()
            self._h2.update_settings({h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 0})
            stream = self._h2.get_next_available_stream_id()
            self._h2.send_headers(stream, [
                (":method", "POST"), (":scheme", "http"), (":path", PLAY_ROUTE.path),
                (":authority", f"127.0.0.1:{port}"), ("content-type", "application/grpc"),
                ("te", "trailers"),
            ])
            hello = pb.BotMessage(hello=pb.Hello(bot_name="stalled", token=token,
                                                 protocol_version=1)).SerializeToString()
            self._h2.send_data(stream, b"\0" + struct.pack(">I", len(hello)) + hello)
            self._sock.sendall(self._h2.data_to_send())
        self._thread = threading.Thread(target=self._keep_alive, name="stalled-bot")
        self._thread.start()

    def _keep_alive(self) -> None:
        self._sock.settimeout(0.1)
        while not self._stop.is_set():
            try:
                data = self._sock.recv(65536)
            except TimeoutError:
                continue
            except OSError:
                return
            if not data:
                return
            with self._lock:
                for event in self._h2.receive_data(data):
                    if isinstance(event, h2.events.DataReceived):
                        self.response_bytes += len(event.data)  # never acknowledged
                self._sock.sendall(self._h2.data_to_send())

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self._sock.close()


def test_a_request_that_cannot_be_written_times_out_after_the_unsent_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A bot that connects, says hello and then stops reading its stream (a raw HTTP/2 client
    that grants no flow-control window) is sent a decision request that gRPC can never
    write. The referee does not start the bot's clock for a request that has not left, so
    it waits past the deadline — but no longer than `UNSENT_LIMIT_S` past it (the guard:
    here 1 s instead of 5 s, to keep the test short): then the decision is a timeout, the
    strike ends the match, and nothing hangs."""
    monkeypatch.setattr(referee_match, "UNSENT_LIMIT_S", 1.0)
    tc = TimeControl(decision_ms=100, grace_ms=50)

    async def main() -> tuple[Any, float, int]:
        hub = Hub()
        hub.admit("stalled-token", "stalled")
        async with serve_referee(hub) as server:
            client = await trio.to_thread.run_sync(_StalledClient, server.port, "stalled-token")
            try:
                with trio.fail_after(30):  # without the guard the match would never end
                    conn = await hub.connection_for("stalled-token")
                    links: list[Any] = [conn.link("m", 0, reconnect=False),
                                        conn.link("m", 1, reconnect=False)]
                    started = trio.current_time()
                    report = await run_match("m", Match("argentine-1v1", seed=3), links,
                                             time_control=tc,
                                             policy=FaultPolicy(max_strikes=1))
                    took = trio.current_time() - started
                with trio.move_on_after(0.5):  # a normal end would wait for the unwritable
                    await conn.close()  # messages first; cancelled, it aborts the stream
            finally:
                await trio.to_thread.run_sync(client.close)
        return report, took, client.response_bytes

    with capture_logs() as logs:
        report, took, received = trio.run(main)
    assert received == 0  # not one byte of a message reached the bot
    assert report.outcome.termination is Termination.TIMEOUT, report.outcome
    assert "no answer within 100 ms" in report.outcome.detail
    # It waited for the request to leave (the bot's clock never started) up to the guard...
    assert took >= (tc.decision_ms + tc.grace_ms) / 1000 + 1.0
    # ... and then called it (generously bounded: a loaded machine only makes it later).
    assert took < 20
    faults = [e for e in logs if e["event"] == "fault"]
    assert [(e["fault"], e["seat"]) for e in faults] == [
        ("timeout", report.outcome.faulty_seat)
    ], faults


def test_a_match_binds_its_logger_once_not_per_decision(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The referee's log calls go through structlog's module-level lazy proxy, which builds
    a whole bound logger at every call (as costly as writing the decision line itself): a
    match binds one at its start and logs every decision through it. The lines are the
    same: one `decision` event per decision, carrying the match's bound context."""
    binds = [0]
    bind = structlog._config.BoundLoggerLazyProxy.bind

    def counting_bind(self: Any, **values: Any) -> Any:
        binds[0] += 1
        return bind(self, **values)

    monkeypatch.setattr(structlog._config.BoundLoggerLazyProxy, "bind", counting_bind)
    links: list[Any] = [LocalLink("a", first_legal), LocalLink("b", first_legal)]

    async def main() -> Any:
        return await run_match("m", Match("argentine-1v1", seed=5), links)

    with capture_logs(processors=[structlog.contextvars.merge_contextvars]) as logs:
        report = trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    decisions = [e for e in logs if e["event"] == "decision"]
    assert len(report.decisions) > 20
    assert len(decisions) == len(report.decisions)
    assert all(e["match_id"] == "m" for e in decisions)
    assert binds[0] <= 2, binds  # once per match (not once per line)
