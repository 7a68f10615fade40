"""Live spectating: the public state shown to spectators, and its delay.

The property: over many random matches of every variant, after every action, the spectator's
state holds no card that some seat's own view (`Match.view`) does not hold — only what every
seat at the table knows — and no hand at all.
"""

from __future__ import annotations

import json
import os
import random

import pytest
from web_support import card_tokens, cards_in

from arena.rules import Match, Signal, SignalKind, variant_names
from arena.web.spectate import Spectators, public_state

# A few matches per variant by default (the machine is shared); ARENA_SOAK=1 plays 100.
GAMES_PER_VARIANT = 100 if os.environ.get("ARENA_SOAK") else 4


@pytest.mark.slow  # ARENA_SOAK=1 (make soak): 100 matches per variant
@pytest.mark.parametrize("variant", variant_names())
def test_a_spectator_sees_only_what_every_seat_knows(variant: str) -> None:
    """After every action of GAMES_PER_VARIANT seeded random matches (signs sent now and
    then), every card in the spectator's state is in every seat's view, and no seat's hand,
    partner cards, discard or signs are in it."""
    rng = random.Random(variant)
    for game in range(GAMES_PER_VARIANT):
        match = Match(variant, {"signals": "leaky"}, seed=rng.randrange(2**32))
        deck = match.variant.deck.value
        steps = 0
        while not match.is_over:
            legal = match.legal_actions()
            signal = Signal(SignalKind.NADA) if rng.random() < 0.2 else None
            match.apply(legal[rng.randrange(len(legal))], signal)
            steps += 1
            state = public_state(match)
            everyone = set.intersection(*(
                {str(c) for c in cards_in(match.view(s))} for s in range(match.num_seats)))
            shown = card_tokens(json.dumps(state), deck)
            assert shown <= everyone, (variant, game, steps, shown - everyone)
            assert state["hands"] == [None] * match.num_seats
            assert state["hand"] == []
            assert state["signals"] == []
            assert state["discard"] is None
            assert state["partner_cards"] == []
        assert steps > 0


def test_spectators_see_the_table_delay_s_late() -> None:
    """With delay_s = 5, a match is listed 5 s after it was first seen, each state is handed
    out 5 s after it was sampled (the newest such one), and a finished match stays visible
    5 s after it left the live map."""
    now = [0.0]
    match = Match("argentine-1v1", {}, seed=3)
    live = {"m1": (("a", "b"), match)}
    watch = Spectators(lambda: live, 5.0, clock=lambda: now[0])
    watch.sample()
    assert watch.running() == []
    assert watch.state("m1") is None
    now[0] = 2.0
    match.apply(match.legal_actions()[0])
    watch.sample()
    now[0] = 5.0
    assert [h["match_id"] for h in watch.running()] == ["m1"]
    got = watch.state("m1")
    assert got is not None
    assert got[1] == 0
    now[0] = 7.5
    got = watch.state("m1")
    assert got is not None
    assert got[1] == 1
    assert got[2] == public_state(match)
    live.clear()
    now[0] = 8.0
    watch.sample()
    now[0] = 12.9
    assert [h["match_id"] for h in watch.running()] == ["m1"]
    now[0] = 13.1
    assert watch.running() == []


def test_a_state_shown_is_the_newest_one_delay_s_old_at_any_time() -> None:
    """`state` finds the shown state by bisection (every open live page asks at every
    sample); checked against the plain definition — the newest state seen at or before
    now - delay_s — at random times over a match of 300 recorded states, and the event text
    of a state is made once however many pages ask for it."""
    rng = random.Random(7)
    now = [0.0]
    match = Match("argentine-1v1", {"target": 30}, seed=11)
    live = {"m1": (("a", "b"), match)}
    watch = Spectators(lambda: live, 2.5, clock=lambda: now[0])
    seen: list[tuple[float, dict[str, object]]] = []
    while len(seen) < 300 and not match.is_over:
        watch.sample()
        if not seen or seen[-1][1] != public_state(match):
            seen.append((now[0], public_state(match)))
        match.apply(rng.choice(match.legal_actions()))
        now[0] += rng.choice([0.0, 0.05, 0.2, 1.0])
    assert len(seen) > 50
    for _ in range(500):
        now[0] = rng.uniform(-1.0, seen[-1][0] + 5.0)
        want = [state for at, state in seen if at <= now[0] - 2.5]
        got = watch.state("m1")
        if not want:
            assert got is None
            continue
        assert got is not None
        assert got[2] == want[-1]
    now[0] = seen[-1][0] + 5.0
    first = watch.event("m1")
    again = watch.event("m1")
    assert first is not None
    assert again is not None
    assert first[1] is again[1]  # the same text object: made once
    assert json.loads(first[1].split("data: ", 1)[1])["state"] == seen[-1][1]
