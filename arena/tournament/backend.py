"""The database under the results: SQLite (a file, the default) or PostgreSQL (a URL).

One small layer so that `Store`, `LadderBook` and the web's reader run the same SQL on both.
SQL is written once, in SQLite's dialect with `?` placeholders; `Backend.execute` turns it
into PostgreSQL's where they differ (`%s` placeholders, `INSERT OR IGNORE` → `ON CONFLICT DO
NOTHING`), and `ddl()` maps the column types (BLOB → BYTEA, REAL → DOUBLE PRECISION,
INTEGER → BIGINT). Both connections run in autocommit mode; `transaction()` opens an explicit
one (`BEGIN IMMEDIATE` on SQLite, so two writers queue on the busy timeout instead of
failing on a lock upgrade).

Schemas are versioned (`migrate`): a numbered list of migrations per component (`store`,
`ladder`), each applied once in its own transaction. The store's version is SQLite's `PRAGMA
user_version`; every other version, and all of them on PostgreSQL, is a row of the
`schema_version` table. A database whose version is newer than the code knows is refused
before anything is written to it.

psycopg (3) is imported only when a PostgreSQL URL is opened: it is the optional extra
`truco-arena[postgresql]`.
"""

from __future__ import annotations

import re
import sqlite3
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from arena.errors import ArenaError

Target = Path | str
"""Where results live: an SQLite file, or a `postgresql://` URL (a str)."""

URL_SCHEMES = ("postgresql://", "postgres://")


class DatabaseError(ArenaError):
    """The database cannot be opened, or is not one this code can use."""


class SchemaTooNewError(DatabaseError):
    """The database was written by a newer version of truco-arena (left untouched)."""


def is_url(target: Target | None) -> bool:
    """Whether `target` names a PostgreSQL database rather than an SQLite file."""
    return isinstance(target, str) and target.startswith(URL_SCHEMES)


def as_target(text: str, base: Path | None = None) -> Target:
    """A `database` setting as a target: a PostgreSQL URL as is, else a file path (relative
    to `base` if given)."""
    if text.startswith(URL_SCHEMES):
        return text
    return base / text if base is not None else Path(text)


def describe(target: Target) -> str:
    """`target` for messages and logs, without a password."""
    if is_url(target):
        return re.sub(r"//([^:@/]*):[^@/]*@", r"//\1:***@", str(target))
    return str(target)


def driver_errors() -> tuple[type[Exception], ...]:
    """The exception classes a database operation may raise: sqlite3's, and psycopg's once
    it is imported (it is only when a PostgreSQL URL is opened, so not before: importing it
    here cost every `arena` command ~150 ms)."""
    psycopg = sys.modules.get("psycopg")
    if psycopg is None:
        return (sqlite3.Error,)
    return (sqlite3.Error, psycopg.Error)


def _psycopg() -> Any:
    try:
        import psycopg
    except ImportError:
        raise DatabaseError(
            "database: a postgresql:// URL needs psycopg: pip install 'truco-arena[postgresql]' "
            "(in a checkout: .venv/bin/pip install -e '.[postgresql]')"
        ) from None
    return psycopg


_TYPES = (("BLOB", "BYTEA"), ("REAL", "DOUBLE PRECISION"), ("INTEGER", "BIGINT"))


class Backend:
    """One open connection, SQLite or PostgreSQL, in autocommit mode."""

    def __init__(self, kind: str, conn: Any, target: Target) -> None:
        self.kind = kind
        self.conn = conn
        self.target = target
        self._in_transaction = False

    @property
    def postgres(self) -> bool:
        return self.kind == "postgresql"

    def sql(self, text: str) -> str:
        """`text` (SQLite dialect, `?` placeholders) in this backend's dialect."""
        if not self.postgres:
            return text
        if "INSERT OR IGNORE" in text:
            text = text.replace("INSERT OR IGNORE", "INSERT") + " ON CONFLICT DO NOTHING"
        return text.replace("?", "%s")

    def ddl(self, text: str) -> str:
        """A CREATE / ALTER statement with this backend's column types."""
        if not self.postgres:
            return text
        for sqlite_type, pg_type in _TYPES:
            text = re.sub(rf"\b{sqlite_type}\b", pg_type, text)
        return text

    def execute(self, text: str, params: Sequence[Any] = ()) -> Any:
        """Run one statement; the cursor (iterate it, `fetchone`, `fetchall`)."""
        return self.conn.execute(self.sql(text), tuple(params))

    def script(self, text: str) -> None:
        """Run several `;`-separated DDL statements (no parameters; `--` comments dropped)."""
        bare = "\n".join(line.split("--")[0] for line in text.splitlines())
        for statement in bare.split(";"):
            body = statement.strip()
            if body:
                self.conn.execute(self.ddl(body))

    def dicts(self, text: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """The rows of a query, each a dict of column name → value."""
        cursor = self.execute(text, params)
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One transaction: committed when the block ends, rolled back if it raises."""
        if self._in_transaction:  # nested: part of the enclosing one
            yield
            return
        if self.postgres:
            with self.conn.transaction():
                self._in_transaction = True
                try:
                    yield
                finally:
                    self._in_transaction = False
            return
        self.conn.execute("BEGIN IMMEDIATE")
        self._in_transaction = True
        try:
            yield
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        else:
            self.conn.execute("COMMIT")
        finally:
            self._in_transaction = False

    def has_table(self, table: str) -> bool:
        if self.postgres:
            row = self.execute("SELECT to_regclass(?)", (table,)).fetchone()
            return row[0] is not None
        return self.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                            (table,)).fetchone() is not None

    def columns(self, table: str) -> set[str]:
        if self.postgres:
            rows = self.execute("SELECT column_name FROM information_schema.columns "
                                "WHERE table_schema = current_schema() AND table_name = ?",
                                (table,))
            return {r[0] for r in rows}
        return {r[1] for r in self.conn.execute(f"PRAGMA table_info({table})")}

    def version(self, component: str) -> int:
        """The schema version of `component` (0: none yet)."""
        if component == "store" and not self.postgres:
            return int(self.conn.execute("PRAGMA user_version").fetchone()[0])
        if not self.has_table("schema_version"):
            return 0
        row = self.execute("SELECT version FROM schema_version WHERE component = ?",
                           (component,)).fetchone()
        return int(row[0]) if row else 0

    def set_version(self, component: str, version: int) -> None:
        if component == "store" and not self.postgres:
            self.conn.execute(f"PRAGMA user_version = {int(version)}")
            return
        self.script(_VERSION_TABLE)
        self.execute("INSERT INTO schema_version(component, version) VALUES (?, ?) "
                     "ON CONFLICT(component) DO UPDATE SET version = excluded.version",
                     (component, version))

    def lock_for_migration(self) -> None:
        """Inside a transaction: keep other processes from migrating at the same time
        (SQLite's `BEGIN IMMEDIATE` already holds the write lock)."""
        if self.postgres:
            self.execute("SELECT pg_advisory_xact_lock(?)", (_MIGRATION_LOCK,))

    def close(self) -> None:
        self.conn.close()


_VERSION_TABLE = """CREATE TABLE IF NOT EXISTS schema_version (
    component TEXT PRIMARY KEY,   -- 'store', 'ladder'
    version   INTEGER NOT NULL    -- migrations applied
)"""
_MIGRATION_LOCK = 0x7275636F  # any constant: the advisory lock migrations take on PostgreSQL


def open_backend(
    target: Target, *, busy_timeout: float = 30.0, read_only: bool = False
) -> Backend:
    """Connect to `target`. SQLite: the file (its folder created unless `read_only`).
    PostgreSQL: the URL, `connect_timeout` `busy_timeout`; `DatabaseError` (one line) when
    the server cannot be reached."""
    if is_url(target):
        psycopg = _psycopg()
        options = "-c default_transaction_read_only=on" if read_only else None
        try:
            conn = psycopg.connect(str(target), autocommit=True,
                                   connect_timeout=max(1, round(busy_timeout)),
                                   options=options)
        except psycopg.Error as exc:
            why = " ".join(str(exc).split())
            raise DatabaseError(f"database: cannot connect to {describe(target)}: {why}") from None
        return Backend("postgresql", conn, target)
    path = Path(target)
    if read_only:
        uri = f"file:{quote(str(path.resolve()))}?mode=ro"
        conn = sqlite3.connect(uri, uri=True, timeout=busy_timeout, check_same_thread=False,
                               isolation_level=None)
    else:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            # The tournament's storage worker uses the connection from one worker thread at a
            # time.
            conn = sqlite3.connect(path, timeout=busy_timeout, check_same_thread=False,
                                   isolation_level=None)
        except (OSError, sqlite3.Error) as exc:  # a folder the checks could not foresee
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise DatabaseError(f"database: cannot create {path}: {why}") from None
    return Backend("sqlite", conn, path)


@dataclass(frozen=True, slots=True)
class Migration:
    """One step of a schema: applied once, in its own transaction."""

    what: str
    apply: Callable[[Backend], None]


def add_column(table: str, column: str, decl: str) -> Migration:
    """A migration adding a column (kept when it is there already: databases written before
    versions were kept may have it)."""

    def apply(db: Backend) -> None:
        if column not in db.columns(table):
            db.execute(db.ddl(f"ALTER TABLE {table} ADD COLUMN {column} {decl}"))

    return Migration(f"{table}.{column}", apply)


def migrate(
    db: Backend, component: str, migrations: Sequence[Migration], *,
    legacy: Callable[[Backend], int] | None = None,
    on_applied: Callable[[int, str], None] | None = None,
) -> int:
    """Bring `component`'s schema to `len(migrations)`; return the version found before.

    `legacy` tells the version of a database written before versions were kept (its version
    reads 0 but it has tables). A newer version than `len(migrations)` raises
    `SchemaTooNewError` and nothing is written."""
    latest = len(migrations)
    found = check_version(db, component, latest)
    while True:
        with db.transaction():
            db.lock_for_migration()
            current = check_version(db, component, latest)
            if current == 0 and legacy is not None:
                current = legacy(db)
            if current >= latest:
                if current != db.version(component):
                    db.set_version(component, current)
                return found
            migrations[current].apply(db)
            db.set_version(component, current + 1)
        if on_applied is not None:
            on_applied(current + 1, migrations[current].what)


def check_version(db: Backend, component: str, latest: int) -> int:
    """`component`'s version; `SchemaTooNewError` if newer than `latest`."""
    version = db.version(component)
    if version > latest:
        raise SchemaTooNewError(
            f"database: {describe(db.target)} has {component} schema version {version}, newer "
            f"than this truco-arena knows ({latest}); it was left untouched: upgrade "
            "truco-arena to use it")
    return version


def retry_locked(step: Callable[[], Any], timeout: float) -> Any:
    """Run `step`, retrying while SQLite says the database is locked (some steps, such as
    switching the journal mode, do not wait on the busy timeout)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return step()
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)
