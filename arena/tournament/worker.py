"""An executor's worker: a referee process of its own that plays the matches it is sent.

    python -m arena.tournament.worker

The `processes` executor (`arena.tournament.executors`) starts one per core. Each runs its
own trio loop with its own referee server and sandbox (`TournamentRunner.serving()`, exactly
as a one-process tournament), launches the bots of each match it is given, and sends back
what storing the match needs (`StoreJob`); it never opens the database nor writes a replay:
the coordinator stores every result, in one place, as before.

The wire between them is the worker's stdin and stdout, a frame each
(`arena.tournament.frames`: a length and a pickled tuple).

    coordinator -> worker   ("setup", config, log_path)          first, once
                            ("play", pairing)
                            ("watch", match_id, on)              someone (a gRPC spectator,
                                                                 the web's live page) starts
                                                                 or stops watching the match
    worker -> coordinator   ("ready", pid)
                            ("live", match_id, True)             a match enters the live map
                                                                 (spectators: its seats taken)
                            ("live", match_id, False, moves)     it leaves (after `moves`)
                            ("moves", [(match_id, first, moves), ...])
                                                                 the moves a watched match
                                                                 applied since the last batch
                                                                 (`first`: the index of the
                                                                 first), at most every FLUSH_S
                            ("done", match_id, job)
                            ("failed", match_id, traceback)     the referee itself raised
                            ("lag", seconds)    its smoothed lag, every LAG_REPORT_S

Moves cross only while someone watches: the worker keeps every match's moves, and when a
match becomes watched it sends them all from the first the coordinator has not had (a
watcher who joins mid-match sees the table as it is now, then every change); a match
nobody watches costs two `live` frames and its `done`.

End of stdin (the coordinator is done, stopped, or gone) cancels every match; the worker
stops its bots and exits. Fd 1 is pointed at stderr at start, so a stray print cannot break
a frame. `referee_batch` plays pairings the same way in one call (the `ray` executor's task).
"""

from __future__ import annotations

import math
import os
import resource
import sys
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import structlog
import trio

from arena import logging as arena_logging
from arena.rpc.spectator import Entry, LiveMatches
from arena.rules import Action, Signal
from arena.tournament.config import TournamentConfig
from arena.tournament.frames import FrameReader, encode
from arena.tournament.schedule import Pairing
from arena.tournament.storage import StoreJob

if TYPE_CHECKING:
    from arena.tournament.runner import TournamentRunner

FLUSH_S = 0.02
"""A watched match's moves leave in one batch at most this long after the first of them
(the coordinator's spectator feed looks every 0.05 s)."""

Move = tuple[Action, Signal | None]


@dataclass(eq=False, slots=True)
class _Moves:
    """A live match's moves in this worker, and how many of them the coordinator has."""

    played: list[Move] = field(default_factory=list)
    sent: int = 0
    watched: bool = False


class ForwardingLive(LiveMatches):
    """The worker's map of live matches, telling `send` when a match enters it (its seats
    taken, before its first decision) and just before it leaves: the coordinator's copy
    enters and leaves its own `runner.live` at the same steps, for its spectators. Each
    match's moves (`observer`) are kept here and sent only while the coordinator says
    someone watches it (`watch`), in batches (`flush`)."""

    def __init__(self, send: Callable[[tuple[Any, ...]], None]) -> None:
        super().__init__()
        self._send = send
        self.moves: dict[str, _Moves] = {}
        self.due: set[str] = set()  # watched matches with moves not yet sent
        self.wake = trio.Event()  # set when `due` gains a match

    def __setitem__(self, match_id: str, entry: Entry) -> None:
        super().__setitem__(match_id, entry)
        self.moves.setdefault(match_id, _Moves())
        self._send(("live", match_id, True))

    def pop(self, match_id: str, *default: Any) -> Any:
        if match_id in self:
            if match_id in self.due:
                self.flush()  # the end of a watched match follows all of its moves
            moves = self.moves.pop(match_id, None)
            self._send(("live", match_id, False, len(moves.played) if moves else 0))
        return super().pop(match_id, *default)

    def observer(self, pairing: Pairing) -> Callable[[Action, Signal | None], None]:
        """`runner.move_observer`: keeps each move the match applies; wakes the flusher
        when the match is watched."""
        moves = self.moves.setdefault(pairing.match_id, _Moves())
        played = moves.played
        match_id = pairing.match_id

        def on_move(action: Action, signal: Signal | None) -> None:
            played.append((action, signal))
            if moves.watched and match_id not in self.due:
                self.due.add(match_id)
                self.wake.set()

        return on_move

    def watch(self, match_id: str, on: bool) -> None:
        """Someone starts (`on`) or stops watching `match_id`: from now on its moves are
        sent (all those the coordinator has not had first) or kept."""
        moves = self.moves.get(match_id)
        if moves is None or match_id not in self:
            return  # it has ended (its end is on the way to the coordinator)
        moves.watched = on
        if on and moves.sent < len(moves.played):
            self.due.add(match_id)
            self.wake.set()
        elif not on:
            self.due.discard(match_id)

    def flush(self) -> None:
        """One frame with the unsent moves of every watched match."""
        batch = []
        for match_id in self.due:
            moves = self.moves.get(match_id)
            if moves is not None and moves.watched and moves.sent < len(moves.played):
                batch.append((match_id, moves.sent, moves.played[moves.sent:]))
                moves.sent = len(moves.played)
        self.due.clear()
        if batch:
            self._send(("moves", batch))

    async def run_flusher(self) -> None:
        """Send the watched matches' moves in batches, `FLUSH_S` apart at most."""
        while True:
            await self.wake.wait()
            self.wake = trio.Event()
            await trio.sleep(FLUSH_S)
            self.flush()


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
    _tag, config, log_path = setup
    from arena.tournament.runner import TournamentRunner  # (runner imports the executors)

    if log_path is not None:
        arena_logging.configure(path=Path(log_path))
    send, receive = trio.open_memory_channel[tuple[Any, ...]](math.inf)
    runner = TournamentRunner(worker_config(config), worker=True)
    live = ForwardingLive(send.send_nowait)
    runner.live = live
    runner.move_observer = live.observer
    async with trio.open_nursery() as outer:
        outer.start_soon(_write_frames, receive, outbound)
        async with runner.serving():
            send.send_nowait(("ready", os.getpid()))
            async with trio.open_nursery() as matches:
                matches.start_soon(_report_lag, send.send_nowait)
                matches.start_soon(live.run_flusher)
                while (frame := await reader.receive()) is not None:
                    if frame[0] == "play":
                        matches.start_soon(_play, runner, frame[1], send.send_nowait)
                    elif frame[0] == "watch":
                        live.watch(frame[1], frame[2])
                matches.cancel_scope.cancel()  # the coordinator is done or gone
        send.close()
    _log_cpu()


def _log_cpu() -> None:
    """One `worker_cpu` line at the end: this process's own CPU seconds (its bots' are not
    all counted by the kernel: a sandbox killed at a match's end never waits for its bot)."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    structlog.get_logger("arena.worker").info(
        "worker_cpu", pid=os.getpid(), cpu_s=round(me.ru_utime + me.ru_stime, 3))


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
