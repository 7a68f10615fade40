"""An executor's worker: a referee process of its own that plays the matches it is sent.

    python -m arena.tournament.worker

The `processes` executor (`arena.tournament.executors`) starts one per core. Each runs its
own trio loop with its own referee server and sandbox (`TournamentRunner.serving()`, exactly
as a one-process tournament), launches the bots of each match it is given, and sends back
what storing the match needs (`StoreJob`); it never opens the database nor writes a replay:
the coordinator stores every result, in one place, as before.

The wire between them is the worker's stdin and stdout, a frame each
(`arena.tournament.frames`: a length and a pickled tuple).

    coordinator -> worker   ("setup", config, log_path, forward_moves)   first, once
                            ("play", pairing)
    worker -> coordinator   ("ready", pid)
                            ("live", match_id, started)         a match enters or leaves
                                                                 the live map (spectators)
                            ("move", match_id, action, signal)   each move applied, when
                                                                 `forward_moves` (spectators)
                            ("done", match_id, job)
                            ("failed", match_id, traceback)     the referee itself raised
                            ("lag", seconds)    its smoothed lag, every LAG_REPORT_S

End of stdin (the coordinator is done, stopped, or gone) cancels every match; the worker
stops its bots and exits. Fd 1 is pointed at stderr at start, so a stray print cannot break
a frame. `referee_batch` plays pairings the same way in one call (the `ray` executor's task).
"""

from __future__ import annotations

import math
import os
import sys
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import trio

from arena import logging as arena_logging
from arena.rpc.spectator import Entry, LiveMatches
from arena.tournament.config import TournamentConfig
from arena.tournament.frames import FrameReader, encode
from arena.tournament.schedule import Pairing
from arena.tournament.storage import StoreJob

if TYPE_CHECKING:
    from arena.tournament.runner import TournamentRunner

class ForwardingLive(LiveMatches):
    """The worker's map of live matches, telling `send` when a match enters it (its seats
    taken, before its first decision) and just before it leaves: the coordinator's copy
    enters and leaves its own `runner.live` at the same steps, for its spectators."""

    def __init__(self, send: Callable[[tuple[Any, ...]], None]) -> None:
        super().__init__()
        self._send = send

    def __setitem__(self, match_id: str, entry: Entry) -> None:
        super().__setitem__(match_id, entry)
        self._send(("live", match_id, True))

    def pop(self, match_id: str, *default: Any) -> Any:
        if match_id in self:
            self._send(("live", match_id, False))
        return super().pop(match_id, *default)


def worker_config(config: TournamentConfig) -> TournamentConfig:
    """The config a worker referees with: the same, but listening on a private loopback
    port (its launched bots dial its own listeners; remote bots stay with the coordinator,
    whose `listen` address is theirs)."""
    import dataclasses

    return dataclasses.replace(config, listen="127.0.0.1:0")


async def _write_frames(
    receive: trio.MemoryReceiveChannel[tuple[Any, ...]], out: trio.abc.SendStream
) -> None:
    """The one writer of the output stream: what is queued at once leaves in one write."""
    async with receive:
        async for message in receive:
            data = [encode(message)]
            while True:
                try:
                    data.append(encode(receive.receive_nowait()))
                except (trio.WouldBlock, trio.EndOfChannel):
                    break
            await out.send_all(b"".join(data))


async def _report_lag(send: Callable[[tuple[Any, ...]], None]) -> None:
    """Measure this worker's lag as the coordinator's `_pace` measures its own (how late a
    short sleep wakes up, smoothed) and tell it every `LAG_REPORT_S`: its backpressure
    covers the workers too."""
    from arena.tournament.runner import LAG_SMOOTHING, PACE_S

    lag = 0.0
    told = trio.current_time()
    while True:
        before = trio.current_time()
        await trio.sleep(PACE_S)
        now = trio.current_time()
        lag += LAG_SMOOTHING * (now - before - PACE_S - lag)
        if now - told >= LAG_REPORT_S:
            send(("lag", max(0.0, lag)))
            told = now


LAG_REPORT_S = 0.25


async def _play(
    runner: TournamentRunner, pairing: Pairing, send: Callable[[tuple[Any, ...]], None]
) -> None:
    try:
        job = await runner.referee(pairing)
    except Exception:
        send(("failed", pairing.match_id, traceback.format_exc()))
        return
    send(("done", pairing.match_id, job))


async def serve(inbound: trio.abc.ReceiveStream, outbound: trio.abc.SendStream) -> None:
    """Play what the coordinator sends until its end of the pipe closes."""
    reader = FrameReader(inbound)
    setup = await reader.receive()
    if setup is None:
        return
    if setup[0] != "setup":
        raise RuntimeError(f"the first frame must be setup, got {setup[0]!r}")
    _tag, config, log_path, forward_moves = setup
    from arena.tournament.runner import TournamentRunner  # (runner imports the executors)

    if log_path is not None:
        arena_logging.configure(path=Path(log_path))
    send, receive = trio.open_memory_channel[tuple[Any, ...]](math.inf)
    runner = TournamentRunner(worker_config(config), worker=True)
    if forward_moves:
        runner.move_observer = lambda pairing: (
            lambda action, signal: send.send_nowait(("move", pairing.match_id, action, signal))
        )
        runner.live = ForwardingLive(send.send_nowait)
    async with trio.open_nursery() as outer:
        outer.start_soon(_write_frames, receive, outbound)
        async with runner.serving():
            send.send_nowait(("ready", os.getpid()))
            async with trio.open_nursery() as matches:
                matches.start_soon(_report_lag, send.send_nowait)
                while (frame := await reader.receive()) is not None:
                    if frame[0] == "play":
                        matches.start_soon(_play, runner, frame[1], send.send_nowait)
                matches.cancel_scope.cancel()  # the coordinator is done or gone
        send.close()


def referee_batch(config: TournamentConfig, pairings: Sequence[Pairing]) -> list[StoreJob]:
    """Play `pairings` at once in a referee of this process's own (a `ray` task's body):
    the same `serving()` and `referee` as a worker process; returns one job per pairing,
    in order. Bot logs go under the config's logs folder when this machine can write it,
    else under a temporary folder."""
    import dataclasses
    import tempfile

    from arena.tournament.runner import TournamentRunner

    cfg = worker_config(config)
    try:
        cfg.logs.mkdir(parents=True, exist_ok=True)
    except OSError:
        cfg = dataclasses.replace(cfg, logs=Path(tempfile.mkdtemp(prefix="arena-logs-")))

    async def main() -> list[StoreJob]:
        runner = TournamentRunner(cfg, worker=True)
        jobs: list[StoreJob | None] = [None] * len(pairings)

        async def one(index: int, pairing: Pairing) -> None:
            jobs[index] = await runner.referee(pairing)

        async with runner.serving(), trio.open_nursery() as nursery:
            for index, pairing in enumerate(pairings):
                nursery.start_soon(one, index, pairing)
        return [job for job in jobs if job is not None]

    return trio.run(main)


def main() -> None:
    out_fd = os.dup(1)
    os.dup2(2, 1)  # a stray print goes to stderr, not into a frame
    inbound = trio.lowlevel.FdStream(os.dup(0))
    outbound = trio.lowlevel.FdStream(out_fd)
    try:
        trio.run(serve, inbound, outbound)
    except BaseException as exc:
        # Ctrl-C reaches the whole process group (the bots are stopped by then); a broken
        # pipe means the coordinator is gone. Neither is worth a traceback.
        quiet = (KeyboardInterrupt, trio.BrokenResourceError, BrokenPipeError)
        if isinstance(exc, BaseExceptionGroup):
            _matched, rest = exc.split(quiet)
            if rest is None:
                sys.exit(130)
        elif isinstance(exc, quiet):
            sys.exit(130)
        raise


if __name__ == "__main__":
    main()
