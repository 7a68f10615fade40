"""Results in PostgreSQL (`database = "postgresql://..."`): a real server started by the tests
(tests/pg_support.py), the real `arena` CLI and real bot processes.

The same small tournament (first_legal against the sample random bot seeded with
ARENA_BOT_SEED, a fixed deals' key: every run plays the same deals and the same actions) is
played once into SQLite and once into PostgreSQL; everything stored and every standing must
agree. Then: resume, `arena web`, the storage worker riding out a server restart, preflight
errors, and a newer schema refused.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from pg_support import USER, PgServer, start_server, wait_for
from psycopg.rows import dict_row
from test_e2e_support import (
    ARENA,
    SAMPLE_BOTS,
    TEST_BOTS,
    arena,
    bot_cmd,
    explain,
    flat,
    python_bot,
    stored_matches,
    write_config,
)

from arena.tournament.store import SCHEMA_VERSION

pytestmark = pytest.mark.e2e

NAME = "pgcup"
BOTS = {"first": bot_cmd("first_legal"), "random": python_bot(SAMPLE_BOTS / "random_bot.py")}
VARIANTS = ["argentine-1v1", "mineiro-1v1", "argentine-gallo"]
ENV = {"ARENA_BOT_SEED": "13"}
OUTCOME = ("id", "tournament", "variant", "options", "seed", "bot0", "bot1", "termination",
           "winner_bot", "faulty_seat", "faulty_bot", "points0", "points1", "games0", "games1",
           "strikes", "seat_bots", "decisions", "faults")
TIMED = ("latency_p50_ms", "latency_p99_ms")  # measured, so not the same in two runs


@pytest.fixture(scope="module")
def postgres() -> Iterator[PgServer]:
    yield from start_server()


def _config(folder: Path, database: str | None, **kw: Any) -> Path:
    config = write_config(folder, name=kw.pop("name", NAME), bots=kw.pop("bots", BOTS),
                          variants=kw.pop("variants", VARIANTS), games=kw.pop("games", 2),
                          concurrency=2, **kw)
    if database is not None:
        text = config.read_text()
        assert 'database = "arena.db"' in text
        config.write_text(text.replace('database = "arena.db"',
                                       f"database = {json.dumps(database)}"))
    return config


def _pg_rows(url: str) -> list[dict[str, Any]]:
    with psycopg.connect(url, row_factory=dict_row) as conn:
        return list(conn.execute("SELECT * FROM matches ORDER BY id").fetchall())


def _outcomes(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: row[k] for k in OUTCOME} for row in rows]


def _standings(database: str | Path, folder: Path) -> dict[str, Any]:
    run = arena("standings", NAME, "--database", database, "--format", "json", cwd=folder)
    assert run.returncode == 0, explain(run)
    data = json.loads(run.stdout)
    for table in data.values():
        for row in table["standings"]:
            for key in TIMED:
                assert row[key] is None or row[key] >= 0
                row.pop(key)
    return data  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def in_sqlite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("sqlite")
    run = arena("tournament", _config(folder, None), "--no-progress", cwd=folder, env=ENV)
    assert run.returncode == 0, explain(run)
    return folder


@pytest.fixture(scope="module")
def in_postgres(postgres: PgServer, tmp_path_factory: pytest.TempPathFactory,
                ) -> tuple[Path, str]:
    folder = tmp_path_factory.mktemp("postgres")
    url = postgres.new_database()
    run = arena("tournament", _config(folder, url), "--no-progress", cwd=folder, env=ENV)
    assert run.returncode == 0, explain(run)
    assert not (folder / "arena.db").exists()
    return folder, url


def test_a_tournament_in_postgresql_stores_what_sqlite_stores(
    in_sqlite: Path, in_postgres: tuple[Path, str], postgres: PgServer,
) -> None:
    """Same config, seeds and bots: PostgreSQL holds the same match rows as SQLite (ids,
    seeds, winners, points, strikes, seats, faults, decision counts), the same tournament
    secret and schema version, and `arena standings --format json` prints the same standings
    and crosstables from either (latency aside: it is measured), also through the server's
    unix socket."""
    folder, url = in_postgres
    sqlite_rows = stored_matches(in_sqlite / "arena.db")
    pg_rows = _pg_rows(url)
    assert len(pg_rows) == len(sqlite_rows) == 2 * len(VARIANTS)
    assert _outcomes(pg_rows) == _outcomes(sqlite_rows)
    assert all(json.loads(r["latency"]) for r in pg_rows)  # histograms stored per seat
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT version FROM schema_version WHERE component = 'store'"
                            ).fetchone() == (SCHEMA_VERSION,)
        assert conn.execute("SELECT finished_at IS NOT NULL FROM tournaments").fetchone() \
            == (True,)
    reference = _standings(in_sqlite / "arena.db", in_sqlite)
    assert _standings(url, folder) == reference
    name = url.rsplit("/", 1)[1]
    assert _standings(postgres.socket_url(name), folder) == reference


def test_a_tournament_in_postgresql_resumes_without_playing_twice(
    in_postgres: tuple[Path, str],
) -> None:
    """Delete one stored match from PostgreSQL and run the same command again: it resumes,
    plays that one match only, dealt anew (its bots saw its hands: a new seed), and the other
    rows are as before; a third run plays nothing and stores no duplicate."""
    folder, url = in_postgres
    before = _outcomes(_pg_rows(url))
    lost = before[2]["id"]
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DELETE FROM matches WHERE id = %s", (lost,))
    config = folder / f"{NAME}.toml"
    run = arena("tournament", config, "--no-progress", cwd=folder, env=ENV)
    assert run.returncode == 0, explain(run)
    assert f"resuming {NAME}: {len(before) - 1} matches already stored, 1 to play" \
        in flat(run.stderr), explain(run)
    after = _outcomes(_pg_rows(url))
    assert [r["id"] for r in after] == [r["id"] for r in before]
    assert [r for r in after if r["id"] != lost] == [r for r in before if r["id"] != lost]
    assert after[2]["seed"] != before[2]["seed"]
    again = arena("tournament", config, "--no-progress", cwd=folder, env=ENV)
    assert again.returncode == 0, explain(again)
    assert "0 to play" in flat(again.stderr), explain(again)
    assert _outcomes(_pg_rows(url)) == after


def test_arena_web_serves_a_postgresql_database(
    in_postgres: tuple[Path, str],
) -> None:
    """`arena web --database postgresql://...` (a separate process, a plain HTTP client):
    the tournament's JSON gives each bot the matches and wins `arena standings` gives for the
    same database (not SQLite's: the resume test deals one match anew), and the tournament
    page lists the bots with their latency."""
    folder, url = in_postgres
    log = folder / "web.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [str(ARENA), "web", "--database", url, "--listen", "127.0.0.1:0"],
            stdout=out, stderr=subprocess.STDOUT, text=True,
            env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    try:
        found: list[str] = []

        def listening() -> bool:
            if proc.poll() is not None:
                raise AssertionError("arena web exited:\n" + log.read_text())
            found[:] = re.findall(r"arena web: (http://\S+?)/ ", log.read_text())
            return bool(found)

        wait_for(listening, "arena web to listen", timeout=60)
        with urllib.request.urlopen(f"{found[0]}/api/t/{NAME}", timeout=60) as res:
            data = json.loads(res.read())
        with urllib.request.urlopen(f"{found[0]}/t/{NAME}", timeout=60) as res:
            page = res.read().decode()
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert "postgresql://" in log.read_text()
    reference = _standings(url, folder)[f"{NAME}: overall"]["standings"]
    assert {ln["bot"]: (ln["matches"], ln["wins"]) for ln in data["standings"]["overall"]} \
        == {r["bot"]: (r["played"], r["won"]) for r in reference}
    assert data["done"] == 2 * len(VARIANTS)
    assert "latency p50 ms" in page
    for bot in BOTS:
        assert f'data-bot="{bot}"' in page


def test_storing_pauses_while_the_server_is_down_and_resumes_after(
    postgres: PgServer, tmp_path: Path,
) -> None:
    """Stop the PostgreSQL server while a tournament plays (after its first stored match),
    start it again two seconds later: the storage worker reports the pause (the server
    cannot be reached), reconnects, and the tournament ends normally with every match stored
    once."""
    url = postgres.new_database("restart")
    bots = {"ponder": python_bot(TEST_BOTS / "pondering.py", "40"),
            "first": bot_cmd("first_legal")}
    config = _config(tmp_path, url, name="restart", bots=bots, variants=["mineiro-1v1"],
                     games=8)
    err = (tmp_path / "run.err").open("w")
    proc = subprocess.Popen([str(ARENA), "tournament", str(config), "--no-progress"],
                            cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=err, text=True,
                            env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    try:
        def stored() -> int:
            try:
                with psycopg.connect(url, connect_timeout=5) as conn:
                    return int(conn.execute("SELECT COUNT(*) FROM matches").fetchone()[0])
            except psycopg.Error:  # tables not created yet
                return 0

        wait_for(lambda: stored() >= 1 or proc.poll() is not None, "a first stored match")
        assert proc.poll() is None, (tmp_path / "run.err").read_text()
        postgres.stop("fast")
        time.sleep(2)
        postgres.start()
        assert proc.wait(timeout=240) == 0, (tmp_path / "run.err").read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        err.close()
    text = flat((tmp_path / "run.err").read_text())
    assert "storing paused: the database server cannot be reached" in text, text
    assert "storing resumed" in text, text
    rows = _pg_rows(url)
    assert len(rows) == 8
    assert len({r["id"] for r in rows}) == 8


def test_preflight_refuses_a_server_it_cannot_reach_in_one_line(
    postgres: PgServer, tmp_path: Path,
) -> None:
    """A postgresql URL whose port is closed, or whose database does not exist: `arena
    tournament` exits 2 before playing, with one error line naming tournament.database and
    the URL; a password in the URL is not printed."""
    with __import__("socket").socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    for url, why in ((f"postgresql://arena:secret@127.0.0.1:{closed}/x", "refused"),
                     (postgres.url("nope"), 'database "nope" does not exist')):
        run = arena("tournament", _config(tmp_path, url, name="nowhere"), "--no-progress",
                    cwd=tmp_path)
        assert run.returncode == 2, explain(run)
        lines = run.stderr.strip().splitlines()
        assert len(lines) == 1, explain(run)
        assert lines[0].startswith("error: tournament.database: cannot connect to "
                                   "postgresql://arena"), explain(run)
        assert why in lines[0], explain(run)
        assert "secret" not in lines[0]


def test_a_postgresql_database_from_a_newer_arena_is_refused(postgres: PgServer,
                                                             tmp_path: Path) -> None:
    """A PostgreSQL database whose store schema version is past this code's: `arena
    standings` exits 2 with one line naming both versions, and the version row is unchanged."""
    url = postgres.new_database("newer")
    run = arena("standings", "x", "--database", url, cwd=tmp_path)  # creates the tables
    assert run.returncode == 2, explain(run)  # no matches of x yet
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("UPDATE schema_version SET version = %s WHERE component = 'store'",
                     (SCHEMA_VERSION + 1,))
    run = arena("standings", "x", "--database", url, cwd=tmp_path)
    assert run.returncode == 2, explain(run)
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, explain(run)
    assert f"store schema version {SCHEMA_VERSION + 1}, newer than this truco-arena knows " \
           f"({SCHEMA_VERSION})" in lines[0], explain(run)
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT version FROM schema_version WHERE component = 'store'"
                            ).fetchone() == (SCHEMA_VERSION + 1,)


def test_a_database_url_of_another_kind_is_refused_naming_the_field(tmp_path: Path) -> None:
    """`database = "mysql://..."` is not taken for a file name: `arena tournament` exits 2
    with one line naming tournament.database and what it accepts."""
    run = arena("tournament", _config(tmp_path, "mysql://arena@127.0.0.1/x", name="other"),
                "--no-progress", cwd=tmp_path)
    assert run.returncode == 2, explain(run)
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, explain(run)
    assert "tournament.database: mysql:// is not supported" in lines[0], explain(run)
    assert "postgresql://" in lines[0]


def test_psycopg_errors_worth_retrying_are_told_apart() -> None:
    """storage.transient: a lost connection, a server shutting down or too many connections
    is "connection" (reconnect and retry), a serialization failure or deadlock "locked", a
    full disk on the server "full"; a constraint violation or a syntax error is not retried."""
    from psycopg import errors as pg

    from arena.tournament.storage import transient

    assert transient(psycopg.OperationalError("server closed the connection")) == "connection"
    assert transient(pg.AdminShutdown()) == "connection"
    assert transient(pg.TooManyConnections()) == "connection"
    assert transient(psycopg.InterfaceError("the connection is closed")) == "connection"
    assert transient(pg.SerializationFailure()) == "locked"
    assert transient(pg.DeadlockDetected()) == "locked"
    assert transient(pg.DiskFull()) == "full"
    assert transient(pg.UniqueViolation()) is None
    assert transient(pg.SyntaxError()) is None


def test_the_ladder_tables_live_in_postgresql_too(postgres: PgServer, tmp_path: Path) -> None:
    """The ladder's own tables on PostgreSQL: a ladder created through LadderBook gets its
    schema version row; `arena ladder add` and `retire --database postgresql://...` (the CLI)
    enter and retire a version, which LadderBook then reads back, a stdio one with its
    folder and variables too; pair numbers go on."""
    from arena.tournament.ladder_book import MIGRATIONS as LADDER_MIGRATIONS
    from arena.tournament.ladder_book import LadderBook

    url = postgres.new_database("ladder")
    (tmp_path / "b.py").write_text("print('a bot')\n", encoding="utf-8")  # add checks it
    (tmp_path / "bot").write_text("#!/bin/sh\n", encoding="utf-8")
    (tmp_path / "bot").chmod(0o755)
    book = LadderBook(url)
    try:
        book.save_settings("lad", {"k": 3, "min_games": 2, "inherit": True,
                                   "variants": ["mineiro-1v1"]})
        book.schedule_pair("lad", 1, "mineiro-1v1", "a", "b", 42)
    finally:
        book.close()
    add = arena("ladder", "add", "bot", "--version", "2", "--command", "python b.py",
                "--database", url, cwd=tmp_path)
    assert add.returncode == 0, explain(add)
    assert "entered bot@2 in ladder lad" in add.stdout
    retire = arena("ladder", "retire", "bot", "--database", url, cwd=tmp_path)
    assert retire.returncode == 0, explain(retire)
    stdio = arena("ladder", "add", "c", "--stdio", "--command", "./bot", "--dir", ".",
                  "--env", "K=v", "--database", url, cwd=tmp_path)
    assert stdio.returncode == 0, explain(stdio)
    book = LadderBook(url)
    try:
        entry, c = book.entries("lad")
        assert entry.bot.identity == "bot@2"
        assert entry.bot.command == ("python", "b.py")
        assert (entry.bot.protocol, entry.bot.dir, entry.bot.env) == ("grpc", None, ())
        assert entry.retired_at is not None
        assert (c.bot.protocol, c.bot.dir, c.bot.env) == ("stdio", tmp_path / ".", (("K", "v"),))
        assert book.next_pair("lad") == 2
    finally:
        book.close()
    with psycopg.connect(url) as conn:
        assert dict(conn.execute("SELECT component, version FROM schema_version").fetchall()) \
            == {"store": SCHEMA_VERSION, "ladder": len(LADDER_MIGRATIONS)}


@pytest.fixture(params=["sqlite", "postgresql"])
def target(request: pytest.FixtureRequest, tmp_path: Path) -> str | Path:
    """A fresh results database of each kind."""
    if request.param == "sqlite":
        return tmp_path / "arena.db"
    server: PgServer = request.getfixturevalue("postgres")
    return server.new_database("save")


def test_saving_a_match_twice_keeps_one_row_with_its_latency_and_faults(
    target: str | Path,
) -> None:
    """On either backend: a match (played in-process on trio's MockClock: seat 0 answers
    after exactly 20 ms, seat 1 never answers) saved twice is one row; the row keeps seat 0's
    latency (p50 = p99 = 20 ms, within the histograms' 2 %) and seat 1's three timeouts (two
    strikes, then the one that ended the match); the standings read them back."""
    from test_referee import answer_after, play, silent

    from arena.tournament import latency as lat
    from arena.tournament.standings import standings
    from arena.tournament.store import Store

    report, _, _ = play("mineiro-1v1", [answer_after(0.02), silent])
    store = Store(target)
    try:
        store.begin_tournament("t", {})
        for _ in range(2):
            store.save_match("t", report, options={}, team_bots=("bot0", "bot1"), replay=None)
        (row,) = store.matches("t")
    finally:
        store.close()
    assert (row.termination, row.winner_bot) == ("timeout", 0)
    assert row.faults == ({}, {"timeout": 3})
    lines = {line.bot: line for line in standings([row])}
    assert lines["bot0"].decisions == sum(1 for d in report.decisions if d.seat == 0) > 0
    for q in (lines["bot0"].p50_ms, lines["bot0"].p99_ms):
        assert q is not None
        assert abs(q - 20.0) <= lat.MAX_ERROR * 20.0
    assert lines["bot1"].fault_kinds == {"timeout": 3}
    assert lines["bot1"].p50_ms is not None  # its two timed-out decisions were timed too


def test_a_password_in_the_database_url_is_never_printed(
    postgres: PgServer, tmp_path: Path,
) -> None:
    """A password in the database URL (the server here trusts the user: any password is
    accepted) is masked in everything the commands print: `arena tournament`'s last line
    ("results in ..."), `arena sprt`'s first, as in error messages (an outside walkthrough
    found the first two printing it in clear, into CI logs)."""
    url = postgres.new_database("pw").replace(f"postgresql://{USER}@",
                                              f"postgresql://{USER}:TopSecretPW@")
    config = _config(tmp_path, url, name="pw", variants=["argentine-1v1"], games=1)
    run = arena("tournament", config, "--no-progress", cwd=tmp_path, env=ENV)
    assert run.returncode == 0, explain(run)
    assert "TopSecretPW" not in run.stdout + run.stderr, explain(run)
    assert f"results in postgresql://{USER}:***@" in run.stderr, explain(run)
    sprt = arena("sprt", config, "--a", "first", "--b", "random", "--max-pairs", "1",
                 cwd=tmp_path, env=ENV)
    assert "TopSecretPW" not in sprt.stdout + sprt.stderr, explain(sprt)
    assert f"postgresql://{USER}:***@" in sprt.stdout, explain(sprt)
