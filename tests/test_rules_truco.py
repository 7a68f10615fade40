"""Argentine truco, retruco, vale cuatro and folding (RULES.md §4.2, §4.3, §4.6).

Unless a test says otherwise: 1v1, dealer 1 so seat 0 is mano; seat 0 holds the strong cards.
"""

from __future__ import annotations

import pytest
from test_rules_support import award, kinds, last_awards, run, stacked

from arena.errors import IllegalActionError
from arena.rules import ActionKind, AwardReason, call

K = ActionKind
STRONG = "1e 1b 7e"
WEAK = "4b 4o 4c"

# Scripts reaching each accepted level, then seat 0 wins the first two tricks.
ACCEPTED = [
    (0, 1, ["0 1e", "1 4b", "0 1b", "1 4o"]),
    (1, 2, ["0 truco", "1 quiero", "0 1e", "1 4b", "0 1b", "1 4o"]),
    (2, 3, ["0 truco", "1 quiero", "0 1e", "1 retruco", "0 quiero", "1 4b", "0 1b", "1 4o"]),
    (
        3,
        4,
        [
            "0 truco",
            "1 quiero",
            "0 1e",
            "1 retruco",
            "0 quiero",
            "1 4b",
            "0 vale_cuatro",
            "1 quiero",
            "0 1b",
            "1 4o",
        ],
    ),
]

# Scripts rejecting each level: (caller's team, points it scores).
REJECTED = [
    ("truco", 0, 1, ["0 truco", "1 no_quiero"]),
    ("retruco", 1, 2, ["0 truco", "1 quiero", "0 1e", "1 retruco", "0 no_quiero"]),
    (
        "vale cuatro",
        0,
        3,
        [
            "0 truco",
            "1 quiero",
            "0 1e",
            "1 retruco",
            "0 quiero",
            "1 4b",
            "0 vale_cuatro",
            "1 no_quiero",
        ],
    ),
]


@pytest.mark.parametrize(("level", "worth", "script"), ACCEPTED, ids=["none", "T", "RT", "V4"])
def test_accepted_levels_make_the_hand_worth(level: int, worth: int, script: list[str]) -> None:
    """No call 1, truco 2, retruco 3, vale cuatro 4 (RULES.md §4.3): the trick winner scores the
    accepted value as the truco part."""
    match = stacked("argentine-1v1", STRONG, WEAK, dealer=1)
    run(match, *script[:-1])
    assert match.view(1).hand_value == worth
    run(match, script[-1])
    hand = match.record().hands[-1]
    assert hand.awards == (award(0, worth, AwardReason.HAND),)
    assert hand.summary.ended_by == "tricks"


@pytest.mark.parametrize(
    ("name", "team", "points", "script"), REJECTED, ids=[r[0] for r in REJECTED]
)
def test_rejected_levels_score_for_the_caller(
    name: str, team: int, points: int, script: list[str]
) -> None:
    """No quiero to truco 1, retruco 2, vale cuatro 3 for the caller's side, and the hand ends
    at once with nothing else played (RULES.md §4.3)."""
    match = stacked("argentine-1v1", STRONG, WEAK, dealer=1)
    run(match, *script)
    hand = match.record().hands[-1]
    assert hand.awards == (award(team, points, AwardReason.TRUCO_REJECTED),)
    assert hand.summary.ended_by == "rejected"
    assert hand.summary.winner_team is None
    assert match.hand_number == 1
    assert match.scores == [points if team == 0 else 0, points if team == 1 else 0]


def test_truco_answers_are_quiero_or_no_quiero_only() -> None:
    """Answering truco with retruco is illegal: accept first, raise later on your own turn
    (RULES.md §4.3, strict play). Folding is not an answer either (§4.2)."""
    match = stacked("argentine-1v1", STRONG, WEAK, dealer=1)
    run(match, "0 1e", "1 truco")
    assert kinds(match) == [K.QUIERO, K.NO_QUIERO]
    for kind in (K.RETRUCO, K.VALE_CUATRO, K.FOLD, K.TRUCO):
        with pytest.raises(IllegalActionError, match=f"illegal action {call(kind)}"):
            match.apply(call(kind))


def test_retruco_answer_cannot_be_vale_cuatro() -> None:
    """A retruco is answered with quiero or no quiero only, never vale cuatro (RULES.md §4.3)."""
    match = stacked("argentine-1v1", STRONG, WEAK, dealer=1)
    run(match, "0 truco", "1 quiero", "0 1e", "1 retruco")
    assert kinds(match) == [K.QUIERO, K.NO_QUIERO]
    with pytest.raises(IllegalActionError):
        match.apply(call(K.VALE_CUATRO))


def test_raising_without_the_quiero_is_illegal() -> None:
    """Only the team that accepted the last level may raise (RULES.md §4.2): after seat 0's
    truco is accepted, seat 0 cannot call retruco (nor truco again); seat 1 can, on its turn."""
    match = stacked("argentine-1v1", STRONG, WEAK, dealer=1)
    run(match, "0 truco", "1 quiero")
    assert match.to_act == 0
    assert kinds(match) == [K.PLAY, K.PLAY, K.PLAY, K.FOLD]
    for kind in (K.RETRUCO, K.TRUCO, K.VALE_CUATRO):
        with pytest.raises(IllegalActionError):
            match.apply(call(kind))
    run(match, "0 1e")
    assert K.RETRUCO in kinds(match)
    assert K.VALE_CUATRO not in kinds(match)


def test_raise_rights_alternate_2v2() -> None:
    """2v2: the quiero belongs to the accepting team, not the accepting seat (RULES.md §4.2):
    after team 0's truco is accepted, seat 2 cannot raise and seat 3 can."""
    hands = ("4e 5e 6e", "4b 5b 6b", "4o 5o 6o", "4c 5c 6c")
    match = stacked("argentine-2v2", *hands, dealer=3)
    run(match, "0 truco", "1 quiero", "0 4e", "1 4b")
    assert match.to_act == 2
    assert K.RETRUCO not in kinds(match)
    run(match, "2 4o")
    assert K.RETRUCO in kinds(match)
    run(match, "3 retruco")
    pending = match.view(0).pending
    assert pending is not None
    assert pending.responder == 0
    run(match, "0 quiero")
    assert match.to_act == 3
    assert K.VALE_CUATRO not in kinds(match)


def test_only_one_truco_and_nothing_above_vale_cuatro() -> None:
    """Truco only if nobody has called it; after vale cuatro (the cap) no call is left
    (RULES.md §4.2, §4.3)."""
    match = stacked("argentine-1v1", STRONG, WEAK, dealer=1)
    run(match, *ACCEPTED[3][2][:-2])
    assert match.to_act == 0
    assert kinds(match) == [K.PLAY, K.PLAY, K.FOLD]
    run(match, "0 1b")
    assert kinds(match) == [K.PLAY, K.PLAY, K.FOLD]


def test_play_resumes_with_the_actor_after_a_call() -> None:
    """After a call is settled, the player who was to act before it acts again (RULES.md §4.3):
    seat 1 calls truco, seat 0 accepts, seat 1 still owes its card."""
    match = stacked("argentine-1v1", STRONG, WEAK, dealer=1)
    run(match, "0 1e", "1 truco")
    assert match.to_act == 0
    run(match, "0 quiero")
    assert match.to_act == 1
    assert match.view(1).pending is None
    assert match.view(1).hand_value == 2


def test_truco_answerer_is_the_first_opponent_after_the_caller_2v2() -> None:
    """The answer is asked of the first opponent after the caller in turn order (RULES.md
    §4.3): seat 2's truco goes to seat 3, seat 3's retruco to seat 0."""
    hands = ("4e 5e 6e", "4b 5b 6b", "4o 5o 6o", "4c 5c 6c")
    match = stacked("argentine-2v2", *hands, dealer=3)
    run(match, "0 4e", "1 4b", "2 truco")
    assert match.to_act == 3
    run(match, "3 quiero", "2 4o", "3 retruco")
    assert match.to_act == 0


def test_answerer_skips_folded_opponents() -> None:
    """The answerer is the first opponent after the caller who has not folded (RULES.md §4.3):
    seat 1 folded, so seat 0's truco is answered by seat 3."""
    hands = ("1e 5e 6e", "4b 5b 6b", "4o 5o 6o", "4c 5c 6c")
    match = stacked("argentine-2v2", *hands, dealer=3)
    run(match, "0 1e", "1 fold", "2 4o", "3 4c")
    assert match.to_act == 0  # seat 0 won the first trick
    run(match, "0 truco")
    pending = match.view(0).pending
    assert pending is not None
    assert (pending.caller, pending.responder) == (0, 3)


@pytest.mark.parametrize(
    ("script", "points"),
    [
        (["0 fold"], 1),
        (["0 truco", "1 quiero", "0 fold"], 2),
        (["0 truco", "1 quiero", "0 1e", "1 retruco", "0 quiero", "1 4b", "0 fold"], 3),
    ],
)
def test_fold_1v1_scores_the_current_truco_part(script: list[str], points: int) -> None:
    """Folding ends a 1v1 hand: the other side scores the truco part at its accepted value, 1
    if no truco was accepted (RULES.md §4.6); no extra envido point (arena ruling)."""
    match = stacked("argentine-1v1", STRONG, WEAK, dealer=1)
    run(match, *script)
    hand = match.record().hands[-1]
    assert hand.awards == (award(1, points, AwardReason.FOLD),)
    assert hand.summary.ended_by == "fold"


def test_fold_keeps_envido_points_already_settled() -> None:
    """Points settled before a fold stand (RULES.md §4.6)."""
    match = stacked("argentine-1v1", STRONG, WEAK, dealer=1)
    run(match, "0 envido", "1 quiero", "0 fold")
    assert last_awards(match) == (
        award(0, 2, AwardReason.ENVIDO),
        award(1, 1, AwardReason.FOLD),
    )


def test_fold_2v2_partner_plays_on() -> None:
    """In 2v2 a folded player's partner plays on alone; turn order skips the folded seat and the
    hand is decided by the tricks (RULES.md §4.6, §3)."""
    hands = ("1e 1b 7e", "4b 5b 6b", "3e 3b 2e", "4o 5o 6o")
    match = stacked("argentine-2v2", *hands, dealer=3)
    run(match, "0 fold")
    assert match.view(2).folded == (0,)
    assert match.to_act == 1
    run(match, "1 4b", "2 3e", "3 4o")
    assert match.to_act == 2
    run(match, "2 3b", "3 5o", "1 5b")  # seat 0 is skipped
    hand = match.record().hands[-1]
    assert [len(t.plays) for t in hand.summary.tricks] == [3, 3]
    assert hand.awards == (award(0, 1, AwardReason.HAND),)


def test_fold_completes_a_trick_in_progress() -> None:
    """A fold by the last seat to play a trick finishes that trick with the cards already
    played (RULES.md §3, §4.6)."""
    hands = ("3e 5e 6e", "4b 5b 6b", "4o 5o 6o", "1e 5c 6c")
    match = stacked("argentine-2v2", *hands, dealer=3)
    run(match, "0 3e", "1 4b", "2 4o", "3 fold")
    trick = match.hand.tricks[-1]
    assert len(trick.plays) == 3
    assert trick.winner == 0
    assert match.to_act == 0


@pytest.mark.parametrize(("accepted", "points"), [(False, 1), (True, 2)])
def test_fold_2v2_whole_side_ends_the_hand(accepted: bool, points: int) -> None:
    """When every player of a side has folded, the hand ends and the other side scores the
    truco part at its current value (RULES.md §4.6)."""
    hands = ("1e 1b 7e", "4b 5b 6b", "3e 3b 2e", "4o 5o 6o")
    match = stacked("argentine-2v2", *hands, dealer=3)
    if accepted:
        run(match, "0 truco", "1 quiero")
    run(match, "0 fold", "1 4b", "2 fold")
    hand = match.record().hands[-1]
    assert hand.awards == (award(1, points, AwardReason.FOLD),)
    assert hand.summary.ended_by == "fold"
    assert (match.hand_number, match.to_act) == (1, 1)


def test_folded_cards_take_no_part_in_a_later_envido() -> None:
    """A folded player's cards are thrown in: they take no part in a later envido (RULES.md
    §4.6). Seat 0 holds 33 but folded; seat 2 (27) is best among the others."""
    hands = ("7e 6e 4b", "4o 5c 12b", "7o 12o 3c", "5e 12e 1c")  # 33, 5, 27, 25
    match = stacked("argentine-2v2", *hands, dealer=3)
    run(match, "0 fold", "1 envido")
    assert match.to_act == 2
    run(match, "2 quiero")
    outcome = match.view(1).envido
    assert outcome is not None
    assert [seat for seat, _ in outcome.announcements] == [1, 2, 3]
    assert (outcome.winner, outcome.team) == (2, 0)
    assert match.view(1).awards == (award(0, 2, AwardReason.ENVIDO),)


def test_fold_only_as_the_actor() -> None:
    """Folding is an actor's action; in Mineiro there is no folding at all (RULES.md §4.2,
    §5)."""
    match = stacked("argentine-1v1", STRONG, WEAK, dealer=1)
    assert K.FOLD in kinds(match)
    run(match, "0 truco")
    assert K.FOLD not in kinds(match)
    mineiro = stacked("mineiro-1v1", "4c 7h As", "4d 4s 4h", dealer=1)
    assert K.FOLD not in kinds(mineiro)
    with pytest.raises(IllegalActionError):
        mineiro.apply(call(K.FOLD))


def test_rejected_truco_after_envido_keeps_both_awards() -> None:
    """A rejected truco ends the hand but an envido settled earlier stands (RULES.md §4.3,
    §4.4)."""
    match = stacked("argentine-1v1", STRONG, WEAK, dealer=1)
    run(match, "0 real_envido", "1 quiero", "0 truco", "1 no_quiero")
    assert last_awards(match) == (
        award(0, 3, AwardReason.ENVIDO),
        award(0, 1, AwardReason.TRUCO_REJECTED),
    )
