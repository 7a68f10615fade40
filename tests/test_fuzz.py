"""Answers nobody anticipated, from the outside and at the reader.

A hostile review (round 5) hung a whole tournament with one card text ("⁷e"): the code that
reads a bot's answer met an input its author had not listed. The tests here do not list
inputs: a seeded fuzzing bot (tests/bots/hostile_fuzzer.py, raw gRPC, no SDK) plays every
variant in a real tournament, and hypothesis generates `ActionReply` messages for the
referee's reader and lines for the stdio door's. What must hold whatever comes: the referee
refuses or strikes, never fails itself (no `answer_unreadable`, no `router_failed`, no error
logged), every match reaches its end, and the honest opponent is never at fault.
"""

from __future__ import annotations

import contextlib
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import structlog
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_e2e_support import (
    SAMPLE_BOTS,
    SHORT,
    TEST_BOTS,
    arena,
    explain,
    python_bot,
    stored_matches,
    write_config,
)

from arena.errors import ProtocolViolation
from arena.referee import Answer
from arena.replay import load_replay
from arena.rpc import convert
from arena.rpc.server import _read_answer
from arena.rules import variant_names
from arena.rules.signals import IllegalSignalError
from arena.stdio.lines import BadLine, LogLine, Reply, parse_bot_line
from arena.v1 import arena_pb2 as pb

INT32 = st.integers(min_value=-(2**31), max_value=2**31 - 1)
TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=60)
"""Any Unicode a protobuf string can carry (lone surrogates cannot be encoded)."""


@st.composite
def cards(draw: st.DrawFn) -> pb.Card:
    card = pb.Card()
    if draw(st.booleans()):
        card.suit = draw(st.one_of(st.integers(0, 5), INT32))
        card.rank = draw(st.one_of(st.integers(0, 13), INT32))
    if draw(st.booleans()):
        card.text = draw(st.one_of(TEXT, st.sampled_from(["1e", "7o", "12c", "4b", "1E",
                                                          "\u2077e", "\u0661e", "\uff11e"])))
    return card


@st.composite
def replies(draw: st.DrawFn) -> pb.ActionReply:
    reply = pb.ActionReply(request_id=draw(TEXT), match_id=draw(TEXT), seat=draw(INT32))
    choice = draw(st.sampled_from(["index", "action", "none"]))
    if choice == "index":
        reply.action_index = draw(INT32)
    elif choice == "action":
        action = pb.Action(kind=draw(st.one_of(st.integers(0, 36), INT32)))
        if draw(st.booleans()):
            action.card.CopyFrom(draw(cards()))
        if draw(st.booleans()):
            action.slot = draw(INT32)
        reply.action.CopyFrom(action)
    if draw(st.booleans()):
        signal = pb.Signal(kind=draw(st.one_of(st.integers(0, 10), INT32)), text=draw(TEXT))
        if draw(st.booleans()):
            signal.value = draw(INT32)
        reply.signal.CopyFrom(signal)
    return reply


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(reply=replies(), variant=st.sampled_from(variant_names()))
def test_the_reader_meets_any_reply_with_an_answer_or_a_stated_violation(
    reply: pb.ActionReply, variant: str
) -> None:
    """Whatever an `ActionReply` holds, reading it gives an `Answer` or a `ProtocolViolation`
    that says what is wrong — never the catch-all for what its code did not foresee (logged
    `answer_unreadable`), which is where "⁷e" went once it stopped hanging matches. The bytes
    are parsed back first, as the wire delivers them."""
    wire = pb.ActionReply.FromString(reply.SerializeToString())
    deck = convert.deck_of(variant)
    with structlog.testing.capture_logs() as logs:
        answer = _read_answer(wire, deck)
    assert logs == []
    assert isinstance(answer, Answer | ProtocolViolation)
    if isinstance(answer, ProtocolViolation):
        assert str(answer).strip()
    elif answer.signal is not None:
        with contextlib.suppress(IllegalSignalError):  # the engine's own refusal, or fine:
            answer.signal.check()  # never anything else


def test_the_reader_property_has_teeth() -> None:
    """The property above fails on the reader's catch-all: a reader whose card parsing raises
    something unforeseen (here, as `int("⁷")` did) is caught by the `logs == []` assertion."""
    reply = pb.ActionReply(action=pb.Action(kind=pb.ACTION_KIND_PLAY, card=pb.Card(text="7e")))
    deck = convert.deck_of("argentine-1v1")
    original = convert.card_from_proto

    def broken(msg: pb.Card, d: Any) -> Any:
        raise ValueError("invalid literal for int() with base 10: '⁷'")

    convert.card_from_proto = broken  # type: ignore[assignment]
    try:
        with structlog.testing.capture_logs() as logs:
            answer = _read_answer(reply, deck)
    finally:
        convert.card_from_proto = original  # type: ignore[assignment]
    assert isinstance(answer, ProtocolViolation)
    assert [entry["event"] for entry in logs] == ["answer_unreadable"]


FAILURES = {"answer_unreadable", "router_failed"}
"""Log events that mean the referee met something it did not handle."""


@pytest.mark.e2e
def test_a_fuzzing_bot_is_refused_and_struck_and_every_match_ends(tmp_path: Path) -> None:
    """`fuzzer` (tests/bots/hostile_fuzzer.py, seeded) plays the random sample bot in every
    variant, both sides, with strikes to spare (1000), answering each decision with a random
    mix of right and wrong replies and signs, and junk between them. Every match ends
    normally; the random bot is never struck; every fault of the fuzzer is an illegal action
    (refused reply or sign, told to it), never a timeout or a disconnect; the referee's log
    holds no error and none of `FAILURES`, and its `messages_refused` lines name only the
    codes of the junk sent. The replays are re-scored by the session's replay check."""
    bots = {"fuzzer": ["python", str(TEST_BOTS / "hostile_fuzzer.py"), "7"],
            "random": python_bot(SAMPLE_BOTS / "random_bot.py")}
    variants = list(variant_names())
    options: dict[str, dict[str, Any]] = {v: dict(SHORT) for v in variants
                                          if v.startswith("argentine")}
    options["argentine-2v2"]["signals"] = "leaky"
    options["mineiro-2v2"] = {"signals": "leaky"}
    config = write_config(tmp_path, name="fuzz", bots=bots, variants=variants, options=options,
                          games=2, concurrency=4, decision_ms=5000, max_strikes=1000)
    run = arena("tournament", config, "--no-progress", cwd=tmp_path)
    assert run.returncode == 0, explain(run)
    rows = stored_matches(tmp_path / "arena.db")
    assert len(rows) == 2 * len(variants), explain(run)
    struck = 0
    for row in rows:
        assert row["termination"] == "normal", row
        seat_bots = [seat["bot"] for seat in load_replay(row["replay"]).header["seats"]]
        faults = json.loads(row["faults"])
        strikes = json.loads(row["strikes"])
        for bot, kinds, count in zip(seat_bots, faults, strikes, strict=True):
            if bot != "fuzzer":
                assert count == 0, row
            assert set(kinds) <= {"illegal_action"}, row
            struck += count
    assert struck > 10, rows  # the fuzzer was wrong often, and it was seen
    events = [json.loads(line) for line in
              (tmp_path / "logs" / "fuzz.jsonl").read_text(encoding="utf-8").splitlines()]
    assert not [e for e in events if e.get("event") in FAILURES], explain(run)
    assert not [e for e in events if e.get("level") in ("error", "critical")], explain(run)
    refused: Counter[str] = Counter()
    for event in events:
        if event.get("event") == "messages_refused":
            assert event["bot"] == "fuzzer", event
            refused.update(event["counts"])
    assert set(refused) <= {"UNKNOWN_REQUEST", "NOT_YOUR_SEAT", "MALFORMED", "DUPLICATE_ANSWER"}
    assert refused["UNKNOWN_REQUEST"] > 0, refused
    assert refused["DUPLICATE_ANSWER"] > 0, refused


BOT_LINE = st.one_of(
    TEXT,
    st.builds(
        lambda head, parts: " ".join([head, *parts]),
        st.sampled_from(["action", "log", "ACTION", "action\t"]),
        st.lists(st.one_of(
            TEXT.filter(lambda t: " " not in t),
            st.sampled_from(["0", "-1", "007", "9" * 12, "\u2077", "play:1e", "play:\u2077e",
                             "play_face_down:", "play_face_down:\u0661", "play:1e1e",
                             "truco:", "sign=envido", "value=33", "value=\u2077", "text=%",
                             "text=%G1", "text=%e2%82", "sign=TEXT", "sign=\u00df", "=",
                             "sign=", "value=" + "9" * 5000]),
        ), max_size=5),
    ),
)


@settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(line=BOT_LINE, variant=st.sampled_from([*variant_names(), None]))
def test_the_stdio_door_reads_any_line_or_says_what_to_write(
    line: str, variant: str | None
) -> None:
    """The stdio door's reader (`arena.stdio.lines.parse_bot_line`, run by the adapter on the
    bot's every line): whatever the line, a reply, a log line, nothing (blank), or `BadLine`
    saying what to write instead — never another exception, which would end the adapter and
    lose the seat its match (the same "⁷" that hung gRPC matches once passed `str.isdigit`
    here too). A reply's sign, if read, is the engine's to judge: fine or its own error."""
    deck = None if variant is None else convert.deck_of(variant)
    try:
        parsed = parse_bot_line(line, deck)
    except BadLine as exc:
        said = str(exc)
        parsed = None
    else:
        said = "read"
    assert said.strip()
    assert parsed is None or isinstance(parsed, Reply | LogLine)
    if isinstance(parsed, Reply) and parsed.signal is not None:
        with contextlib.suppress(IllegalSignalError):
            parsed.signal.check()
