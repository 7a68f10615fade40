"""Run a tournament: serve the referee, launch or await the bots, play matches concurrently,
commit each result as it ends, and report standings.

Structured concurrency: one nursery for the tournament (the gRPC server and the matches), a
`trio.CapacityLimiter` for how many matches run at once, and one nursery per match for its
bot processes. Nothing outlives the tournament: every process is stopped with its group.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import math
import os
import re
import secrets
import shutil
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Iterable, Iterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import structlog
import trio

from arena.errors import ArenaError, ConfigError
from arena.referee import MatchReport, Outcome, SeatLink, Termination, run_match
from arena.rpc.bridge import GrpcServerThread, SeatDoor
from arena.rpc.server import Connection, Hub, RemoteSeatLink, seat_door, serve_referee
from arena.rpc.spectator import LiveMatches, SpectatorFeed
from arena.rules import Action, Match, Signal
from arena.tournament.config import BotSpec, TournamentConfig, changed_on_resume, decisive
from arena.tournament.executors import Executor, choose_executor
from arena.tournament.launcher import SeatProcess, program_dir, resolve_command
from arena.tournament.sandbox import Sandbox, choose_mode, private_run_dir
from arena.tournament.schedule import (
    SECRET_BYTES,
    Pairing,
    in_schedule,
    match_seed,
    round_robin,
    schedule_size,
    seat_bots,
)
from arena.tournament.storage import StorageWorker, StoreJob
from arena.tournament.store import Store

log = structlog.get_logger("arena.tournament")


@dataclass
class TournamentRun:
    """What a run did: how many matches were played now and how many were already stored."""

    played: int
    skipped: int
    address: str


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text)


def file_stem(text: str) -> str:
    """A file name for `text` that no other text gets: a readable prefix (at most 48
    characters) and a short hash of the exact text (`a b` and `a_b` differ)."""
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    return f"{_safe(text)[:48]}-{digest}"


def read_key_file(path: Path) -> bytes:
    """The secret in key file `path` (hex), created with 32 random bytes (mode 0600) if it
    does not exist."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        pass
    except OSError as exc:
        raise ConfigError(f"tournament.secret_file: cannot create {path}: {exc.strerror}") from None
    else:
        with os.fdopen(fd, "w") as out:
            out.write(secrets.token_bytes(SECRET_BYTES).hex() + "\n")
    try:
        text = path.read_text(encoding="ascii").strip()
        key = bytes.fromhex(text)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ConfigError(
            f"tournament.secret_file: {path} is not a key file (64 hex digits): {exc}"
        ) from None
    if len(key) < 16:
        raise ConfigError(f"tournament.secret_file: {path} holds {len(key)} bytes; need >= 16")
    return key


def duplicate_pairs(pairings: Iterable[Pairing]) -> Iterator[list[Pairing]]:
    """`pairings` in order, grouped: the two matches of a duplicate pair (adjacent in the
    schedule, one seed) together, any other match alone."""
    held: Pairing | None = None
    for pairing in pairings:
        if held is not None and held.seed == pairing.seed and held.variant == pairing.variant:
            yield [held, pairing]
            held = None
            continue
        if held is not None:
            yield [held]
        held = pairing
    if held is not None:
        yield [held]


@dataclass
class Plan:
    """What is left to play: `size` matches in all, `stored` of them already stored; iterate
    for the pairings to play (lazily, in schedule order)."""

    size: int
    stored: int
    pairings: Iterable[Pairing]

    @property
    def todo(self) -> int:
        return self.size - self.stored

    def __iter__(self) -> Iterator[Pairing]:
        return iter(self.pairings)


class _Seat:
    """A seat's connection, and the process behind it if the referee launched it."""

    def __init__(self, link: RemoteSeatLink, conn: Connection, process: SeatProcess | None,
                 door: AsyncExitStack | None = None) -> None:
        self.link = link
        self.conn = conn
        self.process = process
        self.door = door  # closes the seat's own door (sandboxed seats), after the process

    async def end(self) -> None:
        """Stop the seat's process, then close its door."""
        assert self.process is not None
        await self.process.stop()
        if self.door is not None:
            await self.door.aclose()


class TournamentRunner:
    """Plays the pairings of a config against one referee server."""

    def __init__(
        self,
        config: TournamentConfig,
        *,
        on_match_done: Callable[[Pairing, MatchReport], None] | None = None,
        on_listening: Callable[[str], Awaitable[None] | None] | None = None,
        connect_timeout: float | None = None,
        launches: bool = False,
        worker: bool = False,
    ) -> None:
        """`launches`: bots with a command may be entered later (the ladder), so the sandbox
        is chosen now even if the config has none yet. `worker`: an executor's worker
        (`arena.tournament.worker`) that only referees (`referee`): it never opens the
        database (an empty one in memory stands in) nor writes replays."""
        self.config = config
        self.worker = worker
        self.hub = Hub(hello_timeout=config.hello_ms / 1000, max_pending=config.max_pending)
        self.store = Store(
            Path(":memory:") if worker else config.database,
            busy_timeout=config.busy_timeout_ms / 1000,
        )
        self.storage = StorageWorker(self.store, config.name, retry_s=config.retry_ms / 1000)
        self._secret: bytes | None = None
        self.on_match_done = on_match_done
        self.on_listening = on_listening
        # Seconds a launched bot has to connect and say hello ([faults] connect_ms).
        self.connect_timeout = (
            config.connect_ms / 1000 if connect_timeout is None else connect_timeout
        )
        self.address = ""
        self.launch_address = ""  # where launched bots connect (a loopback listener)
        self.started_at = 0.0  # trio time the referee started listening
        # token -> trio time a remote bot was entered while serving (the ladder): its
        # no-show wait counts from then, not from the start
        self.entered_at: dict[str, float] = {}
        # (event, bot, since) already logged: one warning per bot gone or missing
        self._warned: set[tuple[str, str, float | None]] = set()
        # (connected, missing, left): `left` are the missing that were connected before
        self.on_presence: Callable[[list[str], list[str], list[str]], None] | None = None
        # The gRPC thread's lag since last asked (seconds), while serving: `_pace` watches it.
        self.wire_lag: Callable[[], float] = lambda: 0.0
        # The matches being played now: id -> (the bot in each seat, the engine's match).
        self.live = LiveMatches()  # match id -> (bots, Match), for spectators
        self.spectators: SpectatorFeed | None = None  # the gRPC spectators' feed, while serving
        # Where matches run (arena.tournament.executors); None: chosen by [executor] at `run`.
        self.executor: Executor | None = None
        # Who watches which live match now, one source each (the gRPC spectators' feed
        # while serving, the web's live pages): the ids of the matches its watchers follow,
        # or None for every match. The executors' workers send a match's moves to its copy
        # in `live` only while it is watched (`watched`).
        self.demand: list[Callable[[], Collection[str] | None]] = []
        # The worst lag of the executor's worker processes (seconds, smoothed): `_pace`
        # plays fewer matches at once when they lag as when this process does.
        self.workers_lag: Callable[[], float] = lambda: 0.0
        self.argv: dict[str, list[str]] = {
            bot.name: _resolve(i, bot) for i, bot in enumerate(config.bots) if bot.launched
        }
        # Each launched bot's own files: `[[bot]] dir`, else its program's folder.
        self.bot_dirs: dict[str, Path] = {
            bot.name: (bot.dir or program_dir(bot.command, bot.cwd))
            for bot in config.bots if bot.launched
        }
        # Raises SandboxUnavailable (a one-line "how to install") before anything starts.
        self.sandbox_mode = choose_mode(config.sandbox) if self.argv or launches else "none"
        self.unsandboxed = bool(self.argv or launches) and self.sandbox_mode == "none"
        self.sandbox: Sandbox | None = None
        self._drain_nursery: trio.Nursery | None = None
        # While serving, sandboxed: the gRPC server and the private folder where each seat
        # gets a door of its own (`_open_door`), and how many were opened.
        self._server: GrpcServerThread | None = None
        self._private: Path | None = None
        self._doors_opened = 0
        # The engine's match of a pairing (an executor's worker forwards each move it makes).
        # Told each move a match applies (the processes executor's workers forward them to
        # the coordinator's copy of the match, for its spectators).
        self.move_observer: (
            Callable[[Pairing], Callable[[Action, Signal | None], None]] | None
        ) = None

    def watched(self) -> set[str] | None:
        """The live matches someone watches now (`demand`); None: every match."""
        wanted: set[str] = set()
        for source in self.demand:
            ids = source()
            if ids is None:
                return None
            wanted.update(ids)
        return wanted

    def _drains(self) -> trio.Nursery:
        """Where a launched seat's output is drained (only while `run` serves)."""
        if self._drain_nursery is None or self.sandbox is None:
            raise RuntimeError("launched seats are played from TournamentRunner.run")
        return self._drain_nursery

    @property
    def secret(self) -> bytes:
        """The tournament's secret: from its key file, else the one stored when it began
        (a new one for a new tournament). Recording the tournament happens here, the first
        time the schedule is asked for."""
        if self._secret is None:
            self._secret = self._load_secret()
        return self._secret

    def _load_secret(self) -> bytes:
        cfg = self.config
        decides = decisive(cfg, self.sandbox_mode)
        described = {"seed": cfg.seed, "games": cfg.games, "variants": list(cfg.variants),
                     "sandbox": self.sandbox_mode, "unsandboxed": self.unsandboxed,
                     # for the web's progress and ETA: who plays, and how many matches in all
                     "bots": [bot.name for bot in cfg.bots], "matches": schedule_size(cfg),
                     "decides": decides}  # a resumed run must agree (`_check_resumed`)
        if cfg.secret_file is not None:
            key = read_key_file(cfg.secret_file)
            self.store.begin_tournament(cfg.name, described)
            self._check_resumed(decides, described)
            return key
        stored = self.store.begin_tournament(
            cfg.name, described, secrets.token_bytes(SECRET_BYTES)
        )
        assert stored is not None
        self._check_resumed(decides, described)
        return stored

    def _check_resumed(self, decides: dict[str, Any], described: dict[str, Any]) -> None:
        """Refuse to resume a tournament under other rules than it was begun with: its
        standings would silently mix matches played two ways (a hostile review, round 4,
        resumed with decision_ms 1000 -> 200 and target 15 -> 30: one table, no word).
        Resumed with more matches (more per pair, more variants or bots), its recorded size
        becomes the new one (the web showed "60/48 matches, finished"); a run narrowed for a
        while (`--variant`) leaves it as it was."""
        begun = self.store.tournament_config(self.config.name) or {}
        stored = begun.get("decides")
        if isinstance(stored, dict):  # else begun before this was recorded
            changed = changed_on_resume(stored, decides)
            if changed:
                raise ConfigError(
                    f"config: tournament {self.config.name!r} was begun with other settings "
                    f"({'; '.join(changed)}); its stored matches were played that way. Put "
                    "them back to resume, or start over with --fresh, or give the tournament "
                    "a new name")
        if described["matches"] > begun.get("matches", described["matches"]):
            self.store.describe_tournament(self.config.name, described)

    def pending(self) -> Plan:
        """The pairings not yet stored (lazily), and how many there are."""
        done = self.store.finished_ids(self.config.name)
        stored = sum(1 for match_id in done if in_schedule(self.config, match_id))
        todo = (p for p in round_robin(self.config, self.secret) if p.match_id not in done)
        return Plan(schedule_size(self.config), stored, todo)

    async def run(self, pairings: Iterable[Pairing] | None = None) -> TournamentRun:
        """Play `pairings` (default: every pairing not yet stored). Raises `StorageError`
        (after stopping every match cleanly) if results can no longer be stored, and the
        executor's `ArenaError` if it cannot play (a Ray cluster that does not answer)."""
        try:
            return await self._run(pairings)
        except BaseExceptionGroup as group:
            failed, _rest = group.split(ArenaError)
            if failed is None:
                raise
            first: BaseException = failed
            while isinstance(first, BaseExceptionGroup):
                first = first.exceptions[0]
            raise first from None

    async def _run(self, pairings: Iterable[Pairing] | None) -> TournamentRun:
        cfg = self.config
        todo: Iterable[Pairing]
        if pairings is None:
            plan = self.pending()
            todo, skipped, count = plan, plan.stored, plan.todo
        else:
            todo = list(pairings)
            skipped, count = 0, len(todo)
        if self.unsandboxed:
            log.warning("UNSANDBOXED", tournament=cfg.name, mode=cfg.sandbox.mode,
                        detail="launched bots run WITHOUT a sandbox: they can read the "
                        "config, the database and each other's files, and use the network")
        for bot in cfg.bots:
            self.store.add_bot(bot.name, "launched" if bot.launched else "remote",
                               " ".join(bot.command))
            if not bot.launched:
                self.hub.admit(bot.token, bot.name)
        # Slow start: `_pace` raises it to `concurrency` while the referee keeps up.
        limiter = trio.CapacityLimiter(min(cfg.concurrency, START_MATCHES))
        executor = self.executor or choose_executor(cfg, count)
        async with self.serving(), executor.running(self) as play:
            log.info("tournament_start", tournament=cfg.name, address=self.address,
                     matches=count, already_done=skipped, executor=executor.kind)
            if self.on_listening:
                told = self.on_listening(self.address)
                if told is not None:  # an async hook: the first match waits for it
                    await told
            self.started_at = trio.current_time()
            async with trio.open_nursery() as outer:
                outer.start_soon(self._watch_presence)
                outer.start_soon(self._pace, limiter, cfg.concurrency)
                async with trio.open_nursery() as nursery:
                    await self._schedule(todo, limiter, nursery, play)
                outer.cancel_scope.cancel()
        if self.pending().todo == 0:  # every match of the schedule is stored
            self.store.finish_tournament(cfg.name)
        return TournamentRun(count, skipped, self.address)

    @asynccontextmanager
    async def serving(self) -> AsyncIterator[str]:
        """Serve the referee while the block runs, with everything `play` needs: the
        sandbox, the storage worker, a private folder (the seats' socket; unsandboxed seats'
        temp dirs) and a nursery for the seats' output drains. Yields the address remote bots
        connect to. `run` plays a schedule inside it; the ladder and `arena sprt` play
        pairings inside it one by one."""
        cfg = self.config
        credentials = None
        if cfg.tls_cert is not None and cfg.tls_key is not None:
            credentials = grpc.ssl_server_credentials(
                [(cfg.tls_key.read_bytes(), cfg.tls_cert.read_bytes())]
            )
        private = private_run_dir()  # 0700: the seats' sockets, unsandboxed seats' temp dirs
        hidden = [*([cfg.database] if isinstance(cfg.database, Path) else []),  # a file
                  cfg.replays, cfg.logs, private,
                  *([cfg.source] if cfg.source is not None else []),
                  *([cfg.secret_file] if cfg.secret_file is not None else [])]
        if cfg.tls_key is not None:
            hidden.append(cfg.tls_key)
        try:
            if self.sandbox_mode == "bubblewrap":
                _check_socket_room(private)
            # No shared socket: each sandboxed seat gets one of its own (`_open_door`).
            self.sandbox = Sandbox(
                self.sandbox_mode, hidden=hidden, pass_env=cfg.sandbox.pass_env,
                writable=cfg.sandbox.writable, temp_root=private,
            )
            # exist, so a sandbox can leave them out (a worker writes no replay)
            for folder in (cfg.logs,) if self.worker else (cfg.replays, cfg.logs):
                folder.mkdir(parents=True, exist_ok=True)
            host = cfg.listen.rsplit(":", 1)[0]
            if host in ("", "0.0.0.0", "[::]"):  # listening everywhere: launch bots locally
                host = "127.0.0.1"
            self.spectators = SpectatorFeed(self.live, delay_s=cfg.spectator_delay_s,
                                            token=cfg.spectator_token)
            self.demand.append(self.spectators.wanted)
            async with trio.open_nursery() as storing:
                self.storage.running = True  # from now on matches queue their results
                storing.start_soon(self._store_results)
                try:
                    async with serve_referee(
                        self.hub, cfg.listen, credentials=credentials,
                        # Launched bots get listeners of their own (a unix socket per seat
                        # when sandboxed, `_open_door`; a private TCP port when not): a flood
                        # at the door of `listen` cannot keep them out.
                        private_address=f"{host}:0",
                        spectators=self.spectators,  # arena.v1.Spectator
                    ) as server, trio.open_nursery() as drains:
                        self.address = f"{host}:{server.port}"
                        self.launch_address = f"{host}:{server.more_ports[0]}"
                        self.wire_lag = server.take_loop_lag
                        if self.sandbox.mode == "bubblewrap":
                            self._server, self._private = server, private
                        self.started_at = trio.current_time()
                        self._drain_nursery = drains  # seats' output drains end with them
                        try:
                            yield self.address
                        finally:
                            self._drain_nursery = None
                            self._server = self._private = None
                            with trio.move_on_after(5) as cleanup:
                                cleanup.shield = True
                                await self.hub.close_all()  # remote bots: a clean end
                finally:
                    self.storage.close()  # the worker stores what is queued, then returns
                    if self.storage.pending:
                        log.info("storage_draining", waiting=self.storage.pending)
        finally:
            if self.spectators is not None and self.spectators.wanted in self.demand:
                self.demand.remove(self.spectators.wanted)
            self.sandbox = None
            shutil.rmtree(private, ignore_errors=True)

    async def _watch_presence(self) -> None:
        """Report which remote bots are connected and which are missing, at the start and
        whenever that changes (a `presence` log event, and `on_presence`)."""
        remote = [bot for bot in self.config.bots if not bot.launched]
        if not remote:
            return
        last: tuple[list[str], list[str]] | None = None
        while True:
            connected = [b.name for b in remote if self.hub.is_connected(b.token)]
            missing = [b.name for b in remote if b.name not in connected]
            left = [b.name for b in remote
                    if b.name in missing and self.hub.gone_since(b.token) is not None]
            if (connected, missing) != last:
                last = (connected, missing)
                log.info("presence", connected=connected, missing=missing, left=left,
                         no_show_ms=self.config.no_show_ms,
                         reconnect_ms=self.config.policy.reconnect_ms)
                if self.on_presence:
                    self.on_presence(connected, missing, left)
            await self.hub.changed()

    async def _pace(self, limiter: trio.CapacityLimiter, most: int) -> None:
        """Backpressure: measure the referee's own lag (how late a short sleep of trio's wakes
        up, or the gRPC thread's loop, `wire_lag`, whichever is worse: answers are stamped
        there) and when the referee cannot keep up, play fewer matches at once instead of
        letting bots be asked late; give them back, a quarter more at a time, while it keeps
        up (from `START_MATCHES` up to `most`: a slow start, not a stampede of match starts).
        Every cut is logged (`referee_lagging`), and every recovery (`referee_caught_up`)."""
        too_late = max(LAG_FLOOR_S, self.config.time_control.decision_ms / 1000 * LAG_SHARE)
        calm = 0.0  # seconds of low lag in a row
        hold = 0.0  # no change before this trio time (let a change take effect)
        lag = 0.0  # smoothed: one late wake-up (another process's burst) is not a trend
        while True:
            before = trio.current_time()
            await trio.sleep(PACE_S)
            now = trio.current_time()
            sample = max(now - before - PACE_S, self.wire_lag(), self.workers_lag())
            lag += LAG_SMOOTHING * (sample - lag)
            if lag > too_late:
                calm = 0.0
                if now >= hold and limiter.total_tokens > 1:
                    limiter.total_tokens = max(1, int(limiter.total_tokens * 3 / 4))
                    hold = now + 20 * PACE_S
                    log.warning("referee_lagging", lag_ms=round(lag * 1000, 1),
                                concurrency=limiter.total_tokens)
            elif lag < too_late / 2:
                calm += now - before
                if calm >= 5 * PACE_S and limiter.total_tokens < most and now >= hold:
                    tokens = int(limiter.total_tokens)
                    limiter.total_tokens = min(most, tokens + max(1, tokens // 4))
                    calm = 0.0
                    log.debug("referee_caught_up", lag_ms=round(lag * 1000, 1),
                             concurrency=limiter.total_tokens)

    async def _schedule(
        self, todo: Iterable[Pairing], limiter: trio.CapacityLimiter, nursery: trio.Nursery,
        play: Callable[[Pairing], Awaitable[MatchReport]],
    ) -> None:
        """Start every pairing of `todo` in `nursery`, one per slot of `limiter`.

        Lazily: a slot is taken before a pairing is even looked at, so a schedule of 10^8
        matches holds `concurrency` tasks, not 10^8. The second match of a duplicate pair
        (the same deals, sides swapped) starts only once the first has ended, never beside
        it: a bot playing both at once would hold, in one, the very cards its opponent holds
        in the other. A freed slot goes to such a twin before any new pair, so at most
        `concurrency` twins ever wait."""
        ready_send, ready = trio.open_memory_channel[Pairing](math.inf)
        waiting = 0  # twins not started yet
        groups = iter(duplicate_pairs(todo))
        exhausted = False
        while not exhausted or waiting:
            if exhausted:
                twin = await ready.receive()
                slot = await self._slot(limiter)
            else:
                slot = await self._slot(limiter)
                try:
                    twin = ready.receive_nowait()
                except trio.WouldBlock:
                    group = next(groups, None)
                    if group is None:
                        limiter.release_on_behalf_of(slot)
                        exhausted = True
                        continue
                    then = (ready_send, group[1]) if len(group) > 1 else None
                    waiting += then is not None
                    nursery.start_soon(self._play_limited, limiter, slot, group[0], play, then)
                    continue
            waiting -= 1
            nursery.start_soon(self._play_limited, limiter, slot, twin, play, None)

    @staticmethod
    async def _slot(limiter: trio.CapacityLimiter) -> object:
        """Take one of the `concurrency` slots; released when its match ends."""
        slot = object()
        await limiter.acquire_on_behalf_of(slot)
        return slot

    async def _store_results(self) -> None:
        """The storage worker, shielded: on Ctrl-C the matches stop, but the results already
        handed over are still stored (the worker ends once its queue is closed and empty)."""
        with trio.CancelScope(shield=True):
            await self.storage.run()

    async def _play_limited(
        self, limiter: trio.CapacityLimiter, slot: object, pairing: Pairing,
        play: Callable[[Pairing], Awaitable[MatchReport]],
        then: tuple[trio.MemorySendChannel[Pairing], Pairing] | None,
    ) -> None:
        """Play `pairing` in `slot`; once it has ended, free the slot and hand over `then`'s
        pairing (its duplicate twin) to be played next."""
        try:
            report = await play(self.attempt(pairing))
        finally:
            limiter.release_on_behalf_of(slot)
            if then is not None:
                then[0].send_nowait(then[1])
        if self.on_match_done:
            self.on_match_done(pairing, report)

    def attempt(self, pairing: Pairing) -> Pairing:
        """`pairing` as it is to be played now: counted as begun (a file per match,
        `begun_marks`), and, if it was begun before and never stored (its worker died, the
        referee was stopped and resumed), dealt anew. Its seed for attempt n > 0 is an HMAC
        under the tournament's secret of its first seed and n: the same runs give the same
        seeds, but no bot meets again the hands it saw in an attempt that was cut short (a
        hostile review, round 4: a rerun replayed the very deals its bots had seen). Not
        with duplicate deals (`tournament.duplicate`): there every deal is played twice by
        design, its bots see each one in both matches of a pair, and new deals for one of
        them would only break the pair."""
        mark = begun_marks(self.config, self.secret) / file_stem(pairing.match_id)
        try:
            before = int(mark.read_text(encoding="ascii").strip() or 0)
        except (OSError, ValueError):
            before = 0
        try:
            mark.parent.mkdir(parents=True, exist_ok=True)
            fresh = mark.with_name(mark.name + ".new")
            fresh.write_text(f"{before + 1}\n", encoding="ascii")
            os.replace(fresh, mark)
        except OSError as exc:
            raise ArenaError(f"cannot note that match {pairing.match_id} began, under "
                             f"{mark.parent}: {exc.strerror or exc}") from None
        if before == 0 or self.config.duplicate:
            return pairing
        log.warning("match_dealt_anew", match_id=pairing.match_id, attempt=before + 1,
                    detail="begun before and never stored: new deals, so that no bot meets "
                    "the hands it saw again")
        return dataclasses.replace(
            pairing, seed=match_seed(self.secret, pairing.seed, "attempt", before))

    async def play(self, pairing: Pairing) -> MatchReport:
        """Play one pairing to its end and hand it to the storage worker (which writes its
        replay and commits its row off the match path)."""
        job = await self.referee(pairing)
        await self.storage.hand_over(job)
        return job.report

    async def referee(self, pairing: Pairing) -> StoreJob:
        """Play one pairing to its end here (launching or awaiting its bots) and return what
        storing it needs, without storing it: `play` stores it, an executor's worker
        (`arena.tournament.worker`) sends it to the coordinator, which stores it."""
        cfg = self.config
        game = Match(pairing.variant, pairing.options, pairing.seed)
        seats: list[_Seat | None] = [None] * game.num_seats
        report: MatchReport | None = None
        with structlog.contextvars.bound_contextvars(match_id=pairing.match_id):
            failures: list[_SeatFailed] = []
            async with trio.open_nursery() as nursery:
                for seat in range(game.num_seats):
                    nursery.start_soon(
                        self._take_seat, pairing, game, seat, seats, failures, nursery.cancel_scope
                    )
            absent: int | None = None
            why = ""
            if failures:
                absent, why = failures[0].seat, failures[0].why
            else:
                absent = next((s for s, taken in enumerate(seats) if taken is None), None)
            try:
                if len({f.seat for f in failures}) > 1:
                    report = _forfeit_all(pairing, game, failures)
                elif absent is None:
                    links: list[SeatLink] = [s.link for s in seats if s is not None]
                    names = tuple(b.name for b in seat_bots(pairing, game.team_of))
                    self.live[pairing.match_id] = (names, game)  # for spectators (arena.web)
                    report = await run_match(
                        pairing.match_id, game, links,
                        time_control=cfg.time_control, policy=cfg.policy,
                        on_move=self.move_observer(pairing) if self.move_observer else None,
                    )
                    await _explain_disconnect(report, seats)
                else:
                    report = _forfeit(pairing, game, absent, why)
            finally:
                self.live.pop(pairing.match_id, None)
                with trio.CancelScope(shield=True):
                    await self._release(seats)
        return StoreJob(
            report=report, options=pairing.options.as_dict(),
            team_bots=(pairing.teams[0].name, pairing.teams[1].name),
            accounts=game.team_of, replay=replay_path(cfg, pairing.match_id),
            time_control=cfg.time_control, legal=cfg.replay_legal,
        )

    async def _take_seat(
        self,
        pairing: Pairing,
        game: Match,
        seat: int,
        seats: list[_Seat | None],
        failures: list[_SeatFailed],
        cancel: trio.CancelScope,
    ) -> None:
        """Launch or await the bot of `seat`; on failure record why and stop the others."""
        try:
            seats[seat] = await self._connect_seat(pairing, game, seat)
        except _SeatFailed as failed:
            failures.append(failed)
            # The other seats get a moment to fail the same way (both bots missing, both
            # crashing at start): then neither wins (`_forfeit_all`); otherwise they stop.
            cancel.deadline = min(cancel.deadline, trio.current_time() + SETTLE_S)

    async def _connect_seat(self, pairing: Pairing, game: Match, seat: int) -> _Seat:
        bot = seat_bots(pairing, game.team_of)[seat]
        exits = AsyncExitStack()  # the seat's own door, if it gets one
        try:
            return await self._connect_seat_through(pairing, game, seat, bot, exits)
        except BaseException:
            with trio.CancelScope(shield=True):
                await exits.aclose()
            raise

    async def _open_door(
        self, exits: AsyncExitStack
    ) -> tuple[Path, SeatDoor, dict[str, Connection]] | None:
        """A sandboxed seat's own unix socket (in the private folder, bound into its sandbox
        only), served while `exits` is open, and watched: a seat flooding it with streams is
        killed (`_watch_door`). None when seats are not sandboxed (they dial the private TCP
        port, where the referee checks the connecting process instead)."""
        if self._server is None or self._private is None:
            return None
        self._doors_opened += 1
        path = self._private / f"seat-{self._doors_opened}.sock"
        door = await exits.enter_async_context(seat_door(self._server, path))
        found: dict[str, Connection] = {}  # "conn": the seat's connection, once it has one
        return path, door, found

    async def _watch_door(self, door: SeatDoor, process: SeatProcess, bot_name: str,
                          found: dict[str, Connection]) -> None:
        """Kill the seat if it floods its door (its match is then lost by disconnect, or
        forfeited before it began, charged to it), as one holding too many sockets is."""
        if not await door.flood():
            return
        note = (f"killed by the referee: it opened streams on its own door faster than "
                f"{door.rate:g} per second ({door.refused} refused, a stream flood)")
        log.warning("seat_stream_flood", bot=bot_name, pid=process.pid, refused=door.refused,
                    accepted=door.accepted, per_second=door.rate, log=str(process.log_path))
        conn = found.get("conn")
        if conn is not None:  # the match learns why its seat is gone (if the door has not
            with trio.move_on_after(1):  # told it already: it shut at the flood, `SeatDoor`)
                await conn.close(note)
        await process.kill(note)

    async def _connect_seat_through(
        self, pairing: Pairing, game: Match, seat: int, bot: BotSpec, exits: AsyncExitStack
    ) -> _Seat:
        process: SeatProcess | None = None
        opened = None
        if bot.launched:
            token = self.hub.new_token()
            # Bound to the seat's process tree once it runs: a sibling cannot take the seat.
            self.hub.admit(token, bot.name, launched=True)
            log_path = bot_logs(self.config) / (
                f"{file_stem(pairing.match_id)}.seat{seat}.{_safe(bot.name)[:32]}.log"
            )
            _keep_earlier(log_path)  # a match played again (a worker died, a resume)
            opened = await self._open_door(exits)
            try:
                process = await SeatProcess.start(
                    self.argv[bot.name], cwd=bot.cwd, server=self.launch_address, token=token,
                    bot_name=bot.name, log_path=log_path, limits=self.config.limits,
                    tls_ca=self.config.tls_cert, nursery=self._drains(), sandbox=self.sandbox,
                    bot_dir=self.bot_dirs[bot.name], env=dict(bot.env),
                    others=[d for n, d in self.bot_dirs.items() if n != bot.name],
                    socket=opened[0] if opened is not None else None,
                )
            except OSError as exc:
                self.hub.revoke(token)
                raise _SeatFailed(seat, f"{bot.name} could not start: {exc}") from None
            self.hub.bind_owner(token, process.pid)
            if opened is not None:
                self._drains().start_soon(self._watch_door, opened[1], process, bot.name,
                                          opened[2])
        else:
            token = bot.token
        try:
            conn = await self._await_connection(bot, token, process, seat)
        except BaseException:
            if process is not None:
                with trio.CancelScope(shield=True):
                    await process.stop(grace=0)
            raise
        finally:
            if bot.launched:
                self.hub.revoke(token)  # one-off: nobody else gets in with it
        if opened is not None:
            opened[2]["conn"] = conn
        link = conn.link(pairing.match_id, seat, bot.name, reconnect=not bot.launched)
        return _Seat(link, conn, process, exits if opened is not None else None)

    async def _await_remote(self, bot: BotSpec, seat: int) -> Connection:
        """A remote bot's connection. No wait is unbounded or silent: a bot that never
        showed up forfeits `no_show_ms` after the start, one that left forfeits
        `reconnect_ms` after its last connection closed (every remaining seat at once)."""
        while not self.hub.is_connected(bot.token):
            gone = self.hub.gone_since(bot.token)
            if gone is None:
                since = max(self.started_at, self.entered_at.get(bot.token, 0.0))
                deadline = since + self.config.no_show_ms / 1000
                why = f"{bot.name} did not connect within no_show_ms = {self.config.no_show_ms}"
                event = "no_show"
            else:
                deadline = gone + self.config.policy.reconnect_ms / 1000
                why = (f"{bot.name} left ({self.hub.last_close(bot.token) or 'disconnected'}) "
                       f"and did not come back within reconnect_ms = "
                       f"{self.config.policy.reconnect_ms}")
                event = "remote_bot_gone"
            with trio.move_on_at(deadline) as scope:
                await self.hub.changed()
            if scope.cancelled_caught and not self.hub.is_connected(bot.token):
                if (event, bot.name, gone) not in self._warned:
                    self._warned.add((event, bot.name, gone))
                    log.warning(event, bot=bot.name, detail=why)
                raise _SeatFailed(seat, why)
        return await self.hub.connection_for(bot.token)

    async def _await_connection(
        self, bot: BotSpec, token: str, process: SeatProcess | None, seat: int
    ) -> Connection:
        if not bot.launched:
            return await self._await_remote(bot, seat)
        found: Connection | None = None

        async def wait_for_conn(cancel: trio.CancelScope) -> None:
            nonlocal found
            found = await self.hub.connection_for(token)
            cancel.cancel()

        async def watch_process(cancel: trio.CancelScope) -> None:
            assert process is not None
            await process.process.wait()
            cancel.cancel()

        with trio.move_on_after(self.connect_timeout):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(wait_for_conn, nursery.cancel_scope)
                if process is not None:
                    nursery.start_soon(watch_process, nursery.cancel_scope)
        if found is not None:
            return found
        closed = self.hub.last_close(token)
        if closed is not None:
            raise _SeatFailed(
                seat, f"{bot.name} connected, then lost its connection before the match "
                f"began: {closed}"
            )
        if process is not None and process.exited:
            with trio.move_on_after(2):
                await process.drained.wait()
            tail = process.tail()
            raise _SeatFailed(
                seat,
                f"{bot.name} {process.ending()} before connecting"
                + (f"; its last output:\n{tail}" if tail else ""),
            )
        raise _SeatFailed(seat, f"{bot.name} did not connect within {self.connect_timeout} s")

    async def _release(self, seats: list[_Seat | None]) -> None:
        async with trio.open_nursery() as nursery:
            for taken in seats:
                if taken is None:
                    continue
                taken.link.release()
                if taken.process is not None:
                    await taken.conn.close("match over")
                    nursery.start_soon(taken.end)


START_MATCHES = 8
"""Matches played at once at the start of a run (then up to `concurrency`, see `_pace`)."""
PACE_S = 0.05
"""How often the runner measures the referee's lag (the overshoot of a sleep this long)."""
LAG_SMOOTHING = 0.25
"""Weight of the newest sample in the referee's smoothed lag."""
LAG_SHARE = 0.2
"""The referee lags when a sleep wakes later than this share of decision_ms ..."""
LAG_FLOOR_S = 0.02
"""... or than this, whichever is more; it then plays fewer matches at once."""

SETTLE_S = 0.5
"""After one seat of a match fails to take its place, how long the others may still fail
(to a no-show deadline, a crash at start) before the match is forfeited by the first alone."""


class _SeatFailed(ArenaError):
    def __init__(self, seat: int, why: str) -> None:
        super().__init__(why)
        self.seat = seat
        self.why = why


SOCKET_PATH_MAX = 107
"""The longest path a unix socket may have on Linux (sun_path, 108 bytes with its NUL)."""


def _check_socket_room(private: Path) -> None:
    """Seats' sockets fit in `private`; else a one-line `ConfigError` naming TMPDIR."""
    longest = private / "seat-9999999999.sock"
    if len(os.fsencode(longest)) > SOCKET_PATH_MAX:
        raise ConfigError(
            f"TMPDIR: {private.parent} is too long for the seats' unix sockets "
            f"({len(os.fsencode(longest))} bytes, at most {SOCKET_PATH_MAX}); set TMPDIR to "
            f"a shorter folder")


def launch_argv(bot: BotSpec) -> list[str]:
    """The argv a seat of launched `bot` runs (a stdio bot's: the adapter's, its command
    after `--`), programs resolved; `ConfigError` if one is missing."""
    if bot.protocol == "stdio":
        resolve_command(bot.command, bot.cwd)  # the bot's own program must exist too
    return resolve_command(bot.launch_command, bot.cwd)


def _resolve(index: int, bot: BotSpec) -> list[str]:
    """The argv of a launched bot; a missing program names the config field and the bot."""
    try:
        return launch_argv(bot)
    except ConfigError as exc:
        raise ConfigError(f"bot[{index}].command (bot {bot.name!r}): {exc}") from None


EXIT_WAIT_S = 1.0
"""After a launched seat's connection ended a match, how long the runner waits for its process
to exit, to tell why (its exit code and last output) in the match's detail."""


async def _explain_disconnect(report: MatchReport, seats: list[_Seat | None]) -> None:
    """A match lost by a disconnect of a seat the referee launched: add to its detail how the
    process ended, if it did, and its last output. What the connection said ("the client
    finished sending") is gRPC's word; a bot's author needs "exited with code 139" and its
    last lines (a stdio bot's adapter closes the connection when its bot dies)."""
    o = report.outcome
    taken = seats[o.faulty_seat] if o.faulty_seat is not None else None
    if o.termination is not Termination.DISCONNECT or taken is None or taken.process is None:
        return
    process = taken.process
    with trio.move_on_after(EXIT_WAIT_S):
        await process.process.wait()
    if not process.exited:
        return
    with trio.move_on_after(EXIT_WAIT_S):
        await process.drained.wait()
    tail = process.tail()
    report.outcome = dataclasses.replace(o, detail=(
        f"{o.detail}; its process {process.ending()}"
        + (f"; its last output:\n{tail}" if tail else "")
    ))


def _forfeit(
    pairing: Pairing, game: Match, seat: int, why: str, *, quiet: bool = False
) -> MatchReport:
    """The report of a match that never started because `seat` never took its place. As
    for any fault (`arena.referee.match`): with two accounts the other one wins; with three
    (argentine-gallo) no account wins, and the tournament credits the bot not at fault."""
    if not quiet:
        log.warning("forfeit", seat=seat, detail=why)
    winner = 1 - game.team_of[seat] if game.num_teams == 2 else None
    outcome = Outcome(
        Termination.FORFEIT, winner, seat, why, None,
        (0,) * game.num_seats, (0,) * game.num_teams, (0,) * game.num_teams,
    )
    names = tuple(bot.name for bot in seat_bots(pairing, game.team_of))
    now = time.time()
    return MatchReport(
        match_id=pairing.match_id, variant=pairing.variant, seed=pairing.seed,
        seat_names=names, outcome=outcome, decisions=[], record=game.record(),
        started_at=now, finished_at=now,
    )


def _forfeit_all(pairing: Pairing, game: Match, failures: list[_SeatFailed]) -> MatchReport:
    """The report of a match that never started because several seats failed to take their
    places; the detail names each seat. If they are all one bot's (a team variant's bot in
    each of its seats, the gallo's pair), that bot forfeits, as for one seat (a crashing bot
    in a 2v2 got a draw); if both bots failed, a FORFEIT with no winner and no faulty seat."""
    failed = sorted({f.seat for f in failures})
    detail = "; ".join(f"seat {f.seat}: {f.why}" for f in sorted(failures, key=lambda f: f.seat))
    log.warning("forfeit", seats=failed, detail=detail)
    bots = seat_bots(pairing, game.team_of)
    report = _forfeit(pairing, game, failed[0], detail, quiet=True)
    if len({bots[seat].name for seat in failed}) > 1:
        report.outcome = dataclasses.replace(report.outcome, winner_team=None, faulty_seat=None)
    return report


def bot_logs(config: TournamentConfig) -> Path:
    """The folder of the launched bots' output: one file per seat, stdout and stderr."""
    return config.logs / file_stem(config.name) / "bots"


def _keep_earlier(log_path: Path) -> None:
    """Move an earlier attempt's seat log aside (``NAME.log.1``, ``.2``...): a match played
    again after its worker died or the referee was stopped writes the same file name, and
    the first attempt's output was lost (a hostile review, round 4)."""
    if not log_path.exists():
        return
    n = 1
    while log_path.with_name(f"{log_path.name}.{n}").exists():
        n += 1
    with contextlib.suppress(OSError):
        log_path.rename(log_path.with_name(f"{log_path.name}.{n}"))


def begun_marks(config: TournamentConfig, secret: bytes | None = None) -> Path:
    """The folder of the files that count how often each match began (`attempt`): under the
    logs, one per tournament and secret (a tournament started over with a new secret starts
    with none); without `secret`, the folder of every secret's."""
    folder = config.logs / file_stem(config.name) / "begun"
    if secret is None:
        return folder
    return folder / hashlib.sha256(b"truco-arena-begun" + secret).hexdigest()[:16]


def replay_path(config: TournamentConfig, match_id: str) -> Path:
    """Where the replay of `match_id` is written: one file per match id, by construction."""
    return config.replays / file_stem(config.name) / f"{file_stem(match_id)}.jsonl"
