"""Executors side by side: the same tournament of instant bots played by the `local` executor
(every match in the coordinator) and by the `processes` executor with 1 and 2 (and, where there
are more cores, one per core) worker processes.

Each row is a real tournament (`TournamentRunner.run`, a fresh database and key, the log to a
real file, the bots launched per seat and sandboxed as in any contest): argentine-1v1 with its
default options (three chicos to 30), `BENCH_WORKER_BOT` bots (``python``, the default:
tests/bots/first_legal.py on the SDK, whose matches are long, ~600 decisions, so the bots'
start-up weighs less; ``js``: the JavaScript random sample bot), `concurrency` = 16. ``dec/s`` is
the decisions stored divided by the wall time from the first match to the last stored result;
``matches/min`` likewise; ``abnormal`` counts matches that did not end normally (a timeout on an
overloaded machine changes the decisions); ``vs 1 worker`` compares dec/s with the one-worker
row of the same run; ``cpu µs/dec`` is the CPU of the whole run (the coordinator, its workers
and every bot process, all waited for) per decision; ``load`` the 1-minute load average when the
row started (other work on the machine). The bots run on the same cores as the referees: on a
2-core machine two workers can only use what the bots leave.
"""

from __future__ import annotations

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
C_BOT = REPO / "sample_bots" / "c_random" / "bot"
PY_BOT = REPO / "tests" / "bots" / "first_legal.py"
CONCURRENCY = 16


def _bot() -> tuple[list[str], str]:
    """The bots' command and protocol (`BENCH_WORKER_BOT`: python, js or c)."""
    choice = os.environ.get("BENCH_WORKER_BOT", "python")
    js_ready = shutil.which("node") and (JS_BOT.parent / "node_modules").is_dir()
    if choice == "js" and js_ready:
        return ["node", str(JS_BOT)], "grpc"
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
        f'[[bot]]\nname = "b"\ncommand = {command}\nprotocol = "{protocol}"\n',
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


def part(seconds: float) -> list[dict[str, object]]:
    bot, protocol = _bot()
    # Every match at once (a multiple of `concurrency`): no row ends on a tail of a few.
    matches = CONCURRENCY * max(1, round(seconds * 4 / CONCURRENCY))
    cores = os.cpu_count() or 1
    counts = sorted({1, 2, cores})
    plans: list[tuple[str, int, Executor]] = [("local", 0, LocalExecutor())]
    plans += [("processes", n, ProcessExecutor(n)) for n in counts]
    rows: list[dict[str, object]] = []
    one = 0.0
    for kind, workers, executor in plans:
        load = os.getloadavg()[0]
        decisions, faulty, elapsed, kinds = measure(executor, matches, bot, protocol)
        rate = decisions / elapsed
        if kind == "processes" and workers == 1:
            one = rate
        cpu = sum(kinds.values())
        referee = kinds.get("coordinator", 0.0) + kinds.get("worker", 0.0)
        bots = cpu - referee
        rows.append({
            "executor": kind, "workers": workers or "-",
            "bot": Path(bot[-1]).name + (" (stdio)" if protocol == "stdio" else ""),
            "matches": matches, "abnormal": faulty, "decisions": decisions,
            "seconds": round(elapsed, 2), "dec/s": rate, "matches/min": matches / elapsed * 60,
            "cpu µs/dec": cpu / decisions * 1e6,
            "coord µs": kinds.get("coordinator", 0.0) / decisions * 1e6,
            "worker µs": kinds.get("worker", 0.0) / decisions * 1e6,
            "bot µs": bots / decisions * 1e6,
            "bot s/start": bots / (2 * matches),
            "cores busy": cpu / elapsed, "load": round(load, 1),
        })
    for row in rows:
        rate = row["dec/s"]
        assert isinstance(rate, float)
        row["vs 1 worker"] = f"{rate / one:.2f}x" if one else "-"
    return rows
