"""The replay viewer's reading of replay files: both formats give the same steps.

Format 2 (being introduced) keeps the lines the viewer reads — the header, one `hand` line
with the deal per hand, one `action` line per decision, the `result` — and adds fields and
line kinds (showdowns, awards after each action, duels, chico ends) and writes seeds as
strings. The viewer must read either, and ignore what it does not use.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arena.replay import load_replay
from arena.web import replaydata

GOLDEN = Path(__file__).parent / "golden"


def _as_format_2(src: Path, dst: Path) -> None:
    """A format-1 replay rewritten the way format 2 writes it (what the viewer meets)."""
    out = []
    for line in src.read_text(encoding="utf-8").splitlines():
        data = json.loads(line)
        if data["type"] == "match":
            data.update(format=2, seed=str(data["seed"]), accounts=2, legal=False)
            data["options"] = {**data["options"], "an_option_from_the_future": 1}
        elif data["type"] == "hand":
            data.update(mano=0, kind="normal", side_of=[0, 1, 0, 1], scores=[0, 0])
        elif data["type"] == "action":
            data["face_down_card"] = None
            out.append(json.dumps(data))
            data = {"type": "envido", "game": data["game"], "hand": data["hand"], "duel": None}
        out.append(json.dumps(data))
    dst.write_text("\n".join(out) + "\n", encoding="utf-8")


@pytest.mark.parametrize("name", ["argentine-2v2.jsonl", "argentine-gallo.jsonl"])
def test_format_1_and_format_2_files_give_the_same_steps(name: str, tmp_path: Path) -> None:
    """Every seat's steps and the all-cards steps are the same from a format-1 file and from
    the same match written in format 2's shape (string seed, new fields, new line kinds,
    an option the viewer does not know)."""
    v2 = tmp_path / name
    _as_format_2(GOLDEN / name, v2)
    old = replaydata.recorded(load_replay(GOLDEN / name))
    new = replaydata.recorded(load_replay(v2))
    assert len(old.decisions) > 10
    for seat in [None, *range(len(old.bots))]:
        assert replaydata.steps(old, seat) == replaydata.steps(new, seat)


def test_a_replay_missing_what_the_viewer_needs_is_refused_naming_it(tmp_path: Path) -> None:
    """A header without its seed is a ReplayMismatchError that names the missing field."""
    src = (GOLDEN / "argentine-1v1.jsonl").read_text(encoding="utf-8").splitlines()
    header = json.loads(src[0])
    del header["seed"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([json.dumps(header), *src[1:]]) + "\n", encoding="utf-8")
    with pytest.raises(replaydata.ReplayMismatchError, match="'seed'"):
        replaydata.recorded(load_replay(bad))
