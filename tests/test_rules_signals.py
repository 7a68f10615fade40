"""Signals (señas): delivered to partners only, refused when off, validated, recorded and
replayed, and leaked to opponents at the option's rate when leaky (RULES.md §4.9;
docs/RULINGS.md R7).
"""

from __future__ import annotations

import math
import random

import pytest
from test_rules_support import run, stacked

from arena.rules import (
    IllegalSignalError,
    Match,
    SeenSignal,
    Signal,
    SignalKind,
    replay,
    variant_names,
)
from arena.rules.views import SignalEvent

S = SignalKind
HANDS_2V2 = ("1e 4b 5o", "1b 4o 5c", "7e 4c 5e", "7o 4e 5b")


def _2v2(**options: object) -> Match:
    return stacked("argentine-2v2", *HANDS_2V2, dealer=3, options=options or None)


def test_a_signal_reaches_the_partner_only() -> None:
    """A signal attached to an action goes to the signaller's partners (and back to the
    signaller), never to an opponent, with their next view (RULES.md §4.9)."""
    match = _2v2()
    sign = Signal(S.ANCHO_DE_ESPADA, "tengo el macho")
    events = match.apply(match.legal_actions()[0], sign)
    (event,) = [e for e in events if isinstance(e.body, SignalEvent)]
    assert event.audience == {0, 2}
    assert event.body == SignalEvent(0, 0, sign)
    assert match.view(2).signals == (SeenSignal(0, 0, sign),)
    assert match.view(0).signals == (SeenSignal(0, 0, sign),)
    assert match.view(1).signals == ()
    assert match.view(3).signals == ()


def test_signals_are_per_hand_and_never_checked_for_truth() -> None:
    """Signals are not checked for truth (false signs are allowed) and a view shows those of
    the current hand (RULES.md §4.9): seat 0 claims a flor it does not hold."""
    match = _2v2()
    run(match, "0 truco")
    match.apply(match.legal_actions()[-1], Signal(S.FLOR))  # seat 1: no quiero, a false sign
    assert match.hand_number == 1
    assert all(match.view(seat).signals == () for seat in range(4))
    assert match.record().hands[0].signals[0].audience == {1, 3}


def test_signals_off_are_refused_and_nothing_happens() -> None:
    """With signals off, an action carrying a signal is refused with a clear error and the
    action is not taken (RULES.md §4.9: arena option signals off)."""
    match = _2v2(signals="off")
    legal = match.legal_actions()
    with pytest.raises(IllegalSignalError, match="signals are off"):
        match.apply(legal[0], Signal(S.NADA))
    assert match.to_act == 0
    assert match.view(0).moves == ()
    match.apply(legal[0])
    assert match.view(0).moves[0].action == legal[0]


@pytest.mark.parametrize(
    ("signal", "says"),
    [
        (Signal(S.TEXT, ""), "needs some text"),
        (Signal(S.TEXT, "x" * 41), "at most 40"),
        (Signal(S.NADA, "two\nlines"), "printable"),
        (Signal(S.TRES, value=3), "only an ENVIDO signal carries a value"),
        (Signal(S.ENVIDO, value=34), "0-33"),
        (Signal(7, "raw int"), "is not one of"),  # type: ignore[arg-type]
    ],
)
def test_malformed_signals_are_refused(signal: Signal, says: str) -> None:
    """A signal is one of the documented kinds with at most 40 printable characters of text,
    and a value (0-33) only for ENVIDO (RULES.md §4.9)."""
    match = _2v2()
    with pytest.raises(IllegalSignalError, match=says):
        match.apply(match.legal_actions()[0], signal)
    assert match.view(0).moves == ()


def test_good_signals_are_accepted() -> None:
    """Every kind is accepted, with text up to 40 characters and an envido value (§4.9)."""
    for kind in S:
        Signal(kind, "x" * 40 if kind is S.TEXT else "").check()
    Signal(S.ENVIDO, "", 33).check()


def test_in_1v1_a_signal_reaches_nobody_else() -> None:
    """1v1 has no partners: a signal is accepted (bots need not know the variant) and reaches
    nobody but its sender; leaky, the opponent may catch it (RULES.md §4.9, R7)."""
    match = stacked("argentine-1v1", "1e 4b 5o", "1b 4o 5c", dealer=1)
    events = match.apply(match.legal_actions()[0], Signal(S.NADA))
    (event,) = [e for e in events if isinstance(e.body, SignalEvent)]
    assert event.audience == {0}
    assert match.view(1).signals == ()


def test_the_record_replays_the_signals() -> None:
    """Signals, and whom they reached (leaks included), are in the game record and a replay
    reproduces them exactly (RULES.md §6, §4.9)."""
    match = Match("argentine-2v2", {"signals": "leaky", "leak": 0.5, "chicos": 1}, 3)
    rng = random.Random(3)
    while not match.is_over:
        match.apply(rng.choice(match.legal_actions()), Signal(rng.choice(list(S)), "hola"))
    record = match.record()
    assert all(len(h.signals) == len(h.moves) for h in record.hands)
    assert replay(record).record() == record


def _audit(variant: str, options: dict[str, object], seeds: range) -> tuple[int, int]:
    """Random matches where every action carries a signal. Checks that no view and no event
    delivers a signal of one side to the other unless leaky; returns (opponent chances,
    opponents reached)."""
    chances = leaks = 0
    for seed in seeds:
        rng = random.Random(seed)
        match = Match(variant, options, seed)
        while not match.is_over:
            hand = match.hand
            seat = match.to_act
            assert seat is not None
            sign = Signal(rng.choice(list(S)), str(seat))
            events = match.apply(rng.choice(match.legal_actions()), sign)
            side_of = hand.side_of
            for event in events:
                if isinstance(event.body, SignalEvent):
                    others = {s for s in range(match.num_seats) if side_of[s] != side_of[seat]}
                    caught = event.audience & others
                    assert event.audience - others == {
                        s for s in range(match.num_seats) if side_of[s] == side_of[seat]
                    }
                    chances += len(others)
                    leaks += len(caught)
                    if options.get("signals", "team") == "team":
                        assert not caught
            if match.hand is hand:  # views of the hand still being played
                for viewer in range(match.num_seats):
                    for seen in match.view(viewer).signals:
                        if options.get("signals", "team") == "team":
                            assert side_of[seen.seat] == side_of[viewer]
    return chances, leaks


@pytest.mark.parametrize("variant", variant_names())
def test_with_team_signals_no_signal_ever_reaches_an_opponent(variant: str) -> None:
    """Property over every variant (RULES.md §4.9): with signals "team" no signal reaches a
    seat of the other side this hand, in any view or event, whoever sends it (the gallo, a
    duel player, a partner who folded)."""
    options: dict[str, object] = {} if "mineiro" in variant else {"chicos": 1, "target": 15}
    chances, leaks = _audit(variant, options, range(4))
    assert chances > 50
    assert leaks == 0


@pytest.mark.parametrize("leak", [0.1, 0.25, 0.5])
def test_leaky_signals_leak_at_the_option_rate(leak: float) -> None:
    """With signals "leaky" each opponent sees each signal with probability `leak`, drawn from
    the match seed (RULES.md §4.9). Over several thousand chances the observed rate is within
    5 standard deviations of the option (fixed seeds: the count is the same on every run)."""
    chances, leaks = _audit(
        "argentine-2v2", {"signals": "leaky", "leak": leak, "chicos": 1}, range(40)
    )
    assert chances > 1500
    sigma = math.sqrt(leak * (1 - leak) / chances)
    assert abs(leaks / chances - leak) < 5 * sigma, (leaks, chances)
