"""Storage off the match path: one worker writes every replay and commits every result.

Matches hand their report to `StorageWorker.submit` (an unbounded in-memory queue: it never
waits) and go on. The worker takes one job at a time and runs the disk work in a trio worker
thread, so a slow disk or a database lock held by another process never blocks the trio
thread that drives the matches. A locked or full database (or a full disk under the replays)
pauses storing, and so does a PostgreSQL server that cannot be reached (the store reconnects
before each new attempt): a warning names the cause, the job is retried with backoff, and nothing is
lost while the process lives. An error that is not transient, or a transient one that lasts
longer than `retry_s`, is fatal: `StorageError`, and the tournament stops; finished matches
already stored are kept, and a resumed run plays the others (ids are deterministic, rows
are inserted once).
"""

from __future__ import annotations

import errno
import math
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import structlog
import trio

from arena.errors import ArenaError
from arena.referee import MatchReport, TimeControl
from arena.replay import write_replay
from arena.tournament.backend import describe, driver_errors
from arena.tournament.store import Store

log = structlog.get_logger("arena.storage")


def _store_errors() -> tuple[type[Exception], ...]:
    """What a store operation may raise that storage rides out (read when one is raised: the
    PostgreSQL driver's classes exist only once a PostgreSQL URL was opened)."""
    return (OSError, *driver_errors())


def _reconnect_errors() -> tuple[type[Exception], ...]:
    return (ArenaError, *_store_errors())


BACKOFF_S = (0.05, 0.1, 0.25, 0.5, 1.0, 2.0)  # then 2 s between attempts


class StorageError(ArenaError):
    """Results can no longer be stored; the tournament stops (it can be resumed)."""


@dataclass
class StoreJob:
    """One finished match to store: its replay file, then its row."""

    report: MatchReport
    options: dict[str, object]
    team_bots: tuple[str, str]
    accounts: tuple[int, ...]
    replay: Path
    time_control: TimeControl
    legal: bool = False  # action lines list the legal actions ([tournament] replay_legal)
    replay_written: bool = False


def transient(exc: BaseException) -> str | None:
    """Why `exc` is worth retrying ("locked", "full", "connection"), or None if it is not.

    PostgreSQL (psycopg): a lost or refused connection (`OperationalError`, a server shutting
    down or restarting, too many connections) is "connection", and the store reconnects
    before the next attempt; a serialization failure or deadlock is "locked"; a full disk
    on the server is "full"."""
    text = str(exc).lower()
    if isinstance(exc, sqlite3.OperationalError):
        if "locked" in text or "busy" in text:
            return "locked"
        if "full" in text:
            return "full"
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return "full"
    return _transient_postgres(exc)


def _transient_postgres(exc: BaseException) -> str | None:
    try:
        import psycopg
        from psycopg import errors as pg
    except ImportError:
        return None
    if isinstance(exc, pg.DiskFull):
        return "full"
    if isinstance(exc, pg.SerializationFailure | pg.DeadlockDetected | pg.LockNotAvailable):
        return "locked"
    if isinstance(exc, pg.AdminShutdown | pg.CrashShutdown | pg.CannotConnectNow
                  | pg.TooManyConnections):
        return "connection"
    if isinstance(exc, psycopg.OperationalError | psycopg.InterfaceError):
        return "connection"  # the connection was lost (closed, reset, timed out)
    return None


class StorageWorker:
    """The single writer of a tournament's results (see the module docstring)."""

    def __init__(self, store: Store, tournament: str, *, retry_s: float) -> None:
        self.store = store
        self.tournament = tournament
        self.retry_s = retry_s
        self._send, self._receive = trio.open_memory_channel[StoreJob](math.inf)
        self.pending = 0  # submitted and not yet stored
        self.running = False  # `run` is consuming the queue
        self.stored = 0
        self.paused = False
        # Told once when storing pauses and once when it resumes (the CLI prints it).
        self.on_state: Callable[[str], None] | None = None

    def submit(self, job: StoreJob) -> None:
        """Hand a finished match over; returns at once."""
        self.pending += 1
        self._send.send_nowait(job)

    async def hand_over(self, job: StoreJob) -> None:
        """Queue `job` if the worker runs (a tournament); otherwise (a match played by
        another driver, e.g. the ladder) store it now, still off the trio thread."""
        if self.running:
            self.submit(job)
            return
        await self._store(job)
        self.stored += 1

    def close(self) -> None:
        """No more jobs: `run` returns once the queued ones are stored."""
        self._send.close()

    async def run(self) -> None:
        """Store every submitted job, in order; raise `StorageError` when storing failed."""
        self.running = True
        try:
            async with self._receive:
                async for job in self._receive:
                    await self._store(job)
                    self.pending -= 1
                    self.stored += 1
        finally:
            self.running = False

    async def _store(self, job: StoreJob) -> None:
        first_failure: float | None = None
        attempt = 0
        while True:
            try:
                await trio.to_thread.run_sync(self._write, job)
            except _store_errors() as exc:
                why = transient(exc)
                now = time.monotonic()
                first_failure = now if first_failure is None else first_failure
                waited = now - first_failure
                if why is None or waited >= self.retry_s:
                    raise StorageError(self._fatal(job, exc, why, waited)) from exc
                delay = BACKOFF_S[min(attempt, len(BACKOFF_S) - 1)]
                attempt += 1
                if why == "connection":
                    await trio.to_thread.run_sync(self._reconnect)
                if not self.paused and self.on_state is not None:
                    cause = {"locked": "the database is locked", "full": "the disk is full",
                             "connection": "the database server cannot be reached"}[why]
                    self.on_state(
                        f"storing paused: {cause} ({exc}); matches go on and their results "
                        f"wait in memory; retrying for up to {self.retry_s:g} s "
                        "(storage.retry_ms)"
                    )
                self.paused = True
                log.warning(
                    "storage_paused", reason=why, error=" ".join(str(exc).split()),
                    match_id=job.report.match_id, waiting=self.pending, retry_in_s=delay,
                    paused_for_s=round(waited, 3), database=describe(self.store.path),
                )
                await trio.sleep(delay)
                continue
            if self.paused:
                self.paused = False
                lasted = round(time.monotonic() - (first_failure or 0), 3)
                log.info("storage_resumed", match_id=job.report.match_id, paused_for_s=lasted)
                if self.on_state is not None:
                    self.on_state(f"storing resumed after {lasted:.1f} s")
            return

    def _reconnect(self) -> None:
        """After a lost connection: a new one (a failure is left to the next attempt)."""
        try:
            self.store.reconnect()
        except _reconnect_errors() as exc:
            log.warning("storage_reconnect_failed", error=" ".join(str(exc).split()),
                        database=describe(self.store.path))

    def _fatal(self, job: StoreJob, exc: BaseException, why: str | None, waited: float) -> str:
        what = ("the replay file" if not job.replay_written
                else f"the database {describe(self.store.path)}")
        lasted = f" for {waited:.1f} s (storage.retry_ms)" if why else ""
        return (
            f"storing results failed: could not write {what}{lasted}: {exc}; "
            f"{self.pending} finished match(es) were not stored and will be played again; "
            "fix the cause, then run the same command again to resume"
        )

    def _write(self, job: StoreJob) -> None:
        """The disk work of one job (in a worker thread)."""
        if not job.replay_written:
            write_replay(
                job.replay, job.report, time_control=job.time_control, legal=job.legal
            )
            job.replay_written = True
        self.store.save_match(
            self.tournament, job.report, options=job.options, team_bots=job.team_bots,
            replay=job.replay, accounts=job.accounts,
        )
