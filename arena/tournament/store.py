"""Results in an embedded SQLite database: bots, tournaments, matches and their outcomes.

Every finished match is committed as it ends (one transaction), so a killed tournament loses
nothing that finished. Match ids are deterministic (tournament, variant, bots, index), which is
what lets a tournament resume.
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from arena.referee import MatchReport

BUSY_TIMEOUT_S = 30.0
"""How long an operation waits for another process's lock on the database."""

SCHEMA = """
CREATE TABLE IF NOT EXISTS tournaments (
    name        TEXT PRIMARY KEY,
    config      TEXT NOT NULL,
    started_at  REAL NOT NULL,
    finished_at REAL,
    secret      BLOB              -- the deals' key (NULL: kept in a key file)
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
    winner_team  INTEGER,           -- 0: bot0 won, 1: bot1 won, NULL: nobody
    faulty_seat  INTEGER,
    faulty_bot   TEXT,
    detail       TEXT NOT NULL DEFAULT '',
    points0      INTEGER NOT NULL,  -- bot0's points (its best seat's, in rotating gallo)
    points1      INTEGER NOT NULL,
    games0       INTEGER NOT NULL,  -- chicos / games won by bot0
    games1       INTEGER NOT NULL,
    strikes      TEXT NOT NULL,     -- JSON list per seat
    seat_bots    TEXT NOT NULL DEFAULT '[]',  -- JSON list: the bot in each seat
    decisions    INTEGER NOT NULL,
    replay       TEXT,
    started_at   REAL NOT NULL,
    finished_at  REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS matches_by_tournament ON matches(tournament);
"""


@dataclass(frozen=True, slots=True)
class MatchRow:
    """One stored match, as the standings read it."""

    id: str
    variant: str
    bot0: str
    bot1: str
    termination: str
    winner_team: int | None
    faulty_bot: str | None
    points0: int
    points1: int
    strikes: tuple[int, ...]
    seat_bots: tuple[str, ...] = ()
    tournament: str = ""


def bot_results(
    report: MatchReport, bots: tuple[str, str], accounts: tuple[int, ...]
) -> tuple[int | None, tuple[int, int], tuple[int, int]]:
    """Which of the pairing's two bots won (0, 1 or None), and each bot's points and games.

    A bot's points and games are those of its best account (one account per team in team
    games; in rotating gallo a bot holding two seats is credited with its better player)."""
    o = report.outcome
    names = report.seat_names
    mine = [
        {accounts[seat] for seat, name in enumerate(names) if name == bot} for bot in bots
    ]

    def best(values: tuple[int, ...], index: int) -> int:
        return max((values[a] for a in mine[index] if a < len(values)), default=0)

    points = (best(o.points, 0), best(o.points, 1))
    games = (best(o.games_won, 0), best(o.games_won, 1))
    winner: int | None = None
    if o.winner_team is not None:
        winner = next((i for i in (0, 1) if o.winner_team in mine[i]), None)
    elif o.faulty_seat is not None:
        faulty = names[o.faulty_seat]
        winner = 1 if faulty == bots[0] else 0 if faulty == bots[1] else None
    return winner, points, games


class Store:
    """The results database."""

    def __init__(self, path: Path, busy_timeout: float = BUSY_TIMEOUT_S) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.busy_timeout = busy_timeout
        # Several processes may share one database (two `arena match` runs, a tournament and
        # `arena standings`): wait for a lock rather than fail at once. The tournament's
        # storage worker uses the connection from one worker thread at a time.
        self.db = sqlite3.connect(path, timeout=busy_timeout, check_same_thread=False)
        self._switch_to_wal()
        self.db.execute("PRAGMA foreign_keys=ON")
        self.db.executescript(SCHEMA)
        columns = {row[1] for row in self.db.execute("PRAGMA table_info(matches)")}
        if "seat_bots" not in columns:  # a database from before gallo
            with self.db:
                self.db.execute(
                    "ALTER TABLE matches ADD COLUMN seat_bots TEXT NOT NULL DEFAULT '[]'"
                )
        columns = {row[1] for row in self.db.execute("PRAGMA table_info(tournaments)")}
        if "secret" not in columns:  # a database from before secret deals
            with self.db:
                self.db.execute("ALTER TABLE tournaments ADD COLUMN secret BLOB")

    def _switch_to_wal(self) -> None:
        """WAL mode (readers never block the writer). Switching a new database's journal
        mode does not wait on SQLite's busy timeout when another connection is switching it
        at the same moment, so that one step is retried here."""
        deadline = time.monotonic() + self.busy_timeout
        while True:
            try:
                self.db.execute("PRAGMA journal_mode=WAL")
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.01)

    def close(self) -> None:
        self.db.close()

    def begin_tournament(
        self, name: str, config: dict[str, object], secret: bytes | None = None
    ) -> bytes | None:
        """Record the tournament (kept as it was if it is being resumed) and return its stored
        secret: the one recorded when it began, else `secret` (None: the key is in a file)."""
        with self.db:
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

    def forget_tournament(self, name: str) -> None:
        """Delete a tournament and its matches (to play it again from scratch)."""
        with self.db:
            self.db.execute("DELETE FROM matches WHERE tournament = ?", (name,))
            self.db.execute("DELETE FROM tournaments WHERE name = ?", (name,))

    def finish_tournament(self, name: str) -> None:
        with self.db:
            self.db.execute(
                "UPDATE tournaments SET finished_at = ? WHERE name = ?", (time.time(), name)
            )

    def add_bot(self, name: str, kind: str, command: str = "") -> None:
        with self.db:
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
        points and games are per bot of the pairing (see `bot_results`)."""
        o = report.outcome
        names = report.seat_names
        accounts = accounts or tuple(seat % 2 for seat in range(len(names)))
        winner, points, games = bot_results(report, team_bots, accounts)
        faulty_bot = names[o.faulty_seat] if o.faulty_seat is not None else None
        with self.db:
            self.db.execute(
                """INSERT OR IGNORE INTO matches(id, tournament, variant, options, seed, bot0,
                bot1, termination, winner_team, faulty_seat, faulty_bot, detail, points0,
                points1, games0, games1, strikes, decisions, replay, started_at, finished_at,
                seat_bots)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                (
                    report.match_id, tournament, report.variant,
                    json.dumps(options, sort_keys=True), report.seed,
                    team_bots[0], team_bots[1], o.termination.name.lower(), winner,
                    o.faulty_seat, faulty_bot, o.detail, points[0], points[1],
                    games[0], games[1], json.dumps(list(o.strikes)),
                    len(report.decisions), str(replay) if replay else None,
                    report.started_at, report.finished_at, json.dumps(list(names)),
                ),
            )

    def matches(self, tournament: str | None = None) -> list[MatchRow]:
        """Every stored match of `tournament` (None: of every tournament), in id order."""
        query = """SELECT id, variant, bot0, bot1, termination, winner_team, faulty_bot,
            points0, points1, strikes, seat_bots, tournament FROM matches"""
        if tournament is None:
            rows = self.db.execute(query + " ORDER BY id")
        else:
            rows = self.db.execute(query + " WHERE tournament = ? ORDER BY id", (tournament,))
        return [
            MatchRow(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8],
                     tuple(json.loads(r[9])), tuple(json.loads(r[10])), r[11])
            for r in rows
        ]
