"""`arena check`: the conformance check a bot author runs against their own bot.

Two halves. The judging (arena/check.py) is pure over stored rows and replays, so its tests
play matches in-process (LocalLink policies on trio's MockClock, nothing sleeps), store them
with the real Store and replay writer, and judge what was stored. The end-to-end tests run the
real `arena check` in a subprocess against the sample bot and the faulty bots of tests/bots/.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing
from test_e2e_support import SAMPLE_BOTS, TEST_BOTS, arena, explain, stored_matches

from arena.check import (
    CHECKS,
    Refused,
    Verdict,
    analyse,
    check_lines,
    check_match,
    check_variant,
    count_refused,
    summary,
)
from arena.referee import Answer, DecisionRequest, FaultPolicy, TimeControl, run_match
from arena.referee.local import LocalLink, Policy, first_legal
from arena.replay import Replay, load_replay, write_replay
from arena.rules import Match, variant_names
from arena.tournament.store import MatchRow, Store

SHORT = {"target": 15, "chicos": 1}
CRASH_MESSAGE = "crash_at_start: cannot load weights.bin (deliberate test crash)"


def _verdicts(findings: Any) -> dict[str, Verdict]:
    return {check.key: f.verdict for check, f in zip(CHECKS, findings, strict=True)}


def _stored(
    tmp_path: Path, candidate: Policy, opponent: Policy = first_legal, *,
    variant: str = "argentine-1v1", match_id: str = "t:argentine-1v1:candidate-opponent:0",
) -> tuple[MatchRow, Replay]:
    """Play one match in-process (the candidate on seat 0's team), store it and write its
    replay as the tournament does, and read both back."""
    game = Match(variant, SHORT, 7)
    links = [
        LocalLink("candidate" if game.team_of[seat] == 0 else "opponent",
                  candidate if game.team_of[seat] == 0 else opponent)
        for seat in range(game.num_seats)
    ]
    time_control = TimeControl(decision_ms=1000)

    async def main() -> Any:
        return await run_match(match_id, game, list(links), time_control=time_control,
                               policy=FaultPolicy(max_strikes=3))

    report = trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    path = tmp_path / f"{match_id.replace(':', '_')}.jsonl"
    write_replay(path, report, time_control=time_control)
    store = Store(tmp_path / "check.db")
    store.begin_tournament("t", {})
    store.save_match("t", report, options=SHORT, team_bots=("candidate", "opponent"),
                     replay=path, accounts=game.team_of)
    row = next(r for r in store.matches("t") if r.id == match_id)
    store.close()
    return row, load_replay(path)


async def _silent(request: DecisionRequest) -> Answer:
    await trio.sleep_forever()
    raise AssertionError("unreachable")


def _late_once() -> Policy:
    """Misses its first deadline, then answers the first legal action at once."""
    asked = 0

    async def policy(request: DecisionRequest) -> Answer:
        nonlocal asked
        asked += 1
        if asked == 1:
            await trio.sleep(5)
        return Answer(action_index=0)

    return policy


# ---------------------------------------------------------------------------------------------
# The judging, over stored rows and replays


def test_a_clean_match_passes_every_check_and_reports_what_the_candidate_did(
    tmp_path: Path,
) -> None:
    """A match played to its end without a fault passes all seven checks; the decisions,
    latencies and chosen kinds are exactly the candidate's action lines in the replay, and
    what it was offered comes from the rules engine (the first legal action is always a play
    or a call, so a first-legal bot is offered more than it chooses)."""
    row, replay = _stored(tmp_path, first_legal)
    checked = check_match(row, replay)
    assert set(_verdicts(checked.findings).values()) == {Verdict.PASS}
    mine = [line for line in replay.lines if line["type"] == "action" and line["seat"] == 0]
    assert checked.seats == (0,)
    assert checked.decisions == len(mine) > 0
    assert checked.chosen == tuple(line["action"]["kind"] for line in mine)
    assert checked.latencies_ms == tuple(line["latency_ms"] for line in mine)
    assert set(checked.chosen) < checked.offered
    report = check_variant("argentine-1v1", [checked])
    assert report.passed
    assert report.strikes == 0
    assert sum(n for _, n in report.chosen) == len(mine)
    assert set(report.never_chosen) == checked.offered - set(checked.chosen)
    assert summary([report]).startswith("PASS: every check passed in 1 variant")


def test_refused_messages_fail_only_clean_with_each_code_counted(tmp_path: Path) -> None:
    """Messages the referee refused in-band (read from its log: `count_refused`) fail 'sends
    nothing the referee refuses' with a line per error code, most frequent first, and
    nothing else; late answers alone (the consequence of a timeout, which 'in time'
    reports) do not. Lines of other events, other bots, or not JSON at all are skipped."""
    row, replay = _stored(tmp_path, first_legal)
    log = tmp_path / "referee.jsonl"
    event = {"event": "messages_refused", "bot": "candidate", "matches": [row.id],
             "counts": {"UNKNOWN_REQUEST": 2, "DUPLICATE_ANSWER": 5, "LATE_ANSWER": 1},
             "first": {"UNKNOWN_REQUEST": "no such request on this connection (request 'x')",
                       "DUPLICATE_ANSWER": "this request was already answered"}}
    log.write_text("\n".join([
        "not json {",
        json.dumps({**event, "bot": "opponent"}),
        json.dumps({**event, "event": "bot_disconnected"}),
        json.dumps(event),
        json.dumps({**event, "counts": {"UNKNOWN_REQUEST": 1}, "first": {}}),  # a reconnect
    ]) + "\n", encoding="utf-8")
    refused = count_refused(log)
    assert set(refused) == {row.id}
    assert refused[row.id].counts == {"UNKNOWN_REQUEST": 3, "DUPLICATE_ANSWER": 5,
                                      "LATE_ANSWER": 1}
    checked = check_match(row, replay, refused=refused[row.id])
    verdicts = _verdicts(checked.findings)
    assert verdicts.pop("clean") is Verdict.FAIL
    assert set(verdicts.values()) == {Verdict.PASS}
    finding = checked.findings[[c.key for c in CHECKS].index("clean")]
    assert finding.faults == checked.refused == 8  # the late answer is not counted
    assert finding.detail.splitlines() == [
        "the referee refused 8 messages of the bot, answering each with an Error that says why:",
        "DUPLICATE_ANSWER x5: this request was already answered",
        "UNKNOWN_REQUEST x3: no such request on this connection (request 'x')",
    ]
    lines = check_lines([check_variant("argentine-1v1", [checked])])
    assert "  FAIL  sends nothing the referee refuses" in lines
    assert any("(8 refused messages in 1 of 1 match;" in line for line in lines)
    late_only = Refused({"LATE_ANSWER": 4}, {})
    assert set(_verdicts(check_match(row, replay, refused=late_only).findings).values()) == {
        Verdict.PASS}
    assert count_refused(tmp_path / "no-such.jsonl") == {}


def test_three_timeouts_fail_in_time_with_the_stored_detail_and_every_strike(
    tmp_path: Path,
) -> None:
    """A candidate that never answers: 'in time' fails with the referee's detail ("no answer
    within 1000 ms"), counting the two recorded timeouts and the third that ended the match
    (not a recorded decision); 'natural end' fails naming the candidate; the other checks
    pass; no latency is reported for decisions it never answered."""
    row, replay = _stored(tmp_path, _silent)
    checked = check_match(row, replay)
    assert row.termination == "timeout"
    assert _verdicts(checked.findings) == {
        "hello": Verdict.PASS, "in_time": Verdict.FAIL, "legal": Verdict.PASS,
        "connected": Verdict.PASS, "natural_end": Verdict.FAIL, "own_answers": Verdict.PASS,
        "clean": Verdict.PASS,
    }
    in_time, natural = checked.findings[1], checked.findings[4]
    assert in_time.detail.startswith("no answer within 1000 ms")
    assert in_time.faults == 3
    assert checked.strikes == 3
    assert checked.decisions == 3
    assert in_time.where.endswith("game 0 hand 0, seat 0")
    assert natural.detail.startswith("timeout by candidate (seat 0): no answer within")
    assert checked.latencies_ms == ()
    assert checked.chosen == ()


def test_one_missed_deadline_fails_in_time_even_though_the_match_ends_normally(
    tmp_path: Path,
) -> None:
    """A single timeout strike (below max_strikes) leaves the match normal, but 'in time'
    fails and so does the variant: the check is per decision, not per match ending."""
    row, replay = _stored(tmp_path, _late_once())
    checked = check_match(row, replay)
    assert row.termination == "normal"
    assert _verdicts(checked.findings)["in_time"] is Verdict.FAIL
    assert _verdicts(checked.findings)["natural_end"] is Verdict.PASS
    assert checked.findings[1].faults == 1
    assert not check_variant("argentine-1v1", [checked]).passed


def test_illegal_answers_fail_only_legal_answers(tmp_path: Path) -> None:
    """Out-of-range indexes fail 'only legal answers' with the referee's detail, not 'in
    time'; the faulted decisions (where the referee played the default action) are not
    counted as the candidate's choices."""
    row, replay = _stored(tmp_path, lambda request: Answer(action_index=99))
    checked = check_match(row, replay)
    verdicts = _verdicts(checked.findings)
    assert verdicts["legal"] is Verdict.FAIL
    assert verdicts["in_time"] is Verdict.PASS
    assert "out of range" in checked.findings[2].detail
    assert checked.findings[2].faults == 3
    assert checked.chosen == ()


def test_an_opponent_fault_fails_only_the_natural_end_and_names_the_opponent(
    tmp_path: Path,
) -> None:
    """In a 2v2 where the opponent never answers, the candidate's own checks pass, on both of
    its seats; the match did not reach its natural end, and the detail says whose fault."""
    row, replay = _stored(tmp_path, first_legal, _silent, variant="argentine-2v2",
                          match_id="t:argentine-2v2:candidate-opponent:0")
    checked = check_match(row, replay)
    assert checked.seats == (0, 2)
    verdicts = _verdicts(checked.findings)
    assert verdicts.pop("natural_end") is Verdict.FAIL
    assert set(verdicts.values()) == {Verdict.PASS}
    assert re.match(r"timeout by opponent \(seat [13]\): no answer", checked.findings[4].detail)


def test_a_forfeit_at_start_fails_hello_and_leaves_the_rest_untested() -> None:
    """A candidate that never connected: 'connects' fails with the stored detail (which
    quotes the tail of its output); nothing after the hello was exercised, so those checks
    are untested, not passed; the variant fails."""
    detail = f"candidate exited with code 3 before connecting; its last output:\n{CRASH_MESSAGE}"
    row = MatchRow("t:mineiro-1v1:candidate-opponent:0", "mineiro-1v1", "candidate",
                   "opponent", "forfeit", 1, "candidate", 0, 0, (0, 0),
                   ("candidate", "opponent"))
    replay = Replay(
        header={"type": "match", "seats": [{"seat": 0, "bot": "candidate"},
                                           {"seat": 1, "bot": "opponent"}]},
        lines=[],
        result={"type": "result", "termination": "forfeit", "faulty_seat": 0,
                "detail": detail},
    )
    checked = check_match(row, replay)
    assert _verdicts(checked.findings) == {
        "hello": Verdict.FAIL, "in_time": Verdict.UNTESTED, "legal": Verdict.UNTESTED,
        "connected": Verdict.UNTESTED, "natural_end": Verdict.FAIL,
        "own_answers": Verdict.UNTESTED, "clean": Verdict.UNTESTED,
    }
    assert checked.findings[0].detail == detail
    report = check_variant("mineiro-1v1", [checked])
    assert not report.passed
    lines = "\n".join(check_lines([report]))
    assert "FAIL  connects and says hello" in lines
    assert CRASH_MESSAGE in lines
    assert "n/a   stays connected to the end" in lines


def test_variants_combine_their_matches_and_keep_the_first_problem(tmp_path: Path) -> None:
    """Per variant, a check fails if it failed in any match, with the first problem (in match
    order) and the number of matches that failed it; variants come out in the order asked,
    and the summary names the failed checks and variants."""
    clean = _stored(tmp_path, first_legal, match_id="t:argentine-1v1:candidate-opponent:0")
    late = _stored(tmp_path, _late_once(), match_id="t:argentine-1v1:candidate-opponent:1")
    reports = analyse([late, clean], ["mineiro-1v1", "argentine-1v1"])
    assert [r.variant for r in reports] == ["mineiro-1v1", "argentine-1v1"]
    assert reports[0].matches == 0
    assert not reports[0].passed
    report = reports[1]
    assert report.matches == 2
    in_time = report.findings[1]
    assert in_time.verdict is Verdict.FAIL
    assert (in_time.failed, in_time.faults) == (1, 1)
    assert in_time.where.startswith("t:argentine-1v1:candidate-opponent:1,")
    text = summary(reports)
    assert text.startswith("FAIL: 1 of 7 checks failed (answers every decision in time)")
    assert "mineiro-1v1, argentine-1v1" in text


# ---------------------------------------------------------------------------------------------
# End to end: the real `arena check`


def _check(*args: str | Path, cwd: Path) -> Any:
    return arena("check", *args, cwd=cwd)


def _line(verdict: str, title: str) -> str:
    return rf"^\s*{verdict}\s+{re.escape(title)}\s*$"


@pytest.mark.e2e
def test_the_sample_random_bot_passes_every_check() -> None:
    """The sample random bot, given as a command relative to the folder the check runs in,
    passes every check in a 1v1 variant and in gallo (two matches each, both sides):
    exit 0; the table has a row per variant; every check is named with PASS; the action
    kinds it chose are listed; nothing is left in the folder it ran in."""
    run = _check("python random_bot.py", "--variant", "argentine-1v1",
                 "--variant", "argentine-gallo", cwd=SAMPLE_BOTS)
    assert run.returncode == 0, explain(run)
    out = run.stdout
    for check in CHECKS:
        assert re.search(_line("PASS", check.title), out, re.MULTILINE), out
    assert re.search(r"argentine-1v1\s*│(\s*PASS\s*│){5}", out), out
    assert re.search(r"argentine-gallo\s*│(\s*PASS\s*│){5}", out), out
    assert re.search(r"argentine-gallo: .*discard \d+", out), out
    assert "PASS: every check passed in 2 variants (4 matches," in out, out
    assert not (SAMPLE_BOTS / "logs").exists()
    assert not (SAMPLE_BOTS / "check.db").exists()


@pytest.mark.e2e
def test_the_javascript_bot_passes_every_check_in_every_variant(
    js_random: list[str], tmp_path: Path
) -> None:
    """The Node.js sample bot (another language, the same contract) passes every check in
    every variant, one match each: what a bot author in any language sees before a contest."""
    run = _check(" ".join(js_random), "--matches-per-pair", "1", cwd=tmp_path)
    assert run.returncode == 0, explain(run)
    out = run.stdout
    for variant in variant_names():
        assert re.search(rf"{re.escape(variant)}\s*│(\s*PASS\s*│){{5}}", out), out
    assert f"PASS: every check passed in {len(variant_names())} variants" in out, out


@pytest.mark.e2e
def test_a_silent_bot_fails_answers_in_time(tmp_path: Path) -> None:
    """A bot that never answers fails 'answers every decision in time' with the referee's
    detail (no answer within the --decision-ms given), and the match's natural end; it did
    connect. Exit 1, and a hint to keep the logs with --keep."""
    run = _check(f"python {TEST_BOTS / 'silent.py'}", "--variant", "argentine-1v1",
                 "--games", "1", "--decision-ms", "200", cwd=tmp_path)
    assert run.returncode == 1, explain(run)
    out = run.stdout
    assert re.search(_line("FAIL", "answers every decision in time"), out, re.MULTILINE), out
    assert re.search(r"argentine-1v1: no answer within 200 ms", out), out
    assert re.search(_line("PASS", "connects and says hello"), out, re.MULTILINE), out
    assert re.search(_line("FAIL", "every match reached its natural end"), out, re.MULTILINE)
    assert "--keep DIR" in out
    assert list(tmp_path.iterdir()) == []


@pytest.mark.e2e
def test_an_illegal_bot_fails_only_legal_answers(tmp_path: Path) -> None:
    """A bot answering out-of-range indexes fails 'only legal answers' with the referee's
    detail, and passes 'answers in time' (it answered, quickly). Exit 1."""
    run = _check(f"python {TEST_BOTS / 'illegal.py'}", "--variant", "mineiro-1v1",
                 "--games", "1", cwd=tmp_path)
    assert run.returncode == 1, explain(run)
    out = run.stdout
    assert re.search(_line("FAIL", "only legal answers"), out, re.MULTILINE), out
    assert re.search(r"mineiro-1v1: action_index \d+ is out of range", out), out
    assert re.search(_line("PASS", "answers every decision in time"), out, re.MULTILINE), out


@pytest.mark.e2e
def test_a_bot_crashing_at_start_fails_connects_and_its_output_is_shown_and_kept(
    tmp_path: Path,
) -> None:
    """A bot that exits before connecting fails 'connects and says hello'; the report
    quotes the tail of its stderr. With --keep the database, replays and the bot's own
    output stay in that folder, and the report says where the bot's output is."""
    kept = tmp_path / "kept"
    run = _check(f"python {TEST_BOTS / 'crash_at_start.py'}", "--variant", "argentine-1v1",
                 "--games", "1", "--keep", kept, cwd=tmp_path)
    assert run.returncode == 1, explain(run)
    out = run.stdout
    assert re.search(_line("FAIL", "connects and says hello"), out, re.MULTILINE), out
    assert "exited with code 3 before connecting" in out
    assert CRASH_MESSAGE in out
    assert (kept / "check.db").is_file()
    assert list((kept / "replays").glob("*/*.jsonl"))
    logs = list((kept / "logs").glob("*/bots/*.candidate.log"))
    assert logs, out
    assert CRASH_MESSAGE in logs[0].read_text()
    assert f"{logs[0].parent}/*.candidate.log" in out


@pytest.mark.e2e
def test_bad_usage_exits_2_naming_the_valid_variants(tmp_path: Path) -> None:
    """An unknown variant is refused before anything runs (exit 2), naming every valid
    variant; so is a missing command, and a --keep folder that cannot be made."""
    run = _check("python bot.py", "--variant", "argentine-9v9", cwd=tmp_path)
    assert run.returncode == 2, explain(run)
    assert "unknown variant 'argentine-9v9'" in run.stderr
    assert all(name in run.stderr for name in variant_names()), run.stderr
    missing = _check(cwd=tmp_path)
    assert missing.returncode == 2, explain(missing)
    assert "COMMAND" in missing.stderr
    assert list(tmp_path.iterdir()) == []
    # a --keep folder that cannot be made (a traceback in hostile review round 4)
    nowhere = _check("python bot.py", "--keep", "/proc/no-such-folder", cwd=tmp_path)
    assert nowhere.returncode == 2, explain(nowhere)
    assert nowhere.stderr.strip().splitlines() == [
        "error: --keep: cannot make a folder there: /proc/no-such-folder: No such file or "
        "directory"], explain(nowhere)


@pytest.mark.e2e
def test_a_bot_whose_act_raises_fails_own_answers(tmp_path: Path) -> None:
    """A bot whose act() raises on every call is answered for by the SDK (first legal action,
    so it passes 'in time' and 'legal'), but fails 'answers are the bot's own', counting the
    fallbacks the SDK printed; exit 1. Protocol 1.0's SDK fell back silently and the check
    passed such a bot."""
    run = _check(f"python {TEST_BOTS / 'raising.py'}", "--variant", "argentine-1v1",
                 "--games", "1", cwd=tmp_path)
    assert run.returncode == 1, explain(run)
    out = run.stdout
    assert re.search(_line("FAIL", "answers are the bot's own (no SDK fallback)"), out,
                     re.MULTILINE), out
    assert re.search(r"argentine-1v1: act\(\) raised \d+ times; the SDK answered", out), out
    assert re.search(r"\(\d+ fallback answers in 1 of 1 match;", out), out
    assert re.search(_line("PASS", "only legal answers"), out, re.MULTILINE), out
    assert re.search(_line("PASS", "answers every decision in time"), out, re.MULTILINE), out


@pytest.mark.e2e
def test_a_bot_wrapping_its_answers_in_noise_fails_clean_naming_each_refusal(
    tmp_path: Path,
) -> None:
    """tests/bots/hostile_confused.py (raw gRPC, no SDK) answers every decision rightly, and
    also sends, each time, an answer to a request that does not exist, one for a seat it does
    not hold and its answer again. Its matches end normally and no strike falls, so every
    check used to pass; now 'sends nothing the referee refuses' fails, naming the three error
    codes it was sent, with their counts; exit 1."""
    run = _check(f"python {TEST_BOTS / 'hostile_confused.py'}", "--variant", "argentine-1v1",
                 "--games", "1", cwd=tmp_path)
    assert run.returncode == 1, explain(run)
    out = run.stdout
    assert re.search(_line("FAIL", "sends nothing the referee refuses"), out, re.MULTILINE), out
    for title in ("only legal answers", "answers every decision in time",
                  "every match reached its natural end", "stays connected to the end"):
        assert re.search(_line("PASS", title), out, re.MULTILINE), out
    counts = {code: int(n) for code, n in re.findall(
        r"^\s+(UNKNOWN_REQUEST|NOT_YOUR_SEAT|DUPLICATE_ANSWER) x(\d+): ", out, re.MULTILINE)}
    assert set(counts) == {"UNKNOWN_REQUEST", "NOT_YOUR_SEAT", "DUPLICATE_ANSWER"}, out
    assert min(counts.values()) > 0
    assert "no such request on this connection" in out
    assert re.search(r"\((\d+) refused messages in 1 of 1 match;", out), out


@pytest.mark.e2e
def test_the_check_reports_signs_sent_and_received(tmp_path: Path) -> None:
    """A 2v2 check of a bot that signs with every action reports the signs it sent and the
    signs its seats received from their partner (here the same bot): both above zero."""
    dump = tmp_path / "dump"
    dump.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    run = arena("check", f"python {TEST_BOTS / 'sdk_signer.py'}", "--variant", "argentine-2v2",
                "--games", "1", "--pass-env", "SIGN_DUMP_DIR", "--writable", dump, cwd=work,
                env={"SIGN_DUMP_DIR": str(dump)})
    assert run.returncode == 0, explain(run)
    found = re.search(r"argentine-2v2: sent (\d+), received (\d+)", run.stdout)
    assert found is not None, explain(run)
    sent, received = int(found[1]), int(found[2])
    assert sent > 0
    assert received > 0


@pytest.mark.e2e
def test_the_check_takes_variant_options(tmp_path: Path) -> None:
    """`arena check --option KEY=VALUE` plays the checked variants that have the option with
    it (`blind_iron_hand=true`, the only way a Mineiro bot is ever offered a face-down play:
    an outside walkthrough could not check it), and only those; an option no checked
    variant has is one error line (exit 2)."""
    kept = tmp_path / "kept"
    run = _check("python random_bot.py", "--variant", "mineiro-1v1", "--variant",
                 "argentine-1v1", "--games", "1", "--option", "blind_iron_hand=true",
                 "--keep", kept, cwd=SAMPLE_BOTS)
    assert run.returncode == 0, explain(run)
    options = {r["variant"]: json.loads(r["options"])
               for r in stored_matches(kept / "check.db")}
    assert options["mineiro-1v1"]["blind_iron_hand"] is True, options
    assert options["argentine-1v1"]["blind_iron_hand"] is False, options
    bad = _check("python random_bot.py", "--variant", "mineiro-1v1", "--option", "flor=true",
                 cwd=tmp_path)
    assert bad.returncode == 2, explain(bad)
    assert "--option flor: no checked variant has this option" in bad.stderr, bad.stderr
