"""The versioned schema (arena.tournament.store MIGRATIONS, ladder_book MIGRATIONS): a database
written before versions were kept migrates keeping every row and the same standings; each
migration runs once, in a transaction; a database from a newer arena is refused untouched.

tests/fixtures/arena-before-versions.db was written by the code of `main` before this change
(a real `arena tournament`, random vs heuristic, mineiro-1v1 and argentine-gallo, 2 matches
per pair; then a ladder `lad` with one entry and one scheduled pair, through main's
LadderBook): `PRAGMA user_version` 0, column `winner_team`.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from contextlib import closing
from dataclasses import astuple
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs
from test_e2e_support import arena, explain
from web_support import get_json, web_server

from arena.tournament import store as store_module
from arena.tournament.backend import Migration, SchemaTooNewError
from arena.tournament.ladder_book import MIGRATIONS as LADDER_MIGRATIONS
from arena.tournament.ladder_book import LadderBook
from arena.tournament.standings import standings
from arena.tournament.store import SCHEMA_VERSION, MatchRow, Store
from arena.web.data import Database, DatabaseError

FIXTURE = Path(__file__).parent / "fixtures" / "arena-before-versions.db"
NAME = "oldcup"


def _copy(tmp_path: Path) -> Path:
    database = tmp_path / "arena.db"
    shutil.copy(FIXTURE, database)
    return database


def _raw(database: Path, query: str) -> list[dict[str, Any]]:
    with closing(sqlite3.connect(database)) as db:
        db.row_factory = sqlite3.Row
        return [dict(r) for r in db.execute(query)]


def _user_version(database: Path) -> int:
    with closing(sqlite3.connect(database)) as db:
        return int(db.execute("PRAGMA user_version").fetchone()[0])


def _old_standings(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """The standings main printed, from the old rows (its column `winner_team`)."""
    match_rows = [
        MatchRow(r["id"], r["variant"], r["bot0"], r["bot1"], r["termination"],
                 r["winner_team"], r["faulty_bot"], r["points0"], r["points1"],
                 tuple(json.loads(r["strikes"])), tuple(json.loads(r["seat_bots"])),
                 r["tournament"])
        for r in rows
    ]
    return [astuple(line) for line in standings(match_rows)]


def test_a_database_written_by_main_migrates_keeping_every_row_and_the_standings(
    tmp_path: Path,
) -> None:
    """Opening main's database: user_version goes 0 -> SCHEMA_VERSION, `winner_team` is now
    `winner_bot` with the same values, every other column of every row (matches,
    tournaments with their secret, bots) is as it was, the new per-seat columns are empty
    lists, the standings are the same, and the ladder's tables got their own version with
    their rows kept."""
    database = _copy(tmp_path)
    before = _raw(database, "SELECT * FROM matches ORDER BY id")
    tournaments = _raw(database, "SELECT * FROM tournaments ORDER BY name")
    bots = _raw(database, "SELECT * FROM bots ORDER BY name")
    assert len(before) == 4
    assert _user_version(database) == 0
    old_standings = _old_standings(before)

    with capture_logs() as logs:
        store = Store(database)
    try:
        rows = store.matches()
    finally:
        store.close()
    migrated = [e for e in logs if e["event"] == "schema_migrated"]
    assert [e["version"] for e in migrated] == list(range(2, SCHEMA_VERSION + 1)), migrated

    assert _user_version(database) == SCHEMA_VERSION
    after = _raw(database, "SELECT * FROM matches ORDER BY id")
    assert len(after) == len(before)
    for old, new in zip(before, after, strict=True):
        assert "winner_team" not in new
        assert new.pop("winner_bot") == old.pop("winner_team")
        assert (new.pop("latency"), new.pop("faults")) == ("[]", "[]")
        assert new == old
    assert _raw(database, "SELECT * FROM tournaments ORDER BY name") == tournaments
    assert tournaments[0]["secret"] is not None
    assert _raw(database, "SELECT * FROM bots ORDER BY name") == bots
    assert [astuple(line) for line in standings(rows)] == old_standings

    book = LadderBook(database)
    try:
        [entry] = book.entries("lad")
        assert entry.bot.identity == "x@1"
        # columns added later (protocol, dir, env): a gRPC bot in its program's folder
        assert (entry.bot.protocol, entry.bot.dir, entry.bot.env) == ("grpc", None, ())
        assert book.next_pair("lad") == 2
        assert book.settings("lad") == {"inherit": True, "k": 3, "min_games": 2,
                                        "variants": ["mineiro-1v1"]}
    finally:
        book.close()
    assert _raw(database, "SELECT * FROM schema_version") == [
        {"component": "ladder", "version": len(LADDER_MIGRATIONS)}]


def test_the_cli_standings_of_main_s_database_are_those_main_printed(tmp_path: Path) -> None:
    """`arena standings --format json` on a copy of main's database (migrated by the command
    itself) gives every bot the won / lost / points that the old rows give."""
    database = _copy(tmp_path)
    before = _raw(database, "SELECT * FROM matches ORDER BY id")
    run = arena("standings", NAME, "--database", database, "--format", "json", cwd=tmp_path)
    assert run.returncode == 0, explain(run)
    overall = json.loads(run.stdout)[f"{NAME}: overall"]["standings"]
    expected = {line[0]: line[1:6] for line in _old_standings(before)}
    got = {r["bot"]: (r["played"], r["won"], r["lost"], r["points_for"], r["points_against"])
           for r in overall}
    assert got == expected
    assert _user_version(database) == SCHEMA_VERSION


def test_arena_web_on_main_s_database_serves_its_standings(tmp_path: Path) -> None:
    """`arena web` on main's database migrates it at start and serves the tournament: a
    plain HTTP client reads the same wins per bot as the old rows give."""
    database = _copy(tmp_path)
    before = _raw(database, "SELECT * FROM matches ORDER BY id")
    with web_server(database) as url:
        status, data = get_json(f"{url}/api/t/{NAME}")
    assert status == 200, data
    expected = {line[0]: (line[1], line[2]) for line in _old_standings(before)}
    assert {ln["bot"]: (ln["matches"], ln["wins"]) for ln in data["standings"]["overall"]} \
        == expected


def test_a_database_from_before_gallo_and_secrets_gets_both_columns(tmp_path: Path) -> None:
    """A database of the first release (no `seat_bots`, no `secret`, version 0) gets both
    columns by migrations 2 and 3, then the rename; its match row is kept."""
    database = tmp_path / "first.db"
    with closing(sqlite3.connect(database)) as db, db:
        db.executescript(store_module.SCHEMA_V1)
        db.execute("INSERT INTO tournaments(name, config, started_at) VALUES ('t', '{}', 1)")
        db.execute(
            "INSERT INTO matches(id, tournament, variant, options, seed, bot0, bot1, "
            "termination, winner_team, points0, points1, games0, games1, strikes, decisions, "
            "started_at, finished_at) VALUES ('t:1', 't', 'mineiro-1v1', '{}', 5, 'a', 'b', "
            "'normal', 1, 3, 12, 0, 1, '[0, 1]', 30, 1, 2)")
    store = Store(database)
    try:
        (row,) = store.matches("t")
        assert (row.winner_bot, row.seat_bots, row.strikes) == (1, (), (0, 1))
        assert store.begin_tournament("t", {}, b"key") == b"key"
    finally:
        store.close()
    (line_a, line_b) = sorted(standings([row]), key=lambda x: x.bot)
    assert (line_a.losses, line_b.wins, line_b.faults) == (1, 1, 1)
    assert _user_version(database) == SCHEMA_VERSION


def test_each_migration_runs_once_and_a_failing_one_leaves_nothing_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A second open applies no migration. A migration that fails halfway (a column added,
    then an error) is rolled back whole: the column is not there, the version is unchanged,
    and the next open (with the step fixed) applies it once."""
    database = tmp_path / "arena.db"
    Store(database).close()
    with capture_logs() as logs:
        Store(database).close()
    assert [e for e in logs if e["event"] == "schema_migrated"] == []

    def half(db: Any) -> None:
        db.execute("ALTER TABLE matches ADD COLUMN extra TEXT")
        raise RuntimeError("step failed")

    broken = (*store_module.MIGRATIONS, Migration("extra", half))
    monkeypatch.setattr(store_module, "MIGRATIONS", broken)
    monkeypatch.setattr(store_module, "SCHEMA_VERSION", len(broken))
    with pytest.raises(RuntimeError, match="step failed"):
        Store(database)
    assert _user_version(database) == SCHEMA_VERSION
    assert "extra" not in {r["name"] for r in _raw(database, "PRAGMA table_info(matches)")}

    fixed = (*store_module.MIGRATIONS[:-1], Migration(
        "extra", lambda db: db.execute("ALTER TABLE matches ADD COLUMN extra TEXT")))
    monkeypatch.setattr(store_module, "MIGRATIONS", fixed)
    with capture_logs() as logs:
        Store(database).close()
    assert [e["version"] for e in logs if e["event"] == "schema_migrated"] == [len(fixed)]
    assert _user_version(database) == len(fixed)


def test_a_database_from_a_newer_arena_is_refused_and_left_untouched(tmp_path: Path) -> None:
    """A database whose user_version is past what this code knows: `Store` raises
    SchemaTooNewError, `arena standings` and `arena web` exit 2 with one error line naming
    the versions, the web reader refuses it, and the file's bytes are unchanged."""
    database = _copy(tmp_path)
    Store(database).close()
    with closing(sqlite3.connect(database)) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    digest = hashlib.sha256(database.read_bytes()).hexdigest()

    with pytest.raises(SchemaTooNewError, match=f"version {SCHEMA_VERSION + 1}, newer"):
        Store(database)
    with pytest.raises(DatabaseError, match="schema version"):
        Database(database).tournaments()
    for command in (("standings", NAME), ("web", "--listen", "127.0.0.1:0"), ("ladder",)):
        run = arena(*command, "--database", database, cwd=tmp_path)
        assert run.returncode == 2, explain(run)
        lines = run.stderr.strip().splitlines()
        assert len(lines) == 1, explain(run)
        assert f"schema version {SCHEMA_VERSION + 1}, newer than this truco-arena knows " \
               f"({SCHEMA_VERSION})" in lines[0], explain(run)
    assert hashlib.sha256(database.read_bytes()).hexdigest() == digest
    assert _user_version(database) == SCHEMA_VERSION + 1


def test_migrating_twice_at_once_applies_each_step_once(tmp_path: Path) -> None:
    """Two stores opening main's database at the same moment (two threads): both succeed,
    and the version and rows end as after one migration."""
    import threading

    database = _copy(tmp_path)
    start = threading.Barrier(2)
    errors: list[BaseException] = []

    def one() -> None:
        start.wait()
        try:
            Store(database).close()
        except BaseException as exc:  # collected for the assertion
            errors.append(exc)

    threads = [threading.Thread(target=one) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert _user_version(database) == SCHEMA_VERSION
    assert len(_raw(database, "SELECT id FROM matches")) == 4
