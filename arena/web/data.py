"""The web's read-only view of the results database.

Its own connection per call, opened read-only (SQLite: `file:...?mode=ro`; PostgreSQL: a
read-only session), so it never takes a write lock and works beside a tournament writing in
another process (SQLite is in WAL mode: readers never block the writer). The SQL goes through
`arena.tournament.backend`, so the same queries read either. Standings, crosstables and the
bots' latency come from `arena.tournament.standings`, as in `arena standings`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.tournament import backend
from arena.tournament.backend import Backend, Target
from arena.tournament.ladder_ratings import ladder_tables, predecessors_of
from arena.tournament.standings import Cell, Line, crosstable, standings, variant_order
from arena.tournament.store import ROW_COLUMNS, SCHEMA_VERSION, MatchRow, row_from

TERMINATIONS = ("normal", "timeout", "illegal_action", "disconnect", "forfeit")


DatabaseError = backend.DatabaseError
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
    ladder: bool = False  # a ladder's games (never finished: its replays are shown at once)


@dataclass(frozen=True, slots=True)
class Progress:
    done: int
    total: int | None  # None: not known yet, or a ladder (no total)
    eta_s: float | None
    finished: bool
    ladder: bool = False  # a ladder service's matches: continuous, no total nor ETA


@dataclass(frozen=True, slots=True)
class Table:
    """One standings table (a variant, or overall) with its crosstable."""

    title: str
    lines: list[Line]
    cross: dict[str, dict[str, Cell]]


@dataclass(frozen=True)
class LadderRatings:
    """A ladder service's OpenSkill tables, by title (variants, then overall)."""

    k: float
    min_games: int
    tables: dict[str, list[dict[str, Any]]]


class Database:
    """Read-only access to a results database (an SQLite file or a PostgreSQL URL)."""

    def __init__(self, target: Target) -> None:
        self.target = target
        self.path = Path("." if backend.is_url(target) else target)  # replays are beside it

    @contextmanager
    def _connect(self) -> Iterator[Backend]:
        where = backend.describe(self.target)
        if not backend.is_url(self.target) and not self.path.is_file():
            raise DatabaseError(f"database: {where} does not exist")
        try:
            db = backend.open_backend(self.target, busy_timeout=10, read_only=True)
        except backend.driver_errors() as exc:  # read as raised: psycopg's once imported
            raise DatabaseError(f"database: cannot open {where}: {exc}") from None
        try:
            version = backend.check_version(db, "store", SCHEMA_VERSION)  # newer: refused
            if version < SCHEMA_VERSION:
                raise DatabaseError(
                    f"database: {where} has schema version {version}, this arena reads "
                    f"{SCHEMA_VERSION}: open it once with a writing command (`arena standings`, "
                    "`arena web` migrates it at start)")
            yield db
        except backend.driver_errors() as exc:  # read as raised: psycopg's once imported
            raise DatabaseError(f"database: cannot read {where}: {' '.join(str(exc).split())}"
                                ) from None
        finally:
            db.close()

    def tournaments(self) -> list[Tournament]:
        with self._connect() as db:
            counts = {t: int(n) for t, n in db.execute(
                "SELECT tournament, COUNT(*) FROM matches GROUP BY tournament").fetchall()}
            rows = db.execute(
                "SELECT name, config, started_at, finished_at FROM tournaments "
                "ORDER BY started_at DESC").fetchall()
        out = []
        for name, config, started, finished in rows:
            cfg: dict[str, Any] = json.loads(config or "{}")
            out.append(Tournament(
                name, started, finished, tuple(cfg.get("variants", ())),
                int(cfg.get("games", 1)), tuple(cfg.get("bots", ())), counts.get(name, 0),
                cfg.get("matches"), bool(cfg.get("ladder"))))
        return out

    def tournament(self, name: str) -> Tournament | None:
        return next((t for t in self.tournaments() if t.name == name), None)

    def rows(self, tournament: str | None = None) -> list[MatchRow]:
        query = f"SELECT {ROW_COLUMNS} FROM matches"
        with self._connect() as db:
            if tournament is None:
                rows = db.execute(query + " ORDER BY id").fetchall()
            else:
                rows = db.execute(query + " WHERE tournament = ? ORDER BY id",
                                  (tournament,)).fetchall()
        return [row_from(r) for r in rows]

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
            return db.dicts(sql, (*args, limit))

    def match(self, match_id: str) -> dict[str, Any] | None:
        with self._connect() as db:
            rows = db.dicts("SELECT * FROM matches WHERE id = ?", (match_id,))
        return rows[0] if rows else None

    def replay_path(self, row: dict[str, Any]) -> Path | None:
        """The match's replay file: as stored if absolute, else relative to the database's
        folder (how it is stored now), else (older rows) to the folder this runs in."""
        if not row.get("replay"):
            return None
        path = Path(row["replay"])
        if path.is_absolute():
            return path
        beside = self.path.parent / path
        return beside if beside.exists() or not path.exists() else path

    def tables(self, tournament: str | None) -> list[Table]:
        """Standings per variant played, then overall (the ladder when `tournament` is None)."""
        rows = self.rows(tournament)
        t = self.tournament(tournament) if tournament is not None else None
        variants = variant_order((r.variant for r in rows), t.variants if t else ())
        out = [Table(v, standings(rows, v), crosstable(rows, v)) for v in variants]
        out.append(Table("overall", standings(rows), crosstable(rows)))
        return out

    def ladder_ratings(self, t: Tournament) -> LadderRatings | None:
        """A ladder service's own ratings (OpenSkill, the tables `arena ladder show` prints);
        None for a tournament, or a database without the ladder's tables."""
        if not t.ladder:
            return None
        with self._connect() as db:
            try:
                found = db.execute("SELECT settings FROM ladders WHERE name = ?",
                                   (t.name,)).fetchone()
                entries = db.execute(
                    "SELECT name, version, retired_at FROM ladder_bots WHERE ladder = ? "
                    "ORDER BY added_at, name, version", (t.name,)).fetchall()
            except backend.driver_errors():  # no ladder tables: an older database
                return None
        if found is None:
            return None
        settings: dict[str, Any] = json.loads(found[0] or "{}")
        idents = [(name, f"{name}@{version}" if version else name, retired)
                  for name, version, retired in entries]
        rows = self.rows(t.name)
        played = variant_order((r.variant for r in rows), settings.get("variants", ()))
        tables = ladder_tables(rows, played, settings,
                               predecessors_of((n, i) for n, i, _ in idents),
                               {i for _, i, retired in idents if retired is not None})
        return LadderRatings(float(settings.get("k", 3.0)), int(settings.get("min_games", 10)),
                             tables)

    def progress(self, t: Tournament, now: float | None = None) -> Progress:
        """How many matches are stored, of how many, and when the rest should be done (from
        the pace so far). The total is what the runner recorded when the tournament began;
        for an older database, a round robin of its bots: every pair, variant, `games` times."""
        if t.ladder:  # a service that pairs as it goes: no total, no end (walkthrough 2
            # saw "254/20 matches, running" for a stopped one)
            return Progress(t.matches, None, None, False, ladder=True)
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
    """One bot's decisions: how many, their latency and the faults among them."""

    bot: str
    decisions: int
    p50_ms: float
    p99_ms: float
    faults: int


def bot_stats(db: Database, tournament: str | None) -> list[BotStats]:
    """Per bot: decisions, decision latency p50 / p99 and faults, from the latency histograms
    and fault counts stored with each match (the numbers `arena standings` prints; a match
    stored before they were kept adds nothing)."""
    out = []
    for line in sorted(standings(db.rows(tournament)), key=lambda x: x.bot):
        if not line.decisions:
            continue
        out.append(BotStats(line.bot, line.decisions, line.p50_ms or 0.0, line.p99_ms or 0.0,
                            sum(line.fault_kinds.values())))
    return out
