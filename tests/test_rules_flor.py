"""Flor: who must sing it, what it cancels, every payout row, several holders, ties, and a chico
ending on flor points (RULES.md §4.5, §4.1-§4.4).

Unless a test says otherwise: argentine-1v1 with flor, dealer 1 so seat 0 is mano and the actor
of the first trick.
"""

from __future__ import annotations

import pytest
from test_rules_support import award, kinds, last_awards, run, stacked

from arena.errors import IllegalActionError
from arena.rules import ActionKind, AwardReason, FlorOutcome, Match, call, play
from arena.rules.views import FlorEvent

K = ActionKind
FLOR = {"flor": True}
F26 = "1e 2e 3e"  # flor 26
F35 = "4c 5c 6c"  # flor 35
PLAIN = "4b 5o 6e"  # no flor, envido 6
PLAIN2 = "7b 6b 11e"  # no flor, envido 33
R = AwardReason.FLOR


def _one(a: str, b: str, scores: tuple[int, int] | None = None) -> Match:
    return stacked("argentine-1v1", a, b, dealer=1, options=FLOR, scores=scores)


def test_holder_must_sing_first_and_cannot_play() -> None:
    """A flor holder's only legal action is FLOR until they sing it; playing a card first is
    illegal (RULES.md §4.5)."""
    match = _one(F26, PLAIN)
    assert kinds(match) == [K.FLOR]
    with pytest.raises(IllegalActionError, match="holds flor and must sing it first"):
        match.apply(play(match.hand.held[0][0]))
    with pytest.raises(IllegalActionError):
        match.apply(call(K.ENVIDO))


def test_unopposed_flor_scores_3_and_closes_the_envido() -> None:
    """Unopposed, a flor scores 3 for the singer's side at once; afterwards nobody may call
    envido, and the actor acts again (RULES.md §4.5, §4.1)."""
    match = _one(F26, PLAIN)
    events = match.apply(call(K.FLOR))
    assert match.view(1).awards == (award(0, 3, R),)
    assert match.scores == [3, 0]
    assert [e.body for e in events if isinstance(e.body, FlorEvent)] == [
        FlorEvent(FlorOutcome((K.FLOR,), 0, None, 0, 3))
    ]
    assert match.to_act == 0
    assert K.ENVIDO not in kinds(match)
    run(match, "0 1e")
    assert K.ENVIDO not in kinds(match)
    assert K.FLOR not in kinds(match)


def test_a_player_without_flor_cannot_sing_it() -> None:
    """FLOR is never legal without three cards of one suit (RULES.md §4.5)."""
    match = _one(PLAIN, F26.replace("3e", "3b"))
    assert K.FLOR not in kinds(match)
    with pytest.raises(IllegalActionError, match="only by a player holding"):
        match.apply(call(K.FLOR))


def test_flor_option_off_means_no_flor() -> None:
    """Without the flor option a flor hand plays like any other (RULES.md §4.5: flor is an
    option, off by default)."""
    match = stacked("argentine-1v1", F26, PLAIN, dealer=1)
    assert K.FLOR not in kinds(match)
    assert K.ENVIDO in kinds(match)


# RULES.md §4.5 payout rows: (answers after "0 flor", side that scores, points). Seat 1 holds
# the better flor (35 against 26); al resto is what the leader needs: 30 - 20 = 10.
ROWS = [
    (["1 con_flor_quiero"], 1, 4),
    (["1 con_flor_me_achico"], 0, 3),
    (["1 contraflor", "0 con_flor_quiero"], 1, 6),
    (["1 contraflor", "0 con_flor_me_achico"], 1, 4),
    (["1 contraflor", "0 contraflor_al_resto", "1 con_flor_quiero"], 1, 10),
    (["1 contraflor", "0 contraflor_al_resto", "1 con_flor_me_achico"], 0, 6),
    (["1 contraflor_al_resto", "0 con_flor_quiero"], 1, 10),
    (["1 contraflor_al_resto", "0 con_flor_me_achico"], 1, 4),
]


@pytest.mark.parametrize(("answers", "side", "points"), ROWS, ids=[" ".join(r[0]) for r in ROWS])
def test_flor_duel_payouts(answers: list[str], side: int, points: int) -> None:
    """Flor against flor (RULES.md §4.5): con flor quiero 4 to the better flor, me achico 3 to
    the first side; contraflor then quiero 6 to the better, me achico 4 to the contraflor side;
    contraflor al resto accepted is the leader's need to the better flor, conceded 6 to its
    caller if it raised a contraflor, else 4. Then the actor plays on, envido closed."""
    match = _one(F26, F35, scores=(20, 12))
    run(match, "0 flor", *answers)
    assert match.view(0).awards == (award(side, points, R),)
    (outcome,) = match.view(0).flor
    assert outcome.chain == (K.FLOR, *(K[a.split()[1].upper()] for a in answers))
    assert (outcome.team, outcome.points) == (side, points)
    accepted = answers[-1].endswith("quiero")
    assert outcome.winner == (1 if accepted else None)
    assert match.to_act == 0
    assert K.ENVIDO not in kinds(match)


def test_flor_duel_answers_by_step() -> None:
    """The answers offered in a flor duel (RULES.md §4.5): to a flor all four, to a contraflor
    no second contraflor, to al resto only quiero or me achico."""
    match = _one(F26, F35)
    run(match, "0 flor")
    assert kinds(match) == [
        K.CON_FLOR_QUIERO, K.CON_FLOR_ME_ACHICO, K.CONTRAFLOR, K.CONTRAFLOR_AL_RESTO,
    ]
    run(match, "1 contraflor")
    assert kinds(match) == [K.CON_FLOR_QUIERO, K.CON_FLOR_ME_ACHICO, K.CONTRAFLOR_AL_RESTO]
    run(match, "0 contraflor_al_resto")
    assert kinds(match) == [K.CON_FLOR_QUIERO, K.CON_FLOR_ME_ACHICO]


def test_flor_tie_goes_to_the_seat_nearer_to_mano() -> None:
    """Equal flors: the one nearer to mano wins (RULES.md §4.5)."""
    match = _one("1e 2e 3e", "1b 2b 3b")  # both 26; seat 0 is mano
    run(match, "0 flor", "1 con_flor_quiero")
    assert match.view(0).awards == (award(0, 4, R),)
    assert match.view(0).flor[0].winner == 0


def test_flor_voids_a_pending_envido() -> None:
    """An envido called at a flor holder is void when they sing (no points), and no envido can
    be called afterwards (RULES.md §4.5)."""
    match = _one(PLAIN, F35)
    run(match, "0 envido")
    assert kinds(match) == [K.FLOR]
    run(match, "1 flor")
    assert match.view(0).awards == (award(1, 3, R),)
    assert match.view(0).envido is None
    assert match.view(0).pending is None
    assert match.to_act == 0
    assert K.ENVIDO not in kinds(match)


def test_flor_is_settled_before_a_pending_truco_answer() -> None:
    """Asked to answer truco, a flor holder sings first; the flor is settled, then the truco
    answer is asked again, without envido va primero (RULES.md §4.3, §4.5)."""
    match = _one(PLAIN, F35)
    run(match, "0 truco")
    assert kinds(match) == [K.FLOR]
    run(match, "1 flor")
    assert match.scores == [0, 3]
    assert match.view(1).pending is not None
    assert match.view(1).pending.kind is K.TRUCO
    assert kinds(match) == [K.QUIERO, K.NO_QUIERO]
    run(match, "1 quiero", "0 4b")
    assert match.view(0).hand_value == 2


def test_flor_duel_before_a_pending_truco() -> None:
    """A flor duel opened while a truco waits is played out first; then the truco is answered
    (RULES.md §4.5)."""
    match = _one(F26, F35)
    run(match, "0 flor", "1 contraflor", "0 con_flor_me_achico", "0 truco")
    assert kinds(match) == [K.QUIERO, K.NO_QUIERO]
    run(match, "1 no_quiero")
    assert last_awards(match) == (award(1, 4, R), award(0, 1, AwardReason.TRUCO_REJECTED))


def test_envido_settled_before_a_flor_stands() -> None:
    """An envido settled before a flor is sung stands; the flor scores too (RULES.md §4.5).
    2v2: seats 0 and 1 settle an envido, then seat 2 sings its flor."""
    match = stacked(
        "argentine-2v2", PLAIN, PLAIN2, F35, "4o 5b 12c", dealer=3, options=FLOR
    )
    run(match, "0 envido", "1 quiero", "0 4b", "1 7b")
    assert kinds(match) == [K.FLOR]
    run(match, "2 flor")
    assert match.view(0).awards == (award(1, 2, AwardReason.ENVIDO), award(0, 3, R))


def test_several_holders_unopposed_each_score_3() -> None:
    """Several holders of one side, no opposing flor: each song scores 3 when sung (RULES.md
    §4.5). 2v2: seats 0 and 2 hold flor."""
    match = stacked("argentine-2v2", F26, PLAIN, F35, PLAIN2, dealer=3, options=FLOR)
    run(match, "0 flor", "0 1e", "1 4b")
    assert kinds(match) == [K.FLOR]
    run(match, "2 flor")
    assert match.view(0).awards == (award(0, 3, R), award(0, 3, R))


def test_several_holders_in_a_duel_pay_once_with_the_sides_best() -> None:
    """In a flor duel a side's flor is its best among all its holders, sung yet or not; the
    payout is made once and a later song by a counted holder scores nothing; the answer comes
    from the first opponent after the singer who holds flor (RULES.md §4.5). 2v2: seats 0 and
    2 (side 0) hold 26 and 35, seat 3 (side 1) holds 33; seat 1 none."""
    match = stacked(
        "argentine-2v2", F26, PLAIN, F35, "6o 7o 10o", dealer=3, options=FLOR
    )
    run(match, "0 flor")
    assert match.to_act == 3  # seat 1 holds no flor
    run(match, "3 con_flor_quiero")
    assert match.view(0).flor[0].winner == 2  # seat 2's unsung 35 is side 0's flor
    assert match.scores == [4, 0]
    run(match, "0 1e", "1 4b", "2 flor")
    assert match.scores == [4, 0]  # counted already: nothing more
    assert len(match.view(0).flor) == 1
    run(match, "2 4c")
    assert K.FLOR not in kinds(match)  # seat 3 sang with its answer


def test_flor_points_can_end_the_chico() -> None:
    """Flor points are added when settled, and the chico ends at once when a side reaches
    the target (RULES.md §4.1, §4.5)."""
    m = stacked(
        "argentine-1v1", F26, PLAIN, dealer=1, scores=(28, 0), options={"flor": True, "chicos": 1}
    )
    run(m, "0 flor")
    assert m.is_over
    assert m.result is not None
    assert m.result.games[0].scores == (31, 0)
    assert m.record().hands[-1].summary.ended_by == "target"


def test_scored_flors_are_revealed_at_the_end_of_the_hand() -> None:
    """The hand summary shows the flors that scored: an unopposed one, or the winner of a
    compared duel; a conceded duel shows none (RULES.md §4.5, §4.8)."""
    for answers, shown in (([], [(0, F26)]), (["1 con_flor_quiero"], [(1, F35)]),
                           (["1 con_flor_me_achico"], [])):
        match = _one(F26, F35 if answers else PLAIN)
        run(match, "0 flor", *answers, "0 truco", "1 no_quiero")
        summary = match.record().hands[0].summary
        assert [(s, " ".join(map(str, c))) for s, c in summary.flor_revealed] == shown
