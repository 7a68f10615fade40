"""The ladder's own tables, beside the store's in the same database (SQLite or PostgreSQL).

`ladders` keeps each ladder's settings (k, min_games, inherit, variants: what `arena ladder
show` needs without the config); `ladder_bots` every bot version entered, and when it was
retired (what `arena ladder add/retire` write and the running service polls); `ladder_pairs`
every duplicate pair scheduled, whose numbers only grow (a restart goes on after the last).
A bot version's identity, in these tables and in the matches, is `name@version`.

These tables have their own schema version (`MIGRATIONS`, component `ladder` of the
`schema_version` table), apart from the store's.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from arena.errors import ConfigError
from arena.tournament.backend import (
    Backend,
    Migration,
    Target,
    add_column,
    is_url,
    migrate,
    open_backend,
)
from arena.tournament.config import BotSpec, checked_name, parse_bot
from arena.tournament.ladder_ratings import predecessors_of
from arena.tournament.store import MatchRow, Store

SCHEMA_V1 = """
CREATE TABLE IF NOT EXISTS ladders (
    name      TEXT PRIMARY KEY,
    settings  TEXT NOT NULL           -- JSON: k, min_games, inherit, variants
);
CREATE TABLE IF NOT EXISTS ladder_bots (
    ladder     TEXT NOT NULL,
    name       TEXT NOT NULL,
    version    TEXT NOT NULL DEFAULT '',
    command    TEXT NOT NULL DEFAULT '[]',  -- JSON argv ('[]' for a remote bot)
    token      TEXT NOT NULL DEFAULT '',
    cwd        TEXT NOT NULL DEFAULT '.',
    added_at   REAL NOT NULL,
    retired_at REAL,
    PRIMARY KEY (ladder, name, version)
);
CREATE TABLE IF NOT EXISTS ladder_pairs (
    ladder       TEXT NOT NULL,
    number       INTEGER NOT NULL,
    variant      TEXT NOT NULL,
    bot_a        TEXT NOT NULL,
    bot_b        TEXT NOT NULL,
    seed         INTEGER NOT NULL,
    scheduled_at REAL NOT NULL,
    PRIMARY KEY (ladder, number)
)
"""


def _create_tables(db: Backend) -> None:
    db.script(SCHEMA_V1)


MIGRATIONS: tuple[Migration, ...] = (
    Migration("tables ladders, ladder_bots, ladder_pairs", _create_tables),
    # a bot's [[bot]] protocol, dir and env, as a tournament's: "grpc" or "stdio"; its own
    # folder (NULL: its program's); extra environment variables (JSON {name: value})
    add_column("ladder_bots", "protocol", "TEXT NOT NULL DEFAULT 'grpc'"),
    add_column("ladder_bots", "dir", "TEXT"),
    add_column("ladder_bots", "env", "TEXT NOT NULL DEFAULT '{}'"),
)
"""The ladder tables' schema, one step at a time."""


def _legacy_version(db: Backend) -> int:
    """Ladder tables written before they had a version."""
    return 1 if db.has_table("ladders") else 0


def identity(name: str, version: str) -> str:
    """How a bot version is named in matches and tables: `name@version`, or `name`."""
    return f"{name}@{version}" if version else name


@dataclass(frozen=True, slots=True)
class LadderBot:
    """A bot version entered in the ladder: a tournament's `[[bot]]` and its version."""

    name: str
    version: str = ""
    command: tuple[str, ...] = ()
    token: str = ""
    cwd: Path = Path(".")
    protocol: str = "grpc"  # "stdio": launched behind the line adapter (docs/stdio.md)
    dir: Path | None = None  # its own files (None: its program's folder)
    env: tuple[tuple[str, str], ...] = ()  # extra environment variables

    @property
    def identity(self) -> str:
        return identity(self.name, self.version)

    def spec(self) -> BotSpec:
        """The bot as a tournament's runner launches (or admits) it, under its identity."""
        return BotSpec(name=self.identity, command=self.command, token=self.token,
                       cwd=self.cwd, protocol=self.protocol, dir=self.dir, env=self.env)


def make_bot(entry: Any, base: Path, *, where: str) -> LadderBot:
    """A validated `LadderBot` from a `[[bot]]` table (or `arena ladder add`'s options as
    one): a tournament's bot (`config.parse_bot`: name, command or token, protocol, dir,
    env; paths relative to `base`) and a `version`. Errors name `where` and the field."""
    spec = parse_bot(entry, where, base, extra=frozenset({"version"}))
    # Without the '@' and ':' of identities and match ids.
    if "@" in spec.name or ":" in spec.name:
        raise ConfigError(f"{where}.name: a name without '@' or ':', got {spec.name!r}")
    version = entry.get("version", "")
    if isinstance(version, int) and not isinstance(version, bool):
        version = str(version)
    if not isinstance(version, str) or any(c.isspace() or c in "@:" for c in version):
        raise ConfigError(f"{where}.version: a version without spaces, '@' or ':', "
                          f"got {version!r}")
    if version:
        checked_name(version, where, "version")
    return LadderBot(spec.name, version, spec.command, spec.token, spec.cwd, spec.protocol,
                     spec.dir, spec.env)


@dataclass(frozen=True, slots=True)
class Entry:
    """A row of `ladder_bots`."""

    bot: LadderBot
    added_at: float
    retired_at: float | None


_ENTRY_COLUMNS = "name, version, command, token, cwd, protocol, dir, env, added_at, retired_at"


def _entry(r: Any) -> Entry:
    """An `Entry` from a row of `_ENTRY_COLUMNS`."""
    bot = LadderBot(r[0], r[1], tuple(json.loads(r[2])), r[3], Path(r[4]), r[5],
                    None if r[6] is None else Path(r[6]), tuple(sorted(json.loads(r[7]).items())))
    return Entry(bot, r[8], r[9])


class LadderBook:
    """The ladder's own tables, in the store's database (its own connection)."""

    def __init__(self, database: Target) -> None:
        self.store = Store(database)
        self.db = self.store.db
        try:
            migrate(self.db, "ladder", MIGRATIONS, legacy=_legacy_version)
        except BaseException:
            self.store.close()
            raise

    def close(self) -> None:
        self.store.close()

    def ladders(self) -> list[str]:
        return [r[0] for r in self.db.execute("SELECT name FROM ladders ORDER BY name")]

    def settings(self, ladder: str) -> dict[str, Any] | None:
        row = self.db.execute("SELECT settings FROM ladders WHERE name = ?", (ladder,)).fetchone()
        return json.loads(row[0]) if row else None

    def save_settings(self, ladder: str, settings: dict[str, Any]) -> None:
        with self.db.transaction():
            self.db.execute(
                "INSERT INTO ladders(name, settings) VALUES (?, ?) "
                "ON CONFLICT(name) DO UPDATE SET settings = excluded.settings",
                (ladder, json.dumps(settings, sort_keys=True)),
            )

    def enter(self, ladder: str, bot: LadderBot, *, revive: bool = True) -> Entry | None:
        """Enter (or update) a bot version. `revive`: a retired one comes back. Returns its
        entry as it was before (None: it is new)."""
        retired = "NULL" if revive else "ladder_bots.retired_at"
        with self.db.transaction():
            row = self.db.execute(
                f"SELECT {_ENTRY_COLUMNS} FROM ladder_bots WHERE ladder = ? AND name = ? "
                "AND version = ?", (ladder, bot.name, bot.version)).fetchone()
            if bot.token:  # one connection would play both bots' seats
                twin = self.db.execute(
                    "SELECT name, version FROM ladder_bots WHERE ladder = ? AND token = ? "
                    "AND retired_at IS NULL AND NOT (name = ? AND version = ?)",
                    (ladder, bot.token, bot.name, bot.version)).fetchone()
                if twin is not None:
                    raise ConfigError(
                        f"token: {identity(twin[0], twin[1])} in ladder {ladder!r} connects "
                        "with the same token; each remote bot needs a token of its own")
            self.db.execute(
                "INSERT INTO ladder_bots(ladder, name, version, command, token, cwd, protocol, "
                "dir, env, added_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT(ladder, name, version) DO UPDATE SET command = excluded.command, "
                "token = excluded.token, cwd = excluded.cwd, protocol = excluded.protocol, "
                f"dir = excluded.dir, env = excluded.env, retired_at = {retired}",
                (ladder, bot.name, bot.version, json.dumps(list(bot.command)), bot.token,
                 str(bot.cwd), bot.protocol, None if bot.dir is None else str(bot.dir),
                 json.dumps(dict(bot.env)), time.time()),
            )
        return None if row is None else _entry(row)

    def retire(self, ladder: str, name: str, version: str | None) -> list[str]:
        """Retire `name` (one version, or all); return the identities retired now."""
        query = "SELECT name, version FROM ladder_bots WHERE ladder = ? AND name = ? " \
                "AND retired_at IS NULL"
        args: tuple[Any, ...] = (ladder, name)
        if version is not None:
            query += " AND version = ?"
            args += (version,)
        found = [identity(n, v) for n, v in self.db.execute(query, args)]
        with self.db.transaction():
            self.db.execute(
                "UPDATE ladder_bots SET retired_at = ? WHERE ladder = ? AND name = ? "
                "AND retired_at IS NULL" + (" AND version = ?" if version is not None else ""),
                (time.time(), *args),
            )
        return found

    def entries(self, ladder: str) -> list[Entry]:
        """Every bot version ever entered, in the order entered."""
        rows = self.db.execute(
            f"SELECT {_ENTRY_COLUMNS} FROM ladder_bots WHERE ladder = ? "
            "ORDER BY added_at, name, version", (ladder,))
        return [_entry(r) for r in rows]

    def predecessors(self, ladder: str) -> dict[str, str]:
        """Each version's predecessor: the same name's version entered just before it."""
        return predecessors_of((e.bot.name, e.bot.identity) for e in self.entries(ladder))

    def next_pair(self, ladder: str) -> int:
        row = self.db.execute(
            "SELECT COALESCE(MAX(number), 0) FROM ladder_pairs WHERE ladder = ?", (ladder,)
        ).fetchone()
        return int(row[0]) + 1

    def schedule_pair(
        self, ladder: str, number: int, variant: str, a: str, b: str, seed: int
    ) -> None:
        with self.db.transaction():
            self.db.execute(
                "INSERT INTO ladder_pairs(ladder, number, variant, bot_a, bot_b, seed, "
                "scheduled_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (ladder, number, variant, a, b, seed, time.time()),
            )

    def pairs(self, ladder: str) -> list[tuple[int, str, str, str, int]]:
        """Every pair scheduled in `ladder`: (number, variant, bot_a, bot_b, seed), in order."""
        return [(int(n), v, a, b, int(seed)) for n, v, a, b, seed in self.db.execute(
            "SELECT number, variant, bot_a, bot_b, seed FROM ladder_pairs WHERE ladder = ? "
            "ORDER BY number", (ladder,)).fetchall()]

    def matches(self, ladder: str, include: Iterable[str] = ()) -> list[MatchRow]:
        """The ladder's stored matches, and those of the tournaments named in `include`
        (shell-style patterns: `match-*` takes every ad-hoc `arena match`)."""
        patterns = list(include)
        return [r for r in self.store.matches()
                if r.tournament == ladder or any(fnmatchcase(r.tournament, p) for p in patterns)]


def find_ladder(database: Target, name: str | None) -> str:
    """The ladder called `name` in `database`, or its only one; `ConfigError` otherwise."""
    book = LadderBook(database)
    try:
        known = book.ladders()
    finally:
        book.close()
    if name is not None:
        if name not in known:
            raise ConfigError(f"--ladder: no ladder {name!r} in {database} "
                              f"(ladders there: {', '.join(known) or 'none'})")
        return name
    if len(known) != 1:
        raise ConfigError(f"--ladder: {database} holds {len(known)} ladders "
                          f"({', '.join(known) or 'none'}); name one")
    return known[0]


def has_table(database: Target, table: str) -> bool:
    """Whether `database` exists and has `table` (without creating either)."""
    if not is_url(database) and not Path(database).exists():
        return False
    db = open_backend(database, read_only=True)
    try:
        return db.has_table(table)
    finally:
        db.close()
