"""The `ray` executor: each match between launched bots is a Ray task that referees it on
whichever node Ray picks (`arena.tournament.worker.referee_batch`: a referee server and
sandbox of its own there, the match's bots launched on that node) and returns what storing
it needs; the coordinator stores it, as for every executor. A task whose worker process or
node dies is retried by Ray (`MAX_RETRIES`): nothing was stored for it, so nothing is stored
twice. Matches with a remote bot stay in the coordinator, where remote bots connect.

Ray is an optional extra: `pip install 'truco-arena[ray]'`.
"""

from __future__ import annotations

import os
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import structlog
import trio

from arena.errors import ConfigError
from arena.referee import MatchReport
from arena.tournament.config import TournamentConfig
from arena.tournament.executors import ExecutorError, Play, launched_only
from arena.tournament.schedule import Pairing
from arena.tournament.storage import StoreJob

if TYPE_CHECKING:
    from arena.tournament.runner import TournamentRunner

log = structlog.get_logger("arena.executor")

MAX_RETRIES = 3
"""Times Ray plays a match again after its worker process or node died."""


def _referee_task(config: TournamentConfig, pairings: list[Pairing]) -> tuple[int, list[StoreJob]]:
    """The body of a Ray task: referee `pairings` on this node; (this process's pid, jobs)."""
    from arena.tournament.worker import referee_batch

    return os.getpid(), referee_batch(config, pairings)


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ConfigError(
            "executor.kind: \"ray\" needs Ray: pip install 'truco-arena[ray]'"
        ) from None
    return ray


PROBE_S = 5.0
"""How long the cluster's address may take to accept a connection (Ray itself retries for
minutes, silently, at an address where nothing listens)."""


def _probe(address: str) -> None:
    """Fail at once, naming the field, when nothing listens at `address` (HOST:PORT or
    ray://HOST:PORT; "auto" is Ray's own look-up of this machine's cluster)."""
    if address == "auto":
        return
    host, _sep, port = address.removeprefix("ray://").rpartition(":")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=PROBE_S).close()
    except (OSError, ValueError) as exc:
        raise ConfigError(
            f"executor.address: nothing answers at {address!r} ({exc}); start the cluster "
            "with `ray start --head` there, or fix the address"
        ) from None


class RayExecutor:
    """Matches between launched bots as Ray tasks on the cluster at `address`."""

    kind = "ray"

    def __init__(self, address: str = "auto") -> None:
        self.address = address
        self.ray = _ray()

    def _connect(self) -> None:
        ray = self.ray
        if ray.is_initialized():
            return
        _probe(self.address)
        try:
            ray.init(address=self.address, log_to_driver=False, logging_level="warning",
                     configure_logging=False)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise ConfigError(
                f"executor.address: cannot join the Ray cluster at {self.address!r}: {first} "
                "(start one with `ray start --head`, or give ray://HOST:10001)"
            ) from None

    @asynccontextmanager
    async def running(self, runner: TournamentRunner) -> AsyncIterator[Play]:
        ray = self.ray
        await trio.to_thread.run_sync(self._connect)
        task = ray.remote(max_retries=MAX_RETRIES, retry_exceptions=False)(_referee_task)
        config = ray.put(runner.config)  # once in the object store, not once per task
        log.info("ray_connected", address=self.address,
                 nodes=len([n for n in ray.nodes() if n.get("Alive")]))

        async def play(pairing: Pairing) -> MatchReport:
            if not launched_only(pairing):
                return await runner.play(pairing)
            ref = task.remote(config, [pairing])
            try:
                pid, jobs = await trio.to_thread.run_sync(ray.get, ref, abandon_on_cancel=True)
            except trio.Cancelled:
                ray.cancel(ref, force=True)
                raise
            except ray.exceptions.RayError as exc:
                first = str(exc).strip().splitlines()[0] if str(exc).strip() else repr(exc)
                raise ExecutorError(
                    f"match {pairing.match_id}: its Ray task failed after {MAX_RETRIES} "
                    f"retries: {first}"
                ) from None
            job: StoreJob = jobs[0]
            from arena.tournament.runner import replay_path

            job.replay = replay_path(runner.config, pairing.match_id)
            log.info("ray_match_done", match_id=pairing.match_id, worker_pid=pid)
            await runner.storage.hand_over(job)
            return job.report

        try:
            yield play
        finally:
            ray.shutdown()
