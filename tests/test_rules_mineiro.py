"""Truco Mineiro: the raise ladder, raise rights, hand of ten, iron hand, game to 12 (RULES.md
§5).

Unless a test says otherwise: mineiro-1v1, dealer 1 so seat 0 is mano; seat 0 holds the three
strongest manilhas and wins the first two tricks.
"""

from __future__ import annotations

import pytest
from test_rules_support import award, kinds, last_awards, run, stacked

from arena.errors import IllegalActionError
from arena.rules import Action, ActionKind, AwardReason, Deck, GameResult, call, parse_cards, play

K = ActionKind
STRONG = "4c 7h As"
WEAK = "4d 4s 4h"
WIN = ["0 4c", "1 4d", "0 7h", "1 4s"]
RAISES = {K.TRUCO, K.SIX, K.TEN, K.TWELVE, K.RETRUCO, K.VALE_CUATRO}
HANDS_2V2 = ("4c 7h As", "4d 4s 4h", "3c 3h 3s", "5d 5s 5h")


@pytest.mark.parametrize(
    ("calls", "worth"),
    [
        ([], 2),
        (["0 truco", "1 accept"], 4),
        (["0 truco", "1 six", "0 accept"], 6),
        (["0 truco", "1 six", "0 ten", "1 accept"], 10),
        (["0 truco", "1 six", "0 ten", "1 twelve", "0 accept"], 12),
    ],
)
def test_ladder_accepted(calls: list[str], worth: int) -> None:
    """Nobody raised: 2; truco 4, six 6, ten 10, twelve 12 when accepted (RULES.md §5, §5.1).
    Each raise made while answering is itself a request the other side answers."""
    match = stacked("mineiro-1v1", STRONG, WEAK, dealer=1)
    run(match, *calls)
    assert match.view(0).hand_value == worth
    run(match, *WIN)
    hand = match.record().hands[-1]
    assert hand.awards == (award(0, worth, AwardReason.HAND),)


@pytest.mark.parametrize(
    ("calls", "team", "points"),
    [
        (["0 truco", "1 run"], 0, 2),
        (["0 truco", "1 six", "0 run"], 1, 4),
        (["0 truco", "1 six", "0 ten", "1 run"], 0, 6),
        (["0 truco", "1 six", "0 ten", "1 twelve", "0 run"], 1, 10),
    ],
)
def test_ladder_run(calls: list[str], team: int, points: int) -> None:
    """Running from truco 2, six 4, ten 6, twelve 10 for the requester's side; the hand ends
    at once (RULES.md §5.1)."""
    match = stacked("mineiro-1v1", STRONG, WEAK, dealer=1)
    run(match, *calls)
    hand = match.record().hands[-1]
    assert hand.awards == (award(team, points, AwardReason.TRUCO_REJECTED),)
    assert hand.summary.ended_by == "rejected"
    assert hand.summary.tricks == ()


@pytest.mark.parametrize(
    ("calls", "answers"),
    [
        (["0 truco"], [K.SIX, K.ACCEPT, K.RUN]),
        (["0 truco", "1 six"], [K.TEN, K.ACCEPT, K.RUN]),
        (["0 truco", "1 six", "0 ten"], [K.TWELVE, K.ACCEPT, K.RUN]),
        (["0 truco", "1 six", "0 ten", "1 twelve"], [K.ACCEPT, K.RUN]),
    ],
)
def test_answers_raise_accept_or_run(calls: list[str], answers: list[ActionKind]) -> None:
    """The answer to a request is accept, run, or the next level; there is no raise above
    twelve, and no card, envido or fold (RULES.md §5, §5.1)."""
    match = stacked("mineiro-1v1", STRONG, WEAK, dealer=1)
    run(match, *calls)
    assert kinds(match) == answers
    for kind in (K.QUIERO, K.NO_QUIERO, K.ENVIDO, K.FOLD, K.RETRUCO):
        with pytest.raises(IllegalActionError):
            match.apply(call(kind))


def test_no_side_raises_twice_in_a_row() -> None:
    """A side cannot raise twice in a row (RULES.md §5.1, source 004): after seat 0's truco is
    accepted, seat 0 cannot request six on its turn; seat 1 can on its own."""
    match = stacked("mineiro-1v1", STRONG, WEAK, dealer=1)
    run(match, "0 truco", "1 accept")
    assert not RAISES & set(kinds(match))
    with pytest.raises(IllegalActionError):
        match.apply(call(K.SIX))
    run(match, "0 4c")
    assert kinds(match) == [K.PLAY, K.PLAY, K.PLAY, K.SIX]


def test_after_accepting_a_side_may_raise() -> None:
    """After accepting, a side may raise later on its own turn (RULES.md §5.1): seat 1 raised
    to six, seat 0 accepted, so seat 0 may request ten and seat 1 may not."""
    match = stacked("mineiro-1v1", STRONG, WEAK, dealer=1)
    run(match, "0 truco", "1 six", "0 accept")
    assert match.to_act == 0
    assert K.TEN in kinds(match)
    run(match, "0 4c")
    assert not RAISES & set(kinds(match))
    run(match, "1 4d", "0 ten", "1 accept", "0 7h", "1 4s")
    assert last_awards(match) == (award(0, 10, AwardReason.HAND),)


def test_raise_rights_belong_to_the_side_2v2() -> None:
    """2v2: after team 0's truco is accepted, seat 2 (team 0) cannot raise, seat 3 (team 1) can;
    the answerer is the first opponent after the requester (RULES.md §5.1)."""
    match = stacked("mineiro-2v2", *HANDS_2V2, dealer=3)
    run(match, "0 truco")
    assert match.to_act == 1
    run(match, "1 accept", "0 4c", "1 4d")
    assert not RAISES & set(kinds(match))
    run(match, "2 3c")
    assert K.SIX in kinds(match)
    run(match, "3 six")
    assert match.to_act == 0
    run(match, "0 ten")
    assert match.to_act == 1


def test_nothing_above_twelve() -> None:
    """After twelve is accepted no request is left (RULES.md §5.1)."""
    match = stacked("mineiro-1v1", STRONG, WEAK, dealer=1)
    run(match, "0 truco", "1 six", "0 ten", "1 twelve", "0 accept")
    assert not RAISES & set(kinds(match))
    run(match, "0 4c")
    assert not RAISES & set(kinds(match))


def test_no_envido_no_fold_in_mineiro() -> None:
    """Mineiro has no envido, no flor and no folding (RULES.md §5): the actor plays or
    requests truco."""
    match = stacked("mineiro-1v1", STRONG, WEAK, dealer=1)
    assert kinds(match) == [K.PLAY, K.PLAY, K.PLAY, K.TRUCO]


def test_hand_of_ten_partners_see_each_other() -> None:
    """Hand of ten (RULES.md §5.2): the at-ten side's players see each other's cards in
    `view().partner_cards`; the other side sees no extra card."""
    match = stacked("mineiro-2v2", *HANDS_2V2, dealer=3, scores=(10, 3))
    b = Deck.BRAZILIAN
    assert match.view(0).partner_cards == ((2, parse_cards(HANDS_2V2[2], b)),)
    assert match.view(2).partner_cards == ((0, parse_cards(HANDS_2V2[0], b)),)
    assert match.view(1).partner_cards == ()
    assert match.view(3).partner_cards == ()
    for seat in range(4):
        assert match.view(seat).hand_of_ten == 0


@pytest.mark.parametrize(
    ("scores", "dealer", "chooser"),
    [((10, 3), 3, 0), ((10, 3), 0, 2), ((11, 3), 1, 2), ((3, 10), 3, 1), ((3, 11), 1, 3)],
)
def test_hand_of_ten_chooser_is_nearest_mano(
    scores: tuple[int, int], dealer: int, chooser: int
) -> None:
    """The choice is asked of the at-ten side's player nearest to mano (RULES.md §5.2); the
    only legal actions are play the hand or decline it."""
    match = stacked("mineiro-2v2", *HANDS_2V2, dealer=dealer, scores=scores)
    assert match.to_act == chooser
    assert kinds(match) == [K.PLAY_HAND, K.DECLINE_HAND]


def test_hand_of_ten_played_is_worth_4_without_truco() -> None:
    """A played hand of ten is worth 4, and nobody may request truco in it (RULES.md §5.2)."""
    match = stacked("mineiro-2v2", *HANDS_2V2, dealer=3, scores=(10, 3))
    run(match, "0 play_hand")
    assert match.to_act == 0
    steps = ["0 4c", "1 4d", "2 3c", "3 5d", "0 7h", "1 4s", "2 3h", "3 5s"]
    for step in steps:
        assert not RAISES & set(kinds(match))
        run(match, step)
    assert last_awards(match) == (award(0, 4, AwardReason.HAND),)
    assert match.result is not None
    assert match.result.games == (GameResult(0, 0, (14, 3)),)  # not capped: docs/RULINGS.md R3


def test_hand_of_ten_won_by_the_other_side_is_worth_4() -> None:
    """The side not at ten also scores 4 if it wins a played hand of ten (RULES.md §5.2)."""
    match = stacked("mineiro-1v1", WEAK, STRONG, dealer=1, scores=(11, 0))
    run(match, "0 play_hand", "0 4d", "1 4c", "1 7h", "0 4s")
    assert last_awards(match) == (award(1, 4, AwardReason.HAND),)
    assert match.scores == [11, 4]
    assert match.view(0).hand_of_ten == 0  # still only team 0 at ten


def test_hand_of_ten_declined_gives_2() -> None:
    """Declining the hand of ten gives the other side 2 and nothing is played (RULES.md §5.2)."""
    match = stacked("mineiro-2v2", *HANDS_2V2, dealer=0, scores=(10, 3))
    run(match, "2 decline_hand")
    hand = match.record().hands[-1]
    assert hand.awards == (award(1, 2, AwardReason.HAND_OF_TEN_DECLINED),)
    assert hand.summary.ended_by == "declined"
    assert hand.summary.tricks == ()
    assert match.scores == [10, 5]


def test_hand_of_ten_1v1_shows_no_partner_cards() -> None:
    """1v1 hand of ten: no partner, so no extra cards; the at-ten seat chooses (RULES.md
    §5.2)."""
    match = stacked("mineiro-1v1", STRONG, WEAK, dealer=0, scores=(10, 0))
    assert match.to_act == 0
    assert match.view(0).partner_cards == ()
    assert match.view(1).partner_cards == ()
    run(match, "0 play_hand")
    assert match.to_act == 1  # mano plays first
    assert kinds(match) == [K.PLAY, K.PLAY, K.PLAY]


def test_iron_hand_winner_scores_what_it_needs() -> None:
    """Both sides at ten: an iron hand with no truco and no choice; its winner scores what it
    needs to reach 12 and wins the game (RULES.md §5.3)."""
    match = stacked("mineiro-1v1", STRONG, WEAK, dealer=1, scores=(10, 11))
    assert match.view(0).iron_hand
    assert match.view(0).hand_of_ten is None
    assert match.view(0).partner_cards == ()
    for step in WIN:
        assert kinds(match) == [K.PLAY] * len(match.view(match.to_act or 0).hand)
        run(match, step)
    assert last_awards(match) == (award(0, 2, AwardReason.IRON_HAND),)
    assert match.result is not None
    assert match.result.games == (GameResult(0, 0, (12, 11)),)


def test_iron_hand_2v2_needs_one() -> None:
    """Iron hand, 2v2: the side at 11 needs only 1 (RULES.md §5.3)."""
    match = stacked("mineiro-2v2", *HANDS_2V2, dealer=3, scores=(11, 10))
    run(match, "0 4c", "1 4d", "2 3c", "3 5d", "0 7h", "1 4s", "2 3h", "3 5s")
    assert last_awards(match) == (award(0, 1, AwardReason.IRON_HAND),)
    assert match.scores == [12, 10]


def test_iron_hand_three_ties_dealer_wins() -> None:
    """Iron hand with three tied tricks and the default option: the dealer's side wins it and
    scores what it needs (RULES.md §3 Mineiro, §5.3)."""
    match = stacked("mineiro-1v1", "3c 2c Kc", "3h 2h Kh", dealer=1, scores=(10, 10))
    run(match, "0 3c", "1 3h", "0 2c", "1 2h", "0 Kc", "1 Kh")
    assert last_awards(match) == (award(1, 2, AwardReason.IRON_HAND),)


def test_iron_hand_three_ties_nobody_gives_another_iron_hand() -> None:
    """Option all_tied="nobody": a tied iron hand scores nothing and the next hand is again an
    iron hand (RULES.md §5.3)."""
    match = stacked(
        "mineiro-1v1", "3c 2c Kc", "3h 2h Kh", dealer=1, scores=(10, 11),
        options={"all_tied": "nobody"},
    )
    run(match, "0 3c", "1 3h", "0 2c", "1 2h", "0 Kc", "1 Kh")
    assert last_awards(match) == ()
    assert match.scores == [10, 11]
    assert match.hand_number == 1
    assert match.view(0).iron_hand
    assert match.to_act == 1  # the next dealer is seat 0, so seat 1 is mano


def test_blind_iron_hand() -> None:
    """Blind iron hand option (RULES.md §5.3): no seat sees its own cards; each plays face down
    by position (PLAY_FACE_DOWN with a slot), and the card shows when played."""
    match = stacked(
        "mineiro-1v1", STRONG, WEAK, dealer=1, scores=(10, 10),
        options={"blind_iron_hand": True},
    )
    for seat in (0, 1):
        view = match.view(seat)
        assert view.hand == ()
        assert view.hand_size == 3
    assert match.legal_actions() == tuple(Action(K.PLAY_FACE_DOWN, slot=i) for i in range(3))
    with pytest.raises(IllegalActionError):
        match.apply(play(parse_cards("4c", Deck.BRAZILIAN)[0]))
    run(match, "0 #1")
    assert [str(p.card) for p in match.view(1).current_trick] == ["7h"]
    assert match.legal_actions() == tuple(Action(K.PLAY_FACE_DOWN, slot=i) for i in range(3))
    run(match, "1 #0")  # 7h beats 4d
    assert match.legal_actions() == tuple(Action(K.PLAY_FACE_DOWN, slot=i) for i in range(2))
    run(match, "0 #0", "1 #1")  # seat 0's slot 0 is now 4c; seat 1's slot 1 is 4h
    hand = match.record().hands[-1]
    assert [str(p.card) for p in hand.summary.tricks[1].plays] == ["4c", "4h"]
    assert hand.awards == (award(0, 2, AwardReason.IRON_HAND),)


def test_blind_option_only_changes_the_iron_hand() -> None:
    """With the blind option on, ordinary hands are played face up (RULES.md §5.3)."""
    match = stacked("mineiro-1v1", STRONG, WEAK, dealer=1, options={"blind_iron_hand": True})
    assert len(match.view(0).hand) == 3
    assert kinds(match) == [K.PLAY, K.PLAY, K.PLAY, K.TRUCO]


def test_game_to_12() -> None:
    """A Mineiro game is won by the first side to reach 12 and is the whole match (RULES.md
    §5)."""
    match = stacked("mineiro-1v1", STRONG, WEAK, dealer=1, scores=(8, 0))
    run(match, "0 truco", "1 accept", *WIN)
    assert match.result is not None
    assert match.result.winner_team == 0
    assert match.result.games == (GameResult(0, 0, (12, 0)),)
    assert match.options.target == 12


def test_ten_points_starts_a_hand_of_ten_next_hand() -> None:
    """Reaching 10 makes the next hand a hand of ten (RULES.md §5.2)."""
    match = stacked("mineiro-1v1", STRONG, WEAK, dealer=1, scores=(6, 0))
    run(match, "0 truco", "1 accept", *WIN)
    assert match.scores == [10, 0]
    assert match.view(0).hand_of_ten == 0
    assert kinds(match) == [K.PLAY_HAND, K.DECLINE_HAND]
