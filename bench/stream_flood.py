"""HTTP/2 stream floods (hostile review round 3, "stream_flood"): what they cost the referee
and the honest bots, in real tournaments (`arena tournament` in a process of its own).

Each row is the same tournament: three launched, sandboxed bots, argentine-1v1 to 15 (one
chico), `BENCH_FLOOD_GAMES` matches per pair (default 2: 6 matches), 3 at once, 250 ms per
decision and 50 ms of grace. ``honestA`` and ``honestB`` are tests/bots/pondering.py thinking
200 ms a decision (a random player); ``seat`` is tests/bots/seat_flood.py, which plays the
first legal action after 200 ms and, in the ``own door`` row only, floods from its first
decision on: 8 connections to its ARENA_SERVER (its sandbox's unix socket), rapid-reset
streams (raw HTTP/2, opened as fast as it can, each reset at once). Rows:

``no flood``     the control
``public TCP``   an outsider with no token (tests/bots/h2_flood.py, 4 connections, the same
                 rapid-reset streams) floods the tournament's public TCP address while it
                 runs
``own door``     the launched ``seat`` floods its own door
``watchers``     an outsider (tests/bots/outsider.py) holds 1,000 `Spectator/Watch("")`
                 streams (250 connections x 4) at the public address
``reflection``   an outsider asks reflection for arena.v1.Referee's file in a loop (4
                 connections x 4 streams)
``web streams``  the tournament runs with `--web`; an outsider holds 300 idle event streams
                 of the tournament and 300 of each live match (hostile review round 4)

Columns: ``referee cpu s`` the referee process's CPU (its own threads, not the bots': read
from /proc/PID/stat every 50 ms, the last reading), ``wall s``, ``honest strikes`` and
``honest forfeits`` summed over honestA and honestB (a forfeit: a match they lost by a fault
of their own), ``of which elsewhere`` those strikes in the matches ``seat`` is not in,
``seat killed`` the `seat_stream_flood` events (the seat killed for flooding its door),
``flood opened`` streams the flood opened (public: the outsider's count; own door: the most of
the seat's last reports, printed every 0.1 s, and of what its killed doors saw, taken plus
refused), ``referee took`` of those, the ones the referee handed to trio (own door: the
killed seats' `accepted`; public: not counted).

``BENCH_FLOOD_ROWS`` (comma-separated row names) runs only those rows. ``BENCH_ARENA`` runs
another `arena` executable (say, an older checkout's, for a before and
after); the flooding bot is this checkout's either way.
"""

from __future__ import annotations

import json
import os
import re
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from contextlib import closing
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BOTS = REPO / "tests" / "bots"
ARENA = Path(os.environ.get("BENCH_ARENA", Path(sys.executable).parent / "arena"))
HONEST = ("honestA", "honestB")
OUTSIDERS = {  # row -> the outsider's command (the address, and more, follow)
    "public TCP": [str(BOTS / "h2_flood.py")],
    "watchers": [str(BOTS / "outsider.py"), "watch"],
    "reflection": [str(BOTS / "outsider.py"), "reflect"],
    "web streams": [str(BOTS / "outsider.py"), "sse"],
}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _config(folder: Path, games: int, flood_seat: bool, port: int) -> Path:
    seat = ["python", str(BOTS / "seat_flood.py"), "--connections",
            "8" if flood_seat else "0", "--keep", "1", "--think-ms", "200"]
    lines = [
        "[tournament]", 'name = "sflood"', "seed = 6", f"matches_per_pair = {games}",
        'variants = ["argentine-1v1"]', "concurrency = 3", 'database = "arena.db"',
        'replays = "replays"', 'logs = "logs"', f'listen = "127.0.0.1:{port}"', "",
        "[executor]", 'kind = "local"', "",
        "[time_control]", "decision_ms = 250", "grace_ms = 50", "",
        "[options.argentine-1v1]", "target = 15", "chicos = 1", "",
        "[[bot]]", 'name = "seat"', f"command = {json.dumps(seat)}", "",
    ]
    for name in HONEST:
        command = ["python", str(BOTS / "pondering.py"), "200"]
        lines += ["[[bot]]", f'name = "{name}"', f"command = {json.dumps(command)}", ""]
    path = folder / "sflood.toml"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def _cpu_s(pid: int) -> float | None:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def _row(mode: str, games: int) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="bench-sflood-") as tmp:
        folder = Path(tmp)
        port = _free_port()
        config = _config(folder, games, mode == "own door", port)
        web = _free_port() if mode == "web streams" else None
        start = time.monotonic()
        run = subprocess.Popen([str(ARENA), "tournament", str(config), "--no-progress",
                                *(["--web", f"127.0.0.1:{web}"] if web else [])],
                               cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True)
        outsider = None
        cpu = 0.0
        while run.poll() is None:
            seen = _cpu_s(run.pid)
            cpu = seen if seen is not None else cpu
            if mode in OUTSIDERS and outsider is None and _listening(web or port):
                outsider = subprocess.Popen(
                    [sys.executable, *OUTSIDERS[mode], f"127.0.0.1:{web or port}"]
                    + (["--connections", "4", "--keep", "1", "--seconds", "120"]
                       if mode == "public TCP" else ["120"]),
                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            time.sleep(0.05)
        wall = time.monotonic() - start
        _, err = run.communicate()
        opened = 0
        if outsider is not None:
            outsider.terminate()  # it prints its report and exits
            out, _ = outsider.communicate()
            opened = json.loads(out.splitlines()[-1])["opened"] if out.strip() else 0
        if run.returncode != 0:
            raise RuntimeError(f"{mode}: arena tournament failed: {err[-2000:]}")
        strikes = elsewhere = forfeits = 0
        with closing(sqlite3.connect(folder / "arena.db")) as db:
            for seats, struck, faulty in db.execute(
                    "SELECT seat_bots, strikes, faulty_bot FROM matches"):
                names = json.loads(seats)
                honest = sum(s for n, s in zip(names, json.loads(struck), strict=True)
                             if n in HONEST)
                strikes += honest
                elsewhere += honest if "seat" not in names else 0
                forfeits += faulty in HONEST
        events = [json.loads(line) for line in
                  (folder / "logs" / "sflood.jsonl").read_text().splitlines()]
        killed = [e for e in events if e["event"] == "seat_stream_flood"]
        if mode == "own door":  # what the referee saw of it; else the seat's own reports
            seen = sum(e["accepted"] + e["refused"] for e in killed)
            for log in (folder / "logs").rglob("*.seat.log"):
                found = re.findall(r"seat_flood: (\{.*\})", log.read_text(errors="replace"))
                opened += json.loads(found[-1]).get("opened", 0) if found else 0
            opened = max(opened, seen)
        return {"mode": mode, "referee cpu s": cpu, "wall s": wall,
                "honest strikes": strikes, "of which elsewhere": elsewhere,
                "honest forfeits": forfeits,
                "seat killed": len(killed), "flood opened": opened,
                "referee took": sum(e["accepted"] for e in killed) if killed else "n/a"}


def part(seconds: float) -> list[dict[str, object]]:
    games = int(os.environ.get("BENCH_FLOOD_GAMES", "2"))
    modes = ("no flood", "public TCP", "own door", *list(OUTSIDERS)[1:])
    wanted = os.environ.get("BENCH_FLOOD_ROWS")  # e.g. "public TCP,own door"
    return [_row(mode, games) for mode in modes if not wanted or mode in wanted.split(",")]


def door_part(seconds: float) -> list[dict[str, object]]:
    """What one seat's door costs (`GrpcServerThread.seat_door`, on each gRPC host): open
    (a grpc.aio server created, bound to a fresh unix socket, started) and close (stopped),
    as the runner does for every sandboxed seat, one after the other for `seconds`. ``open
    ms`` and ``close ms``: medians of the wall time trio waits; ``cpu ms/door`` the whole
    process's CPU (every thread: trio's, the gRPC loop's, grpc-core's) per open and close."""
    import statistics

    import trio

    from arena.rpc.bridge import HOST_ENV, StreamRoute, serve_grpc

    rows: list[dict[str, object]] = []
    for host in ("thread", "pump"):
        os.environ[HOST_ENV] = host

        async def measure(host: str) -> dict[str, object]:
            route = StreamRoute("arena.v1.Referee", "Play")
            opened: list[float] = []
            closed: list[float] = []
            with tempfile.TemporaryDirectory(prefix="bench-door-") as tmp:
                async with serve_grpc("127.0.0.1:0", [route], launched_options=[],
                                      more_addresses=["127.0.0.1:0"]) as server:
                    cpu = time.process_time()
                    deadline = time.monotonic() + seconds
                    while len(opened) < 20 or time.monotonic() < deadline:
                        path = Path(tmp) / f"seat-{len(opened)}.sock"
                        start = time.perf_counter()
                        async with server.seat_door(f"unix:{path}", rate=20,
                                                    flood_bound=50):
                            opened.append(time.perf_counter() - start)
                            start = time.perf_counter()
                        closed.append(time.perf_counter() - start)
                    cpu = time.process_time() - cpu
            return {"host": host, "doors": len(opened),
                    "open ms": statistics.median(opened) * 1000,
                    "close ms": statistics.median(closed) * 1000,
                    "cpu ms/door": cpu / len(opened) * 1000}

        rows.append(trio.run(measure, host))
    os.environ.pop(HOST_ENV, None)
    return rows
