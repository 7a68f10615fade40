"""The session-end replay check (tests/conftest.py): its per-line-type validator finds exactly
what docs/replay.schema.json as a whole finds, and a broken replay file is still reported."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import REPLAY_SCHEMA, LineValidator, check_replay_file
from jsonschema import Draft202012Validator

GOLDEN = Path(__file__).parent / "golden"


def _broken(line: dict[str, Any]) -> list[Any]:
    """Lines the schema must refuse, made from a valid one, plus shapes with no usable type."""
    return [
        {**line, "surplus": 1},
        {k: v for k, v in line.items() if k != next(k for k in line if k != "type")},
        {**line, "type": "no_such_type"},
        {k: v for k, v in line.items() if k != "type"},
        {**line, "type": 7},
        [line],
    ]


def test_the_per_type_validator_gives_the_whole_schemas_errors_on_every_line() -> None:
    """On the first line of each type in every golden replay (every variant) and on broken
    copies of each kind of line (an unknown property, a missing required one, an unknown or
    missing or non-string type, not an object), the per-type validator reports the same
    errors (message and place) as the whole schema: none for a good line, the same ones for
    a bad line."""
    schema = json.loads(REPLAY_SCHEMA.read_text(encoding="utf-8"))
    whole = Draft202012Validator(schema)
    fast = LineValidator(schema)

    def errors(validator: Any, line: Any) -> list[tuple[str, str]]:
        return sorted((e.message, "/".join(map(str, e.absolute_path)))
                      for e in validator.iter_errors(line))

    kinds: dict[str, dict[str, Any]] = {}
    lines = 0
    for path in sorted(GOLDEN.glob("*.jsonl")):
        firsts: dict[str, dict[str, Any]] = {}  # of each line type, its first in this replay
        for text in path.read_text(encoding="utf-8").splitlines():
            line = json.loads(text)
            firsts.setdefault(line["type"], line)
        for line in firsts.values():
            assert errors(fast, line) == errors(whole, line) == [], (path.name, line)
            kinds.setdefault(line["type"], line)
            lines += 1
    assert lines > 50
    assert set(kinds) >= {"match", "hand", "action", "hand_end", "game_end", "result"}
    for line in kinds.values():
        for bad in _broken(line):
            expected = errors(whole, bad)
            assert expected, bad
            assert errors(fast, bad) == expected, bad


def test_the_session_check_reports_a_broken_replay_file(tmp_path: Path) -> None:
    """A golden replay passes `check_replay_file`; the same file with one action line's seat
    out of range is reported with its line number and the field's path."""
    schema = json.loads(REPLAY_SCHEMA.read_text(encoding="utf-8"))
    validator = LineValidator(schema)
    problems = _check_golden_and_broken(validator, tmp_path)
    assert problems, "a seat of 99 passed"


def _check_golden_and_broken(validator: LineValidator, tmp_path: Path) -> list[str]:
    good = GOLDEN / "argentine-1v1.jsonl"
    assert check_replay_file(good, validator)[0] == []
    lines = good.read_text(encoding="utf-8").splitlines()
    number = next(i for i, text in enumerate(lines) if json.loads(text)["type"] == "action")
    lines[number] = json.dumps({**json.loads(lines[number]), "seat": 99})
    broken = tmp_path / "broken-replay.tampered.jsonl"  # "tampered": the session check skips it
    broken.write_text("\n".join(lines) + "\n", encoding="utf-8")
    problems, _lines, _cut_short = check_replay_file(broken, validator)
    assert problems, "a seat of 99 passed"
    assert problems[0].startswith(f"{broken}:{number + 1}: seat: "), problems
    return problems
