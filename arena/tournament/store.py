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

SCHEMA = """
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
    bot0         TEXT NOT NULL,     -- the bot on team 0
    bot1         TEXT NOT NULL,     -- the bot on team 1
    termination  TEXT NOT NULL,     -- normal, timeout, illegal_action, disconnect, forfeit
    winner_team  INTEGER,
    faulty_seat  INTEGER,
    faulty_bot   TEXT,
    detail       TEXT NOT NULL DEFAULT '',
    points0      INTEGER NOT NULL,
    points1      INTEGER NOT NULL,
    games0       INTEGER NOT NULL,
    games1       INTEGER NOT NULL,
    strikes      TEXT NOT NULL,     -- JSON list per seat
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


class Store:
    """The results database."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.db = sqlite3.connect(path)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA foreign_keys=ON")
        self.db.executescript(SCHEMA)

    def close(self) -> None:
        self.db.close()

    def begin_tournament(self, name: str, config: dict[str, object]) -> None:
        """Record the tournament (kept as it was if it is being resumed)."""
        with self.db:
            self.db.execute(
                "INSERT OR IGNORE INTO tournaments(name, config, started_at) VALUES (?, ?, ?)",
                (name, json.dumps(config, sort_keys=True, default=str), time.time()),
            )

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
    ) -> None:
        """Commit one finished match (idempotent: storing it twice keeps one row)."""
        o = report.outcome
        faulty_bot = report.seat_names[o.faulty_seat] if o.faulty_seat is not None else None
        with self.db:
            self.db.execute(
                """INSERT OR IGNORE INTO matches(id, tournament, variant, options, seed, bot0,
                bot1, termination, winner_team, faulty_seat, faulty_bot, detail, points0,
                points1, games0, games1, strikes, decisions, replay, started_at, finished_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                (
                    report.match_id, tournament, report.variant,
                    json.dumps(options, sort_keys=True), report.seed,
                    team_bots[0], team_bots[1], o.termination.name.lower(), o.winner_team,
                    o.faulty_seat, faulty_bot, o.detail, o.points[0], o.points[1],
                    o.games_won[0], o.games_won[1], json.dumps(list(o.strikes)),
                    len(report.decisions), str(replay) if replay else None,
                    report.started_at, report.finished_at,
                ),
            )

    def matches(self, tournament: str) -> list[MatchRow]:
        """Every stored match of `tournament`, in id order."""
        rows = self.db.execute(
            """SELECT id, variant, bot0, bot1, termination, winner_team, faulty_bot, points0,
            points1, strikes FROM matches WHERE tournament = ? ORDER BY id""",
            (tournament,),
        )
        return [
            MatchRow(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8],
                     tuple(json.loads(r[9])))
            for r in rows
        ]
