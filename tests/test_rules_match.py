"""Whole matches: chicos, targets, dealers, variants and options, seeded deals, errors, records
and replays (RULES.md §1, §4.1, §5, §6)."""

from __future__ import annotations

import dataclasses
import random
import re
from collections.abc import Callable

import pytest
from test_rules_support import award, cards, run, stacked

from arena.errors import IllegalActionError, ReplayMismatchError, UnknownVariantError
from arena.rules import (
    ActionKind,
    AwardReason,
    Deck,
    Match,
    MatchRecord,
    Options,
    call,
    deal_cards,
    find_variant,
    first_dealer,
    full_deck,
    replay,
    variant_names,
)

K = ActionKind
FOUR = ("argentine-1v1", "argentine-2v2", "mineiro-1v1", "mineiro-2v2")


def play_out(match: Match, seed: int = 0) -> Match:
    """Finish `match` with seeded random legal actions."""
    rng = random.Random(seed)
    while not match.is_over:
        match.apply(rng.choice(match.legal_actions()))
    return match


def test_variant_registry() -> None:
    """The four variants of this issue are registered with their seats and decks (RULES.md §4.7,
    §5)."""
    assert set(variant_names()) >= set(FOUR)
    for name, seats, deck in [
        ("argentine-1v1", 2, Deck.SPANISH),
        ("argentine-2v2", 4, Deck.SPANISH),
        ("mineiro-1v1", 2, Deck.BRAZILIAN),
        ("mineiro-2v2", 4, Deck.BRAZILIAN),
    ]:
        variant = find_variant(name)
        assert (variant.num_seats, variant.deck, variant.num_teams) == (seats, deck, 2)
        assert variant.team_of == tuple(s % 2 for s in range(seats))  # RULES.md §1


def test_variant_registry_order_and_new_variants() -> None:
    """The tournament's "all variants" list, in order; flor fixed on in argentine-2v2-flor;
    gallo with 3 seats, 3v3 and 4v4 with 6 and 8 seats in two teams (RULES.md §4.5, §4.7)."""
    assert variant_names() == (
        "argentine-1v1", "argentine-2v2", "argentine-2v2-flor", "argentine-gallo",
        "argentine-3v3", "argentine-4v4", "mineiro-1v1", "mineiro-2v2",
    )
    assert Match("argentine-2v2-flor").options.flor is True
    assert Match("argentine-2v2", {"flor": True}).options.flor is True
    assert find_variant("argentine-gallo").num_seats == 3
    for name, seats in (("argentine-3v3", 6), ("argentine-4v4", 8)):
        match = Match(name)
        assert (match.num_seats, match.num_teams) == (seats, 2)
        assert match.team_of == tuple(s % 2 for s in range(seats))
        assert match.options.chicos == 3  # RULES.md §4.1: best of three, every Argentine variant


def test_default_options() -> None:
    """Argentine defaults: chico to 30, best of three, no flor; Mineiro: one game to 12, three
    tied tricks to the dealer, iron hand face up (RULES.md §4.1, §4.5, §5)."""
    assert Match("argentine-1v1").options == Options(target=30, chicos=3, flor=False)
    mineiro = Match("mineiro-2v2").options
    assert (mineiro.target, mineiro.chicos, mineiro.all_tied, mineiro.blind_iron_hand) == (
        12,
        1,
        "dealer",
        False,
    )


def test_unknown_variant_lists_the_valid_ones() -> None:
    """An unknown variant name (RULES.md §4.7, §5 name the variants) is an error, a ValueError,
    that lists every valid name."""
    with pytest.raises(UnknownVariantError) as caught:
        Match("argentine-3v1")
    message = str(caught.value)
    assert "'argentine-3v1'" in message
    for name in variant_names():
        assert name in message
    assert isinstance(caught.value, ValueError)


@pytest.mark.parametrize(
    ("variant", "options", "says"),
    [
        (
            "argentine-2v2-flor",
            {"flor": False},
            "no option 'flor'; its options are: target, chicos, signals, leak",
        ),
        ("argentine-gallo", {"gallo": "dealer"}, "allowed: 'rotating', 'fixed'"),
        ("argentine-3v3", {"pico_until": 20}, "allowed: 25, 15"),
        ("argentine-4v4", {"signals": "all"}, "allowed: 'team', 'leaky', 'off'"),
        ("argentine-1v1", {"leak": 0.3}, "allowed: 0.1, 0.25, 0.5"),
        ("argentine-1v1", {"trget": 15}, "its options are: target, chicos"),
        ("argentine-1v1", {"target": 20}, "option 'target' cannot be 20; allowed: 30, 15"),
        ("argentine-1v1", {"target": 15.0}, "allowed: 30, 15"),
        ("argentine-2v2", {"chicos": 2}, "allowed: 3, 1"),
        ("mineiro-1v1", {"target": 15}, "its options are: blind_iron_hand, all_tied, signals"),
        ("mineiro-2v2", {"all_tied": "mano"}, "allowed: 'dealer', 'nobody'"),
        ("mineiro-2v2", {"blind_iron_hand": 1}, "allowed: False, True"),
    ],
)
def test_bad_options_list_the_valid_ones(
    variant: str, options: dict[str, object], says: str
) -> None:
    """An unknown option, or a value it does not allow, is an error that lists what is valid
    (the options of RULES.md §3, §4.1, §4.5, §4.7, §4.9, §5.3)."""
    with pytest.raises(UnknownVariantError, match=re.escape(says)):
        Match(variant, options)


def _win_hand(match: Match) -> None:
    """Seat 0's team wins the current 1v1 hand (mano is seat 0, it holds the aces)."""
    run(match, "0 1e", "1 4b", "0 1b", "1 4o")


@pytest.mark.parametrize(("target", "over"), [(15, True), (30, False)])
def test_target_15_option(target: int, over: bool) -> None:
    """Option target=15 ends the chico at 15 points (RULES.md §4.1); by default it goes to 30."""
    match = stacked(
        "argentine-1v1", "1e 1b 4e", "4b 4o 4c", dealer=1, scores=(14, 3),
        options={"target": target, "chicos": 1},
    )
    _win_hand(match)
    assert match.is_over is over
    if over:
        assert match.result is not None
        assert match.result.games[0].scores == (15, 3)
    else:
        assert match.scores == [15, 3]


def test_chico_reached_on_the_last_trick_starts_the_next_chico() -> None:
    """Winning a chico in a best of three starts the next chico at 0-0 with a dealer drawn
    from the seed for that game (RULES.md §1, §4.1)."""
    match = stacked("argentine-1v1", "1e 1b 4e", "4b 4o 4c", dealer=1, scores=(29, 0), seed=5)
    _win_hand(match)
    assert match.games_won == [1, 0]
    assert (match.game_number, match.hand_number, match.scores) == (1, 0, [0, 0])
    assert match.hand.dealer == first_dealer(match.variant, 5, 1)
    assert match.record().hands[-1].summary.ended_by == "tricks"
    assert not match.is_over


@pytest.mark.parametrize("seed", range(6))
def test_best_of_three_chicos(seed: int) -> None:
    """A match is won by the first side to win two chicos (RULES.md §4.1): it ends right after
    the second win, every chico was won at the target, and points add up."""
    match = play_out(Match("argentine-1v1", {"target": 15}, seed), seed)
    result = match.result
    assert result is not None
    assert len(result.games) in (2, 3)
    assert result.games_won[result.winner_team] == 2
    assert result.games_won[1 - result.winner_team] == len(result.games) - 2
    assert [g.game_number for g in result.games] == list(range(len(result.games)))
    for game in result.games:
        assert game.scores[game.winner_team] >= 15 > game.scores[1 - game.winner_team]
    assert result.games[-1].winner_team == result.winner_team
    assert list(result.points) == [sum(g.scores[t] for g in result.games) for t in (0, 1)]


@pytest.mark.parametrize("variant", ["argentine-1v1", "argentine-2v2"])
def test_one_chico_option(variant: str) -> None:
    """Option chicos=1: the first chico decides the match (RULES.md §4.1)."""
    match = play_out(Match(variant, {"chicos": 1, "target": 15}, seed=3), 3)
    assert match.result is not None
    assert len(match.result.games) == 1
    assert match.result.games_won[match.result.winner_team] == 1


def test_dealer_rotates_and_mano_follows() -> None:
    """The dealer moves one seat forward after every hand; mano is the seat after the dealer
    and acts first (RULES.md §1)."""
    match = Match("argentine-2v2", seed=11, dealer=2)
    seen = []
    for _ in range(6):
        view = match.view(0)
        seen.append((view.dealer, view.mano, match.to_act))
        mano = view.mano
        run(match, f"{mano} fold", f"{(mano + 1) % 4} fold", f"{(mano + 2) % 4} fold")
    assert seen == [((2 + i) % 4, (3 + i) % 4, (3 + i) % 4) for i in range(6)]


@pytest.mark.parametrize("variant", ["argentine-1v1", "argentine-2v2", "mineiro-2v2"])
def test_first_dealer_comes_from_the_seed(variant: str) -> None:
    """Without `dealer=`, the first dealer is drawn from the match seed (RULES.md §1), so the
    same seed gives the same dealer and some seeds give different ones."""
    dealers = {seed: Match(variant, seed=seed).hand.dealer for seed in range(40)}
    assert dealers == {seed: first_dealer(find_variant(variant), seed, 0) for seed in range(40)}
    assert set(dealers.values()) == set(range(find_variant(variant).num_seats))


@pytest.mark.parametrize("variant", FOUR)
def test_seeded_deals_are_deterministic_and_complete(variant: str) -> None:
    """Deals come from the seed (RULES.md §6): the same seed deals the same cards in the same
    seats; different seeds, games and hands deal differently; each deal gives 3 cards to every
    seat from the variant's deck, no card twice."""
    v = find_variant(variant)
    deck = set(full_deck(v.deck))
    seen = set()
    for seed in range(30):
        for game, hand in ((0, 0), (0, 1), (1, 0)):
            deal = deal_cards(v, seed, game, hand)
            assert deal == deal_cards(v, seed, game, hand)
            assert len(deal) == v.num_seats
            assert all(len(cards) == 3 for cards in deal)
            flat = [c for cards in deal for c in cards]
            assert len(set(flat)) == len(flat)
            assert set(flat) <= deck
            seen.add(deal)
    assert len(seen) == 90


def test_match_deals_replay_from_the_seed() -> None:
    """Two matches with the same seed and variant deal the same hands when played the same way,
    and another seed deals different ones (RULES.md §6)."""
    first = play_out(Match("mineiro-2v2", seed=21), 4).record()
    again = play_out(Match("mineiro-2v2", seed=21), 4).record()
    other = play_out(Match("mineiro-2v2", seed=22), 4).record()
    assert [h.deal for h in first.hands] == [h.deal for h in again.hands]
    assert first == again
    assert first.hands[0].deal != other.hands[0].deal


def test_stacked_deals_are_checked() -> None:
    """A stacked deal must be a real deal: one hand per seat, 3 cards each, the variant's deck,
    no card twice (RULES.md §1, §2); otherwise a ValueError says what is wrong."""
    good = (cards("1e 1b 4e"), cards("4b 4o 4c"))
    for deal, says in [
        ((good[0],), "needs 2 hands, got 1"),
        ((good[0], cards("4b 4o")), "seat 1 needs 3 cards, got 2"),
        ((good[0], cards("4b 4o 1e")), "dealt twice: 1e"),
        ((good[0], cards("4c 7h As", Deck.BRAZILIAN)), "brazilian deck"),
    ]:
        with pytest.raises(ValueError, match=re.escape(says)):
            Match("argentine-1v1", deals={(0, 0): deal})
    assert Match("argentine-1v1", deals={(0, 0): good}).hand.dealt == good


def test_scores_must_match_the_teams() -> None:
    """Starting scores need one entry per team, each below the target (a side at the target
    has already won the game, RULES.md §4.1, §5)."""
    with pytest.raises(ValueError, match="scores needs 2 entries"):
        Match("argentine-2v2", scores=(1, 2, 3))
    with pytest.raises(ValueError, match=re.escape("must each be 0..11")):
        Match("mineiro-1v1", scores=(12, 0))
    with pytest.raises(ValueError, match=re.escape("must each be 0..14")):
        Match("argentine-1v1", {"target": 15}, scores=(0, 15))
    with pytest.raises(ValueError, match="must each be"):
        Match("argentine-1v1", scores=(-1, 0))
    assert Match("argentine-1v1", scores=(29, 29)).scores == [29, 29]


def test_dealer_must_be_a_seat() -> None:
    """A stacked first dealer must be one of the variant's seats (RULES.md §1)."""
    with pytest.raises(ValueError, match=re.escape("dealer 2 is not a seat (0..1)")):
        Match("mineiro-1v1", dealer=2)
    with pytest.raises(ValueError, match="dealer -1"):
        Match("argentine-2v2", dealer=-1)


def test_illegal_action_error_names_the_action_and_the_legal_set() -> None:
    """IllegalActionError (a ValueError) names the action, says why, and lists the legal set;
    the match is unchanged afterwards. Here: retruco without holding the quiero (RULES.md
    §4.2)."""
    match = stacked("argentine-1v1", "1e 1b 4e", "4b 4o 4c", dealer=1)
    run(match, "0 truco", "1 quiero")
    before = match.legal_actions()
    with pytest.raises(IllegalActionError) as caught:
        match.apply(call(K.RETRUCO))
    error = caught.value
    assert isinstance(error, ValueError)
    assert error.action == call(K.RETRUCO)
    assert error.legal == before
    assert str(error).startswith("illegal action retruco")
    assert "legal actions are: play 1e, play 1b, play 4e, fold" in str(error)
    assert match.legal_actions() == before
    assert match.view(0).moves[-1].action == call(K.QUIERO)


def test_illegal_action_error_when_answer_is_owed() -> None:
    """While a call waits only its answers are legal (RULES.md §4.2); the error says which seat
    must answer what."""
    match = stacked("argentine-1v1", "1e 1b 4e", "4b 4o 4c", dealer=1)
    run(match, "0 envido")
    with pytest.raises(IllegalActionError, match="seat 1 must answer envido"):
        match.apply(call(K.FOLD))


def test_no_action_after_the_match_is_over() -> None:
    """A finished match (RULES.md §4.1) has no seat to act and no legal action; applying one
    is an error."""
    match = stacked("argentine-1v1", "1e 1b 4e", "4b 4o 4c", dealer=1, scores=(29, 0),
                    options={"chicos": 1})
    _win_hand(match)
    assert match.is_over
    assert (match.to_act, match.legal_actions()) == (None, ())
    with pytest.raises(IllegalActionError, match="the match is over"):
        match.apply(call(K.FOLD))


def test_view_rejects_unknown_seats() -> None:
    """`view(seat)` only exists for seats of the variant (RULES.md §1)."""
    with pytest.raises(ValueError, match="seat 2 does not exist"):
        Match("argentine-1v1").view(2)


@pytest.mark.parametrize("variant", FOUR)
def test_replay_reproduces_the_result(variant: str) -> None:
    """Replaying a record runs every action through the engine again and reproduces the same
    awards and result (RULES.md §6)."""
    match = play_out(Match(variant, seed=8), 8)
    record = match.record()
    again = replay(record)
    assert again.result == match.result
    assert again.record() == record


def _tamper_award(record: MatchRecord) -> MatchRecord:
    hands = list(record.hands)
    first = hands[0]
    bumped = tuple(dataclasses.replace(a, points=a.points + 1) for a in first.awards)
    hands[0] = dataclasses.replace(first, awards=bumped)
    return dataclasses.replace(record, hands=tuple(hands))


def _tamper_move(record: MatchRecord) -> MatchRecord:
    hands = list(record.hands)
    first = hands[0]
    moves = list(first.moves)
    moves[0] = dataclasses.replace(moves[0], action=call(K.VALE_CUATRO))
    hands[0] = dataclasses.replace(first, moves=tuple(moves))
    return dataclasses.replace(record, hands=tuple(hands))


def _tamper_truncate(record: MatchRecord) -> MatchRecord:
    hands = list(record.hands)
    hands[0] = dataclasses.replace(hands[0], moves=hands[0].moves[:-1])
    return dataclasses.replace(record, hands=tuple(hands))


def _tamper_result(record: MatchRecord) -> MatchRecord:
    result = record.result
    assert result is not None
    flipped = dataclasses.replace(result, winner_team=1 - result.winner_team)
    return dataclasses.replace(record, result=flipped)


def _tamper_deal(record: MatchRecord) -> MatchRecord:
    hands = list(record.hands)
    deal = hands[0].deal
    hands[0] = dataclasses.replace(hands[0], deal=(deal[1], deal[0], *deal[2:]))
    return dataclasses.replace(record, hands=tuple(hands))


def _tamper_duplicate_card(record: MatchRecord) -> MatchRecord:
    hands = list(record.hands)
    deal = hands[1].deal
    hands[1] = dataclasses.replace(hands[1], deal=(deal[0], (deal[0][0], *deal[1][1:])))
    return dataclasses.replace(record, hands=tuple(hands))


def _tamper_variant(record: MatchRecord) -> MatchRecord:
    return dataclasses.replace(record, variant="argentine-9v9")


@pytest.mark.parametrize(
    ("tamper", "says"),
    [
        (_tamper_duplicate_card, "game 0 hand 0: deal for game 0 hand 1: dealt twice"),
        (_tamper_variant, "cannot start a match: unknown variant 'argentine-9v9'"),
        (_tamper_award, "awards"),
        (_tamper_move, "illegal action vale cuatro"),
        (_tamper_truncate, "game 0 hand"),
        (_tamper_result, "result"),
        (_tamper_deal, "game 0 hand 0"),
    ],
)
def test_tampered_record_raises(tamper: Callable[[MatchRecord], MatchRecord], says: str) -> None:
    """A record whose awards, actions, result, deals or variant were changed does not replay:
    replay raises ReplayMismatchError naming where it differs (RULES.md §6)."""
    match = play_out(Match("argentine-1v1", {"chicos": 1, "target": 15}, seed=2), 2)
    record = match.record()
    with pytest.raises(ReplayMismatchError, match=says):
        replay(tamper(record))


def test_points_are_added_as_soon_as_decided() -> None:
    """An envido's points are in the score before the hand ends (RULES.md §4.1)."""
    match = stacked("argentine-1v1", "7e 6e 1b", "4b 4o 4c", dealer=1)
    run(match, "0 envido", "1 quiero")
    assert match.scores == [2, 0]
    assert match.view(1).scores == (2, 0)
    assert match.view(1).awards == (award(0, 2, AwardReason.ENVIDO),)
