"""Random-playout invariants over every registered variant and option combination (STYLE.md:
open_spiel's `random_sim_test`).

About two thousand seeded random games (deterministic: fixed seeds, `random.Random`). After every
action the test checks what each seat may see, and at the end of each match it checks the
record against the rule tables, independently of the engine's own bookkeeping:

- every match finishes; every hand deals each card at most once, 3 to each seat (RULES.md §1, §6);
- the legal set is never empty while the match runs, comes in `ActionKind` order, and is what
  the seat's own view lists;
- every award's points and reason come from the tables (RULES.md §4.3, §4.4, §4.6, §5.1-§5.3),
  for the team the rules say;
- trick winners and the hand's winner follow RULES.md §3, recomputed here from the cards;
- each game's and the match's scores are the sums of the awards;
- the record replays to the same result (RULES.md §6);
- no `view(seat)` ever holds a card that seat may not know: other seats' unplayed cards, its
  own cards in a blind iron hand, partner cards outside a Mineiro hand of ten for the side at
  ten (RULES.md §4.8, §5.2, §5.3); events hold only played cards and, at the end of a hand,
  the envido winner's envido cards (§4.4).
"""

from __future__ import annotations

import dataclasses
import itertools
import random
from collections import Counter
from typing import Any

import pytest

from arena.rules import (
    Action,
    ActionKind,
    AwardReason,
    Card,
    Deal,
    Event,
    Match,
    SeatView,
    Suit,
    envido_value,
    find_variant,
    full_deck,
    replay,
    trick_strength,
    variant_names,
)
from arena.rules.views import (
    EnvidoEvent,
    EnvidoOutcome,
    GameEndEvent,
    HandEndEvent,
    HandSummary,
    Move,
    Play,
    Trick,
)

K = ActionKind

# The tables, written out again from RULES.md.
ARGENTINE_ACCEPTED = {K.TRUCO: 2, K.RETRUCO: 3, K.VALE_CUATRO: 4}  # §4.3
ARGENTINE_REJECTED = {K.TRUCO: 1, K.RETRUCO: 2, K.VALE_CUATRO: 3}
MINEIRO_ACCEPTED = {K.TRUCO: 4, K.SIX: 6, K.TEN: 10, K.TWELVE: 12}  # §5.1
MINEIRO_REJECTED = {K.TRUCO: 2, K.SIX: 4, K.TEN: 6, K.TWELVE: 10}
ENVIDO_POINTS = {K.ENVIDO: 2, K.REAL_ENVIDO: 3}  # §4.4
LEGAL_CHAINS = {"E", "EE", "R", "ER", "EER", "F", "EF", "EEF", "RF", "ERF", "EERF"}
CHAIN_CODE = {K.ENVIDO: "E", K.REAL_ENVIDO: "R", K.FALTA_ENVIDO: "F"}
FAMILY_REASONS = {
    "argentine": {
        AwardReason.HAND,
        AwardReason.TRUCO_REJECTED,
        AwardReason.FOLD,
        AwardReason.ENVIDO,
        AwardReason.ENVIDO_REJECTED,
    },
    "mineiro": {
        AwardReason.HAND,
        AwardReason.TRUCO_REJECTED,
        AwardReason.HAND_OF_TEN_DECLINED,
        AwardReason.IRON_HAND,
    },
}

# Matches per (variant, option combination). Argentine matches are longer (best of three to
# 30 with the defaults), so they get fewer.
MATCHES = {"argentine": 30, "mineiro": 180}
TIE_MATCHES = {"argentine": 5, "mineiro": 12}


def _option_combinations(variant: str) -> list[dict[str, Any]]:
    specs = find_variant(variant).option_specs
    return [
        dict(zip([s.name for s in specs], values, strict=True))
        for values in itertools.product(*(s.choices for s in specs))
    ]


CASES = [
    pytest.param(name, options, id=f"{name}-" + "-".join(f"{v}" for v in options.values()))
    for name in variant_names()
    for options in _option_combinations(name)
]


def _choose(rng: random.Random, legal: tuple[Action, ...], lean: float) -> Action:
    """A random legal action, leaning towards playing cards (with probability `lean`) so that
    hands also run long."""
    plays = [a for a in legal if a.kind in (K.PLAY, K.PLAY_FACE_DOWN)]
    if plays and rng.random() < lean:
        return rng.choice(plays)
    return rng.choice(legal)


_FIELDS: dict[type, tuple[str, ...]] = {}


def _cards_in(view: object) -> list[Card]:
    """Every Card anywhere inside a view (dataclasses, tuples), so that a field added later
    cannot leak unseen. Moves, plays and actions, the bulk of a view, take a short cut."""
    found: list[Card] = []
    stack: list[object] = [view]
    while stack:
        value = stack.pop()
        kind = type(value)
        if kind is tuple or kind is list or kind is frozenset or kind is set:
            for item in value:  # type: ignore[attr-defined]
                inner = type(item)
                if inner is Card:
                    found.append(item)
                elif inner is Move:
                    if item.action.card is not None:
                        found.append(item.action.card)
                elif inner is Play:
                    found.append(item.card)
                elif inner is Action:
                    if item.card is not None:
                        found.append(item.card)
                elif not (item is None or isinstance(item, int | str)):
                    stack.append(item)
        elif kind is Card:
            found.append(value)  # type: ignore[arg-type]
        elif value is None or isinstance(value, int | str):
            continue
        else:
            names = _FIELDS.get(kind)
            if names is None:
                assert dataclasses.is_dataclass(value), f"unexpected {kind.__name__} in a view"
                names = _FIELDS[kind] = tuple(f.name for f in dataclasses.fields(value))
            stack.extend([getattr(value, name) for name in names])
    return found


def _check_views(match: Match) -> list[SeatView]:
    """No seat's view holds a card it may not know (RULES.md §4.8, §5.2, §5.3). Who is at ten
    is worked out here from the scores (Mineiro scores only change between hands)."""
    hand = match.hand
    played = {p.card for t in hand.tricks for p in t.plays} | {p.card for p in hand.current}
    at_ten = [t for t in (0, 1) if match.family == "mineiro" and match.scores[t] >= 10]
    blind = len(at_ten) == 2 and match.options.blind_iron_hand
    assert hand.blind == blind
    views = [match.view(seat) for seat in range(match.num_seats)]
    for seat, view in enumerate(views):
        team = match.team_of[seat]
        known = set(played)
        if not blind:
            known |= set(hand.held[seat])
        partners_visible = at_ten == [team]
        if partners_visible:
            for other in range(match.num_seats):
                if other != seat and match.team_of[other] == team:
                    known |= set(hand.dealt[other])
        leaked = {c for c in _cards_in(view) if c not in known}
        assert not leaked, f"seat {seat} sees {sorted(map(str, leaked))}"
        if not partners_visible:
            assert view.partner_cards == ()
        if blind:
            assert view.hand == ()
        assert view.hand_size == len(hand.held[seat])
        if seat == match.to_act:
            assert view.legal_actions == match.legal_actions()
        else:
            assert view.legal_actions == ()
    return views


def _check_events(events: tuple[Event, ...], hand: Any, envidos: list[EnvidoOutcome]) -> None:
    """Events carry only public cards (RULES.md §4.8): cards played in the hand, and at its end
    the envido winner's envido cards (§4.4), which make exactly the winning value."""
    played = {p.card for t in hand.tricks for p in t.plays} | {p.card for p in hand.current}
    for event in events:
        body = event.body
        if isinstance(body, HandEndEvent):
            won = [o.winner for o in envidos if o.winner is not None]
            revealed = body.summary.revealed
            assert [seat for seat, _ in revealed] == won
            for seat, shown in revealed:
                assert set(shown) <= set(hand.dealt[seat])
                assert envido_value(shown) == envido_value(hand.dealt[seat])
            summary = dataclasses.replace(body.summary, revealed=())
            assert all(c in played for c in _cards_in(summary))
        else:
            assert all(c in played for c in _cards_in(body))


def _trick_winner(trick: Trick, team_of: tuple[int, ...]) -> int | None:
    """RULES.md §3: the strongest card; equal top cards of one team go to the first of them,
    of both teams make a parda."""
    best = max(trick_strength(p.card) for p in trick.plays)
    top = [p for p in trick.plays if trick_strength(p.card) == best]
    if len({team_of[p.seat] for p in top}) > 1:
        return None
    return top[0].seat


def _hand_winner(
    results: list[int | None], family: str, mano_team: int, dealer_team: int, all_tied: str
) -> tuple[bool, int | None]:
    """RULES.md §3 tables: (decided, winning team) for a list of trick results."""
    wins = Counter(r for r in results if r is not None)
    for team, count in wins.items():
        if count >= 2:
            return True, team
    first = results[0]
    if first is not None and len(results) >= 2 and None in results[1:]:
        return True, first
    if first is None:
        later = [r for r in results[1:] if r is not None]
        if later:
            return True, later[0]
    if len(results) == 3:
        if all(r is None for r in results):
            if family == "argentine":
                return True, mano_team
            return True, None if all_tied == "nobody" else dealer_team
        raise AssertionError(f"three tricks {results} must decide")
    return False, None


def _check_envido(outcome: EnvidoOutcome, before: dict[str, Any], match: Match) -> None:
    """An envido settled by the last action: the chain is legal, the winner is the best
    envido nearest mano among seats that did not fold, announcements follow §4.4, and the
    points are the table's."""
    chain = "".join(CHAIN_CODE[k] for k in outcome.chain)
    assert chain in LEGAL_CHAINS
    scores = before["scores"]
    target = match.options.target
    if outcome.accepted:
        order = [
            s
            for s in ((before["mano"] + i) % match.num_seats for i in range(match.num_seats))
            if s not in before["folded"]
        ]
        values = {s: envido_value(before["dealt"][s]) for s in order}
        best = max(values.values())
        winner = next(s for s in order if values[s] == best)
        assert outcome.winner == winner
        assert outcome.team == match.team_of[winner]
        announced: list[tuple[int, int | None]] = []
        leader: tuple[int, int] | None = None
        for s in order:
            if leader is None or (
                match.team_of[leader[0]] != match.team_of[s] and values[s] > leader[1]
            ):
                announced.append((s, values[s]))
                leader = (s, values[s])
            else:
                announced.append((s, None))
        assert outcome.announcements == tuple(announced)
        if "F" in chain:
            assert outcome.points == target - max(scores)
        else:
            assert outcome.points == sum(ENVIDO_POINTS[k] for k in outcome.chain)
    else:
        assert outcome.winner is None
        assert outcome.announcements == ()
        expected = 1 if len(chain) == 1 else sum(ENVIDO_POINTS[k] for k in outcome.chain[:-1])
        assert outcome.points == expected
        assert outcome.team == match.team_of[before["pending"].caller]


def _check_trick_order(summary: HandSummary, folded: set[int], seats: int) -> None:
    """RULES.md §1, §3: mano leads the first trick, a trick's winner leads the next, after a
    parda the seat that led it leads again; cards go in turn order; only folded seats are
    skipped."""
    designated = summary.mano
    for trick in summary.tricks:
        played = [p.seat for p in trick.plays]
        order = [(designated + i) % seats for i in range(seats)]
        assert played == [s for s in order if s in played]
        assert trick.leader == played[0]
        assert all(s in folded for s in order if s not in played)
        assert all(s in folded for s in order[: order.index(played[0])])
        designated = trick.winner if trick.winner is not None else trick.leader


def _check_hand(
    summary: HandSummary,
    before: dict[str, Any],
    match: Match,
    game_start: list[int],
    envidos: list[EnvidoOutcome],
    seen: Counter[str],
) -> None:
    """The awards of a finished hand come from the tables (RULES.md §3-§5)."""
    family = match.family
    team_of = match.team_of
    scores = list(game_start)
    action: Action = before["action"]
    view: SeatView = before["view"]
    pending = view.pending
    for trick in summary.tricks:
        assert trick.winner == _trick_winner(trick, team_of)
    results = [t.winner_team for t in summary.tricks]
    if summary.ended_by == "tricks":
        decided, team = _hand_winner(
            results, family, team_of[summary.mano], team_of[summary.dealer],
            match.options.all_tied,
        )
        assert decided
        assert summary.winner_team == team
        # Play stops as soon as the tricks decide (RULES.md §3): one trick fewer did not.
        assert not _hand_winner(results[:-1], family, 0, 0, match.options.all_tied)[0]
    elif summary.tricks:
        assert not _hand_winner(results, family, 0, 0, match.options.all_tied)[0]
    for award in summary.awards:
        assert award.reason in FAMILY_REASONS[family]
        seen[award.reason.name] += 1
        if award.reason is AwardReason.HAND:
            assert summary.ended_by == "tricks"
            assert award.team == summary.winner_team
            assert award.points == view.hand_value
            if view.hand_of_ten is not None:
                assert award.points == 4
            else:
                table = ARGENTINE_ACCEPTED if family == "argentine" else MINEIRO_ACCEPTED
                assert award.points in {1 if family == "argentine" else 2, *table.values()}
        elif award.reason is AwardReason.TRUCO_REJECTED:
            assert pending is not None
            assert action.kind in (K.NO_QUIERO, K.RUN)
            table = ARGENTINE_REJECTED if family == "argentine" else MINEIRO_REJECTED
            assert award.points == table[pending.kind]
            assert award.team == team_of[pending.caller]
        elif award.reason is AwardReason.FOLD:
            assert action.kind is K.FOLD
            assert award.team != team_of[before["seat"]]
            assert award.points == view.hand_value
        elif award.reason is AwardReason.HAND_OF_TEN_DECLINED:
            assert action.kind is K.DECLINE_HAND
            assert award.points == 2
            assert award.team != view.hand_of_ten
        elif award.reason is AwardReason.IRON_HAND:
            assert view.iron_hand
            assert award.points == 12 - scores[award.team]
        else:  # envido: the outcome settled in this hand, checked when it was settled
            assert [(award.team, award.points)] == [(o.team, o.points) for o in envidos]
        scores[award.team] += award.points
    assert tuple(scores) == summary.scores


def _play_match(
    variant: str,
    options: dict[str, Any],
    seed: int,
    seen: Counter[str],
    deals: dict[tuple[int, int], Deal] | None = None,
    lean: float = 0.6,
) -> None:
    rng = random.Random(seed)
    match = Match(variant, options, seed, deals=deals)
    game_start = list(match.scores)
    folded: set[int] = set()
    envidos: list[EnvidoOutcome] = []
    steps = 0
    while not match.is_over:
        steps += 1
        assert steps < 5000, "the match does not finish"
        legal = match.legal_actions()
        assert legal
        assert [a.kind for a in legal] == sorted(a.kind for a in legal)
        views = _check_views(match)
        seat = match.to_act
        assert seat is not None
        action = _choose(rng, legal, lean)
        hand = match.hand
        before = {
            "seat": seat,
            "action": action,
            "view": views[seat],
            "scores": tuple(match.scores),
            "folded": set(hand.folded),
            "dealt": hand.dealt,
            "mano": hand.mano,
            "pending": hand.pending,
        }
        if hand.hand_of_ten is not None:
            seen["hand of ten"] += 1
        if hand.iron:
            seen["iron hand"] += 1
        events = match.apply(action)
        if action.kind is K.FOLD:
            folded.add(seat)
        envidos_so_far = envidos + [
            e.body.outcome for e in events if isinstance(e.body, EnvidoEvent)
        ]
        _check_events(events, hand, envidos_so_far)
        for event in events:
            body = event.body
            if isinstance(body, EnvidoEvent):
                _check_envido(body.outcome, before, match)
                envidos.append(body.outcome)
            elif isinstance(body, HandEndEvent):
                summary = body.summary
                seen[summary.ended_by] += 1
                if len(summary.tricks) == 3 and all(t.parda for t in summary.tricks):
                    seen["three pardas"] += 1
                _check_hand(summary, before, match, game_start, envidos, seen)
                _check_trick_order(summary, folded, match.num_seats)
                folded = set()
                envidos = []
                game_start = list(summary.scores)
            elif isinstance(body, GameEndEvent):
                game_start = [0] * match.num_teams
    _check_record(match)


def _check_record(match: Match) -> None:
    """Deals, score sums and replay of a finished match (RULES.md §1, §4.1, §6)."""
    record = match.record()
    result = match.result
    assert result is not None
    deck = find_variant(match.variant.name).deck
    totals = [0] * match.num_teams
    per_game: dict[int, list[int]] = {}
    for hand in record.hands:
        flat = [c for cards in hand.deal for c in cards]
        assert len(flat) == 3 * match.num_seats == len(set(flat))
        assert all(c.deck is deck for c in flat)
        start = list(record.initial_scores) if hand.game_number == 0 else [0] * match.num_teams
        game = per_game.setdefault(hand.game_number, start)
        for award in hand.awards:
            game[award.team] += award.points
            totals[award.team] += award.points
        assert hand.awards == hand.summary.awards
    assert list(result.points) == totals
    for game_result in result.games:
        assert list(game_result.scores) == per_game[game_result.game_number]
        assert max(game_result.scores) >= match.options.target
        assert game_result.scores[game_result.winner_team] == max(game_result.scores)
    assert result.games_won[result.winner_team] == match.options.chicos // 2 + 1
    assert replay(record).result == result


@pytest.mark.parametrize(("variant", "options"), CASES)
def test_random_playouts_keep_the_invariants(variant: str, options: dict[str, Any]) -> None:
    """Seeded random matches of this variant and options finish and keep every invariant listed
    in the module docstring (RULES.md §1-§6); across them the random players reach the rules'
    corners (every award reason of the family, hands of ten, iron hands, chicos ended
    mid-hand)."""
    family = find_variant(variant).family
    seen: Counter[str] = Counter()
    for seed in range(MATCHES[family]):
        _play_match(variant, options, seed, seen)
    for reason in FAMILY_REASONS[family]:
        assert seen[reason.name], f"no {reason.name} award in {MATCHES[family]} matches"
    expected = {"tricks", "rejected"}
    if family == "mineiro":
        expected |= {"declined", "hand of ten", "iron hand"}
    else:
        expected |= {"fold", "target"}
    assert expected <= set(seen), sorted(seen)


# Ranks whose four cards are all equal in trick strength (RULES.md §2): no manilha, no special
# ace or seven, so hands built from them are full of pardas.
TIE_RANKS = {"argentine": (2, 3, 4, 5, 6, 10, 11, 12), "mineiro": (2, 3, 5, 6, 10, 11, 12)}


def _tie_rich_deals(variant: str, seed: int) -> dict[tuple[int, int], Deal]:
    """Stacked deals (the first 40 hands of each game) where every seat holds the same three
    ranks in different suits; later hands come from the seed as usual."""
    v = find_variant(variant)
    deck = {(c.suit, c.rank): c for c in full_deck(v.deck)}
    suits = list(Suit)
    rng = random.Random(seed)
    deals: dict[tuple[int, int], Deal] = {}
    for game in range(3):
        for hand in range(40):
            ranks = rng.sample(TIE_RANKS[v.family], 3)
            deals[(game, hand)] = tuple(
                tuple(deck[suits[(seat + i) % 4], r] for i, r in enumerate(ranks))
                for seat in range(v.num_seats)
            )
    return deals


@pytest.mark.parametrize(("variant", "options"), CASES)
def test_random_playouts_with_tie_rich_deals(variant: str, options: dict[str, Any]) -> None:
    """The same invariants with deals full of equal cards, so that pardas, three tied tricks
    (mano's side in Argentine, the dealer's side or nobody in Mineiro) and same-team equal top
    cards come up often (RULES.md §3)."""
    family = find_variant(variant).family
    seen: Counter[str] = Counter()
    for seed in range(TIE_MATCHES[family]):
        _play_match(variant, options, seed, seen, _tie_rich_deals(variant, seed), lean=0.95)
    assert seen["three pardas"] >= 5, dict(seen)
