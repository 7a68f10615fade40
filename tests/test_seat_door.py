"""A launched, sandboxed seat's own door to the referee (hostile review round 3, "stream_flood",
the launched case), from the outside: real `arena tournament` runs, real bwrap sandboxes,
a real SQLite file, and a hostile bot that floods with raw HTTP/2 frames (tests/bots/
seat_flood.py over h2_flood.py: no grpcio on the flood's side).

Before, every sandboxed seat dialed one shared unix socket, whose peers gRPC names all
``unix:``: the referee's per-connection stream rate could not tell them apart and did not
count them, so a seat could open and reset streams over several connections as fast as it
liked (~5x the referee's CPU over 8 connections) and played on. Now each sandboxed seat has a
socket (and a grpc.aio server) of its own: its new streams are held to `STREAMS_PER_SECOND`
over all its connections, and a seat that has `SEAT_FLOOD_BOUND` refused is killed
(`seat_stream_flood`), losing its match.
"""

from __future__ import annotations

import json
import re
import socket
import sys
from pathlib import Path
from typing import Any

import grpc
import pytest
import trio
from grpc_health.v1 import health_pb2
from grpc_reflection.v1alpha import reflection_pb2
from test_e2e_support import (
    SAMPLE_BOTS,
    TEST_BOTS,
    arena,
    bot_cmd,
    explain,
    python_bot,
    stored_matches,
    write_config,
)

from arena.rpc.bridge import HOST_ENV, StreamRoute, serve_grpc
from arena.rpc.server import SEAT_FLOOD_BOUND, STREAMS_PER_SECOND, Hub, seat_door, serve_referee
from arena.rpc.spectator import SpectatorFeed
from arena.tournament.sandbox import probe_bubblewrap
from arena.v1 import arena_pb2 as pb

OPTIONS = {"argentine-1v1": {"target": 15, "chicos": 1}}

needs_bwrap = pytest.mark.skipif(not probe_bubblewrap()[0], reason="bubblewrap cannot run here")


def _events(path: Path, event: str) -> list[dict[str, Any]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [e for e in map(json.loads, lines) if e["event"] == event]


@pytest.mark.e2e
@needs_bwrap
def test_a_seat_flooding_its_own_door_is_killed_and_the_others_play_on(tmp_path: Path) -> None:
    """`flooder` (sandboxed, launched) plays, and from its first decision floods its door
    over 8 connections with rapid-reset streams; two honest random bots play it and each
    other. Each of the flooder's matches is lost by it, the stored detail saying it was
    killed for a stream flood; the honest match ends normally; no honest bot is struck or
    forfeits. The referee took a bounded number of the flooder's streams (the event
    `seat_stream_flood`: at most the burst plus the rate over its life; at least
    SEAT_FLOOD_BOUND more were refused), and its seat log says why it was killed. (Before:
    the flooder played its matches out.)"""
    # The honest bots are calm (no call, every call declined: a hand is worth 2 points at
    # most), so a match lasts well past the flood's detection: with random bots a falta
    # envido at the first decision ended one before the flooder was killed (seen once).
    calm = [*bot_cmd("pondering"), "5", "calm"]
    bots = {"flooder": [*bot_cmd("seat_flood"), "--connections", "8", "--keep", "1"],
            "randA": calm, "randB": calm}
    config = write_config(tmp_path, name="seatflood", bots=bots, variants=["argentine-1v1"],
                          options=OPTIONS, games=1, concurrency=3, decision_ms=1000)
    run = arena("tournament", config, "--no-progress", cwd=tmp_path)
    assert run.returncode == 0, explain(run)
    rows = stored_matches(tmp_path / "arena.db")
    assert len(rows) == 3, rows
    flooded = [r for r in rows if "flooder" in json.loads(r["seat_bots"])]
    honest = [r for r in rows if "flooder" not in json.loads(r["seat_bots"])]
    assert len(flooded) == 2, rows
    assert len(honest) == 1, rows
    for row in flooded:
        assert row["faulty_bot"] == "flooder", row
        assert row["termination"] in ("disconnect", "forfeit"), row
        assert "a stream flood" in row["detail"], row
        seat = json.loads(row["seat_bots"]).index("flooder")
        strikes = json.loads(row["strikes"])
        assert all(s == 0 for i, s in enumerate(strikes) if i != seat), row
    assert honest[0]["termination"] == "normal", honest
    assert json.loads(honest[0]["strikes"]) == [0, 0], honest
    floods = _events(tmp_path / "logs" / "seatflood.jsonl", "seat_stream_flood")
    assert len(floods) == 2, floods
    for event in floods:
        assert event["refused"] >= SEAT_FLOOD_BOUND, event
        # burst (2x the rate) plus the rate over the seconds it lived (a match of ~1-3 s
        # here; 10 s is generous on a loaded machine)
        assert event["accepted"] <= 2 * STREAMS_PER_SECOND + 10 * STREAMS_PER_SECOND, event
    seat_logs = list((tmp_path / "logs").rglob("*.flooder.log"))
    assert len(seat_logs) == 2, seat_logs
    for seat_log in seat_logs:  # (its own flood reports may not get out before the kill)
        text = seat_log.read_text()
        assert "killed by the referee: it opened streams on its own door" in text, text[-2000:]


@pytest.mark.parametrize("host", ["thread", "pump"])
def test_seat_doors_are_apart_named_bounded_and_closed(
    tmp_path: Path, host: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two seat doors on one bridge server (a grpc.aio server per door, real unix sockets),
    on both gRPC hosts: a grpcio client's stream through each arrives on
    ``launched_incoming`` named by its door's path, and only its door counts it. A raw
    HTTP/2 rapid-reset flood (tests/bots/h2_flood.py, 4 connections, 2 s) through door `a`
    is held to its rate (at most the burst plus the rate over the flood) and sets `a`'s
    `flooded` once `flood_bound` streams were refused, and shuts `a` (nobody listens at its
    path any more); `b` is untouched. Closing a door removes its socket."""
    monkeypatch.setenv(HOST_ENV, host)
    paths = [tmp_path / "a.sock", tmp_path / "b.sock"]
    rate, bound, seconds = 10.0, 50, 2.0

    async def main() -> None:
        async with serve_grpc("127.0.0.1:0", [ROUTE], launched_options=[],
                              more_addresses=["127.0.0.1:0"]) as server, \
                server.seat_door(f"unix:{paths[0]}", rate=rate, flood_bound=bound) as a:
            async with server.seat_door(f"unix:{paths[1]}", rate=rate, flood_bound=bound) as b:
                for path, door in ((paths[0], a), (paths[1], b)):
                    async with trio.open_nursery() as nursery:
                        nursery.start_soon(trio.to_thread.run_sync, _call_once, f"unix:{path}")
                        stream = await server.launched_incoming.receive()
                        assert stream.peer == f"unix:{path}", stream.peer
                        assert door.accepted == 1, (door.accepted, path)
                        await stream.aclose()
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(_close_all, server.launched_incoming)
                    flood = await trio.run_process(
                        [sys.executable, str(FLOODER), f"unix:{paths[0]}", "--connections",
                         "4", "--keep", "1", "--seconds", str(seconds)],
                        capture_stdout=True, check=True)
                    nursery.cancel_scope.cancel()
                report = json.loads(flood.stdout.decode().splitlines()[-1])
                assert a.flooded.is_set(), (a.accepted, a.refused, report)
                assert a.refused >= bound, (a.refused, report)
                assert report["opened"] > a.accepted + bound, (a.accepted, report)
                # 1 before the flood, the burst, the rate over the flood (and 1 s of slack)
                assert a.accepted <= 1 + 2 * rate + rate * (seconds + 1), (a.accepted, report)
                assert (b.accepted, b.refused, b.flooded.is_set()) == (1, 0, False)
                # Flooded, `a` shut at once: nobody listens at its path (gRPC removed the
                # file; a sandbox's bind of it finds a socket nobody listens on).
                with socket.socket(socket.AF_UNIX) as shut, \
                        pytest.raises((FileNotFoundError, ConnectionRefusedError)):
                    shut.connect(str(paths[0]))
            with socket.socket(socket.AF_UNIX) as probe, pytest.raises(FileNotFoundError):
                probe.connect(str(paths[1]))

    trio.run(main)


ROUTE = StreamRoute("arena.v1.Referee", "Play")  # the path h2_flood.py opens
FLOODER = TEST_BOTS / "h2_flood.py"


async def _close_all(streams: Any) -> None:
    async for stream in streams:
        await stream.aclose()


def _call_once(address: str) -> None:
    """One raw-bytes stream through `address` that sends a message and reads to the end."""
    with grpc.insecure_channel(address) as channel:
        list(channel.stream_stream(ROUTE.path)(iter([b"hi"]), timeout=10))


PEEK = """import os, sys
from arena.sdk import Bot, main
server = os.environ["ARENA_SERVER"]
path = server.removeprefix("unix:")
print("peek:", server, os.stat(path).st_ino if server.startswith("unix:") else "-",
      file=sys.stderr, flush=True)
class First(Bot):
    def act(self, view, legal):
        return 0
main(First)
"""


@pytest.mark.e2e
@pytest.mark.parametrize("mode", ["bubblewrap", "none"])
def test_each_sandboxed_seat_dials_a_socket_of_its_own(tmp_path: Path, mode: str) -> None:
    """Two launched bots in one match, seen from inside their seats: sandboxed, each dials
    ``unix:/run/arena/referee.sock``, but the two sockets are different files (inodes: before,
    both seats were bound the one shared socket); unsandboxed (mode "none"), each dials the
    private TCP port as before. Either way the match ends normally with no strike."""
    if mode == "bubblewrap" and not probe_bubblewrap()[0]:
        pytest.skip("bubblewrap cannot run here")
    (tmp_path / "peek.py").write_text(PEEK, encoding="utf-8")
    bots = {"peekA": ["python", str(tmp_path / "peek.py")],
            "peekB": ["python", str(tmp_path / "peek.py")]}
    config = write_config(tmp_path, name="peek", bots=bots, variants=["argentine-1v1"],
                          options=OPTIONS, games=1, concurrency=1)
    if mode == "none":
        text = config.read_text(encoding="utf-8")
        config.write_text(text.replace("[sandbox]\n", '[sandbox]\nmode = "none"\n'
                                       "allow_unsandboxed = true\n"), encoding="utf-8")
    run = arena("tournament", config, "--no-progress", cwd=tmp_path)
    assert run.returncode == 0, explain(run)
    rows = stored_matches(tmp_path / "arena.db")
    assert [(r["termination"], json.loads(r["strikes"])) for r in rows] == [("normal", [0, 0])]
    seen = []
    for seat_log in (tmp_path / "logs").rglob("*.peek*.log"):
        seen += re.findall(r"peek: (\S+) (\S+)", seat_log.read_text())
    assert len(seen) == 2, seen
    if mode == "bubblewrap":
        assert {server for server, _ in seen} == {"unix:/run/arena/referee.sock"}, seen
        assert seen[0][1] != seen[1][1], seen
    else:
        assert all(re.fullmatch(r"127\.0\.0\.1:\d+", server) for server, _ in seen), seen
        assert seen[0][0] == seen[1][0], seen


@pytest.mark.e2e
@needs_bwrap
def test_a_temp_folder_too_long_for_the_seats_sockets_is_one_clear_line(tmp_path: Path) -> None:
    """With TMPDIR so long that a seat's socket path would pass Linux's 107 bytes, a
    sandboxed tournament stops before any match with one line naming TMPDIR and the limit.
    (Before: gRPC could not bind the shared socket, said nothing, and every launched bot
    failed to connect.)"""
    long_tmp = tmp_path / ("t" * 90)
    long_tmp.mkdir()
    bots = {"randA": python_bot(SAMPLE_BOTS / "random_bot.py"),
            "randB": python_bot(SAMPLE_BOTS / "random_bot.py")}
    config = write_config(tmp_path, name="longtmp", bots=bots, variants=["argentine-1v1"],
                          options=OPTIONS, games=1, concurrency=1)
    run = arena("tournament", config, "--no-progress", cwd=tmp_path,
                env={"TMPDIR": str(long_tmp)})
    assert run.returncode != 0, explain(run)
    errors = [line for line in run.stderr.splitlines() if "TMPDIR" in line]
    assert len(errors) == 1, explain(run)
    assert "at most 107" in errors[0], errors
    assert stored_matches(tmp_path / "arena.db") == [], "no match should have been played"


def test_a_seat_door_serves_the_referee_only(tmp_path: Path) -> None:
    """A hostile review (round 4) had a launched bot ask reflection in a loop through its own
    socket (the standard services were on the launched bots' server too), and an honest
    opponent lost by timeout. A seat's door serves `arena.v1.Referee` and nothing else:
    reflection, health and the spectators' service answer UNIMPLEMENTED there, while the
    public address serves them."""
    path = tmp_path / "seat.sock"

    def ask(address: str) -> list[Any]:
        got: list[Any] = []
        with grpc.insecure_channel(address) as channel:
            calls = [
                ("/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo", True,
                 reflection_pb2.ServerReflectionRequest(list_services="")),
                ("/grpc.health.v1.Health/Check", False, health_pb2.HealthCheckRequest()),
                ("/arena.v1.Spectator/ListMatches", False, pb.ListMatchesRequest()),
            ]
            for method, streaming, request in calls:
                wire = request.SerializeToString()
                try:
                    if streaming:
                        list(channel.stream_stream(method)(iter([wire]), timeout=5))
                    else:
                        channel.unary_unary(method)(wire, timeout=5)
                    got.append("OK")
                except grpc.RpcError as exc:
                    got.append(exc.code())
        return got

    async def main() -> tuple[list[Any], list[Any]]:
        feed = SpectatorFeed(lambda: {})
        async with serve_referee(Hub(), "127.0.0.1:0", spectators=feed,
                                 private_address="127.0.0.1:0") as server, \
                seat_door(server, path):
            seat = await trio.to_thread.run_sync(ask, f"unix:{path}")
            public = await trio.to_thread.run_sync(ask, f"127.0.0.1:{server.port}")
            return seat, public

    seat, public = trio.run(main)
    assert seat == [grpc.StatusCode.UNIMPLEMENTED] * 3, seat
    assert public == ["OK"] * 3, public
