"""argentine-3v3 and argentine-4v4: redondo and pico a pico hands, duel pairs and order, the
falta and contraflor al resto caps, the switch to redondo only, and the chico ending mid pico a
pico (RULES.md §4.7, §4.1, §4.4, §4.5; docs/RULINGS.md R6).

Unless a test says otherwise: argentine-3v3, dealer 5, so hand 0 (redondo) has mano 0 and ends
at once on a rejected truco (side 0 scores 1); hand 1 (pico a pico) has dealer 0 and mano 1,
and its duels are 1-4, then 2-5, then 3-0.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_rules_support import award, cards, run

from arena.rules import ActionKind, AwardReason, Duel, Match, call
from arena.rules.views import DuelEndEvent

K = ActionKind
REDONDO = ("5e 5b 5o", "1e 1b 7e", "6e 6b 6o", "7o 3e 3b", "4b 4o 4c", "2e 2b 2o")
PICO = REDONDO
END_REDONDO = ("0 truco", "1 no_quiero")  # side 0 +1


def _match(
    pico: tuple[str, ...] = PICO,
    scores: tuple[int, int] | None = None,
    variant: str = "argentine-3v3",
    **options: Any,
) -> Match:
    deals = {(0, 0): tuple(cards(h) for h in REDONDO), (0, 1): tuple(cards(h) for h in pico)}
    match = Match(variant, options or None, 0, dealer=5, scores=scores, deals=deals)
    run(match, *END_REDONDO)
    return match


def test_hands_alternate_redondo_and_pico_a_pico() -> None:
    """Hand 0 is redondo (everybody plays one hand), hand 1 pico a pico, hand 2 redondo again
    (RULES.md §4.7, arena ruling: alternation starts with redondo)."""
    deals = {(0, 0): tuple(cards(h) for h in REDONDO)}
    match = Match("argentine-3v3", None, 0, dealer=5, deals=deals)
    assert match.view(0).duel is None
    run(match, *END_REDONDO)
    assert match.hand_number == 1
    assert match.view(0).duel is not None
    for _ in range(3):  # every duel ends on a rejected truco
        duel = match.view(0).duel
        assert duel is not None
        run(match, f"{duel.seats[0]} truco", f"{duel.seats[1]} no_quiero")
    assert match.hand_number == 2
    assert match.view(0).duel is None
    summary = match.record().hands[1].summary
    assert summary.ended_by == "duels"
    assert [d.duel.seats for d in summary.duels] == [(1, 4), (2, 5), (3, 0)]


def test_duels_in_order_each_scoring_for_its_side() -> None:
    """Pico a pico (RULES.md §4.7): seat i against seat i + 3, all from one deal, the duel
    holding mano first, then in turn order, each duel's mano its seat nearer to mano; each duel
    is a 1v1 hand whose points go to the side."""
    match = _match()
    view = match.view(0)
    assert view.duel == Duel(0, 3, (1, 4))
    assert match.to_act == 1
    assert view.legal_actions == ()
    assert view.mano == 1
    run(match, "1 1e", "4 4b", "1 1b", "4 4o")  # seat 1 (side 1) wins
    assert match.view(0).duel == Duel(1, 3, (2, 5))
    assert [d.duel.seats for d in match.view(0).duels] == [(1, 4)]
    assert match.view(0).tricks == ()
    run(match, "2 6e", "5 2e", "5 2b", "2 6b")  # seat 5 (side 1) wins
    assert match.view(0).duel == Duel(2, 3, (3, 0))
    run(match, "3 7o", "0 5e", "3 3e", "0 5b")  # seat 3 (side 1) wins
    hand = match.record().hands[1]
    h = AwardReason.HAND
    assert hand.awards == (award(1, 1, h), award(1, 1, h), award(1, 1, h))
    assert [d.winner_team for d in hand.summary.duels] == [1, 1, 1]
    assert match.scores == [1, 3]
    assert hand.summary.winner_team is None
    assert len(hand.summary.tricks) == 6


def test_a_duel_has_its_own_envido_and_falta_is_worth_6() -> None:
    """Each duel has its own envido, between its two players only; falta envido is worth 6 in
    pico a pico (RULES.md §4.7), not what the leader needs (here 29)."""
    match = _match()
    run(match, "1 falta_envido", "4 quiero")
    outcome = match.view(0).envido
    assert outcome is not None
    assert [seat for seat, _ in outcome.announcements] == [1, 4]
    assert (outcome.winner, outcome.points) == (1, 6)
    assert match.scores == [1, 6]
    run(match, "1 1e", "4 4b", "1 1b", "4 4o")
    assert match.view(0).envido is None  # the next duel starts afresh
    assert K.ENVIDO in [a.kind for a in match.legal_actions()]


def test_contraflor_al_resto_is_capped_at_6() -> None:
    """In pico a pico contraflor al resto is worth at most 6 (RULES.md §4.7), here instead of
    the 20 the leader needs; each duel has its own flor."""
    pico = ("5e 5b 5o", "1e 2e 3e", "6e 6b 6o", "7o 3c 3b", "4c 5c 6c", "2o 2b 4o")
    match = _match(pico, scores=(9, 0), flor=True)
    run(match, "1 flor", "4 contraflor_al_resto", "1 con_flor_quiero")
    assert match.view(0).awards == (award(0, 6, AwardReason.FLOR),)  # seat 4's 35 beats 26
    assert match.scores == [16, 0]


@pytest.mark.parametrize(
    ("scores", "options", "pico"),
    [((23, 0), {}, True), ((24, 0), {}, False), ((13, 0), {"pico_until": 15}, True),
     ((14, 0), {"pico_until": 15}, False), ((0, 25), {}, False)],
)
def test_only_redondo_once_a_side_reaches_25(
    scores: tuple[int, int], options: dict[str, Any], pico: bool
) -> None:
    """Once a side reaches 25 points (option pico_until: 15), only redondo hands are played
    (RULES.md §4.7); below that, odd hands are pico a pico. (Hand 0 adds 1 for side 0.)"""
    match = _match(scores=scores, **options)
    assert (match.view(0).duel is not None) is pico


@pytest.mark.parametrize("chicos", [1, 3])
def test_the_chico_and_match_end_mid_pico_a_pico(chicos: int) -> None:
    """Points count as soon as they are decided and the chico ends at once, even in the first
    duel of a pico a pico hand (RULES.md §4.1, §4.7): at 24, side 0 wins a falta envido (6)."""
    pico = ("5e 5b 5o", "1b 2c 3o", "6e 6b 6o", "7o 3e 3b", "7e 4e 4c", "2e 2b 2o")
    match = _match(pico, scores=(23, 0), chicos=chicos)
    run(match, "1 falta_envido")
    events = match.apply(call(K.QUIERO))  # seat 4's 31 beats seat 1's 3
    hand = match.record().hands[1]
    assert hand.summary.ended_by == "target"
    assert [d.ended_by for d in hand.summary.duels] == ["target"]
    assert [type(e.body) for e in events].count(DuelEndEvent) == 1
    assert hand.summary.scores == (30, 0)
    assert match.is_over is (chicos == 1)
    if chicos == 3:
        assert (match.game_number, match.hand_number, match.scores) == (1, 0, [0, 0])
        assert match.view(0).duel is None


def test_4v4_duel_pairs_and_order() -> None:
    """argentine-4v4: seat i + 4 is a partner, so even seat i duels seat i + 3 (R6): 0-3, 2-5,
    4-7, 6-1; from mano 1 the order is 1-6, 2-5, 3-0, 4-7 (RULES.md §4.7)."""
    match = Match("argentine-4v4", None, 1, dealer=7)
    run(match, "0 truco", "1 no_quiero")
    seen = []
    while match.hand_number == 1:
        view = match.view(0)
        assert view.duel is not None
        seen.append(view.duel.seats)
        mano = match.to_act
        assert mano == view.duel.mano
        run(match, f"{mano} truco", f"{view.duel.seats[1]} no_quiero")
    assert seen == [(1, 6), (2, 5), (3, 0), (4, 7)]
    assert match.scores == [1 + 2, 2]
