"""Results in a database: bots, tournaments, matches and their outcomes.

SQLite (a file, the default) or PostgreSQL (a `postgresql://` URL), through the small layer in
`arena.tournament.backend`. Every finished match is committed as it ends (one transaction), so
a killed tournament loses nothing that finished. Match ids are deterministic (tournament,
variant, bots, index), which is what lets a tournament resume.

The schema is versioned: `MIGRATIONS` below, applied in order, once each, when a `Store`
opens the database (SQLite keeps the number in `PRAGMA user_version`, PostgreSQL in the
`schema_version` table). A database written before versions were kept reads as version 1;
one written by a newer truco-arena is refused (`SchemaTooNewError`) and left untouched.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import structlog

from arena.referee import MatchReport
from arena.tournament import latency as lat
from arena.tournament.backend import (
    Backend,
    DatabaseError,
    Migration,
    Target,
    add_column,
    check_version,
    describe,
    migrate,
    open_backend,
    retry_locked,
)

log = structlog.get_logger("arena.store")

BUSY_TIMEOUT_S = 30.0
"""How long an operation waits for another process's lock on the database."""

SCHEMA_V1 = """
CREATE TABLE IF NOT EXISTS tournaments (
    name        TEXT PRIMARY KEY,
    config      TEXT NOT NULL,
    started_at  REAL NOT NULL,
    finished_at REAL
);
CREATE TABLE IF NOT EXISTS bots (
    name    TEXT PRIMARY KEY,
    kind    TEXT NOT NULL,          -- 'launched' or 'remote'
    command TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS matches (
    id           TEXT PRIMARY KEY,
    tournament   TEXT NOT NULL REFERENCES tournaments(name),
    variant      TEXT NOT NULL,
    options      TEXT NOT NULL,     -- JSON
    seed         INTEGER NOT NULL,
    bot0         TEXT NOT NULL,     -- the pairing's first bot (team 0; seat 0 in gallo)
    bot1         TEXT NOT NULL,     -- its second bot (team 1; seats 1 and 2 in gallo)
    termination  TEXT NOT NULL,     -- normal, timeout, illegal_action, disconnect, forfeit
    winner_team  INTEGER,           -- renamed winner_bot by migration 4
    faulty_seat  INTEGER,
    faulty_bot   TEXT,
    detail       TEXT NOT NULL DEFAULT '',
    points0      INTEGER NOT NULL,  -- bot0's points (its best seat's, in rotating gallo)
    points1      INTEGER NOT NULL,
    games0       INTEGER NOT NULL,  -- chicos / games won by bot0
    games1       INTEGER NOT NULL,
    strikes      TEXT NOT NULL,     -- JSON list per seat
    decisions    INTEGER NOT NULL,
    replay       TEXT,
    started_at   REAL NOT NULL,
    finished_at  REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS matches_by_tournament ON matches(tournament)
"""
"""The tables as the first release wrote them (migration 1); later columns come by migration."""

WINNER_COMMENT = "0: bot0 won, 1: bot1 won, NULL: nobody (a draw, or no winner)"


def _create_tables(db: Backend) -> None:
    db.script(SCHEMA_V1)


def _rename_winner(db: Backend) -> None:
    # `winner_team` held which of the pairing's two bots won (not a team: in gallo the two
    # bots are not teams, and bot0 may hold several seats).
    db.execute("ALTER TABLE matches RENAME COLUMN winner_team TO winner_bot")
    if db.postgres:
        db.execute(f"COMMENT ON COLUMN matches.winner_bot IS '{WINNER_COMMENT}'")


MIGRATIONS: tuple[Migration, ...] = (
    Migration("tables tournaments, bots, matches", _create_tables),
    # a database from before gallo: the bot in each seat (JSON list)
    add_column("matches", "seat_bots", "TEXT NOT NULL DEFAULT '[]'"),
    # a database from before secret deals: the deals' key (NULL: kept in a key file)
    add_column("tournaments", "secret", "BLOB"),
    # matches.winner_team -> winner_bot: 0: bot0 won, 1: bot1 won, NULL: nobody
    Migration("matches.winner_team renamed winner_bot", _rename_winner),
    # per seat: a latency histogram of its decisions (JSON {bucket: count}, latency.py)
    add_column("matches", "latency", "TEXT NOT NULL DEFAULT '[]'"),
    # per seat: its faults by kind (JSON {"timeout": n, "illegal_action": n, ...})
    add_column("matches", "faults", "TEXT NOT NULL DEFAULT '[]'"),
)
"""The store's schema, one step at a time (the version is how many were applied)."""

SCHEMA_VERSION = len(MIGRATIONS)


def _legacy_version(db: Backend) -> int:
    """A database written before versions were kept has the tables (version 1 at least; the
    column migrations that follow keep what it has)."""
    return 1 if db.has_table("matches") else 0


@dataclass(frozen=True, slots=True)
class MatchRow:
    """One stored match, as the standings read it."""

    id: str
    variant: str
    bot0: str
    bot1: str
    termination: str
    winner_bot: int | None  # 0: bot0 won, 1: bot1 won, None: nobody
    faulty_bot: str | None
    points0: int
    points1: int
    strikes: tuple[int, ...]
    seat_bots: tuple[str, ...] = ()
    tournament: str = ""
    # Per seat (empty for a match stored before they were kept): its decisions' latency
    # histogram (arena.tournament.latency) and its faults by kind.
    latency: tuple[lat.Histogram, ...] = field(default=(), hash=False, compare=False)
    faults: tuple[dict[str, int], ...] = field(default=(), hash=False, compare=False)


ROW_COLUMNS = """id, variant, bot0, bot1, termination, winner_bot, faulty_bot, points0, points1,
    strikes, seat_bots, tournament, latency, faults"""
"""What `row_from` reads, in order."""


def row_from(r: tuple[object, ...] | list[object]) -> MatchRow:
    """A `MatchRow` from the values of `ROW_COLUMNS`."""
    latency = json.loads(str(r[12] or "[]"))
    faults = json.loads(str(r[13] or "[]"))
    return MatchRow(
        str(r[0]), str(r[1]), str(r[2]), str(r[3]), str(r[4]),
        None if r[5] is None else int(str(r[5])), None if r[6] is None else str(r[6]),
        int(str(r[7])), int(str(r[8])), tuple(json.loads(str(r[9]))),
        tuple(json.loads(str(r[10] or "[]"))), str(r[11]),
        tuple(lat.from_json(h) for h in latency), tuple(dict(f) for f in faults),
    )


def seat_faults(report: MatchReport) -> list[dict[str, int]]:
    """Per seat, its faults by kind: each faulty decision (`timeout`, `illegal_action`), and
    the fault that ended the match (its last strike, or a `disconnect` / `forfeit`)."""
    out: list[dict[str, int]] = [{} for _ in report.seat_names]
    for d in report.decisions:
        if d.fault is not None and 0 <= d.seat < len(out):
            out[d.seat][d.fault] = out[d.seat].get(d.fault, 0) + 1
    o = report.outcome
    if o.faulty_seat is not None and o.termination.name != "NORMAL" \
            and 0 <= o.faulty_seat < len(out):
        kind = o.termination.name.lower()
        out[o.faulty_seat][kind] = out[o.faulty_seat].get(kind, 0) + 1
    return out


def seat_latency(report: MatchReport) -> list[lat.Histogram]:
    """Per seat, the histogram of its decisions' latency."""
    return [lat.histogram(d.latency_ms for d in report.decisions if d.seat == seat)
            for seat in range(len(report.seat_names))]


def bot_results(
    report: MatchReport, bots: tuple[str, str], accounts: tuple[int, ...]
) -> tuple[int | None, tuple[int, int], tuple[int, int]]:
    """Which of the pairing's two bots won (0, 1 or None), and each bot's points and games.

    A bot's points and games are both those of its best account (one account per team in
    team games; in rotating gallo a bot holding two seats is credited with its better
    player): the account that won the match, else the one with the most games (chicos),
    then points. Both from one account: taking each column's best alone credited a bot with
    one account's points and the other's chicos, a result no player of it had (outside
    walkthrough 2)."""
    o = report.outcome
    names = report.seat_names
    mine = [
        {accounts[seat] for seat, name in enumerate(names) if name == bot} for bot in bots
    ]

    def best(index: int) -> tuple[int, int]:
        held = [a for a in mine[index] if a < len(o.points) and a < len(o.games_won)]
        if not held:
            return 0, 0
        top = max(held, key=lambda a: (a == o.winner_team, o.games_won[a], o.points[a], -a))
        return o.points[top], o.games_won[top]

    (points_a, games_a), (points_b, games_b) = best(0), best(1)
    points = (points_a, points_b)
    games = (games_a, games_b)
    winner: int | None = None
    if o.winner_team is not None:
        winner = next((i for i in (0, 1) if o.winner_team in mine[i]), None)
    elif o.faulty_seat is not None:
        faulty = names[o.faulty_seat]
        winner = 1 if faulty == bots[0] else 0 if faulty == bots[1] else None
    return winner, points, games


def _busy(exc: sqlite3.Error) -> bool:
    """SQLite says another connection holds the database (SQLITE_BUSY, SQLITE_LOCKED)."""
    return (getattr(exc, "sqlite_errorcode", 0) & 0xFF) in (5, 6) or "locked" in str(exc)


class Store:
    """The results database."""

    def __init__(self, target: Target, busy_timeout: float = BUSY_TIMEOUT_S) -> None:
        self.path = target
        self.busy_timeout = busy_timeout
        # Several processes may share one database (two `arena match` runs, a tournament and
        # `arena standings`): wait for a lock rather than fail at once.
        self.db = open_backend(target, busy_timeout=busy_timeout)
        try:
            check_version(self.db, "store", SCHEMA_VERSION)  # before anything is written
            if not self.db.postgres:
                # WAL mode (readers never block the writer). Switching a new database's
                # journal mode does not wait on the busy timeout when another connection is
                # switching it at the same moment, so that one step is retried.
                retry_locked(lambda: self.db.execute("PRAGMA journal_mode=WAL"), busy_timeout)
                self.db.execute("PRAGMA foreign_keys=ON")
            migrate(self.db, "store", MIGRATIONS, legacy=_legacy_version,
                    on_applied=self._migrated)
        except sqlite3.DatabaseError as exc:
            self.db.close()
            if _busy(exc):  # another process holds it: the caller may wait and try again
                raise
            # Not a database SQLite can use (/dev/null, a damaged file): one line, not a
            # traceback.
            raise DatabaseError(f"database: {describe(target)}: {exc}") from None
        except BaseException:
            self.db.close()
            raise

    def _migrated(self, version: int, what: str) -> None:
        log.info("schema_migrated", component="store", version=version, change=what,
                 database=describe(self.path))

    def close(self) -> None:
        self.db.close()

    def reconnect(self) -> None:
        """A new connection in place of one that was lost (PostgreSQL: a server restart)."""
        old, self.db = self.db, open_backend(self.path, busy_timeout=self.busy_timeout)
        with contextlib.suppress(Exception):
            old.close()

    def begin_tournament(
        self, name: str, config: dict[str, object], secret: bytes | None = None
    ) -> bytes | None:
        """Record the tournament (kept as it was if it is being resumed) and return its stored
        secret: the one recorded when it began, else `secret` (None: the key is in a file)."""
        with self.db.transaction():
            self.db.execute(
                "INSERT OR IGNORE INTO tournaments(name, config, started_at, secret) "
                "VALUES (?, ?, ?, ?)",
                (name, json.dumps(config, sort_keys=True, default=str), time.time(), secret),
            )
            if secret is not None:  # begun before secrets were stored: it gets one now
                self.db.execute(
                    "UPDATE tournaments SET secret = ? WHERE name = ? AND secret IS NULL",
                    (secret, name),
                )
            row = self.db.execute(
                "SELECT secret FROM tournaments WHERE name = ?", (name,)
            ).fetchone()
        stored = row[0] if row else None
        return bytes(stored) if stored is not None else None

    def tournament_config(self, name: str) -> dict[str, Any] | None:
        """The config recorded when `name` began (None: no such tournament)."""
        row = self.db.execute(
            "SELECT config FROM tournaments WHERE name = ?", (name,)
        ).fetchone()
        if row is None or not row[0]:
            return None
        loaded = json.loads(row[0])
        return loaded if isinstance(loaded, dict) else None

    def describe_tournament(self, name: str, config: dict[str, object]) -> None:
        """Replace the recorded description of a tournament resumed with more matches than it
        was begun with (`matches_per_pair` raised): its size for the web's progress; it is not
        finished until they are played."""
        with self.db.transaction():
            self.db.execute(
                "UPDATE tournaments SET config = ?, finished_at = NULL WHERE name = ?",
                (json.dumps(config, sort_keys=True, default=str), name),
            )

    def forget_tournament(self, name: str) -> None:
        """Delete a tournament and its matches (to play it again from scratch)."""
        with self.db.transaction():
            self.db.execute("DELETE FROM matches WHERE tournament = ?", (name,))
            self.db.execute("DELETE FROM tournaments WHERE name = ?", (name,))

    def finish_tournament(self, name: str) -> None:
        with self.db.transaction():
            self.db.execute(
                "UPDATE tournaments SET finished_at = ? WHERE name = ?", (time.time(), name)
            )

    def add_bot(self, name: str, kind: str, command: str = "") -> None:
        with self.db.transaction():
            self.db.execute(
                "INSERT INTO bots(name, kind, command) VALUES (?, ?, ?) "
                "ON CONFLICT(name) DO UPDATE SET kind = excluded.kind, command = excluded.command",
                (name, kind, command),
            )

    def tournaments(self) -> list[str]:
        """The names of the tournaments with at least one stored match, sorted."""
        rows = self.db.execute("SELECT DISTINCT tournament FROM matches ORDER BY tournament")
        return [r[0] for r in rows]

    def finished_ids(self, tournament: str) -> set[str]:
        """Ids of the matches of `tournament` already stored."""
        rows = self.db.execute("SELECT id FROM matches WHERE tournament = ?", (tournament,))
        return {row[0] for row in rows}

    @staticmethod
    def _stored_path(replay: Path | None) -> str | None:
        """A replay's path as stored: absolute, never relative to the folder the referee
        happened to run in (`arena web` and `arena report` run elsewhere found no replay: a
        hostile review, round 4)."""
        return None if replay is None else os.path.abspath(replay)

    def save_match(
        self,
        tournament: str,
        report: MatchReport,
        *,
        options: dict[str, object],
        team_bots: tuple[str, str],
        replay: Path | None,
        accounts: tuple[int, ...] | None = None,
    ) -> None:
        """Commit one finished match (idempotent: storing it twice keeps one row).

        `accounts` maps seats to scoring accounts (default seat % 2); the row's winner,
        points and games are per bot of the pairing (see `bot_results`); each seat's latency
        histogram and faults are kept with it."""
        o = report.outcome
        names = report.seat_names
        accounts = accounts or tuple(seat % 2 for seat in range(len(names)))
        winner, points, games = bot_results(report, team_bots, accounts)
        faulty_bot = names[o.faulty_seat] if o.faulty_seat is not None else None
        latency = json.dumps([lat.to_json(h) for h in seat_latency(report)])
        with self.db.transaction():
            self.db.execute(
                """INSERT OR IGNORE INTO matches(id, tournament, variant, options, seed, bot0,
                bot1, termination, winner_bot, faulty_seat, faulty_bot, detail, points0,
                points1, games0, games1, strikes, decisions, replay, started_at, finished_at,
                seat_bots, latency, faults)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                (
                    report.match_id, tournament, report.variant,
                    json.dumps(options, sort_keys=True), report.seed,
                    team_bots[0], team_bots[1], o.termination.name.lower(), winner,
                    o.faulty_seat, faulty_bot, o.detail, points[0], points[1],
                    games[0], games[1], json.dumps(list(o.strikes)),
                    len(report.decisions), self._stored_path(replay),
                    report.started_at, report.finished_at, json.dumps(list(names)),
                    latency, json.dumps(seat_faults(report), sort_keys=True),
                ),
            )

    def matches(self, tournament: str | None = None) -> list[MatchRow]:
        """Every stored match of `tournament` (None: of every tournament), in id order."""
        query = f"SELECT {ROW_COLUMNS} FROM matches"
        if tournament is None:
            rows = self.db.execute(query + " ORDER BY id")
        else:
            rows = self.db.execute(query + " WHERE tournament = ? ORDER BY id", (tournament,))
        return [row_from(r) for r in rows]
