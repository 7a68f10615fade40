"""structlog, configured once: JSON lines when not on a terminal, readable console otherwise.

Match tasks bind `match_id`, `game`, `hand` and `seat` with contextvars, so every event a
match emits carries them. `configure(path=...)` sends JSON lines to a file instead (the
tournament does, so that the console keeps the progress bar and the standings).
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any, TextIO

import structlog

_file: TextIO | None = None


def configure(
    *, path: Path | None = None, level: str = "info", stream: TextIO | None = None
) -> None:
    """Set up structlog. With `path`, JSON lines go to that file; otherwise to `stream`
    (stderr by default), rendered for people when it is a terminal."""
    global _file
    out: TextIO
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        if _file is not None:
            _file.close()
        _file = path.open("a", encoding="utf-8", buffering=1)
        out = _file
    else:
        out = stream or sys.stderr
    processors: list[Any] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    if path is None and out.isatty():
        processors.append(structlog.dev.ConsoleRenderer())
    else:
        processors += [structlog.processors.dict_tracebacks, structlog.processors.JSONRenderer()]
    structlog.configure(
        processors=processors,
        wrapper_class=structlog.make_filtering_bound_logger(
            logging.getLevelNamesMapping()[level.upper()]
        ),
        logger_factory=structlog.PrintLoggerFactory(out),
        cache_logger_on_first_use=False,
    )


def get_logger(**bound: Any) -> Any:
    """A structlog logger with `bound` values."""
    return structlog.get_logger("arena").bind(**bound)
