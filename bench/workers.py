"""Executors side by side: the same tournament played by the `local` executor (every match
in the coordinator) and by the `processes` executor with 1 and 2 (and, where there are more
cores, one per core) worker processes, and where the CPU goes in each.

Each row is a real tournament (`TournamentRunner.run`, a fresh database and key, the log to a
real file, the bots launched per seat and sandboxed as in any contest): argentine-1v1 with its
default options (three chicos to 30), 16 matches all at once (`concurrency` = 16; more with
BENCH_SECONDS above 5, always a multiple of 16, so that no row ends on a tail of a few), bots
chosen by `BENCH_WORKER_BOT`: ``python`` (the default: tests/bots/first_legal.py on the SDK,
whose matches are long, ~670 decisions, so the bots' start-up weighs least), ``js`` (the
JavaScript random sample bot), ``js-first`` (the same bot playing the first legal action:
bench/bots/js_first_legal.js, long matches) or ``c`` (the C random sample bot over the
stdio door, through its Python adapter; `make kits` builds it). Nobody watches
(`BENCH_WATCHED=1`: as if someone watched every match, so the workers send every move).
`BENCH_ROUNDS` rounds, alternating the rows, the fastest of each kept.

Columns: ``dec/s`` decisions stored over the wall time of the run; ``abnormal`` matches that
did not end normally; ``cpu µs/dec`` the CPU of every process of the run per decision, read
from /proc every 50 ms (`CpuSplit`) and split into ``coord`` (the coordinator: schedule,
storage, replays, and the referee itself when local), ``worker`` (all worker processes) and
``bot`` (the bots, their sandbox and stdio adapter); ``bot s/start`` the bots' CPU per bot
process (a process per seat per match: start-up and its decisions); ``cores busy`` the run's
CPU over its wall time; ``ceiling dec/s`` what the row could reach with the machine to itself:
every core busy, or its busiest referee process at a whole core, whichever comes first;
``load`` the 1-minute load average as the row began; ``vs 1 worker`` dec/s against the
one-worker row. The bots run on the same cores as the referees.
"""

from __future__ import annotations

import math
import os
import shutil
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path

import trio

from arena import logging as arena_logging
from arena.referee import MatchReport
from arena.tournament import TournamentRunner, load_config
from arena.tournament.executors import Executor, LocalExecutor, ProcessExecutor

REPO = Path(__file__).resolve().parent.parent
JS_BOT = REPO / "sample_bots" / "js_random" / "bot.js"
JS_FIRST = REPO / "bench" / "bots" / "js_first_legal.js"
C_BOT = REPO / "sample_bots" / "c_random" / "bot"
PY_BOT = REPO / "tests" / "bots" / "first_legal.py"
CONCURRENCY = 16


def _bot() -> tuple[list[str], str]:
    """The bots' command and protocol (`BENCH_WORKER_BOT`: python, js or c)."""
    choice = os.environ.get("BENCH_WORKER_BOT", "python")
    js_ready = shutil.which("node") and (JS_BOT.parent / "node_modules").is_dir()
    if choice == "js" and js_ready:
        return ["node", str(JS_BOT)], "grpc"
    if choice == "js-first" and js_ready:
        return ["node", str(JS_FIRST)], "grpc"
    if choice == "c" and C_BOT.is_file():  # `make kits` builds it
        return [str(C_BOT)], "stdio"
    if choice != "python":
        print(f"BENCH_WORKER_BOT={choice}: not available here, the python bot plays",
              file=sys.stderr)
    return [sys.executable, str(PY_BOT)], "grpc"


def _config(folder: Path, matches: int, bot: list[str], protocol: str) -> Path:
    command = "[" + ", ".join(f'"{part}"' for part in bot) + "]"
    (folder / "bench.key").write_text("ab" * 32 + "\n", encoding="ascii")
    path = folder / "bench.toml"
    path.write_text(
        f'[tournament]\nname = "workers"\nseed = 7\nmatches_per_pair = {matches}\n'
        f'variants = ["argentine-1v1"]\nconcurrency = {CONCURRENCY}\n'
        'secret_file = "bench.key"\n'
        "[time_control]\ndecision_ms = 5000\n"
        f'[[bot]]\nname = "a"\ncommand = {command}\nprotocol = "{protocol}"\n'
        f'dir = "{REPO}"\n'  # js-first requires the sample bot from the repository
        f'[[bot]]\nname = "b"\ncommand = {command}\nprotocol = "{protocol}"\n'
        f'dir = "{REPO}"\n',
        encoding="utf-8",
    )
    return path


CLK_TCK = os.sysconf("SC_CLK_TCK")
SAMPLE_S = 0.05


class CpuSplit:
    """Where the CPU goes while a row plays: a thread that reads /proc every `SAMPLE_S` for
    every descendant of this process and keeps each one's newest CPU time (utime + stime),
    by kind: ``coordinator`` (this process, less this thread's own reading), ``worker``
    (`arena.tournament.worker` processes), ``sandbox`` (bwrap), ``adapter`` (the `arena
    stdio` adapter of a stdio bot) and ``bot`` (the bots themselves). A process that exits
    loses at most its last `SAMPLE_S` of CPU (a bot is idle then: its match has ended)."""

    def __init__(self) -> None:
        self.me = os.getpid()
        self.seen: dict[int, tuple[str, float]] = {}  # pid -> (kind, its CPU seconds)
        self.start: dict[int, float] = {}  # CPU seconds at the start (processes alive then)
        self.own = 0.0  # this thread's CPU (spent reading /proc)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="cpu-split", daemon=True)

    @staticmethod
    def _stat(pid: int) -> tuple[int, float] | None:
        try:
            text = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return None
        fields = text[text.rindex(")") + 2:].split()
        return int(fields[1]), (int(fields[11]) + int(fields[12])) / CLK_TCK

    @staticmethod
    def _kind(pid: int) -> str:
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            return "bot"
        line = b" ".join(argv)
        if b"arena.tournament.worker" in line:
            return "worker"
        if argv and argv[0].endswith(b"bwrap"):
            return "sandbox"
        if b"arena.stdio" in line or b"arena stdio" in line or b"bin/arena" in line:
            return "adapter"
        return "bot"

    def look(self) -> None:
        stats: dict[int, tuple[int, float]] = {}
        for entry in os.scandir("/proc"):
            if entry.name.isdigit() and (got := self._stat(int(entry.name))) is not None:
                stats[int(entry.name)] = got
        for pid, (_ppid, cpu) in stats.items():
            ancestor, hops = pid, 0
            while ancestor not in (self.me, 0, 1) and ancestor in stats and hops < 64:
                ancestor, hops = stats[ancestor][0], hops + 1
            if ancestor != self.me:
                continue
            kind = "coordinator" if pid == self.me else (
                self.seen[pid][0] if pid in self.seen else self._kind(pid))
            self.seen[pid] = (kind, cpu)

    def _run(self) -> None:
        began = time.thread_time()
        while not self._stop.wait(SAMPLE_S):
            self.look()
        self.own = time.thread_time() - began

    def __enter__(self) -> CpuSplit:
        self.look()
        self.start = {pid: cpu for pid, (_kind, cpu) in self.seen.items()}
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.look()

    def seconds(self) -> dict[str, float]:
        """CPU seconds spent during the row, by kind."""
        spent: dict[str, float] = defaultdict(float)
        for pid, (kind, cpu) in self.seen.items():
            spent[kind] += cpu - self.start.get(pid, 0.0)
        spent["coordinator"] -= self.own
        return dict(spent)


def measure(
    executor: Executor, matches: int, bot: list[str], protocol: str
) -> tuple[int, int, float, dict[str, float]]:
    """(decisions stored, matches not ended normally, wall seconds, CPU seconds by kind of
    process) of one tournament of `matches` matches."""
    with tempfile.TemporaryDirectory(prefix="bench-workers-") as tmp:
        folder = Path(tmp)
        config = load_config(_config(folder, matches, bot, protocol))
        arena_logging.configure(path=config.logs / "workers.jsonl")
        runner = TournamentRunner(config)
        runner.executor = executor
        if os.environ.get("BENCH_WATCHED") == "1":  # as if someone watched every match
            runner.demand.append(lambda: None)
        decisions = [0, 0]  # decisions, matches that did not end normally

        def done(_pairing: object, report: MatchReport) -> None:
            decisions[0] += len(report.decisions)
            decisions[1] += not report.outcome.normal

        runner.on_match_done = done
        began = time.perf_counter()
        with CpuSplit() as split:
            trio.run(runner.run)
        elapsed = time.perf_counter() - began
        runner.store.close()
        arena_logging.configure(stream=open(os.devnull, "w"))  # noqa: SIM115 (closed by the next configure)
        return decisions[0], decisions[1], elapsed, split.seconds()


def _row(kind: str, workers: int, bot: list[str], protocol: str, matches: int) -> dict[str, object]:
    executor: Executor = ProcessExecutor(workers) if workers else LocalExecutor()
    load = os.getloadavg()[0]
    decisions, faulty, elapsed, kinds = measure(executor, matches, bot, protocol)
    cores = os.cpu_count() or 1
    cpu = sum(kinds.values()) / decisions  # seconds per decision, every process
    coord = kinds.get("coordinator", 0.0) / decisions
    worker = kinds.get("worker", 0.0) / decisions
    bots = cpu - coord - worker
    # What the row could reach with the machine to itself: every core busy, or its busiest
    # referee process (the coordinator, or each of `workers` sharing the work) a whole core.
    ceiling = min(cores / cpu, 1 / coord, workers / worker if workers else math.inf)
    return {
        "executor": kind, "workers": workers or "-",
        "bot": Path(bot[-1]).name + (" (stdio)" if protocol == "stdio" else ""),
        "matches": matches, "abnormal": faulty, "decisions": decisions,
        "seconds": round(elapsed, 2), "dec/s": decisions / elapsed,
        "matches/min": matches / elapsed * 60,
        "cpu µs/dec": cpu * 1e6, "coord µs": coord * 1e6, "worker µs": worker * 1e6,
        "bot µs": bots * 1e6, "bot s/start": bots * decisions / (2 * matches),
        "cores busy": cpu * decisions / elapsed, "ceiling dec/s": ceiling,
        "load": round(load, 1),
    }


def part(seconds: float) -> list[dict[str, object]]:
    bot, protocol = _bot()
    # Every match at once (a multiple of `concurrency`): no row ends on a tail of a few.
    matches = CONCURRENCY * max(1, round(seconds * 4 / CONCURRENCY))
    cores = os.cpu_count() or 1
    plans = [("local", 0)] + [("processes", n) for n in sorted({1, 2, cores})]
    best: dict[tuple[str, int], dict[str, object]] = {}
    for _round in range(int(os.environ.get("BENCH_ROUNDS", "1"))):  # alternating rounds
        for kind, workers in plans:
            row = _row(kind, workers, bot, protocol, matches)
            kept = best.get((kind, workers))
            if kept is None or float(row["dec/s"]) > float(kept["dec/s"]):  # type: ignore[arg-type]
                best[(kind, workers)] = row
    rows = [best[plan] for plan in plans]
    one = float(best[("processes", 1)]["dec/s"])  # type: ignore[arg-type]
    for row in rows:
        row["vs 1 worker"] = f"{float(row['dec/s']) / one:.2f}x"  # type: ignore[arg-type]
    return rows
