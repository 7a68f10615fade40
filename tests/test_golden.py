"""Golden match transcripts: seeded matches of every variant, played by seeded in-process
policies through the real referee (`run_match`), written as replay files (docs/replay.md) and
diffed against the copies committed in tests/golden/ (open_spiel's playthrough tests).

They pin what a replay, a duplicate pairing or a bug report depends on across versions: the
deal of every hand from (seed, game, hand) (RULES.md §6: SHA-256 counter mode, portable), the
order of the legal actions (an answer is an index into them), every award and its reason, the
result, and the replay format itself. An engine change that alters any of them fails here with
the first line that differs.

If the change is intended (a rule fixed, the format extended), regenerate and review the diff:

    ARENA_REGOLD=1 .venv/bin/pytest tests/test_golden.py
    git diff tests/golden/

Latency and wall-clock times are set to 0 in the golden copies (they are the only fields that
depend on the machine); everything else is compared as written.
"""

from __future__ import annotations

import json
import os
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import trio

from arena.referee import Answer, DecisionRequest, TimeControl, run_match
from arena.referee.local import LocalLink
from arena.replay import describe, load_replay, report_lines, verify_replay
from arena.rules import ActionKind, Match
from arena.rules.signals import Signal, SignalKind

GOLDEN = Path(__file__).parent / "golden"
REGOLD = os.environ.get("ARENA_REGOLD") == "1"
TIME_CONTROL = TimeControl(decision_ms=1000)
SHORT = {"target": 15, "chicos": 1}  # one Argentine chico to 15: a readable transcript
SIGNS = (SignalKind.TRES, SignalKind.NADA, SignalKind.ANCHO_DE_ESPADA, SignalKind.ENVIDO)
# Mostly cards, seldom the calls that end a match at once: transcripts of several hands.
WEIGHTS = {
    ActionKind.PLAY: 4.0,
    ActionKind.PLAY_FACE_DOWN: 4.0,
    ActionKind.FALTA_ENVIDO: 0.02,
    ActionKind.CONTRAFLOR_AL_RESTO: 0.02,
    ActionKind.FOLD: 0.2,
}


@dataclass(frozen=True)
class Case:
    """One golden match: a variant, its options, its seed, whether seats send signals, and
    the action kinds its transcript must hold (what the case is there for)."""

    name: str
    variant: str
    seed: int
    options: dict[str, Any] = field(default_factory=dict)
    signals: bool = False
    covers: tuple[str, ...] = ("play",)


# Seeds chosen (the first from 1 up) so that each transcript holds what it is for.
CASES = [
    Case("argentine-1v1", "argentine-1v1", 1, SHORT, covers=("envido", "truco", "fold")),
    Case("argentine-2v2", "argentine-2v2", 1, SHORT, signals=True, covers=("truco",)),
    Case("argentine-2v2-flor", "argentine-2v2-flor", 2, SHORT, signals=True,
         covers=("flor",)),
    Case("argentine-2v2-flor-leaky", "argentine-2v2", 3,
         {**SHORT, "flor": True, "signals": "leaky", "leak": 0.5}, signals=True,
         covers=("flor",)),
    Case("argentine-gallo", "argentine-gallo", 1, SHORT, signals=True, covers=("discard",)),
    Case("argentine-3v3", "argentine-3v3", 1, SHORT, signals=True),
    Case("argentine-4v4", "argentine-4v4", 1, SHORT, signals=True),
    Case("mineiro-1v1", "mineiro-1v1", 1, covers=("six", "play_hand")),
    Case("mineiro-2v2", "mineiro-2v2", 3, signals=True, covers=("play_hand",)),
    Case("mineiro-1v1-blind-nobody", "mineiro-1v1", 1,
         {"blind_iron_hand": True, "all_tied": "nobody"}, covers=("play_face_down",)),
]


class _SeededPolicy:
    """A seat that picks a legal action with its own seeded RNG (mostly cards, see WEIGHTS)
    and, where the case allows, now and then sends its partners a sign: deterministic, and it
    reaches every kind of call."""

    def __init__(self, case: Case, seat: int) -> None:
        self._rng = random.Random(f"golden/{case.name}/{seat}")
        self._signals = case.signals

    def __call__(self, request: DecisionRequest) -> Answer:
        legal = request.legal_actions
        weights = [WEIGHTS.get(action.kind, 1.0) for action in legal]
        index = self._rng.choices(range(len(legal)), weights)[0]
        signal = None
        if self._signals and self._rng.random() < 0.2:
            kind = self._rng.choice(SIGNS)
            value = self._rng.randrange(34) if kind is SignalKind.ENVIDO else None
            signal = Signal(kind, value=value)
        return Answer(action_index=index, signal=signal)


def transcript(case: Case) -> list[dict[str, Any]]:
    """The case's match played through the referee, as replay lines with times zeroed."""
    game = Match(case.variant, case.options, case.seed)
    links = [LocalLink(f"seeded{s}", _SeededPolicy(case, s)) for s in range(game.num_seats)]
    report = trio.run(
        lambda: run_match(f"golden:{case.name}", game, list(links), time_control=TIME_CONTROL)
    )
    lines = list(report_lines(report, time_control=TIME_CONTROL))
    for line in lines:
        for key in ("latency_ms", "started_at", "finished_at"):
            if key in line:
                line[key] = 0
    return lines


def _dump(lines: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_a_seeded_match_replays_its_golden_transcript(case: Case) -> None:
    """The match regenerated today is the committed transcript, line for line (deals, legal
    action order, signals, awards and their reasons, the result); the first line that differs
    is shown with the command that regenerates the files."""
    path = GOLDEN / f"{case.name}.jsonl"
    fresh = transcript(case)
    if REGOLD:
        path.parent.mkdir(exist_ok=True)
        path.write_text(_dump(fresh), encoding="utf-8")
    assert path.exists(), f"no golden transcript {path}: run ARENA_REGOLD=1 pytest {__file__}"
    golden = [json.loads(text) for text in path.read_text(encoding="utf-8").splitlines()]
    for number, (want, got) in enumerate(zip(golden, fresh, strict=False), 1):
        assert got == want, (
            f"{path.name} line {number} differs:\n  golden: {want}\n  now:    {got}\n"
            "if the change is intended: ARENA_REGOLD=1 pytest tests/test_golden.py; "
            "git diff tests/golden/"
        )
    assert len(fresh) == len(golden), f"{path.name}: {len(golden)} lines, now {len(fresh)}"


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_a_golden_transcript_is_a_replay_that_verifies(case: Case) -> None:
    """Each committed transcript is a replay file `arena replay` accepts: it loads, replays
    through the engine to its recorded awards and result, ended normally with no strike, and
    it reaches what the case is for (a sign, a flor, a discard, a hand of ten...)."""
    path = GOLDEN / f"{case.name}.jsonl"
    replay = load_replay(path)
    match = verify_replay(replay)
    assert match.is_over
    assert replay.result is not None
    assert replay.result["termination"] == "normal"
    assert replay.result["strikes"] == [0] * match.num_seats
    actions = [line for line in replay.lines if line["type"] == "action"]
    assert not any(line["fault"] for line in actions)
    assert any(line.get("signal") for line in actions) == case.signals, case.name
    kinds = {line["action"]["kind"] for line in actions}
    assert set(case.covers) <= kinds, (case.name, kinds)
    assert list(describe(replay))[-1].startswith("result: normal")
