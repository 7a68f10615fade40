"""Tricks: who wins a trick, pardas, who leads, and who wins the hand's tricks (RULES.md §3).

Scenarios are 1v1 with seat 0 mano (dealer 1) unless they say otherwise, so team 0 is "A" (mano)
and team 1 is "B". Each row of the two parda tables is one parametrized case: the cards, the
script, who wins the hand and how many tricks were played before play stopped.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from test_rules_support import award, last_awards, run, stacked

from arena.rules import AwardReason

# (row, seat 0 hand, seat 1 hand, script, hand winner, tricks played). W: mano won the trick,
# L: mano lost it, P: parda. RULES.md §3, Argentine table.
ARGENTINE_ROWS = [
    ("W W", "1e 1b 4e", "4b 4o 4c", ["0 1e", "1 4b", "0 1b", "1 4o"], 0, 2),
    ("L L", "4b 4o 4c", "1e 1b 4e", ["0 4b", "1 1e", "1 1b", "0 4o"], 1, 2),
    ("W L W", "1e 4e 1b", "7e 3e 4b", ["0 1e", "1 7e", "0 4e", "1 3e", "1 4b", "0 1b"], 0, 3),
    ("W L L", "1e 4e 4o", "7e 3e 3o", ["0 1e", "1 7e", "0 4e", "1 3e", "1 3o", "0 4o"], 1, 3),
    ("L W L", "7e 3e 4b", "1e 4e 1b", ["0 7e", "1 1e", "1 4e", "0 3e", "0 4b", "1 1b"], 1, 3),
    ("L W W", "7e 3e 3o", "1e 4e 4o", ["0 7e", "1 1e", "1 4e", "0 3e", "0 3o", "1 4o"], 0, 3),
    ("W P", "1e 3e 4e", "4b 3o 5b", ["0 1e", "1 4b", "0 3e", "1 3o"], 0, 2),
    ("L P", "4b 3o 5b", "1e 3e 4e", ["0 4b", "1 1e", "1 3e", "0 3o"], 1, 2),
    ("W L P", "1e 4e 3e", "4b 1b 3o", ["0 1e", "1 4b", "0 4e", "1 1b", "1 3o", "0 3e"], 0, 3),
    ("L W P", "4b 1b 3o", "1e 4e 3e", ["0 4b", "1 1e", "1 4e", "0 1b", "0 3o", "1 3e"], 1, 3),
    ("P W", "3e 1e 4e", "3o 4b 5b", ["0 3e", "1 3o", "0 1e", "1 4b"], 0, 2),
    ("P L", "3e 4b 5b", "3o 1e 4e", ["0 3e", "1 3o", "0 4b", "1 1e"], 1, 2),
    ("P P W", "3e 2e 1e", "3o 2o 4b", ["0 3e", "1 3o", "0 2e", "1 2o", "0 1e", "1 4b"], 0, 3),
    ("P P L", "3e 2e 4b", "3o 2o 1e", ["0 3e", "1 3o", "0 2e", "1 2o", "0 4b", "1 1e"], 1, 3),
]

# The same rows with the Brazilian deck (RULES.md §3, Mineiro table): 4c zap, 7h copas, As
# espadilha, 7d pica-fumo; suits never matter below them.
MINEIRO_ROWS = [
    ("W W", "4c 7h 4d", "4h 4s 5c", ["0 4c", "1 4h", "0 7h", "1 4s"], 0, 2),
    ("L L", "4h 4s 5c", "4c 7h 4d", ["0 4h", "1 4c", "1 7h", "0 4s"], 1, 2),
    ("W L W", "4c 4d 7h", "As 3c 4h", ["0 4c", "1 As", "0 4d", "1 3c", "1 4h", "0 7h"], 0, 3),
    ("W L L", "4c 4d 4s", "As 3c 3h", ["0 4c", "1 As", "0 4d", "1 3c", "1 3h", "0 4s"], 1, 3),
    ("L W L", "As 3c 4h", "4c 4d 7h", ["0 As", "1 4c", "1 4d", "0 3c", "0 4h", "1 7h"], 1, 3),
    ("L W W", "As 3c 3h", "4c 4d 4s", ["0 As", "1 4c", "1 4d", "0 3c", "0 3h", "1 4s"], 0, 3),
    ("W P", "4c 3c 4d", "4h 3h 5c", ["0 4c", "1 4h", "0 3c", "1 3h"], 0, 2),
    ("L P", "4h 3h 5c", "4c 3c 4d", ["0 4h", "1 4c", "1 3c", "0 3h"], 1, 2),
    ("W L P", "4c 4d 3c", "4h 7h 3h", ["0 4c", "1 4h", "0 4d", "1 7h", "1 3h", "0 3c"], 0, 3),
    ("L W P", "4h 7h 3h", "4c 4d 3c", ["0 4h", "1 4c", "1 4d", "0 7h", "0 3h", "1 3c"], 1, 3),
    ("P W", "3c 4c 4d", "3h 4h 5c", ["0 3c", "1 3h", "0 4c", "1 4h"], 0, 2),
    ("P L", "3c 4h 5c", "3h 4c 4d", ["0 3c", "1 3h", "0 4h", "1 4c"], 1, 2),
    ("P P W", "3c 2c 4c", "3h 2h 4h", ["0 3c", "1 3h", "0 2c", "1 2h", "0 4c", "1 4h"], 0, 3),
    ("P P L", "3c 2c 4h", "3h 2h 4c", ["0 3c", "1 3h", "0 2c", "1 2h", "0 4h", "1 4c"], 1, 3),
]


ROW_FIELDS = ("row", "hand0", "hand1", "script", "winner", "played")


def _ids(rows: Sequence[tuple[object, ...]]) -> list[str]:
    return [str(row[0]) for row in rows]


@pytest.mark.parametrize(ROW_FIELDS, ARGENTINE_ROWS, ids=_ids(ARGENTINE_ROWS))
def test_argentine_parda_table(
    row: str, hand0: str, hand1: str, script: list[str], winner: int, played: int
) -> None:
    """Every row of the Argentine table (RULES.md §3, source 001): two tricks out of three; a
    first-trick parda goes to the next trick won; a later parda goes to the first trick's
    winner. Play stops as soon as the tricks decide the hand, and the winner scores the hand
    (1 point with no truco, §4.3)."""
    match = stacked("argentine-1v1", hand0, hand1, dealer=1)
    run(match, *script)
    hand = match.record().hands[-1]
    assert len(hand.summary.tricks) == played
    assert "".join("P" if t.parda else "WL"[t.winner_team or 0] for t in hand.summary.tricks) == (
        row.replace(" ", "")
    )
    assert hand.summary.winner_team == winner
    assert hand.summary.ended_by == "tricks"
    assert hand.awards == (award(winner, 1, AwardReason.HAND),)
    assert match.hand_number == 1  # the next hand has started


@pytest.mark.parametrize(ROW_FIELDS, MINEIRO_ROWS, ids=_ids(MINEIRO_ROWS))
def test_mineiro_parda_table(
    row: str, hand0: str, hand1: str, script: list[str], winner: int, played: int
) -> None:
    """Every row of the Mineiro table (RULES.md §3, sources 002/004), which matches the
    Argentine one except for three tied tricks; play stops as soon as the tricks decide, and
    the winner scores the 2 points of a hand nobody raised (RULES.md §5)."""
    match = stacked("mineiro-1v1", hand0, hand1, dealer=1)
    run(match, *script)
    hand = match.record().hands[-1]
    assert len(hand.summary.tricks) == played
    assert "".join("P" if t.parda else "WL"[t.winner_team or 0] for t in hand.summary.tricks) == (
        row.replace(" ", "")
    )
    assert hand.summary.winner_team == winner
    assert hand.awards == (award(winner, 2, AwardReason.HAND),)


THREE_PARDAS_1V1 = ("3e 2e 12e", "3o 2o 12o")
THREE_PARDAS_2V2 = ("3e 2e 12e", "3o 2o 12o", "4e 5e 6e", "4o 5o 6o")


@pytest.mark.parametrize("dealer", [1, 0])
def test_argentine_three_pardas_go_to_mano_1v1(dealer: int) -> None:
    """Argentine, all three tricks parda: mano's team wins the hand (RULES.md §3, source 001),
    whichever seat is mano."""
    mano = 1 - dealer
    match = stacked("argentine-1v1", *THREE_PARDAS_1V1, dealer=dealer)
    for trick in range(3):
        run(match, *(f"{s} {THREE_PARDAS_1V1[s].split()[trick]}" for s in (mano, 1 - mano)))
    hand = match.record().hands[-1]
    assert [t.parda for t in hand.summary.tricks] == [True, True, True]
    assert hand.awards == (award(mano, 1, AwardReason.HAND),)


def test_argentine_three_pardas_go_to_mano_2v2() -> None:
    """Argentine 2v2, three pardas: mano's team wins, not the dealer's (RULES.md §3). Dealer 0,
    so seat 1 (team 1) is mano."""
    match = stacked("argentine-2v2", *THREE_PARDAS_2V2, dealer=0)
    run(match, "1 3o", "2 4e", "3 4o", "0 3e")
    run(match, "1 2o", "2 5e", "3 5o", "0 2e")
    run(match, "1 12o", "2 6e", "3 6o", "0 12e")
    assert last_awards(match) == (award(1, 1, AwardReason.HAND),)


@pytest.mark.parametrize("variant", ["mineiro-1v1", "mineiro-2v2"])
@pytest.mark.parametrize("dealer", [0, 1])
def test_mineiro_three_ties_go_to_the_dealer(variant: str, dealer: int) -> None:
    """Mineiro, all three tricks tied: the dealer's team wins (RULES.md §3, source 004; the
    opposite of Argentine), 2 points."""
    hands = ("3c 2c Kc", "3h 2h Kh", "4d 5d 6d", "4s 5s 6s")
    seats = len(hands) if variant == "mineiro-2v2" else 2
    match = stacked(variant, *hands[:seats], dealer=dealer)
    order = [(dealer + 1 + i) % seats for i in range(seats)]
    for trick in range(3):
        run(match, *(f"{s} {hands[s].split()[trick]}" for s in order))
    hand = match.record().hands[-1]
    assert all(t.parda for t in hand.summary.tricks)
    assert hand.awards == (award(dealer % 2, 2, AwardReason.HAND),)


@pytest.mark.parametrize("variant", ["mineiro-1v1", "mineiro-2v2"])
def test_mineiro_three_ties_score_nothing_with_option_nobody(variant: str) -> None:
    """Option all_tied="nobody" (RULES.md §3, Mineiro): three tied tricks score nothing; the
    hand ends and the next hand is dealt by the next seat."""
    hands = ("3c 2c Kc", "3h 2h Kh", "4d 5d 6d", "4s 5s 6s")
    seats = 4 if variant == "mineiro-2v2" else 2
    match = stacked(variant, *hands[:seats], dealer=1, options={"all_tied": "nobody"})
    order = [(2 + i) % seats for i in range(seats)]
    for trick in range(3):
        run(match, *(f"{s} {hands[s].split()[trick]}" for s in order))
    hand = match.record().hands[-1]
    assert hand.awards == ()
    assert hand.summary.winner_team is None
    assert hand.summary.ended_by == "tricks"
    assert match.scores == [0, 0]
    assert (match.hand_number, match.hand.dealer) == (1, 2 % seats)


def test_same_team_equal_cards_win_for_the_first_player() -> None:
    """Equal top cards of one team only: that team wins the trick and the first of them to play
    it is the trick's winner, who leads next (RULES.md §3)."""
    match = stacked("argentine-2v2", "4e 4o 4c", "3e 1e 1b", "5e 5o 5c", "3o 7e 7o", dealer=3)
    run(match, "0 4e", "1 3e", "2 5e", "3 3o")  # team 1 twice with a 3: seat 1 played first
    trick = match.hand.tricks[-1]
    assert (trick.winner, trick.winner_team, trick.parda) == (1, 1, False)
    assert match.to_act == 1
    match = stacked("argentine-2v2", "3o 7e 7o", "4e 4o 4c", "3e 1e 1b", "5e 5o 5c", dealer=0)
    run(match, "1 4e", "2 3e", "3 5e", "0 3o")  # team 0 twice with a 3: seat 2 played first
    trick = match.hand.tricks[-1]
    assert (trick.winner, trick.winner_team, trick.parda) == (2, 0, False)
    assert match.to_act == 2


def test_equal_top_cards_of_opposing_teams_are_a_parda() -> None:
    """The strongest rank played by both teams is a parda, even if the lower cards differ
    (RULES.md §3); the player who led the tied trick leads again, not a tied player."""
    match = stacked("argentine-2v2", "4e 1e 5c", "4b 5e 5o", "3o 6e 6o", "3b 7c 7b", dealer=3)
    run(match, "0 4e", "1 4b", "2 3o", "3 3b")
    trick = match.hand.tricks[-1]
    assert trick.parda
    assert (trick.winner, trick.winner_team) == (None, None)
    assert match.to_act == 0  # seat 0 led the tied trick; seats 2 and 3 tied it


def test_leader_after_a_parda_is_the_trick_leader_not_mano_order() -> None:
    """After a parda, the seat that led the tied trick leads again (RULES.md §3, source 000);
    here seat 1 is mano and led, so it leads the second trick too."""
    match = stacked("argentine-1v1", "3e 1e 4e", "3o 4b 5b", dealer=0)
    run(match, "1 3o", "0 3e")
    assert match.hand.tricks[-1].parda
    assert match.to_act == 1


def test_trick_winner_leads_the_next_trick() -> None:
    """The trick winner leads the next trick (RULES.md §3), even if it played last."""
    match = stacked("argentine-1v1", "4e 1e 5e", "1b 4b 5b", dealer=1)
    run(match, "0 4e", "1 1b")
    assert match.to_act == 1
    assert match.view(1).tricks[-1].winner == 1


def test_play_stops_as_soon_as_decided_keeps_cards_unplayed() -> None:
    """When two tricks decide the hand, the third is not played: the hand ends, the remaining
    cards are never played, and the next hand starts with the next dealer (RULES.md §3)."""
    match = stacked("argentine-2v2", "1e 1b 4e", "4b 4o 4c", "5e 5b 5o", "6e 6b 6o", dealer=3)
    run(match, "0 1e", "1 4b", "2 5e", "3 6e", "0 1b", "1 4o", "2 5b", "3 6b")
    hand = match.record().hands[-1]
    assert len(hand.summary.tricks) == 2
    assert sum(len(t.plays) for t in hand.summary.tricks) == 8
    assert hand.summary.winner_team == 0
    assert (match.hand_number, match.hand.dealer, match.to_act) == (1, 0, 1)


def test_no_obligation_to_follow_suit() -> None:
    """Any card may be played: every held card is legal whatever was led (RULES.md §3)."""
    match = stacked("argentine-1v1", "1e 4e 5e", "1b 4o 5c", dealer=1)
    run(match, "0 4e")
    plays = [a.card for a in match.legal_actions() if a.card is not None]
    assert [str(c) for c in plays] == ["1b", "4o", "5c"]
