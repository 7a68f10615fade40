"""Counting a launched seat's sockets (`[limits] sockets`, arena.tournament.socketcount) at a
cost the seat cannot grow, with real processes: real bwrap sandboxes, a real listening Unix
socket, real `arena tournament` runs whose hostile bots are real processes.

A hostile review (round 3, "fd_amplify") had a bot fork ~480 idle processes holding ~230
descriptors each (naming files 1,800 folders deep): the referee readlinked all of them once a
second, 2.8-3.6 s of its CPU per count. Now a sandboxed seat is counted in its own network
namespace (two small reads), an unsandboxed one over a bounded number of descriptors.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
import trio
from test_e2e_support import (
    TEST_BOTS,
    against_random,
    bot_cmd,
)

from arena.tournament.launcher import BotLimits, SeatProcess
from arena.tournament.sandbox import Sandbox
from arena.tournament.socketcount import DESCRIPTOR_BUDGET, SocketCounter

DECISION_MS = 1000
# What one count of a sandboxed seat may cost the referee's thread, in CPU (not wall-clock):
# two reads of a few hundred bytes take tens of microseconds. The readlink of every
# descriptor of the scaled bomb below took ~60-200 ms (bench socket_count: 40 processes).
COUNT_CPU_MS = 5.0


def _events(path: Path, event: str) -> list[dict[str, Any]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [e for e in map(json.loads, lines) if e["event"] == event]


@pytest.mark.e2e
def test_a_bot_forking_idle_processes_full_of_descriptors_costs_the_referee_nothing(
    tmp_path: Path,
) -> None:
    """`fdbomb` (tests/bots/hostile_fdbomb.py, the review's bomb scaled down: 120 processes
    x ~230 descriptors naming a file 1,800 folders deep in its /tmp, no socket) plays a real
    tournament against the random bot. The referee's own accounting of its socket counts
    (`seat_sockets_counted`, CPU time of the thread that counted) says every count of every
    seat was counted in the seat's network namespace and cost at most `COUNT_CPU_MS`; the
    bomb is not killed (it holds one socket) and its matches end normally."""
    bomb = [*bot_cmd("hostile_fdbomb"), "--procs", "120", "--depth", "1800", "--pause", "0.1"]
    rows = against_random(tmp_path, "fdbomb", bomb, decision_ms=DECISION_MS)
    assert all(row["termination"] == "normal" for row in rows), rows
    log_file = tmp_path / "logs" / "fdbomb.jsonl"
    assert _events(log_file, "seat_socket_flood") == []
    counted = _events(log_file, "seat_sockets_counted")
    assert len(counted) == 4, counted  # two seats per match
    seat_logs = sorted((tmp_path / "logs").rglob("*.seat*.fdbomb.log"))
    assert len(seat_logs) == 2, seat_logs
    for seat_log in seat_logs:  # the bomb went off in each of its seats
        assert "fdbomb: 2" in seat_log.read_text()
        assert "x 120 processes" in seat_log.read_text()
    assert sum(e["counts"] for e in counted) >= 4, counted
    for e in counted:
        assert e["how"] == "netns", e
        assert e["max_cpu_ms"] <= COUNT_CPU_MS, e


@pytest.mark.e2e
@pytest.mark.parametrize("trick", ["--stash", "--nested"])
def test_a_jammer_hiding_its_connections_is_still_killed(tmp_path: Path, trick: str) -> None:
    """`jammer` opens 200 idle connections to the referee's socket, then hides them from a
    count of its descriptors: ``--stash`` sends them in flight (SCM_RIGHTS) into a socketpair
    and closes its own copies (the referee's ends stay open: the door stays jammed);
    ``--nested`` first tries to enter a network namespace of its own, out of sight of a count
    of its sandbox's namespace (bwrap --disable-userns refuses it). Both are killed
    (`seat_socket_flood`) and lose every match. (Before, a count of descriptors saw the
    stashed jammer hold 2 sockets and let it play.)"""
    rows = against_random(tmp_path, "jammer", [*bot_cmd("hostile_jammer"), trick],
                          decision_ms=DECISION_MS)
    for row in rows:
        assert row["faulty_bot"] == "jammer", row
        assert row["termination"] in ("disconnect", "forfeit"), row
    floods = _events(tmp_path / "logs" / "jammer.jsonl", "seat_socket_flood")
    assert len(floods) == 2, floods
    assert all(e["sockets"] > e["most"] == 64 and e["how"] == "netns" for e in floods), floods
    if trick == "--nested":
        seat_logs = list((tmp_path / "logs").rglob("*.jammer.log"))
        assert seat_logs, list((tmp_path / "logs").rglob("*"))
        for seat_log in seat_logs:
            assert "jammer: nested namespace refused" in seat_log.read_text()


SEAT = """import os, socket, sys, time
path = os.environ["ARENA_SERVER"].removeprefix("unix:")
held = [socket.socket(socket.AF_UNIX) for _ in range(int(sys.argv[1]))]
for s in held:
    s.connect(path)
pair = socket.socketpair()
udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
if os.fork() == 0:  # a child holding them all too: still the same sockets
    time.sleep(3600)
print("ready", flush=True)
time.sleep(3600)
"""


def test_the_namespace_count_is_the_seats_own_sockets_exactly(tmp_path: Path) -> None:
    """A sandboxed seat connects 5 times to the referee's listening socket (accepted: the
    referee holds the other ends, which live in the seat's namespace too), makes a
    socketpair and a UDP socket, and forks a child that inherits them: the count is 8, its
    own sockets, each once, although the referee itself holds many more sockets (outside the
    seat's namespace: /proc/<pid>/net follows the namespace of `pid`)."""
    path = tmp_path / "referee.sock"
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(path))
    listener.listen(64)
    accepted: list[socket.socket] = []
    ours = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(20)]

    def accept() -> None:
        for _ in range(5):
            accepted.append(listener.accept()[0])

    threading.Thread(target=accept, daemon=True).start()
    script = tmp_path / "seat.py"
    script.write_text(SEAT)

    async def main() -> tuple[int, str, bool]:
        async with trio.open_nursery() as nursery:
            seat = await SeatProcess.start(
                [sys.executable, str(script), "5"], cwd=tmp_path, server=f"unix:{path}",
                token="t", bot_name="b", log_path=tmp_path / "seat.log", nursery=nursery,
                limits=BotLimits(sockets=0), sandbox=Sandbox("bubblewrap", socket=path),
                bot_dir=tmp_path)
            counter = SocketCounter(seat.pid, 64, own_netns=seat.jail.own_netns,
                                    referee_path=seat.jail.referee_socket)
            with trio.fail_after(60):  # its output reaches its log file when it is done
                while counter.count().sockets < 8 or len(accepted) < 5:
                    await trio.sleep(0.1)
            await trio.sleep(0.5)  # all made, and the child forked
            found = counter.count()
            counter.close()
            await seat.stop(grace=0)
            return found.sockets, found.how, seat.jail.own_netns

    try:
        sockets, how, own_netns = trio.run(main)
    finally:
        for s in [listener, *accepted, *ours]:
            s.close()
    assert own_netns
    assert how == "netns"
    assert len(accepted) == 5
    assert len(ours) == 20
    assert sockets == 5 + 2 + 1


def test_an_unsandboxed_seat_with_too_many_descriptors_is_killed_and_cleaned_up(
    tmp_path: Path,
) -> None:
    """Without a sandbox (mode "none") a count examines at most `DESCRIPTOR_BUDGET`
    descriptors and processes: `fdbomb` with 40 processes x ~230 descriptors (no socket) is
    over it, so it is killed as a flood (logged `over_budget`, said in its own log), each
    count having cost the referee's worker thread a bounded time; its temp dir (HOME), where
    it made folders 1,200 deep (deeper than Python's recursion limit), is removed."""
    from structlog.testing import capture_logs

    async def main() -> tuple[SeatProcess, list[dict[str, Any]]]:
        with capture_logs() as logs:
            async with trio.open_nursery() as nursery:
                seat = await SeatProcess.start(
                    [sys.executable, str(TEST_BOTS / "hostile_fdbomb.py"), "--procs", "40",
                     "--depth", "1200", "--linger", "3600"],
                    cwd=tmp_path, server=f"unix:{tmp_path / 'none.sock'}", token="t",
                    bot_name="b", log_path=tmp_path / "seat.log", nursery=nursery,
                    limits=BotLimits(sockets=64), sandbox=Sandbox("none", temp_root=tmp_path),
                    bot_dir=TEST_BOTS)
                with trio.fail_after(120):
                    await seat.process.wait()
                await seat.stop(grace=0)
        return seat, logs

    try:
        seat, logs = trio.run(main)
        leftovers = [p.name for p in tmp_path.iterdir() if p.name.startswith("seat-")]
    finally:  # never leave folders pytest's own cleanup (shutil.rmtree) cannot remove
        subprocess.run(["rm", "-rf", "--one-file-system", *map(str, tmp_path.glob("seat-*"))],
                       check=False)
    floods = [e for e in logs if e["event"] == "seat_socket_flood"]
    assert len(floods) == 1, logs
    assert floods[0]["over_budget"] is True, floods
    assert floods[0]["how"] == "descriptors", floods
    text = (tmp_path / "seat.log").read_text()
    assert "fdbomb: " in text, text
    assert f"more than {DESCRIPTOR_BUDGET} descriptors" in text, text
    counted = [e for e in logs if e["event"] == "seat_sockets_counted"]
    assert len(counted) == 1, counted
    assert counted[0]["max_examined"] == DESCRIPTOR_BUDGET, counted
    assert counted[0]["max_cpu_ms"] < 250, counted  # the budget: 15-25 ms in bench socket_count
    assert seat.jail.temp is not None
    assert not seat.jail.temp.exists()
    assert leftovers == []
    assert os.path.exists(tmp_path / "seat.log")
