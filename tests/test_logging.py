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


def test_a_quiet_process_killed_keeps_the_lines_it_logged_a_second_before(
    tmp_path: Path,
) -> None:
    """A process that logs a few info lines, goes quiet (no event to carry a flush: the
    coordinator of a `processes` tournament, whose match ends its workers log) and is
    killed with SIGKILL two seconds later still leaves them in the file: a timer flushes
    what waits. (An outside walkthrough found a killed coordinator's log empty.)"""
    import signal
    import time

    path = tmp_path / "quiet.jsonl"
    script = (
        "import structlog, sys, time\n"
        "from pathlib import Path\n"
        "from arena import logging as arena_logging\n"
        "arena_logging.configure(path=Path(sys.argv[1]))\n"
        "log = structlog.get_logger()\n"
        "for i in range(3):\n"
        "    log.info('tournament_start', n=i)\n"
        "print('logged', flush=True)\n"
        "time.sleep(60)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script, str(path)],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "logged"
        time.sleep(2 * arena_logging.FLUSH_SECONDS + 0.5)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
    assert [e["n"] for e in _lines(path)] == [0, 1, 2]


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


_AWKWARD_VALUES: list[tuple[object, ...]] = [
    (0, 1, 2, "play 1\u2660 (espada)", 0.123, None),
    (3, 10**20, -7, 'say "truco" \\ \n\t\u00f1', 1e-07, "timeout"),
    (1, 0, 0, "", 12345.0, "illegal_action"),
    (True, 2.5, float("nan"), ["a", 1], {"k": None}, ("t",)),  # the general encoder's cases
]


def test_event_lines_write_exactly_the_line_structlog_writes(tmp_path: Path) -> None:
    """`EventLines` (the referee's decision line without structlog's per-call pipeline)
    writes, for the same event, values and bound context, the very line the pipeline
    writes: same keys in the same order, same encoded values (non-ASCII, quotes, control
    characters, big ints, small floats, NaN, booleans, lists); only the timestamp differs."""
    path = tmp_path / "t.jsonl"
    arena_logging.configure(path=path)
    fields = ("seat", "game", "hand", "action", "latency_ms", "fault")
    with structlog.contextvars.bound_contextvars(match_id="m\u00e9\"1", variant="argentine-1v1"):
        logger = structlog.get_logger("arena.referee").bind()
        fast = arena_logging.EventLines(logger, "decision", fields)
        for values in _AWKWARD_VALUES:
            logger.info("decision", **dict(zip(fields, values, strict=True)))
            fast(*values)
    arena_logging._close()
    raw = path.read_text(encoding="utf-8").splitlines()
    assert len(raw) == 2 * len(_AWKWARD_VALUES)
    stamp = re.compile(r'"timestamp": "[^"]*"')
    for slow, quick in zip(raw[::2], raw[1::2], strict=True):
        assert stamp.sub("T", quick) == stamp.sub("T", slow)
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z",
                            json.loads(quick)["timestamp"])


def test_event_lines_follow_the_configuration_they_are_used_under(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Not configured to a JSON file at info level, the lines go through structlog as usual
    (rendered to the stream; dropped at level warning); built under one file and used after
    `configure` chose another destination, they follow the new one, never the closed file."""
    fields = ("seat", "action")
    stream = tmp_path / "stream.jsonl"
    with stream.open("w", encoding="utf-8") as out:
        arena_logging.configure(stream=out)
        fast = arena_logging.EventLines(structlog.get_logger("arena.t"), "decision", fields)
        fast(1, "mazo")
        out.flush()
        assert [(e["event"], e["seat"], e["action"]) for e in _lines(stream)] == [
            ("decision", 1, "mazo")
        ]
    quiet = tmp_path / "quiet.jsonl"
    arena_logging.configure(path=quiet, level="warning")
    arena_logging.EventLines(structlog.get_logger("arena.t"), "decision", fields)(0, "x")
    arena_logging.configure(path=tmp_path / "first.jsonl")
    built_under_first = arena_logging.EventLines(structlog.get_logger("arena.t"), "decision",
                                                 fields)
    second = tmp_path / "second.jsonl"
    arena_logging.configure(path=second)
    built_under_first(2, "truco")
    arena_logging._close()
    assert quiet.read_text(encoding="utf-8") == ""
    assert (tmp_path / "first.jsonl").read_text(encoding="utf-8") == ""
    assert [(e["event"], e["seat"]) for e in _lines(second)] == [("decision", 2)]
    assert capsys.readouterr().err == ""
