"""Shared fixtures. Helpers of the end-to-end tests live in test_e2e_support.py.

Every replay file the suite writes (any `*.jsonl` of format 2 under the session's temporary
folder: the tournaments of the end-to-end tests, `arena match`, the replay tests) is checked
at the end of the session against docs/replay.schema.json, line by line, re-scored by the
independent tests/rescore.py and checked by `arena replay`'s own verify_replay (through the
rules engine, with the deals from the seed); a file that fails is an error of the session.
Files meant to be broken have "tampered" in their name (`tampered.jsonl`,
`x.tampered.jsonl`). The summary line says how many files were checked.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator, ValidationError
from rescore import RescoreError, rescore
from test_e2e_support import JS_BOT

from arena.errors import ArenaError
from arena.replay import load_replay, verify_replay

REPLAY_SCHEMA = Path(__file__).parent.parent / "docs" / "replay.schema.json"
_checked: dict[str, int] = {"files": 0, "lines": 0, "format1": 0, "cut_short": 0}


class LineValidator:
    """docs/replay.schema.json, one validator per line type: the schema with only the
    `allOf` clause whose `if` names that type (the others' `if` cannot hold for it), so a
    line meets exactly the errors the whole schema gives it, without ten failed `if`
    evaluations each (half the time of the session-end check). A line without a known type
    gets the whole schema."""

    def __init__(self, schema: dict[str, Any]) -> None:
        self.whole = Draft202012Validator(schema)

        def kind(clause: dict[str, Any]) -> Any:
            return clause.get("if", {}).get("properties", {}).get("type", {}).get("const")

        typed = [c for c in schema["allOf"] if isinstance(kind(c), str)]
        others = [c for c in schema["allOf"] if not isinstance(kind(c), str)]
        self.by_type = {
            kind(clause): Draft202012Validator({**schema, "allOf": [clause, *others]})
            for clause in typed
        }

    def iter_errors(self, line: Any) -> Iterator[ValidationError]:
        kind = line.get("type") if isinstance(line, dict) else None
        validator = self.by_type.get(kind, self.whole) if isinstance(kind, str) else self.whole
        return validator.iter_errors(line)


def check_replay_file(path: Path, validator: LineValidator) -> tuple[list[str], int, bool]:
    """What is wrong with one replay file (schema errors by line, then the re-scorer's), its
    number of lines, and whether a fault cut it short."""
    text = path.read_text(encoding="utf-8").splitlines()
    problems = []
    cut_short = False
    for number, line in enumerate(text, 1):
        for error in validator.iter_errors(json.loads(line)):
            where = "/".join(map(str, error.absolute_path)) or "(line)"
            problems.append(f"{path}:{number}: {where}: {error.message}")
    if not problems:
        try:
            cut_short = rescore(path).cut_short
        except (RescoreError, KeyError, TypeError, ValueError) as exc:
            problems.append(f"{path}: rescore: {exc!r}")
    if not problems:
        try:  # and `arena replay`'s own check passes every file the referee wrote
            verify_replay(load_replay(path))
        except ArenaError as exc:
            problems.append(f"{path}: arena replay: {exc}")
    return problems, len(text), cut_short


_VALIDATOR: list[LineValidator] = []  # one per checking process


def _check_in_pool(path: Path) -> tuple[list[str], int, bool]:
    if not _VALIDATOR:
        _VALIDATOR.append(LineValidator(json.loads(REPLAY_SCHEMA.read_text(encoding="utf-8"))))
    return check_replay_file(path, _VALIDATOR[0])


@pytest.fixture(scope="session", autouse=True)
def every_replay_is_valid(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """After the last test: every format-2 replay written under the session's temporary
    folder validates against docs/replay.schema.json, re-scores with tests/rescore.py and
    passes `arena replay`'s check (one process per core: ~40,000 lines)."""
    yield
    replays: list[Path] = []
    for path in sorted(tmp_path_factory.getbasetemp().rglob("*.jsonl")):
        if "tampered" in path.name:
            continue
        with path.open(encoding="utf-8") as src:
            first = src.readline()
        try:
            header = json.loads(first)
        except json.JSONDecodeError:
            continue
        if not isinstance(header, dict) or header.get("type") != "match":
            continue  # a log, not a replay
        if header.get("format") == 1:
            _checked["format1"] += 1
            continue
        replays.append(path)
    problems: list[str] = []
    if len(replays) > 20:
        context = multiprocessing.get_context("spawn")  # (no fork of a process running grpc)
        with ProcessPoolExecutor(os.cpu_count() or 1, mp_context=context) as pool:
            checked = list(pool.map(_check_in_pool, replays, chunksize=8))
    else:
        checked = [_check_in_pool(path) for path in replays]
    for found, lines, cut_short in checked:
        problems.extend(found)
        _checked["files"] += 1
        _checked["lines"] += lines
        _checked["cut_short"] += cut_short
    assert not problems, "replays that break docs/replay.schema.json or tests/rescore.py:\n" + (
        "\n".join(problems[:40])
    )


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Under pytest-xdist (`make test` runs two workers), each worker checks the replays of
    its own tests (its own temporary folder): it hands its counts to the controller, which
    prints the summary line."""
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput["replays_checked"] = dict(_checked)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """The controller adds up what each xdist worker checked."""
    for key, value in getattr(node, "workeroutput", {}).get("replays_checked", {}).items():
        _checked[key] += value


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _checked["files"] or _checked["format1"]:
        terminalreporter.write_line(
            f"replays checked against docs/replay.schema.json, tests/rescore.py and arena replay: "
            f"{_checked['files']} files, {_checked['lines']} lines "
            f"({_checked['cut_short']} cut short by a fault; {_checked['format1']} of format 1 "
            "skipped)"
        )


@pytest.fixture(scope="session")
def js_random() -> list[str]:
    """The command of the sample Node.js bot. A missing node or npm install fails the test
    (it is not skipped): the JS bot is part of what the end-to-end tests pin."""
    if shutil.which("node") is None:
        pytest.fail("node is not on PATH: the end-to-end tests need it for the JS sample bot")
    if not (JS_BOT.parent / "node_modules" / "@grpc" / "grpc-js").is_dir():
        pytest.fail(f"{JS_BOT.parent} has no node_modules: run `make install`")
    return ["node", str(JS_BOT)]
