"""The replay viewer's reading of replay files: both formats give the same steps.

Format 2 keeps the lines the viewer reads — the header, one `hand` line with the deal per
hand, one `action` line per decision, the `result` — and adds fields and line kinds
(showdowns, awards after each action, duels, chico ends) and writes seeds as strings. The
viewer reads either and ignores what it does not use.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arena.replay import load_replay
from arena.web import replaydata

TESTS = Path(__file__).parent
SAME_MATCH = [  # the same match written in format 1 (a fixture) and format 2 (a golden)
    ("replay-v1-argentine-2v2-flor-leaky.jsonl", "argentine-2v2-flor-leaky.jsonl"),
    ("replay-v1-mineiro-1v1-blind.jsonl", "mineiro-1v1-blind-nobody.jsonl"),
]


@pytest.mark.parametrize(("v1", "v2"), SAME_MATCH)
def test_format_1_and_format_2_files_give_the_same_steps(v1: str, v2: str) -> None:
    """Every seat's steps and the all-cards steps are the same from the format-1 and the
    format-2 file of one match (string seed, new fields and line kinds in format 2)."""
    old = replaydata.recorded(load_replay(TESTS / "fixtures" / v1))
    new = replaydata.recorded(load_replay(TESTS / "golden" / v2))
    assert json.loads((TESTS / "golden" / v2).read_text().splitlines()[0])["format"] == 2
    assert len(old.decisions) > 10
    for seat in [None, *range(len(old.bots))]:
        assert replaydata.steps(old, seat) == replaydata.steps(new, seat)


def test_a_replay_missing_what_the_viewer_needs_is_refused_naming_it(tmp_path: Path) -> None:
    """A header without its seed is a ReplayMismatchError that names the missing field."""
    src = (TESTS / "golden" / "argentine-1v1.jsonl").read_text(encoding="utf-8").splitlines()
    header = json.loads(src[0])
    del header["seed"]
    bad = tmp_path / "no-seed.tampered.jsonl"  # broken on purpose (see conftest.py)
    bad.write_text("\n".join([json.dumps(header), *src[1:]]) + "\n", encoding="utf-8")
    with pytest.raises(replaydata.ReplayMismatchError, match="'seed'"):
        replaydata.recorded(load_replay(bad))


@pytest.mark.parametrize("golden", ["argentine-gallo.jsonl", "mineiro-1v1-blind-nobody.jsonl"])
def test_the_all_cards_view_shows_each_move_once_with_its_card(golden: str) -> None:
    """The all-cards view gets every event of a step, so a move some seats were told without
    its card (the gallo's discard, a face-down play) came twice, once bare (an outside
    walkthrough, gallo: "seat 0: discard 4b" and "seat 0: discard"). Now once, card and all;
    every seat's own view is unchanged (the bare copy there)."""
    rec = replaydata.recorded(load_replay(TESTS / "golden" / golden))
    every = replaydata.steps(rec, None)
    moves = [(step["step"], e["seat"]) for step in every for e in step["events"]
             if e["t"] == "move"]
    assert len(moves) == len(set(moves)), [m for m in moves if moves.count(m) > 1][:5]
    assert len(moves) == len(rec.decisions)
    bare_somewhere = False
    for seat in range(len(rec.bots)):
        for step in replaydata.steps(rec, seat):
            bare_somewhere |= any(e["t"] == "move" and "card" not in e
                                  and e["seat"] != seat for e in step["events"])
    if golden.startswith("argentine-gallo"):
        assert bare_somewhere  # the others are still told the discard without its card


def test_the_all_cards_view_shows_the_blind_iron_hands_cards() -> None:
    """In a blind iron hand each seat's view hides its own cards (RULINGS R2), and the
    all-cards view, built from those views, drew both hands as backs (an outside
    walkthrough). It now shows every unplayed card, as held; a seat's view still hides its
    own."""
    rec = replaydata.recorded(load_replay(TESTS / "golden" / "mineiro-1v1-blind-nobody.jsonl"))
    every, own = replaydata.steps(rec, None), replaydata.steps(rec, 0)
    blind = [i for i, step in enumerate(own)
             if step["state"]["hand_size"] > 0 and step["state"]["hand"] == []]
    assert blind
    for i in blind:
        state = every[i]["state"]
        assert [len(cards) for cards in state["hands"]] == state["held"], state
        assert own[i]["state"]["hands"][0] == [], own[i]["state"]
