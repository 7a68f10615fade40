"""structlog, configured once: JSON lines when not on a terminal, readable console otherwise.

Match tasks bind `match_id`, `game`, `hand` and `seat` with contextvars, so every event a
match emits carries them. `configure(path=...)` sends JSON lines to a file instead (the
tournament does, so that the console keeps the progress bar and the standings).

The file is written through a buffer, not a system call per line (the referee logs every
decision, and on its thread a system call hands the GIL to the gRPC thread): it is flushed at
every warning or worse, at every ``match_end``, within a second of any line (a timer thread
flushes what waits), when `configure` is called again, and at exit. A process that is
killed loses at most the last second of lines.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import logging
import secrets
import sys
import threading
import time
from pathlib import Path
from typing import Any, TextIO

import structlog

from arena.safe_text import printable

FLUSH_SECONDS = 1.0
"""The longest a line waits in the file's buffer while other events keep coming."""

FLUSH_EVENTS = frozenset({"match_end"})
"""Events written out at once, whatever their level (warnings and worse always are)."""

_URGENT = frozenset({"warn", "warning", "err", "error", "critical", "exception", "fatal"})

_file: TextIO | None = None
_sink: _LineFile | None = None  # the JSON-lines file of `configure(path=...)`, when info is on
_made: list[Path] = []  # the file of `configure(path=...)` and the folders it had to make


RUN_ID = ""
"""This process's run id (`configure` sets it): 12 hex digits, on every log line."""


def _run_id() -> str:
    global RUN_ID
    if not RUN_ID:
        RUN_ID = secrets.token_hex(6)
    return RUN_ID


def configure(
    *, path: Path | None = None, level: str = "info", stream: TextIO | None = None
) -> None:
    """Set up structlog. With `path`, JSON lines go to that file; otherwise to `stream`
    (stderr by default), rendered for people when it is a terminal. A file of an earlier
    call is flushed and closed."""
    global _file, _sink
    _sink = None
    if _file is not None:
        with contextlib.suppress(OSError):  # its last lines may not fit on a full disk
            _file.close()
        _file = None
    run = _run_id()
    processors: list[Any] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        _timestamp,
        # Every line names the run that wrote it: a resumed tournament appends to the same
        # file, and counts per run must not add the runs up.
        lambda _logger, _name, event: event.__setitem__("run_id", run) or event,
    ]
    factory: Any
    _made.clear()
    if path is not None:
        missing = [folder for folder in (path.parent, *path.parent.parents)
                   if not folder.exists()]
        path.parent.mkdir(parents=True, exist_ok=True)
        _made[:] = ([path] if not path.exists() else []) + missing
        _file = path.open("a", encoding="utf-8", buffering=1 << 16)
        processors += [structlog.processors.dict_tracebacks, _json_line]
        factory = _LineFileFactory(_file)
        if logging.getLevelNamesMapping()[level.upper()] <= logging.INFO:
            _sink = factory.line_file
    else:
        out = stream or sys.stderr
        if out.isatty():  # values may be a visitor's or a bot's text: no escape codes
            processors += [_printable_values, structlog.dev.ConsoleRenderer()]
        else:
            processors += [
                structlog.processors.dict_tracebacks,
                structlog.processors.JSONRenderer(),
            ]
        factory = structlog.PrintLoggerFactory(out)
    _route_library_logs()
    structlog.configure(
        processors=processors,
        wrapper_class=structlog.make_filtering_bound_logger(
            logging.getLevelNamesMapping()[level.upper()]
        ),
        logger_factory=factory,
        cache_logger_on_first_use=False,
    )


def _printable_values(_logger: Any, _name: str, event: dict[str, Any]) -> dict[str, Any]:
    """Every text value without escape sequences or control characters (arena.safe_text)."""
    return {k: printable(v) if isinstance(v, str) else v for k, v in event.items()}


def discard_if_unused() -> None:
    """Close the file of `configure(path=...)` and, if nothing was written to it, remove it
    and the folders it had to make: a command refused before it did anything (a database
    that cannot be created) leaves nothing behind."""
    global _file, _sink
    if _file is None:
        return
    with contextlib.suppress(OSError):
        _file.close()
    _file = _sink = None
    for made in _made:  # the file first, then its folders, innermost first
        with contextlib.suppress(OSError):
            if made.is_dir():
                made.rmdir()  # only if empty
            elif made.stat().st_size == 0:
                made.unlink()
    _made.clear()
    configure()


class _LibraryLogs(logging.Handler):
    """Warnings and errors that libraries (grpc, asyncio) write through the standard
    `logging` module become `library_log` events in the same log, instead of a bare
    traceback on stderr (grpc logs one when it cannot finish a write to a bot that stopped
    reading and the referee ends that stream)."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            detail: dict[str, Any] = {"logger": record.name, "message": record.getMessage()}
            if record.exc_info and record.exc_info[1] is not None:
                detail["error"] = f"{type(record.exc_info[1]).__name__}: {record.exc_info[1]}"
            logger = structlog.get_logger("arena")
            if record.levelno >= logging.ERROR:
                logger.error("library_log", **detail)
            else:
                logger.warning("library_log", **detail)
        except Exception:  # a log line must never break the referee
            self.handleError(record)


def _route_library_logs() -> None:
    """Send the standard library's log records (warning and above) to structlog, unless the
    program configured `logging` itself."""
    root = logging.getLogger()
    if not root.handlers or all(isinstance(h, _LibraryLogs) for h in root.handlers):
        root.handlers = [_LibraryLogs(logging.WARNING)]
        if root.level > logging.WARNING or root.level == logging.NOTSET:
            root.setLevel(logging.WARNING)


def get_logger(**bound: Any) -> Any:
    """A structlog logger with `bound` values."""
    return structlog.get_logger("arena").bind(**bound)


@atexit.register
def _close() -> None:
    global _file, _sink
    _sink = None
    if _file is not None:
        with contextlib.suppress(OSError):
            _file.close()
        _file = None


# --------------------------------------------------------------------------- processors


_second: list[Any] = [-1, ""]  # the last whole second stamped, and its text


def _timestamp(_logger: Any, _method: str, event_dict: dict[str, Any]) -> dict[str, Any]:
    """``timestamp``: ISO 8601 in UTC with microseconds, e.g. ``2026-05-01T12:00:00.000123Z``
    (structlog's ``TimeStamper(fmt="iso", utc=True)``, formatting the date once a second)."""
    now = time.time()
    second = int(now)
    if second != _second[0]:
        _second[:] = [second, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))]
    event_dict["timestamp"] = f"{_second[1]}.{int((now - second) * 1e6):06d}Z"
    return event_dict


def _fallback(value: Any) -> Any:
    """What JSON cannot encode: its ``__structlog__()`` if it has one, else its repr (as
    structlog's JSONRenderer does)."""
    structlog_form = getattr(value, "__structlog__", None)
    return structlog_form() if structlog_form is not None else repr(value)


_encode = json.JSONEncoder(default=_fallback).encode


def _json_line(
    _logger: Any, method: str, event_dict: dict[str, Any]
) -> tuple[tuple[str], dict[str, bool]]:
    """The last processor for a file: the JSON line, and whether to flush it at once."""
    urgent = method in _URGENT or event_dict.get("event") in FLUSH_EVENTS
    return (_encode(event_dict),), {"flush": urgent}


# --------------------------------------------------------------------------- the file


class _LineFile:
    """A structlog logger that appends lines to a buffered text file (see the module
    docstring for when it is flushed). Safe to call from any thread."""

    def __init__(self, file: TextIO) -> None:
        self._file = file
        self._lock = threading.Lock()
        self._due = time.monotonic() + FLUSH_SECONDS
        self._dirty = False  # lines written since the last flush
        self.dropped = 0  # lines lost to a write error (a full disk)
        # Lines that wait while no other event comes are flushed by a timer: a process that
        # went quiet and was then killed lost every line it had buffered (outside walkthrough
        # 2: a coordinator killed under the `processes` executor left an empty log).
        threading.Thread(target=self._flush_now_and_then, name="arena-log-flush",
                         daemon=True).start()

    def msg(self, line: str, flush: bool = False) -> None:
        with self._lock:
            now = time.monotonic()
            try:
                self._file.write(line + "\n")
                self._dirty = True
                if flush or now >= self._due:
                    self._file.flush()
                    self._dirty = False
                    self._due = now + FLUSH_SECONDS
            except (OSError, ValueError) as exc:  # a full disk (or a closed file) must not
                self.dropped += 1  # stop the matches: drop the line
                if self.dropped == 1:
                    print(f"warning: log lines are being dropped: {exc}", file=sys.stderr)

    def _flush_now_and_then(self) -> None:
        """Every `FLUSH_SECONDS`, flush what is buffered; end with the file."""
        while not self._file.closed:
            time.sleep(FLUSH_SECONDS)
            with self._lock:
                if self._file.closed:
                    return
                if self._dirty:
                    with contextlib.suppress(OSError, ValueError):
                        self._file.flush()
                    self._dirty = False
                    self._due = time.monotonic() + FLUSH_SECONDS

    log = debug = info = warn = warning = msg
    fatal = failure = err = error = critical = exception = msg


class _LineFileFactory:
    """structlog's logger factory for `_LineFile` (one shared per file)."""

    def __init__(self, file: TextIO) -> None:
        self.line_file = _LineFile(file)

    def __call__(self, *args: Any) -> _LineFile:
        return self.line_file


# --------------------------------------------------------------------------- frequent events


class EventLines:
    """One frequent info event (the referee's ``decision``, once per decision), written as
    the very line structlog's pipeline above would write — same keys, same order, same
    values — without running that pipeline for every line.

    Built once per match inside its `bound_contextvars`: the context, the level, the logger
    and the run id become a fixed tail, and each call only encodes its own values. When the
    events do not go to `configure(path=...)`'s JSON file at info level (a console, JSON on
    stderr, a higher level), each call goes through `logger` as usual. The context is the
    one bound when this was built: bind what a line needs before building it.

    What it saves is part of the floor that ``python -m bench floor_instructions`` counts."""

    __slots__ = ("_event", "_fields", "_flush", "_keys", "_logger", "_sink", "_tail")

    def __init__(self, logger: Any, event: str, fields: tuple[str, ...]) -> None:
        self._logger = logger
        self._event = event
        self._fields = fields
        self._keys = tuple(f"{_encode(name)}: " for name in fields)
        self._sink = _sink
        self._tail = ""
        self._flush = event in FLUSH_EVENTS
        if self._sink is None:
            return
        # in the order structlog's `merge_contextvars` adds them
        context = {
            key: value
            for key, value in structlog.contextvars.merge_contextvars(None, "", {}).items()
            if key not in fields and key != "event"
        }
        tail = [f'"event": {_encode(event)}']
        tail += [f"{_encode(key)}: {_encode(value)}" for key, value in context.items()]
        tail.append('"level": "info", "timestamp": "')
        self._tail = ", ".join(tail)

    def __call__(self, *values: Any) -> None:
        sink = self._sink
        if sink is None or sink is not _sink:  # not a JSON file, or configured anew since
            self._logger.info(self._event, **dict(zip(self._fields, values, strict=True)))
            return
        if len(values) != len(self._fields):
            raise TypeError(f"{self._event}: {len(self._fields)} values expected")
        parts = []
        for key, value in zip(self._keys, values):  # noqa: B905  (checked above)
            kind = type(value)
            if kind is int:
                parts.append(key + int.__repr__(value))
            elif kind is str:
                parts.append(key + _ascii(value))
            elif value is None:
                parts.append(key + "null")
            else:
                parts.append(key + _value(value))
        now = time.time()
        second = int(now)
        if second != _second[0]:
            _second[:] = [second, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))]
        sink.msg(
            "{" + ", ".join(parts) + ", " + self._tail
            + f'{_second[1]}.{int((now - second) * 1e6):06d}Z", "run_id": "{RUN_ID}"}}',
            self._flush,
        )


def _value(value: Any) -> str:
    """`value` as the JSON encoder writes it, the common types without its machinery."""
    kind = type(value)
    if kind is int:
        return int.__repr__(value)
    if kind is str:
        return _ascii(value)
    if value is None:
        return "null"
    if kind is float and value == value and value not in (_INF, -_INF):
        return float.__repr__(value)
    return _encode(value)


_INF = float("inf")
_ascii = json.encoder.encode_basestring_ascii  # what JSONEncoder() (ensure_ascii) uses
