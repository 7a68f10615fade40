"""The `--database` option of every command: an SQLite file (default `arena.db`) or a
PostgreSQL URL (`postgresql://user@host:port/db`, arena.tournament.backend)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from arena.tournament.backend import Target, as_target, is_url


class DatabaseArg(click.ParamType):  # type: ignore[type-arg]
    """A file path (as a Path) or a postgresql:// URL (kept as a str)."""

    name = "FILE|URL"

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Target:
        if isinstance(value, Path):
            return value
        text = str(value)
        if "://" in text and not is_url(text):
            self.fail(f"{text!r}: only an SQLite file or a postgresql:// URL", param, ctx)
        return as_target(text)


DATABASE = DatabaseArg()


def exists(target: Target) -> bool:
    """Whether there is something to read: a URL is checked when it is opened."""
    return is_url(target) or Path(target).is_file()
