"""Run a tournament: serve the referee, launch or await the bots, play matches concurrently,
commit each result as it ends, and report standings.

Structured concurrency: one nursery for the tournament (the gRPC server and the matches), a
`trio.CapacityLimiter` for how many matches run at once, and one nursery per match for its
bot processes. Nothing outlives the tournament: every process is stopped with its group.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import grpc
import structlog
import trio

from arena.errors import ArenaError, ConfigError
from arena.referee import MatchReport, Outcome, SeatLink, Termination, run_match
from arena.replay import write_replay
from arena.rpc.server import Connection, Hub, serve_referee
from arena.rules import Match
from arena.tournament.config import BotSpec, TournamentConfig
from arena.tournament.launcher import SeatProcess, resolve_command
from arena.tournament.schedule import Pairing, round_robin, seat_bots
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


class _Seat:
    """A seat's connection, and the process behind it if the referee launched it."""

    def __init__(self, link: SeatLink, conn: Connection, process: SeatProcess | None) -> None:
        self.link = link
        self.conn = conn
        self.process = process


class TournamentRunner:
    """Plays the pairings of a config against one referee server."""

    def __init__(
        self,
        config: TournamentConfig,
        *,
        on_match_done: Callable[[Pairing, MatchReport], None] | None = None,
        on_listening: Callable[[str], None] | None = None,
        connect_timeout: float | None = None,
    ) -> None:
        self.config = config
        self.hub = Hub(hello_timeout=config.hello_ms / 1000)
        self.store = Store(config.database)
        self.on_match_done = on_match_done
        self.on_listening = on_listening
        # Seconds a launched bot has to connect and say hello ([faults] connect_ms).
        self.connect_timeout = (
            config.connect_ms / 1000 if connect_timeout is None else connect_timeout
        )
        self.address = ""
        # The matches being played now: id -> (the bot in each seat, the engine's match).
        self.live: dict[str, tuple[tuple[str, ...], Match]] = {}
        self.argv: dict[str, list[str]] = {
            bot.name: _resolve(i, bot) for i, bot in enumerate(config.bots) if bot.launched
        }

    def pending(self) -> tuple[list[Pairing], int]:
        """The pairings not yet stored, and how many are."""
        done = self.store.finished_ids(self.config.name)
        pairings = round_robin(self.config)
        todo = [p for p in pairings if p.match_id not in done]
        return todo, len(pairings) - len(todo)

    async def run(self, pairings: list[Pairing] | None = None) -> TournamentRun:
        cfg = self.config
        todo, skipped = self.pending() if pairings is None else (pairings, 0)
        self.store.begin_tournament(
            cfg.name,
            {"seed": cfg.seed, "games": cfg.games, "variants": list(cfg.variants),
             # for the web's progress and ETA: who plays, and how many matches in all
             "bots": [bot.name for bot in cfg.bots], "matches": len(todo) + skipped},
        )
        for bot in cfg.bots:
            self.store.add_bot(bot.name, "launched" if bot.launched else "remote",
                               " ".join(bot.command))
            if not bot.launched:
                self.hub.admit(bot.token, bot.name)
        limiter = trio.CapacityLimiter(cfg.concurrency)
        credentials = None
        if cfg.tls_cert is not None and cfg.tls_key is not None:
            credentials = grpc.ssl_server_credentials(
                [(cfg.tls_key.read_bytes(), cfg.tls_cert.read_bytes())]
            )
        async with serve_referee(self.hub, cfg.listen, credentials=credentials) as server:
            host = cfg.listen.rsplit(":", 1)[0]
            if host in ("", "0.0.0.0", "[::]"):  # listening everywhere: launch bots locally
                host = "127.0.0.1"
            self.address = f"{host}:{server.port}"
            log.info("tournament_start", tournament=cfg.name, address=self.address,
                     matches=len(todo), already_done=skipped)
            if self.on_listening:
                self.on_listening(self.address)
            async with trio.open_nursery() as nursery:
                for pairing in todo:
                    nursery.start_soon(self._play_limited, limiter, pairing)
            with trio.move_on_after(5):
                await self.hub.close_all()  # remote bots see a clean end of stream
        if not self.pending()[0]:
            self.store.finish_tournament(cfg.name)
        return TournamentRun(len(todo), skipped, self.address)

    async def _play_limited(self, limiter: trio.CapacityLimiter, pairing: Pairing) -> None:
        async with limiter:
            report = await self.play(pairing)
        if self.on_match_done:
            self.on_match_done(pairing, report)

    async def play(self, pairing: Pairing) -> MatchReport:
        """Play one pairing to its end, store it, and write its replay."""
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
                if absent is None:
                    links = [s.link for s in seats if s is not None]
                    names = tuple(b.name for b in seat_bots(pairing, game.team_of))
                    self.live[pairing.match_id] = (names, game)  # for spectators (arena.web)
                    report = await run_match(
                        pairing.match_id, game, links,
                        time_control=cfg.time_control, policy=cfg.policy,
                    )
                else:
                    report = _forfeit(pairing, game, absent, why)
            finally:
                self.live.pop(pairing.match_id, None)
                with trio.CancelScope(shield=True):
                    await self._release(seats)
            replay = replay_path(cfg, pairing.match_id)
            write_replay(replay, report, time_control=cfg.time_control, legal=cfg.replay_legal)
            self.store.save_match(
                cfg.name, report, options=pairing.options.as_dict(),
                team_bots=(pairing.teams[0].name, pairing.teams[1].name), replay=replay,
                accounts=game.team_of,
            )
        return report

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
            cancel.cancel()

    async def _connect_seat(self, pairing: Pairing, game: Match, seat: int) -> _Seat:
        bot = seat_bots(pairing, game.team_of)[seat]
        process: SeatProcess | None = None
        if bot.launched:
            token = self.hub.new_token()
            self.hub.admit(token, bot.name)
            log_path = bot_logs(self.config) / (
                f"{_safe(pairing.match_id)}.seat{seat}.{_safe(bot.name)}.log"
            )
            try:
                process = await SeatProcess.start(
                    self.argv[bot.name], cwd=bot.cwd, server=self.address, token=token,
                    bot_name=bot.name, log_path=log_path, limits=self.config.limits,
                    tls_ca=self.config.tls_cert,
                )
            except OSError as exc:
                raise _SeatFailed(seat, f"{bot.name} could not start: {exc}") from None
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
        link = conn.link(pairing.match_id, seat, bot.name, reconnect=not bot.launched)
        return _Seat(link, conn, process)

    async def _await_connection(
        self, bot: BotSpec, token: str, process: SeatProcess | None, seat: int
    ) -> Connection:
        found: Connection | None = None

        async def wait_for_conn(cancel: trio.CancelScope) -> None:
            nonlocal found
            found = await self.hub.connection_for(token)
            cancel.cancel()

        async def watch_process(cancel: trio.CancelScope) -> None:
            assert process is not None
            await process.process.wait()
            cancel.cancel()

        with trio.move_on_after(self.connect_timeout if bot.launched else 3600 * 24):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(wait_for_conn, nursery.cancel_scope)
                if process is not None:
                    nursery.start_soon(watch_process, nursery.cancel_scope)
        if found is not None:
            return found
        closed = self.hub.last_close(token) if bot.launched else None
        if closed is not None:
            raise _SeatFailed(
                seat, f"{bot.name} connected, then lost its connection before the match "
                f"began: {closed}"
            )
        if process is not None and process.exited:
            tail = process.tail()
            raise _SeatFailed(
                seat,
                f"{bot.name} exited with code {process.process.returncode} before connecting"
                + (f"; its last output:\n{tail}" if tail else ""),
            )
        raise _SeatFailed(seat, f"{bot.name} did not connect within {self.connect_timeout} s")

    async def _release(self, seats: list[_Seat | None]) -> None:
        async with trio.open_nursery() as nursery:
            for taken in seats:
                if taken is None:
                    continue
                if taken.process is not None:
                    await taken.conn.close("match over")
                    nursery.start_soon(taken.process.stop)


class _SeatFailed(ArenaError):
    def __init__(self, seat: int, why: str) -> None:
        super().__init__(why)
        self.seat = seat
        self.why = why


def _resolve(index: int, bot: BotSpec) -> list[str]:
    """The argv of a launched bot; a missing program names the config field and the bot."""
    try:
        if bot.protocol == "stdio":
            resolve_command(bot.command, bot.cwd)  # the bot's own program must exist too
        return resolve_command(bot.launch_command, bot.cwd)
    except ConfigError as exc:
        raise ConfigError(f"bot[{index}].command (bot {bot.name!r}): {exc}") from None


def _forfeit(pairing: Pairing, game: Match, seat: int, why: str) -> MatchReport:
    """The report of a match that never started because `seat` never took its place."""
    log.warning("forfeit", seat=seat, detail=why)
    outcome = Outcome(
        Termination.FORFEIT, 1 - game.team_of[seat], seat, why, None,
        (0,) * game.num_seats, (0,) * game.num_teams, (0,) * game.num_teams,
    )
    names = tuple(bot.name for bot in seat_bots(pairing, game.team_of))
    now = time.time()
    return MatchReport(
        match_id=pairing.match_id, variant=pairing.variant, seed=pairing.seed,
        seat_names=names, outcome=outcome, decisions=[], record=game.record(),
        started_at=now, finished_at=now,
    )


def bot_logs(config: TournamentConfig) -> Path:
    """The folder of the launched bots' output: one file per seat, stdout and stderr."""
    return config.logs / _safe(config.name) / "bots"


def replay_path(config: TournamentConfig, match_id: str) -> Path:
    """Where the replay of `match_id` is written."""
    return config.replays / _safe(config.name) / f"{_safe(match_id)}.jsonl"
