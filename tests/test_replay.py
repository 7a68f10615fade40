"""Replay format 2 (docs/replay.md, docs/replay.schema.json): a file a third party can re-score.

Matches of every variant are played through the real referee (`run_match`) by seeded
in-process seats, some of them faulty (an out-of-range index, a seat that never answers under
trio's MockClock, a dropped connection), written with the tournament's `write_replay` to a
real file, and then read back three ways: `verify_replay` (the engine regenerates every line),
tests/rescore.py (an independent program that imports nothing from `arena`: it only sums the
file's awards and checks its scores and chico ends), and the JSON Schema (the session check
in conftest.py validates every replay written here too). The end-to-end test at the bottom
runs a misbehaving bot process through `arena tournament`.
"""

from __future__ import annotations

import copy
import json
import random
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing
from jsonschema import Draft202012Validator
from rescore import RescoreError, rescore
from test_e2e_support import TEST_BOTS, arena, bot_cmd, explain, write_config

from arena.errors import BotDisconnected, ConfigError, ReplayMismatchError
from arena.referee import Answer, DecisionRequest, FaultPolicy, MatchReport, TimeControl, run_match
from arena.referee.local import LocalLink, Policy
from arena.referee.outcome import Outcome, Termination
from arena.replay import describe, load_replay, verify_replay, write_replay
from arena.rules import ActionKind, FlorOutcome, Match, find_variant, full_deck
from arena.rules.signals import Signal, SignalKind
from arena.tournament.config import load_config

HERE = Path(__file__).parent
FIXTURES = HERE / "fixtures"
SCHEMA = Draft202012Validator(
    json.loads((HERE.parent / "docs" / "replay.schema.json").read_text(encoding="utf-8"))
)
TIME_CONTROL = TimeControl(decision_ms=1000)
SHORT = {"target": 15, "chicos": 1}
K = ActionKind
# Every variant, and the options that change what a replay must say.
VARIANTS: list[tuple[str, str, dict[str, Any]]] = [
    ("argentine-1v1", "argentine-1v1", {"target": 15}),
    ("argentine-2v2", "argentine-2v2", SHORT),
    ("argentine-2v2-flor", "argentine-2v2-flor", SHORT),
    ("argentine-2v2-leaky", "argentine-2v2", {**SHORT, "flor": True, "signals": "leaky"}),
    ("argentine-gallo-rotating", "argentine-gallo", SHORT),
    ("argentine-gallo-fixed", "argentine-gallo", {**SHORT, "gallo": "fixed"}),
    ("argentine-3v3", "argentine-3v3", SHORT),
    ("argentine-4v4", "argentine-4v4", SHORT),
    ("mineiro-1v1-blind", "mineiro-1v1", {"blind_iron_hand": True, "all_tied": "nobody"}),
    ("mineiro-2v2", "mineiro-2v2", {}),
]
IDS = [case[0] for case in VARIANTS]


def seeded(name: str, seat: int, *, fault_after: int | None = None,
           fault: Callable[[], Any] | None = None) -> Policy:
    """A seat that picks legal actions with its own RNG (mostly cards, some calls, signs when
    it has partners) and, from its `fault_after`-th decision on, misbehaves with `fault`."""
    rng = random.Random(f"replay/{name}/{seat}")
    count = 0

    async def policy(request: DecisionRequest) -> Answer:
        nonlocal count
        count += 1
        if fault_after is not None and count > fault_after and fault is not None:
            return await fault()
        legal = request.legal_actions
        weights = [4.0 if a.kind in (K.PLAY, K.PLAY_FACE_DOWN) else
                   0.05 if a.kind in (K.FALTA_ENVIDO, K.CONTRAFLOR_AL_RESTO) else 1.0
                   for a in legal]
        index = rng.choices(range(len(legal)), weights)[0]
        signal = None
        if len(request.view.side_of) > 2 and rng.random() < 0.2:
            signal = Signal(rng.choice((SignalKind.TRES, SignalKind.NADA, SignalKind.ENVIDO)),
                            value=None)
            if signal.kind is SignalKind.ENVIDO:
                signal = Signal(SignalKind.ENVIDO, value=rng.randrange(34))
        return Answer(action_index=index, signal=signal)

    return policy


async def _illegal() -> Answer:
    return Answer(action_index=999)


async def _never() -> Answer:
    await trio.sleep_forever()
    raise AssertionError("unreachable")


async def _drop() -> Answer:
    raise BotDisconnected("the bot's connection dropped (deliberate test fault)")


def play(variant: str, options: dict[str, Any], seed: int, policies: list[Policy],
         *, max_strikes: int = 3) -> MatchReport:
    """One match through the real referee, on trio's MockClock (timeouts never sleep)."""
    game = Match(variant, options, seed)
    links = [LocalLink(f"seat{s}", policies[s]) for s in range(game.num_seats)]

    async def main() -> MatchReport:
        return await run_match(f"replay:{variant}:{seed}", game, list(links),
                               time_control=TIME_CONTROL,
                               policy=FaultPolicy(max_strikes=max_strikes))

    return trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


def written(tmp_path: Path, report: MatchReport, name: str, *, legal: bool = False) -> Path:
    path = tmp_path / "replays" / f"{name}.jsonl"
    write_replay(path, report, time_control=TIME_CONTROL, legal=legal)
    return path


def lines_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(text) for text in path.read_text(encoding="utf-8").splitlines()]


def schema_errors(path: Path) -> list[str]:
    return [f"{n}: {e.message}" for n, line in enumerate(lines_of(path), 1)
            for e in SCHEMA.iter_errors(line)]


# ------------------------------------------------------------------ every variant, played out


@pytest.mark.parametrize(("name", "variant", "options"), VARIANTS, ids=IDS)
def test_every_variant_rescores_from_the_file_alone(
    tmp_path: Path, name: str, variant: str, options: dict[str, Any]
) -> None:
    """A match of each variant played to its end writes a format-2 replay that validates
    against the schema, that the engine regenerates line for line, and that the independent
    re-scorer sums to the referee's points and chicos; every hand line names its dealer, mano,
    kind and the scores before it."""
    seats = Match(variant, options).num_seats
    report = play(variant, options, 11, [seeded(name, s) for s in range(seats)])
    path = written(tmp_path, report, name)
    assert schema_errors(path) == []
    replay = load_replay(path)
    assert load_replay(str(path)) == replay  # a string path too (docs/replay.md)
    assert replay.format == 2
    verify_replay(replay)
    found = rescore(path)
    assert found.termination == "normal"
    assert found.points == list(report.outcome.points)
    assert found.games_won == list(report.outcome.games_won)
    hands = [line for line in replay.lines if line["type"] == "hand"]
    assert len(hands) == found.hands == len(report.record.hands)
    assert all(h["dealer"] is not None and h["mano"] == (h["dealer"] + 1) % seats
               for h in hands)
    assert sum(1 for line in replay.lines if line["type"] == "game_end") == found.chicos >= 1
    if variant.startswith("argentine-3") or variant.startswith("argentine-4"):
        assert {h["kind"] for h in hands} == {"normal", "pico_a_pico"}


# ------------------------------------------------------------------ matches cut short

FAULTS = {"illegal_action": (_illegal, 1), "timeout": (_never, 2), "disconnect": (_drop, 1)}


@pytest.mark.parametrize("fault", sorted(FAULTS))
@pytest.mark.parametrize(("name", "variant", "options"), VARIANTS, ids=IDS)
def test_a_match_cut_short_by_a_fault_has_an_award_line_for_every_point(
    tmp_path: Path, name: str, variant: str, options: dict[str, Any], fault: str
) -> None:
    """A match ended by a fault (an out-of-range index, a seat that never answers, a dropped
    connection) somewhere in the middle: the points in its result are exactly the sum of its
    award lines (those of the hand cut short included), the hand cut short names its dealer
    and mano, the file verifies through the engine, and the independent re-scorer agrees."""
    behave, strikes = FAULTS[fault]
    seats = Match(variant, options).num_seats
    after = random.Random(f"{name}/{fault}").randrange(1, 6)
    policies = [seeded(name, s, fault_after=after if s == 1 else None, fault=behave)
                for s in range(seats)]
    report = play(variant, options, 5, policies, max_strikes=strikes)
    assert report.outcome.termination.name.lower() == fault
    path = written(tmp_path, report, f"{name}-{fault}")
    assert schema_errors(path) == []
    verify_replay(load_replay(path))
    found = rescore(path)
    assert found.points == list(report.outcome.points)
    assert found.cut_short
    lines = lines_of(path)
    last_hand = [line for line in lines if line["type"] == "hand"][-1]
    assert last_hand["dealer"] is not None
    assert lines[-1]["type"] == "result"


def test_the_hand_cut_short_keeps_its_envido_award_and_showdown(tmp_path: Path) -> None:
    """Seat 0 calls envido, seat 1 accepts, then seat 1 answers out of range (1 strike allowed):
    the match ends in its first hand with the envido's points in the result. The replay has the
    envido line (chain, who announced what, the winner) and the award line for those points,
    which format 1 left out (its result had points that no award explained)."""

    def caller(request: DecisionRequest) -> Answer:
        kinds = [a.kind for a in request.legal_actions]
        return Answer(action_index=kinds.index(K.ENVIDO) if K.ENVIDO in kinds else 0)

    def accepts_then_faults(request: DecisionRequest) -> Answer:
        kinds = [a.kind for a in request.legal_actions]
        if K.QUIERO in kinds:
            return Answer(action_index=kinds.index(K.QUIERO))
        return Answer(action_index=len(kinds) + 3)

    game = Match("argentine-1v1", {"target": 15}, 3)
    order = [caller, accepts_then_faults]
    if game.to_act == 1:
        order.reverse()
    report = play("argentine-1v1", {"target": 15}, 3, order, max_strikes=1)
    assert report.outcome.termination.name == "ILLEGAL_ACTION"
    assert sum(report.outcome.points) == 2
    lines = lines_of(written(tmp_path, report, "envido-cut"))
    (envido,) = [line for line in lines if line["type"] == "envido"]
    assert envido["accepted"]
    assert envido["chain"] == ["envido"]
    assert envido["points"] == 2
    assert envido["winner"] in (0, 1)
    assert envido["announced"][0][1] is not None
    awards = [line for line in lines if line["type"] == "award"]
    assert [(a["team"], a["points"], a["reason"]) for a in awards] == [
        (envido["side"], 2, "envido")
    ]
    assert not any(line["type"] == "hand_end" for line in lines)
    assert rescore(tmp_path / "replays" / "envido-cut.jsonl").points == list(
        report.outcome.points
    )


def test_a_fold_names_the_side_that_won_the_hand(tmp_path: Path) -> None:
    """The seat to act folds at once: the hand_end line's winner_team is the other side (format
    1 wrote null), and tricks_winner stays null (no trick was played)."""
    game = Match("argentine-1v1", {"target": 15}, 9)
    folder = game.to_act

    def policy(request: DecisionRequest) -> Answer:
        kinds = [a.kind for a in request.legal_actions]
        if request.seat == folder and K.FOLD in kinds:
            return Answer(action_index=kinds.index(K.FOLD))
        return Answer(action_index=0)

    report = play("argentine-1v1", {"target": 15}, 9, [policy, policy])
    lines = lines_of(written(tmp_path, report, "fold"))
    first_end = next(line for line in lines if line["type"] == "hand_end")
    assert first_end["ended_by"] == "fold"
    assert first_end["winner_team"] == 1 - folder % 2
    assert first_end["tricks_winner"] is None


# ------------------------------------------------------------------ seeds, legal actions


def test_a_63_bit_seed_survives_a_json_reader_that_uses_doubles(tmp_path: Path) -> None:
    """The header's seed is a decimal string: a reader that turns every number into a double
    (JavaScript, jq) still gets the exact seed, and the replay verifies with it (a leaky match,
    whose leaked signs are drawn from the seed)."""
    seed = 2**63 - 25
    options = {**SHORT, "signals": "leaky", "leak": 0.5}
    report = play("argentine-2v2", options, seed, [seeded("seed", s) for s in range(4)])
    path = written(tmp_path, report, "seed")
    as_doubles = json.loads(path.read_text(encoding="utf-8").splitlines()[0],
                            parse_int=float)
    assert as_doubles["seed"] == str(seed)
    assert int(float(seed)) != seed  # what a number would have become
    replay = load_replay(path)
    assert replay.seed == seed
    verify_replay(replay)
    leaked = [line["signal"]["seen_by"] for line in lines_of(path)
              if line["type"] == "action" and "signal" in line]
    assert leaked
    assert any(len(seen) > 2 for seen in leaked)


def test_legal_actions_are_written_on_request_and_checked_on_replay(tmp_path: Path) -> None:
    """With legal=True every action line lists the legal actions its seat chose from (the
    chosen one among them); the file still validates and verifies; a tampered list fails
    verification, naming the line."""
    report = play("argentine-2v2-flor", SHORT, 4, [seeded("legal", s) for s in range(4)])
    path = written(tmp_path, report, "legal", legal=True)
    assert schema_errors(path) == []
    replay = load_replay(path)
    assert replay.header["legal"] is True
    verify_replay(replay)
    actions = [line for line in replay.lines if line["type"] == "action"]
    for line in actions:
        chosen = {k: v for k, v in line["action"].items() if k in ("kind", "card", "slot")
                  and v is not None}
        assert chosen in line["legal"]
    tampered = copy.deepcopy(replay)
    line = next(line for line in tampered.lines if line["type"] == "action")
    line["legal"] = line["legal"][:1]
    with pytest.raises(ReplayMismatchError, match="line"):
        verify_replay(tampered)


# ------------------------------------------------------------------ reading, checking


def test_format_1_files_still_load_verify_and_print() -> None:
    """The format-1 fixtures (written by the previous version: integer seed, awards after the
    actions, no mano) load, replay through the engine to their awards and result, and print."""
    for path in sorted(FIXTURES.glob("replay-v1-*.jsonl")):
        replay = load_replay(path)
        assert replay.format == 1
        assert isinstance(replay.header["seed"], int)
        match = verify_replay(replay)
        assert match.is_over
        text = list(describe(replay))
        assert "(replay format 1)" in text[0]
        assert text[-1].startswith("result: normal")


def test_a_tampered_award_fails_the_engine_and_the_rescorer(tmp_path: Path) -> None:
    """One award's points changed by one: `verify_replay` names the line, the independent
    re-scorer refuses the file, and the session's schema check still accepts it (the schema
    checks shapes; scores are the re-scorer's job)."""
    report = play("mineiro-2v2", {}, 2, [seeded("tamper", s) for s in range(4)])
    good = lines_of(written(tmp_path, report, "tamper"))
    index = next(i for i, line in enumerate(good) if line["type"] == "award")
    good[index]["points"] += 1
    bad = tmp_path / "replays" / "tamper.tampered.jsonl"
    bad.write_text("".join(json.dumps(line) + "\n" for line in good), encoding="utf-8")
    with pytest.raises(ReplayMismatchError, match=f"line {index + 1}"):
        verify_replay(load_replay(bad))
    with pytest.raises(RescoreError):
        rescore(bad)
    assert schema_errors(bad) == []


def _drop_first(kind: str, reason: str | None = None) -> Callable[[list[dict[str, Any]]], None]:
    def tamper(lines: list[dict[str, Any]]) -> None:
        lines.remove(next(line for line in lines if line["type"] == kind
                          and (reason is None or line["reason"] == reason)))
    return tamper


def _bump_hand_scores(lines: list[dict[str, Any]]) -> None:
    hand = [line for line in lines if line["type"] == "hand"][1]
    hand["scores"][0] += 1


def _bump_flor_points(lines: list[dict[str, Any]]) -> None:
    flor = next(line for line in lines if line["type"] == "flor")
    flor["points"] += 1


@pytest.mark.parametrize(
    ("tamper", "says"),
    [
        (_drop_first("game_end"), "chico"),
        (_drop_first("award", "hand"), "scores after the hand"),
        (_bump_hand_scores, "scores before the hand"),
        (_bump_flor_points, "flor payout"),
    ],
    ids=["no-chico-end", "award-missing", "hand-scores", "flor-points"],
)
def test_the_rescorer_catches_a_file_that_contradicts_itself(
    tmp_path: Path, tamper: Callable[[list[dict[str, Any]]], None], says: str
) -> None:
    """The re-scorer is not a rubber stamp: a missing chico end, a missing award, a wrong score
    before a hand, or a flor paid off its payout row each fail, saying what is wrong."""
    lines = lines_of(HERE / "golden" / "argentine-2v2-flor.jsonl")
    tamper(lines)
    bad = tmp_path / "bad.tampered.jsonl"
    bad.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    with pytest.raises(RescoreError, match=says):
        rescore(bad)


def test_an_unknown_format_is_refused_naming_the_field(tmp_path: Path) -> None:
    """A header of a format this arena does not read is one clear error naming `format`."""
    path = tmp_path / "future.tampered.jsonl"
    path.write_text(json.dumps({"type": "match", "format": 3}) + "\n", encoding="utf-8")
    with pytest.raises(ReplayMismatchError, match="format: replay format 3"):
        load_replay(path)


@pytest.mark.parametrize(
    ("chain", "payout"),
    [
        ((K.FLOR,), "unopposed"),
        ((K.FLOR, K.CON_FLOR_QUIERO), "flor_quiero"),
        ((K.FLOR, K.CON_FLOR_ME_ACHICO), "flor_achico"),
        ((K.FLOR, K.CONTRAFLOR, K.CON_FLOR_QUIERO), "contraflor_quiero"),
        ((K.FLOR, K.CONTRAFLOR, K.CON_FLOR_ME_ACHICO), "contraflor_achico"),
        ((K.FLOR, K.CONTRAFLOR_AL_RESTO, K.CON_FLOR_QUIERO), "al_resto_quiero"),
        ((K.FLOR, K.CONTRAFLOR_AL_RESTO, K.CON_FLOR_ME_ACHICO), "al_resto_achico"),
        ((K.FLOR, K.CONTRAFLOR, K.CONTRAFLOR_AL_RESTO, K.CON_FLOR_ME_ACHICO),
         "al_resto_achico_after_contraflor"),
    ],
)
def test_a_flor_outcome_names_its_payout_row(chain: tuple[ActionKind, ...], payout: str) -> None:
    """`FlorOutcome.payout` names the row of RULES.md §4.5's payout table that paid it."""
    assert FlorOutcome(chain, 0, None, 0, 3).payout == payout


def test_replay_legal_in_the_config_must_be_a_boolean(tmp_path: Path) -> None:
    """`replay_legal = "yes"` is refused with one line naming tournament.replay_legal; `true`
    is read into the config the runner writes replays with."""
    bots = {"a": bot_cmd("first_legal"), "b": bot_cmd("first_legal")}
    config = write_config(tmp_path, name="legal", variants=["argentine-1v1"], bots=bots)
    text = config.read_text(encoding="utf-8")
    config.write_text(text.replace("[tournament]\n", '[tournament]\nreplay_legal = "yes"\n'),
                      encoding="utf-8")
    with pytest.raises(ConfigError, match=r"^tournament\.replay_legal: must be true or false"):
        load_config(config)
    config.write_text(text.replace("[tournament]\n", "[tournament]\nreplay_legal = true\n"),
                      encoding="utf-8")
    assert load_config(config).replay_legal is True


# ------------------------------------------------------------------ from the outside


def _rescore_without_arena(*paths: Path) -> subprocess.CompletedProcess[str]:
    """tests/rescore.py run as a program with `arena` made unimportable."""
    code = ("import runpy, sys; sys.modules['arena'] = None; "
            f"sys.argv = ['rescore', *sys.argv[1:]]; "
            f"runpy.run_path({str(HERE / 'rescore.py')!r}, run_name='__main__')")
    return subprocess.run([sys.executable, "-c", code, *map(str, paths)],
                          capture_output=True, text=True, timeout=120, check=False)


def test_the_rescorer_runs_without_arena(tmp_path: Path) -> None:
    """tests/rescore.py, with every `arena` import made to fail, re-scores a played replay
    and the golden transcripts (exit 0), and refuses a file whose result claims a point more
    than its awards (exit 1)."""
    report = play("argentine-gallo", SHORT, 8, [seeded("outside", s) for s in range(3)])
    path = written(tmp_path, report, "outside")
    golden = sorted((HERE / "golden").glob("*.jsonl"))
    run = _rescore_without_arena(path, *golden)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.count(": OK ") == 1 + len(golden)
    lines = lines_of(path)
    lines[-1]["points"][0] += 1
    bad = tmp_path / "outside.tampered.jsonl"
    bad.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    run = _rescore_without_arena(bad)
    assert run.returncode == 1
    assert "FAIL result points" in run.stdout


@pytest.mark.e2e
def test_a_misbehaving_bot_process_leaves_a_replay_a_third_party_can_rescore(
    tmp_path: Path,
) -> None:
    """`arena tournament` with one strike allowed: a real bot process calls envido, accepts,
    then answers out of range. The match ends by an illegal action in the middle of a hand;
    its replay carries the envido showdown and an award line for every point of the stored
    result, and (tournament.replay_legal = true) each decision's legal actions; `arena replay`
    accepts it, and the re-scorer (no arena imports) agrees."""
    config = write_config(
        tmp_path, name="cut", variants=["argentine-1v1"], max_strikes=1, games=2,
        bots={"envido_then_illegal": bot_cmd("envido_then_illegal"),
              "first_legal": bot_cmd("first_legal")},
    )
    assert (TEST_BOTS / "envido_then_illegal.py").is_file()
    config.write_text(config.read_text(encoding="utf-8").replace(
        "[tournament]\n", "[tournament]\nreplay_legal = true\n", 1), encoding="utf-8")
    run = arena("tournament", config, "--no-progress", cwd=tmp_path)
    assert run.returncode == 0, explain(run)
    files = sorted((tmp_path / "replays").rglob("*.jsonl"))
    assert len(files) == 2  # one match per side
    for path in files:
        lines = lines_of(path)
        result = lines[-1]
        assert result["termination"] == "illegal_action", explain(run)
        assert sum(result["points"]) > 0
        assert any(line["type"] == "envido" for line in lines)
        assert sum(line["points"] for line in lines if line["type"] == "award") == sum(
            result["points"]
        )
        actions = [line for line in lines if line["type"] == "action"]
        assert all(line["legal"] for line in actions)  # tournament.replay_legal = true
        checked = arena("replay", "--quiet", path, cwd=tmp_path)
        assert checked.returncode == 0, explain(checked)
    rescored = _rescore_without_arena(*files)
    assert rescored.returncode == 0, rescored.stdout + rescored.stderr
    assert rescored.stdout.count("(cut short)") == 2


def test_a_deal_that_is_not_the_seeds_fails_the_check(tmp_path: Path) -> None:
    """docs/replay.md: deals are `deal_cards(variant, seed, game, hand)`. A hostile review
    (round 4) changed a card of a deal in a replay and `arena replay` said OK: the check
    played the file's own deals. Now it deals from the seed, so (a) a card changed in a deal
    — one nobody played, in a hand with no envido or flor, so every other line still agrees
    — fails at that hand's line, and (b) a changed seed fails at the first hand line, both
    through the CLI, one line each, no traceback."""
    report = play("argentine-1v1", {"target": 30}, 5, [seeded("forge", s) for s in range(2)])
    good = lines_of(written(tmp_path, report, "forge"))
    deck = full_deck(find_variant("argentine-1v1").deck)
    forged_at = None
    for index, line in enumerate(good):
        if line["type"] != "hand":
            continue
        rest = good[index + 1:]
        end = next((i for i, x in enumerate(rest) if x["type"] == "hand"), len(rest))
        this_hand = rest[:end]
        if any(x["type"] in ("envido", "flor") for x in this_hand):
            continue
        played = json.dumps([x for x in this_hand if x["type"] == "action"])
        unplayed = [c for c in line["deal"][0] if f'"{c}"' not in played]
        if unplayed:
            dealt = {c for cards in line["deal"] for c in cards}
            stranger = next(str(c) for c in deck if str(c) not in dealt)
            line["deal"][0][line["deal"][0].index(unplayed[0])] = stranger
            forged_at = index + 1
            break
    assert forged_at is not None, "no hand with an unplayed card and no envido"
    forged = tmp_path / "forged.tampered.jsonl"
    forged.write_text("".join(json.dumps(x) + "\n" for x in good), encoding="utf-8")
    checked = arena("replay", "--quiet", forged, cwd=tmp_path)
    assert checked.returncode != 0, explain(checked)
    assert f"line {forged_at}" in checked.stderr, explain(checked)
    assert "Traceback" not in checked.stderr
    reseeded = lines_of(written(tmp_path, report, "reseeded"))
    reseeded[0]["seed"] = "12345"
    path = tmp_path / "reseeded.tampered.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in reseeded), encoding="utf-8")
    first_hand = next(i for i, x in enumerate(reseeded) if x["type"] == "hand") + 1
    with pytest.raises(ReplayMismatchError, match=f"line {first_hand}"):
        verify_replay(load_replay(path))


def _first(kind: str, lines: list[dict[str, Any]]) -> dict[str, Any]:
    return next(line for line in lines if line["type"] == kind)


MALFORMED: dict[str, Callable[[list[dict[str, Any]]], Any]] = {
    "a-list-line": lambda lines: lines.insert(1, [1, 2]),
    "target-a-string": lambda lines: lines[0]["options"].update(target="x"),
    "card-a-number": lambda lines: _first("hand", lines)["deal"][0].__setitem__(0, 7),
    "action-null": lambda lines: _first("action", lines).update(action=None),
    "unknown-kind": lambda lines: _first("action", lines)["action"].update(kind="teleport"),
    "no-seats": lambda lines: lines[0].pop("seats"),
    "no-type": lambda lines: _first("award", lines).pop("type"),
}


@pytest.mark.parametrize("case", [*MALFORMED, "binary", "deep"])
def test_a_malformed_replay_is_one_line_naming_where(tmp_path: Path, case: str) -> None:
    """`arena replay` on a file that is not what docs/replay.md describes — bytes that are
    not UTF-8, a line that is a list or has no type, a string where a number belongs, a
    number where a card belongs, a null action, an unknown action kind, a header without
    seats, a line nested 100,000 deep — fails in one line naming the file line, never a
    traceback (a hostile review, round 4, got eight tracebacks)."""
    report = play("argentine-1v1", {"target": 15}, 3, [seeded("bad", s) for s in range(2)])
    lines = lines_of(written(tmp_path, report, "bad"))
    path = tmp_path / "bad.tampered.jsonl"
    text = "".join(json.dumps(line) + "\n" for line in lines)
    if case == "binary":
        path.write_bytes(text.encode()[:200] + b"\n\x9a\xff\x00garbage\n")
    elif case == "deep":
        path.write_text(text.replace("\n", "\n" + "[" * 100_000 + "]" * 100_000 + "\n", 1),
                        encoding="utf-8")
    else:
        MALFORMED[case](lines)
        path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    checked = arena("replay", path, cwd=tmp_path)  # printed too: the describing pass reads it
    assert checked.returncode == 2, explain(checked)  # the CLI's exit for bad input
    assert "Traceback" not in checked.stderr, explain(checked)
    error = [line for line in checked.stderr.splitlines() if line.strip()]
    assert len(error) == 1, explain(checked)
    assert error[0].startswith("error: replay check failed:"), error
    assert re.search(r"(line \d+|jsonl:\d+):", error[0]), error


@pytest.mark.parametrize("forge", ["flipped", "strikes", "normal-with-a-culprit"])
def test_a_results_culprit_and_strikes_must_agree_with_the_action_lines(
    tmp_path: Path, forge: str
) -> None:
    """A match lost by timeout (seat 1 stops answering after 3 decisions; 3 strikes end it):
    its result line with the loss flipped onto seat 0 (winner, faulty seat, strikes: a
    hostile review, round 4, passed such a file), with one strike more, or claiming a normal
    end with a faulty seat, fails the check; the file as written passes."""
    policies = [seeded("culprit", 0), seeded("culprit", 1, fault_after=3, fault=_never)]
    report = play("argentine-1v1", {"target": 15}, 8, policies)
    path = written(tmp_path, report, "culprit")
    assert verify_replay(load_replay(path)) is not None
    lines = lines_of(path)
    result = lines[-1]
    assert (result["termination"], result["faulty_seat"], result["winner_team"],
            result["strikes"]) == ("timeout", 1, 0, [0, 3])
    if forge == "flipped":
        result.update(winner_team=1, faulty_seat=0, strikes=[3, 0])
    elif forge == "strikes":
        result["strikes"] = [0, 4]
    else:
        result["termination"] = "normal"
    bad = tmp_path / "culprit.tampered.jsonl"
    bad.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    with pytest.raises(ReplayMismatchError):
        verify_replay(load_replay(bad))


@pytest.mark.parametrize("forge", ["as-written", "a-winner", "a-hand"])
def test_a_forfeit_of_every_seat_names_no_culprit_no_winner_and_no_hand(
    tmp_path: Path, forge: str
) -> None:
    """Neither seat took its place (both crashed at start): the runner writes a forfeit with
    no faulty seat and no winner. That passes the check; the same file given a winner, or a
    hand line taken from a played match, does not."""
    game = Match("argentine-1v1", {}, 8)
    outcome = Outcome(Termination.FORFEIT, None, None, "seat 0: crashed; seat 1: crashed",
                      None, (0, 0), (0, 0), (0, 0))
    report = MatchReport(match_id="both-crashed", variant="argentine-1v1", seed=8,
                         seat_names=("a", "b"), outcome=outcome, decisions=[],
                         record=game.record())
    path = written(tmp_path, report, "both")
    lines = lines_of(path)
    if forge == "a-winner":
        lines[-1]["winner_team"] = 0
    elif forge == "a-hand":
        played = lines_of(written(tmp_path, play("argentine-1v1", {"target": 15}, 8, [
            seeded("p", 0), seeded("p", 1)]), "played"))
        lines.insert(1, next(line for line in played if line["type"] == "hand"))
    if forge != "as-written":
        path = path.with_name("both.tampered.jsonl")
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    if forge == "as-written":
        assert verify_replay(load_replay(path)) is not None
    else:
        with pytest.raises(ReplayMismatchError, match="no faulty seat"):
            verify_replay(load_replay(path))
