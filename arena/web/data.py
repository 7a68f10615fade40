"""The web's read-only view of the results database.

Its own SQLite connection per call, opened read-only (`file:...?mode=ro`), so it never takes a
write lock and works beside a tournament writing in another process (the database is in WAL
mode: readers never block the writer). Standings and crosstables come from
`arena.tournament.standings`, as in `arena standings`.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import quote

from arena.errors import ArenaError
from arena.replay import load_replay
from arena.tournament.standings import Cell, Line, crosstable, standings
from arena.tournament.store import MatchRow

TERMINATIONS = ("normal", "timeout", "illegal_action", "disconnect", "forfeit")


class DatabaseError(ArenaError):
    """The database cannot be read."""


@dataclass(frozen=True, slots=True)
class Tournament:
    name: str
    started_at: float
    finished_at: float | None
    variants: tuple[str, ...]
    games: int
    bots: tuple[str, ...]  # as configured (empty for a database written before the field)
    matches: int  # stored so far
    planned: int | None = None  # matches in all, as the runner recorded it


@dataclass(frozen=True, slots=True)
class Progress:
    done: int
    total: int | None  # None: not known yet
    eta_s: float | None
    finished: bool


@dataclass(frozen=True, slots=True)
class Table:
    """One standings table (a variant, or overall) with its crosstable."""

    title: str
    lines: list[Line]
    cross: dict[str, dict[str, Cell]]


class Database:
    """Read-only access to a results database file."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        if not self.path.is_file():
            raise DatabaseError(f"database: {self.path} does not exist")
        uri = f"file:{quote(str(self.path.resolve()))}?mode=ro"
        try:
            db = sqlite3.connect(uri, uri=True, timeout=10)
        except sqlite3.Error as exc:
            raise DatabaseError(f"database: cannot open {self.path}: {exc}") from None
        try:
            yield db
        except sqlite3.Error as exc:
            raise DatabaseError(f"database: cannot read {self.path}: {exc}") from None
        finally:
            db.close()

    def tournaments(self) -> list[Tournament]:
        with self._connect() as db:
            counts = dict(db.execute(
                "SELECT tournament, COUNT(*) FROM matches GROUP BY tournament").fetchall())
            rows = db.execute(
                "SELECT name, config, started_at, finished_at FROM tournaments "
                "ORDER BY started_at DESC").fetchall()
        out = []
        for name, config, started, finished in rows:
            cfg: dict[str, Any] = json.loads(config or "{}")
            out.append(Tournament(
                name, started, finished, tuple(cfg.get("variants", ())),
                int(cfg.get("games", 1)), tuple(cfg.get("bots", ())), counts.get(name, 0),
                cfg.get("matches")))
        return out

    def tournament(self, name: str) -> Tournament | None:
        return next((t for t in self.tournaments() if t.name == name), None)

    def rows(self, tournament: str | None = None) -> list[MatchRow]:
        query = """SELECT id, variant, bot0, bot1, termination, winner_team, faulty_bot,
            points0, points1, strikes, seat_bots, tournament FROM matches"""
        with self._connect() as db:
            if tournament is None:
                rows = db.execute(query + " ORDER BY id").fetchall()
            else:
                rows = db.execute(query + " WHERE tournament = ? ORDER BY id",
                                  (tournament,)).fetchall()
        return [
            MatchRow(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8],
                     tuple(json.loads(r[9])), tuple(json.loads(r[10] or "[]")), r[11])
            for r in rows
        ]

    def matches(
        self, tournament: str | None = None, *, bot: str | None = None,
        variant: str | None = None, termination: str | None = None, limit: int = 500,
    ) -> list[dict[str, Any]]:
        """Stored matches, newest first, filtered; each a dict of the row's columns."""
        where, args = [], []
        for column, value in (("tournament", tournament), ("variant", variant),
                              ("termination", termination)):
            if value:
                where.append(f"{column} = ?")
                args.append(value)
        if bot:
            where.append("(bot0 = ? OR bot1 = ?)")
            args += [bot, bot]
        sql = ("SELECT * FROM matches" + (" WHERE " + " AND ".join(where) if where else "")
               + " ORDER BY finished_at DESC, id LIMIT ?")
        with self._connect() as db:
            db.row_factory = sqlite3.Row
            return [dict(r) for r in db.execute(sql, (*args, limit)).fetchall()]

    def match(self, match_id: str) -> dict[str, Any] | None:
        with self._connect() as db:
            db.row_factory = sqlite3.Row
            row = db.execute("SELECT * FROM matches WHERE id = ?", (match_id,)).fetchone()
        return None if row is None else dict(row)

    def replay_path(self, row: dict[str, Any]) -> Path | None:
        """The match's replay file: as stored, or relative to the database's folder."""
        if not row.get("replay"):
            return None
        path = Path(row["replay"])
        if not path.is_absolute() and not path.exists():
            path = self.path.parent / path
        return path

    def tables(self, tournament: str | None) -> list[Table]:
        """Standings per variant played, then overall (the ladder when `tournament` is None)."""
        rows = self.rows(tournament)
        variants = sorted({r.variant for r in rows})
        out = [Table(v, standings(rows, v), crosstable(rows, v)) for v in variants]
        out.append(Table("overall", standings(rows), crosstable(rows)))
        return out

    def progress(self, t: Tournament, now: float | None = None) -> Progress:
        """How many matches are stored, of how many, and when the rest should be done (from
        the pace so far). The total is what the runner recorded when the tournament began;
        for an older database, a round robin of its bots: every pair, variant, `games` times."""
        total: int | None = t.planned
        if total is None:  # an older database: a round robin of the bots (seen so far)
            bots = len(t.bots) or len({b for r in self.rows(t.name) for b in (r.bot0, r.bot1)})
            total = len(t.variants) * bots * (bots - 1) // 2 * t.games if t.variants else None
        done = t.matches
        finished = t.finished_at is not None
        eta = None
        if total and 0 < done < total and not finished:
            elapsed = (now if now is not None else time.time()) - t.started_at
            eta = max(0.0, elapsed / done * (total - done))
        return Progress(done, total, eta, finished)


@dataclass(frozen=True, slots=True)
class BotStats:
    """One bot's decisions over the replays read: how many, and their latency."""

    bot: str
    decisions: int
    p50_ms: float
    p99_ms: float
    faults: int


def _percentile(sorted_values: list[float], q: float) -> float:
    if not sorted_values:
        return 0.0
    rank = q * (len(sorted_values) - 1)
    lo = int(rank)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (rank - lo)


@lru_cache(maxsize=4096)
def _seat_latencies(path: str, mtime: float) -> tuple[tuple[str, float, bool], ...]:
    replay = load_replay(Path(path))
    bots = {s["seat"]: s["bot"] for s in replay.header.get("seats", ())}
    return tuple(
        (bots.get(line["seat"], "?"), float(line.get("latency_ms") or 0.0), bool(line.get("fault")))
        for line in replay.lines if line.get("type") == "action"
    )


def bot_stats(db: Database, tournament: str | None) -> list[BotStats]:
    """Per bot: decisions, decision latency p50 / p99 and faulty decisions, from the replays
    (a missing or unreadable replay is skipped)."""
    samples: dict[str, list[float]] = {}
    faults: dict[str, int] = {}
    for row in db.matches(tournament, limit=1_000_000):
        path = db.replay_path(row)
        try:
            if path is None:
                continue
            lines = _seat_latencies(str(path), path.stat().st_mtime)
        except (OSError, ArenaError):
            continue
        for bot, latency, fault in lines:
            samples.setdefault(bot, []).append(latency)
            faults[bot] = faults.get(bot, 0) + fault
    out = []
    for bot in sorted(samples):
        values = sorted(samples[bot])
        out.append(BotStats(bot, len(values), _percentile(values, 0.5),
                            _percentile(values, 0.99), faults.get(bot, 0)))
    return out
