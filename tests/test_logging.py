"""arena/logging.py: JSON lines to a buffered file that still holds every line when it counts."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog

from arena import logging as arena_logging


@pytest.fixture(autouse=True)
def _restore_structlog() -> Iterator[None]:
    """Each test configures structlog globally: put the previous configuration back."""
    saved = structlog.get_config()
    yield
    arena_logging._close()
    structlog.configure(**saved)


def _lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_warnings_and_match_ends_are_written_at_once(tmp_path: Path) -> None:
    """Info lines may wait in the buffer; a warning, or a match_end, writes them all out."""
    path = tmp_path / "logs" / "t.jsonl"
    arena_logging.configure(path=path)
    log = structlog.get_logger("arena.test")
    log.info("decision", seat=0)
    log.warning("fault", seat=1)
    assert [e["event"] for e in _lines(path)] == ["decision", "fault"]
    log.info("decision", seat=1)
    log.info("match_end", decisions=2)
    assert [e["event"] for e in _lines(path)] == ["decision", "fault", "decision", "match_end"]


def test_lines_are_json_with_level_and_utc_timestamp(tmp_path: Path) -> None:
    """Each line is one JSON object with the event, its fields, the bound context, the level
    and an ISO 8601 UTC timestamp with microseconds."""
    path = tmp_path / "t.jsonl"
    arena_logging.configure(path=path)
    with structlog.contextvars.bound_contextvars(match_id="m1"):
        structlog.get_logger().warning("fault", seat=1, detail="late")
    (line,) = _lines(path)
    assert (line["event"], line["seat"], line["match_id"]) == ("fault", 1, "m1")
    assert line["level"] == "warning"
    stamp = str(line["timestamp"])
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", stamp), stamp


def test_reconfiguring_flushes_and_closes_the_file(tmp_path: Path) -> None:
    """A second `configure` writes out what the first file's buffer held."""
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    arena_logging.configure(path=first)
    structlog.get_logger().info("decision", seat=0)
    arena_logging.configure(path=second)
    structlog.get_logger().info("decision", seat=1)
    assert [e["seat"] for e in _lines(first)] == [0]


def test_every_line_is_in_the_file_after_a_normal_exit(tmp_path: Path) -> None:
    """A process that logs thousands of info lines and exits normally leaves all of them."""
    path = tmp_path / "run.jsonl"
    script = (
        "import structlog, sys\n"
        "from pathlib import Path\n"
        "from arena import logging as arena_logging\n"
        "arena_logging.configure(path=Path(sys.argv[1]))\n"
        "log = structlog.get_logger()\n"
        "for i in range(5000):\n"
        "    log.info('decision', n=i)\n"
    )
    subprocess.run([sys.executable, "-c", script, str(path)], check=True, timeout=60)
    assert [e["n"] for e in _lines(path)] == list(range(5000))


def test_a_library_error_logged_through_stdlib_logging_lands_in_the_log_not_on_stderr(
    tmp_path: Path,
) -> None:
    """grpc reports some failures (a write it cannot finish to a bot that stopped reading)
    through the standard `logging` module; with nothing configuring it they reached stderr as
    a bare traceback. In a fresh process, after `configure(path=...)`, such a record is a
    `library_log` event in the log file naming its logger and error, and stderr stays empty."""
    log = tmp_path / "run.jsonl"
    program = (
        "import logging\n"
        "from pathlib import Path\n"
        "from arena import logging as L\n"
        f"L.configure(path=Path({str(log)!r}))\n"
        "try:\n"
        "    raise RuntimeError('GRPC_CALL_ERROR_TOO_MANY_OPERATIONS')\n"
        "except RuntimeError:\n"
        "    logging.getLogger('grpc._cython.cygrpc').exception('ExecuteBatchError')\n"
        "logging.getLogger('grpc').info('chatter below warning')\n"
    )
    run = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                         timeout=60, check=False)
    assert run.returncode == 0, run.stderr
    assert run.stderr == ""
    events = [line for line in _lines(log) if line["event"] == "library_log"]
    assert len(events) == 1, events
    assert events[0]["logger"] == "grpc._cython.cygrpc"
    assert events[0]["level"] == "error"
    assert events[0]["message"] == "ExecuteBatchError"
    assert "GRPC_CALL_ERROR_TOO_MANY_OPERATIONS" in str(events[0]["error"])
