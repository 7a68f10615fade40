"""Executors: where one pairing gets played. Scheduling and storage stay in the coordinator
(`TournamentRunner.run`: the schedule, the concurrency limiter and its pace, duplicate pairs
one match after the other, the storage worker); only *where a match runs* changes.

- `local`: a trio task in this process, against this process's referee server (as always).
- `processes`: N long-lived worker processes (`arena.tournament.worker`; default one per
  core), each with its own trio loop, referee server and sandbox, fed pairings over a pipe;
  each returns what storing needs, and the coordinator stores it exactly as a local match.
  A worker that dies has its unfinished matches played again by another (or a new) worker:
  nothing was stored for them, so nothing is stored twice.
- `ray`: each match is a Ray task running the same worker code on whichever node Ray picks
  (`RayExecutor`, in `arena.tournament.ray_executor`; Ray is an optional extra).

Matches with a remote bot (one that connects to the referee's public address) always stay
in the coordinator: that is where remote bots connect.
"""

from __future__ import annotations

import os
import sys
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import structlog
import trio

from arena.errors import ArenaError, ConfigError
from arena.referee import MatchReport
from arena.rules import Match
from arena.tournament.config import TournamentConfig
from arena.tournament.frames import FrameReader, encode
from arena.tournament.schedule import Pairing, seat_bots
from arena.tournament.storage import StoreJob

if TYPE_CHECKING:
    from arena.tournament.runner import TournamentRunner

log = structlog.get_logger("arena.executor")

Play = Callable[[Pairing], Awaitable[MatchReport]]

STOP_GRACE_S = 10.0
"""How long stopped workers get to stop their bots and exit before they are killed."""
STEER_S = 0.05
"""How often the coordinator tells its workers which matches someone watches now."""
MAX_RERUNS = 3
"""A match whose worker died is played again at most this many times (then the run stops)."""
AUTO_MIN_MATCHES = 4
"""`auto` starts worker processes only for at least this many matches between launched bots
(below, their start-up costs more than the cores give)."""
AUTO_MIN_CORES = 4
"""... and only on a machine with at least this many cores. Launched bots run on the same
cores as the referees and cost more CPU per decision than the referee itself (`python -m
bench workers`: the SDK's first-legal bot 2-3x the referee's CPU, its start-up included;
the JavaScript and stdio sample bots, whose matches are shorter, 7-12x), so one referee
process needs at most a third of the machine: on 2 or 3 cores it is never what everything
waits for, and worker processes only add their own cost (frames, a second server)."""


class ExecutorError(ArenaError):
    """The executor cannot play a match (every worker died, Ray is missing)."""


class Executor(Protocol):
    """Plays pairings somewhere: `running(runner)` yields `play(pairing) -> report`, which
    also hands the result to `runner.storage` (in the coordinator)."""

    kind: str

    def running(self, runner: TournamentRunner) -> Any:
        """An async context manager yielding `play`."""


def launched_only(pairing: Pairing) -> bool:
    """Whether every bot of `pairing` is launched (a worker may play it anywhere)."""
    return all(bot.launched for bot in pairing.teams)


def cores() -> int:
    return os.cpu_count() or 1


class LocalExecutor:
    """Every match in this process (today's behaviour)."""

    kind = "local"

    @asynccontextmanager
    async def running(self, runner: TournamentRunner) -> AsyncIterator[Play]:
        yield runner.play


def choose_executor(config: TournamentConfig, matches: int, cpus: int | None = None) -> Executor:
    """The executor of `config`'s `[executor]` for a run of `matches` matches. `auto`:
    `processes` with one worker per core (`workers`, if given; never more than the matches
    played at once) when the machine has at least `AUTO_MIN_CORES` cores and the schedule
    has at least `AUTO_MIN_MATCHES` matches between launched bots; `local` otherwise."""
    spec = config.executor
    cpus = cores() if cpus is None else cpus
    workers = spec.workers or cpus
    if spec.kind == "local":
        return LocalExecutor()
    if spec.kind == "ray":
        from arena.tournament.ray_executor import RayExecutor

        return RayExecutor(spec.address)
    if spec.kind == "processes":
        return ProcessExecutor(max(1, min(workers, matches)))
    launched = [bot for bot in config.bots if bot.launched]
    pairs_of_launched = len(launched) >= 2 and (
        config.format != "gauntlet" or any(b.name == config.challenger for b in launched)
    )
    workers = min(workers, matches, config.concurrency)
    if cpus >= AUTO_MIN_CORES and workers > 1 and pairs_of_launched and (
            matches >= AUTO_MIN_MATCHES):
        return ProcessExecutor(workers)
    return LocalExecutor()


class WorkerDied(ArenaError):
    """The worker playing a match exited before it finished it."""


@dataclass
class _Pending:
    pairing: Pairing
    done: trio.Event = field(default_factory=trio.Event)
    job: StoreJob | None = None
    failure: str = ""  # the referee raised in the worker (its traceback)
    died: str = ""  # the worker exited (why)


@dataclass(eq=False)
class _Copy:
    """The coordinator's copy of a match a worker plays (in `runner.live`, for spectators):
    how many of its moves it has applied, and whether its worker sends them (watched)."""

    game: Match
    applied: int = 0
    watched: bool = False
    ended: bool = False  # the worker's match has left its live map
    stuck: bool = False  # it could not follow (see `_Pool._apply`)


class _Worker:
    """One worker process and the matches it is playing."""

    def __init__(self, index: int, process: trio.Process) -> None:
        self.index = index
        self.process = process
        self.pending: dict[str, _Pending] = {}
        self.copies: dict[str, _Copy] = {}  # its live matches, as the coordinator follows them
        self.alive = True
        self.send_lock = trio.StrictFIFOLock()
        self.lag = 0.0  # its last reported lag (seconds)

    async def send(self, message: tuple[Any, ...]) -> None:
        assert self.process.stdin is not None
        async with self.send_lock:
            await self.process.stdin.send_all(encode(message))


class ProcessExecutor:
    """Matches between launched bots in `workers` worker processes (see the module
    docstring); the others in this process."""

    kind = "processes"

    def __init__(self, workers: int) -> None:
        if workers < 1:
            raise ConfigError(f"executor.workers: must be at least 1, got {workers}")
        self.workers = workers
        # Frames received from the workers, by tag, and the moves they carried ("move").
        self.received: Counter[str] = Counter()

    @asynccontextmanager
    async def running(self, runner: TournamentRunner) -> AsyncIterator[Play]:
        pool = _Pool(runner, self.workers, self.received)
        async with trio.open_nursery() as nursery:
            pool.nursery = nursery
            for _ in range(self.workers):
                await pool.spawn()
            log.info("workers_started", workers=self.workers,
                     pids=[w.process.pid for w in pool.all])
            runner.workers_lag = lambda: max((w.lag for w in pool.alive), default=0.0)
            nursery.start_soon(pool.steer)
            try:
                yield pool.play
            finally:
                runner.workers_lag = lambda: 0.0
                with trio.CancelScope(shield=True):
                    await pool.stop()
                log.info("workers_stopped", frames=dict(sorted(self.received.items())))
                nursery.cancel_scope.cancel()


class _Pool:
    def __init__(self, runner: TournamentRunner, size: int, received: Counter[str]) -> None:
        self.runner = runner
        self.size = size
        self.received = received
        self.all: list[_Worker] = []
        self.nursery: trio.Nursery | None = None
        self.restarts_left = 2 * size + 2  # a worker that cannot start is not retried forever
        self.stopping = False

    @property
    def alive(self) -> list[_Worker]:
        return [w for w in self.all if w.alive]

    async def spawn(self) -> _Worker:
        assert self.nursery is not None
        index = len(self.all)
        cfg = self.runner.config
        process = await trio.lowlevel.open_process(
            [sys.executable, "-m", "arena.tournament.worker"],
            stdin=-1, stdout=-1,  # subprocess.PIPE
        )
        worker = _Worker(index, process)
        self.all.append(worker)
        log_path = cfg.logs / f"{cfg.name}.worker-{index}.jsonl"
        await worker.send(("setup", cfg, str(log_path)))
        self.nursery.start_soon(self._read, worker)
        return worker

    async def _pick(self) -> _Worker:
        """The live worker with the fewest matches; a new one if none lives."""
        alive = self.alive
        if alive:
            return min(alive, key=lambda w: len(w.pending))
        if self.restarts_left <= 0:
            raise ExecutorError(
                "every worker process died and none can be restarted; see their errors "
                "above (stderr) and the worker logs in tournament.logs"
            )
        self.restarts_left -= 1
        return await self.spawn()

    async def play(self, pairing: Pairing) -> MatchReport:
        if not launched_only(pairing):
            return await self.runner.play(pairing)  # remote bots connect to this process
        for attempt in range(MAX_RERUNS + 1):
            worker = await self._pick()
            try:
                job = await self._play_on(worker, pairing)
                break
            except WorkerDied as exc:
                if attempt == MAX_RERUNS:
                    raise ExecutorError(
                        f"match {pairing.match_id}: its worker died {attempt + 1} times "
                        f"(last: {exc}); stopping"
                    ) from None
                log.warning("match_rerun", match_id=pairing.match_id, detail=str(exc),
                            attempt=attempt + 1)
                pairing = self.runner.attempt(pairing)  # new deals: its bots saw the first
        # The replay is written by this process, under its own folder.
        from arena.tournament.runner import replay_path

        job.replay = replay_path(self.runner.config, pairing.match_id)
        await self.runner.storage.hand_over(job)
        return job.report

    async def _play_on(self, worker: _Worker, pairing: Pairing) -> StoreJob:
        slot = _Pending(pairing)
        worker.pending[pairing.match_id] = slot
        try:
            try:
                await worker.send(("play", pairing))
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                raise WorkerDied(f"worker {worker.process.pid} is gone") from None
            await slot.done.wait()
        finally:
            worker.pending.pop(pairing.match_id, None)
            copy = worker.copies.pop(pairing.match_id, None)
            if copy is not None and slot.job is not None and self._wanted(pairing.match_id):
                # Watched as it ended, but its worker had not been told yet: the rest of
                # its moves come from the report, so spectators see its true end.
                decisions = slot.job.report.decisions[copy.applied:]
                self._apply(copy, copy.applied, [(d.action, d.signal) for d in decisions])
            self.runner.live.pop(pairing.match_id, None)
        if slot.died:
            raise WorkerDied(slot.died)
        if slot.job is None:
            raise ExecutorError(f"match {pairing.match_id}: the referee failed in worker "
                                f"{worker.process.pid}:\n{slot.failure}")
        return slot.job

    def _wanted(self, match_id: str) -> bool:
        wanted = self.runner.watched()
        return wanted is None or match_id in wanted

    async def steer(self) -> None:
        """Every `STEER_S`, tell each worker which of its live matches someone watches now
        (`runner.watched()`): it sends their moves, and only theirs."""
        while True:
            wanted = self.runner.watched()
            for worker in self.alive:
                for match_id, copy in list(worker.copies.items()):
                    on = wanted is None or match_id in wanted
                    if on != copy.watched and not copy.ended:
                        copy.watched = on
                        try:
                            await worker.send(("watch", match_id, on))
                        except (trio.BrokenResourceError, trio.ClosedResourceError):
                            break  # it is gone: `_read` sees it end
            await trio.sleep(STEER_S)

    def _moves(self, worker: _Worker, batch: list[tuple[str, int, list[Any]]]) -> None:
        """Moves the worker applied: applied to the coordinator's copies (`runner.live`)."""
        for match_id, first, moves in batch:
            self.received["move"] += len(moves)
            copy = worker.copies.get(match_id)
            if copy is not None:
                self._apply(copy, first, moves)

    @staticmethod
    def _apply(copy: _Copy, first: int, moves: list[Any]) -> None:
        """Apply `moves` (the match's from index `first` on) to `copy`, those it lacks. A
        copy that cannot follow (a gap, a move its engine refuses) stays where it is, for
        spectators only: the match itself is the worker's, and it goes on."""
        if copy.stuck:
            return
        error = f"a gap: moves from {first} on" if first > copy.applied else ""
        try:
            for action, signal in [] if error else moves[copy.applied - first:]:
                copy.game.apply(action, signal)
                copy.applied += 1
        except Exception as exc:  # logged: spectators only
            error = repr(exc)
        if error:  # logged once; spectators see this match stop where it was
            copy.stuck = True
            log.warning("spectator_copy_stuck", error=error, applied=copy.applied)

    def _live(self, worker: _Worker, match_id: str, started: bool, moves: int = 0) -> None:
        """A match entered or left the worker's live map (after `moves` moves): so does its
        copy here. One that someone watches but whose copy is not in step (its watcher came
        as it ended) waits for its report, which has the rest of its moves (`_play_on`)."""
        slot = worker.pending.get(match_id)
        if slot is None:
            return
        if not started:
            copy = worker.copies.get(match_id)
            if copy is not None:
                copy.ended = True
                if copy.applied >= moves or copy.stuck or not self._wanted(match_id):
                    worker.copies.pop(match_id)
                    self.runner.live.pop(match_id, None)
            return
        pairing = slot.pairing
        game = Match(pairing.variant, pairing.options, pairing.seed)
        names = tuple(bot.name for bot in seat_bots(pairing, game.team_of))
        worker.copies[match_id] = _Copy(game)
        self.runner.live[match_id] = (names, game)

    async def _read(self, worker: _Worker) -> None:
        """Route the worker's frames; when it ends, its unfinished matches are played again
        elsewhere (and a new worker takes its place)."""
        assert worker.process.stdout is not None
        reader = FrameReader(worker.process.stdout)
        why = ""
        try:
            while (frame := await reader.receive()) is not None:
                tag = frame[0]
                self.received[tag] += 1
                if tag == "moves":
                    self._moves(worker, frame[1])
                elif tag == "live":
                    self._live(worker, *frame[1:])
                elif tag == "lag":
                    worker.lag = float(frame[1])
                elif tag in ("done", "failed"):
                    slot = worker.pending.get(frame[1])
                    if slot is not None:
                        if tag == "done":
                            slot.job = frame[2]
                        else:
                            slot.failure = frame[2]
                        slot.done.set()
        except (EOFError, OSError, trio.BrokenResourceError, ValueError,
                AttributeError, ImportError, IndexError, TypeError) as exc:
            why = f"broken stream: {exc}"
        worker.alive = False
        with trio.move_on_after(STOP_GRACE_S) as waited:
            await worker.process.wait()
        if waited.cancelled_caught:
            worker.process.kill()
            await worker.process.wait()
        code = worker.process.returncode
        why = why or f"worker {worker.process.pid} exited with code {code}"
        if not self.stopping:
            log.warning("worker_died", pid=worker.process.pid, code=code,
                        matches=sorted(worker.pending), detail=why)
        for slot in list(worker.pending.values()):
            slot.died = why
            slot.done.set()
        if not self.stopping and len(self.alive) < self.size and self.restarts_left > 0:
            self.restarts_left -= 1
            await self.spawn()

    async def stop(self) -> None:
        """End of stdin for every worker (each stops its matches and bots and exits); kill
        those still running after `STOP_GRACE_S`."""
        self.stopping = True
        for worker in self.all:
            if worker.process.stdin is not None:
                with trio.move_on_after(1):
                    async with worker.send_lock:
                        await worker.process.stdin.aclose()
        with trio.move_on_after(STOP_GRACE_S):
            for worker in self.all:
                await worker.process.wait()
        for worker in self.all:
            if worker.process.returncode is None:
                log.warning("worker_killed", pid=worker.process.pid,
                            detail=f"still running {STOP_GRACE_S:g} s after it was stopped")
                worker.process.kill()
                await worker.process.wait()
