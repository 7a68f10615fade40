"""argentine-gallo: the gallo's four cards and private discard, sides and accounts, rotating and
fixed gallo, the leading score, first player to the target (RULES.md §4.7, §4.1, §4.4, §4.5;
docs/RULINGS.md R4, R5).

Unless a test says otherwise: rotating gallo, dealer 2, so seat 2 is the gallo (four cards) and
seat 0 is mano; the pair is seats 0 and 1.
"""

from __future__ import annotations

import pytest
from test_rules_support import award, card, kinds, run, stacked

from arena.errors import IllegalActionError
from arena.rules import Action, ActionKind, AwardReason, Match, deal_cards, find_variant, play
from arena.rules.views import HandEndEvent, Move, MoveEvent

K = ActionKind
GALLO = "4e 5e 6b 1e"  # the gallo's four cards
PAIR0 = "1b 2b 3c"
PAIR1 = "4c 5c 6o"
H = AwardReason.HAND


def _gallo(scores: tuple[int, ...] | None = None, **options: object) -> Match:
    return stacked(
        "argentine-gallo", PAIR0, PAIR1, GALLO, dealer=2, scores=scores, options=options or None
    )


def test_the_gallo_gets_four_cards_and_discards_before_anything_else() -> None:
    """The gallo is dealt 4 cards and discards 1 face down before anything else happens in the
    hand (RULES.md §4.7): its only legal actions are the four discards."""
    match = _gallo()
    assert match.to_act == 2
    assert match.legal_actions() == tuple(
        Action(K.DISCARD, card=c) for c in match.hand.dealt[2]
    )
    with pytest.raises(IllegalActionError, match="must first discard"):
        match.apply(play(card("1b")))
    run(match, "2 discard:6b")
    assert match.to_act == 0
    assert [str(c) for c in match.view(2).hand] == ["4e", "5e", "1e"]


def test_seeded_deals_give_the_gallo_four_cards() -> None:
    """Seeded deals give the gallo (the dealer when rotating) 4 cards and the others 3, no
    card twice (RULES.md §4.7, §6)."""
    variant = find_variant("argentine-gallo")
    for seed in range(20):
        match = Match(variant, seed=seed)
        sizes = [len(cards) for cards in match.hand.dealt]
        gallo = match.hand.dealer
        assert sizes == [4 if s == gallo else 3 for s in range(3)]
        assert match.hand.dealt == deal_cards(variant, seed, 0, 0, gallo)
        flat = [c for cards in match.hand.dealt for c in cards]
        assert len(set(flat)) == 10


def test_the_discard_is_private() -> None:
    """The discard is private to the gallo (RULES.md §4.7): its event with the card goes to
    the gallo alone, the other seats get a move event of a DISCARD without a card (as their
    views list it: protocol 1.1, a bot counting events does not drift), and the hand summary
    never names it; the full record keeps it (it is needed to replay)."""
    match = _gallo()
    events = match.apply(Action(K.DISCARD, card=card("6b")))
    (event, public) = events
    assert event.audience == {2}
    assert isinstance(event.body, MoveEvent)
    assert event.body.move.action.card == card("6b")
    assert public.audience == {0, 1}
    assert isinstance(public.body, MoveEvent)
    assert public.body.move == Move(2, Action(K.DISCARD))
    assert public.body.card is None
    for seat in (0, 1):
        view = match.view(seat)
        assert view.moves[0].action == Action(K.DISCARD)
        assert view.discard is None
        assert card("6b") not in view.hand
    assert match.view(2).moves[0].action.card == card("6b")
    assert match.view(2).discard == card("6b")
    run(match, "0 1b", "1 4c", "2 1e", "2 4e", "0 2b", "1 5c", "0 3c", "1 6o", "2 5e")
    hand = match.record().hands[0]
    assert card("6b") not in {p.card for t in hand.summary.tricks for p in t.plays}
    assert hand.moves[0].action.card == card("6b")
    assert "6b" not in repr(hand.summary)


def test_sides_and_the_view_name_the_gallo() -> None:
    """The gallo plays alone as side 0, the pair as side 1; every view names the gallo and the
    seat's side; with a rotating gallo each seat has its own account (RULES.md §4.7, R4)."""
    match = _gallo()
    view = match.view(0)
    assert (view.gallo, view.side, view.side_of) == (2, 1, (1, 1, 0))
    assert (view.team, view.team_of) == (0, (0, 1, 2))
    assert match.view(2).side == 0
    assert match.num_teams == 3


def test_rotating_gallo_pair_points_go_to_both_players() -> None:
    """Points won by the pair are credited to each of its two players; the gallo's only to the
    gallo (RULES.md §4.7)."""
    match = _gallo()
    run(match, "2 discard:6b", "0 truco", "2 quiero", "0 1b", "1 4c", "2 4e", "0 2b", "1 5c")
    run(match, "2 5e")
    assert match.record().hands[0].awards == (award(0, 2, H), award(1, 2, H))
    assert match.scores == [2, 2, 0]
    # Next hand: dealer 0 is the gallo.
    assert match.hand.gallo == 0
    assert len(match.hand.dealt[0]) == 4


@pytest.mark.parametrize(
    ("scores", "winner"),
    [((29, 29, 0), 0), ((28, 29, 0), 1), ((29, 27, 5), 0)],
)
def test_rotating_gallo_first_player_to_the_target_wins(
    scores: tuple[int, int, int], winner: int
) -> None:
    """The first player to reach the target wins the chico; the pair's players reach it
    together, so the higher score wins, and equal scores go to the player nearer to mano
    (RULES.md §4.7, docs/RULINGS.md R5)."""
    match = _gallo(scores, chicos=1)
    run(match, "2 discard:6b", "0 truco", "2 no_quiero")
    assert match.result is not None
    assert match.result.winner_team == winner
    assert match.result.games_won[winner] == 1


def test_the_gallo_wins_alone() -> None:
    """Points the gallo wins go to the gallo's account only (RULES.md §4.7)."""
    match = _gallo()
    run(match, "2 discard:6b", "0 truco", "2 quiero", "0 fold", "1 fold")
    assert match.record().hands[0].awards == (award(2, 2, AwardReason.FOLD),)


def test_fixed_gallo_is_seat_0_with_two_scores() -> None:
    """With a fixed gallo the same seat (seat 0, R4) is the gallo every hand, whoever deals;
    there are two scores, the gallo's and the pair's (RULES.md §4.7)."""
    match = stacked(
        "argentine-gallo", "1b 2b 3c 4o", "4c 5c 6o", "4e 5e 6b", dealer=2,
        options={"gallo": "fixed"},
    )
    assert match.team_of == (0, 1, 1)
    assert match.num_teams == 2
    assert match.to_act == 0
    assert match.view(1).side_of == (0, 1, 1)
    run(match, "0 discard:4o", "0 truco", "1 quiero", "0 1b", "1 4c", "2 4e", "0 2b", "1 5c")
    run(match, "2 5e")
    assert match.record().hands[0].awards == (award(0, 2, H),)
    assert match.scores == [2, 0]
    assert match.hand.gallo == 0
    assert match.hand.dealer == 0
    assert len(match.hand.dealt[0]) == 4


def test_falta_envido_uses_the_leading_score() -> None:
    """Falta envido is worth what the leading score needs (RULES.md §4.7, §4.4): with scores
    20, 15, 22 (the gallo leads) it is 8, and the pair (seat 1 holds the best envido) scores it
    for each of its players."""
    match = _gallo((20, 15, 22))
    run(match, "2 discard:6b", "0 falta_envido", "2 quiero")
    assert match.view(0).awards == (
        award(0, 8, AwardReason.ENVIDO), award(1, 8, AwardReason.ENVIDO)
    )


def test_the_gallo_flor_counts_the_kept_cards() -> None:
    """The gallo's envido and flor are those of the three cards it kept (RULES.md §4.5, §4.7):
    keeping three swords it must sing flor; discarding one of them, it has none."""
    kept = _gallo(None, flor=True)
    run(kept, "2 discard:6b", "0 1b", "1 4c")
    assert kinds(kept) == [K.FLOR]
    run(kept, "2 flor")
    assert kept.scores == [0, 0, 3]
    broken = _gallo(None, flor=True)
    run(broken, "2 discard:1e", "0 1b", "1 4c")
    assert K.FLOR not in kinds(broken)


def test_stacked_gallo_deal_needs_four_cards() -> None:
    """A stacked deal must give the gallo 4 cards (RULES.md §4.7)."""
    with pytest.raises(ValueError, match="the gallo needs 4 cards, got 3"):
        stacked("argentine-gallo", PAIR0, PAIR1, "4e 5e 6b", dealer=2)


def test_hand_end_names_the_gallo() -> None:
    """The hand summary says who was the gallo (RULES.md §4.7, §4.8)."""
    match = _gallo()
    run(match, "2 discard:6b", "0 truco")
    events = match.apply(Action(K.NO_QUIERO))
    (end,) = [e.body for e in events if isinstance(e.body, HandEndEvent)]
    assert end.summary.gallo == 2
