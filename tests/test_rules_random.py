"""Random-playout invariants over every registered variant, with flor on and off (STYLE.md:
open_spiel's `random_sim_test`).

Seeded random games (deterministic: fixed seeds, `random.Random`), some actions carrying random
signals. After every action the test checks what each seat may see, and at the end of each hand
(and of each pico a pico duel) it checks the awards against the rule tables, independently of
the engine's own bookkeeping:

- every match finishes; every hand deals each card at most once, 3 to each seat and 4 to the
  gallo (RULES.md §1, §4.7, §6);
- the legal set is never empty while the match runs, comes in `ActionKind` order, and is what
  the seat's own view lists; the gallo's first action is a discard; a flor holder's only action
  is FLOR until it has sung, FLOR is never legal otherwise, no envido after a flor (§4.5);
- every award's points and reason come from the tables (RULES.md §4.3-§4.6, §5.1-§5.3), for
  the side the rules say, credited to each account of that side (docs/RULINGS.md R4);
- trick winners and the hand's (or duel's) winner follow RULES.md §3, recomputed here;
- pico a pico hands come exactly where §4.7 puts them, their duels in the right order, pairs
  and manos (R6);
- each game's and the match's scores are the sums of the awards;
- the record replays to the same result and the same signal deliveries (RULES.md §6);
- no `view(seat)` and no event delivered to a seat ever holds a card that seat may not know:
  other seats' unplayed cards, the gallo's discard, its own cards in a blind iron hand,
  partner cards outside a Mineiro hand of ten (RULES.md §4.7, §4.8, §5.2, §5.3); only a hand's
  end reveals the envido winners' envido cards (§4.4) and the flors that scored (§4.5);
- signals reach the sender's side, and opponents only when leaky (§4.9).
"""

from __future__ import annotations

import dataclasses
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
    IllegalSignalError,
    Match,
    SeatView,
    Signal,
    SignalKind,
    Suit,
    envido_value,
    find_variant,
    first_dealer,
    flor_value,
    full_deck,
    has_flor,
    replay,
    trick_strength,
    variant_names,
)
from arena.rules.views import (
    Award,
    DuelEndEvent,
    EnvidoEvent,
    EnvidoOutcome,
    FlorEvent,
    FlorOutcome,
    GameEndEvent,
    HandEndEvent,
    Move,
    MoveEvent,
    Play,
    SignalEvent,
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
ENVIDO_KINDS = set(CHAIN_CODE)
FLOR_KINDS = {
    K.FLOR, K.CONTRAFLOR, K.CONTRAFLOR_AL_RESTO, K.CON_FLOR_QUIERO, K.CON_FLOR_ME_ACHICO,
}
FLOR_CALLS = {K.FLOR, K.CONTRAFLOR, K.CONTRAFLOR_AL_RESTO}
# §4.5: (chain without the closing answer) -> points when accepted / conceded (None: al resto).
FLOR_DUELS = {
    (K.FLOR,): (4, 3),
    (K.FLOR, K.CONTRAFLOR): (6, 4),
    (K.FLOR, K.CONTRAFLOR_AL_RESTO): (None, 4),
    (K.FLOR, K.CONTRAFLOR, K.CONTRAFLOR_AL_RESTO): (None, 6),
}
PICO_FALTA = 6  # §4.7
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

# Matches per case. Argentine matches are long (best of three to 30 by default) and the big
# tables play many cards per hand, so they get fewer.
MATCHES = {2: 24, 3: 16, 4: 12, 6: 6, 8: 4}
MINEIRO_MATCHES = 180
TIE_MATCHES = {"argentine": 3, "mineiro": 12}
TIE_PARDAS = {"argentine": 1, "mineiro": 5}
FLOR_MATCHES = {2: 6, 3: 5, 4: 4, 6: 3, 8: 3}


def _cases() -> list[Any]:
    """Per variant, flor off and on where it is an option: the defaults, and every other
    option at its second value (target 15, one chico, fixed gallo, pico until 15, leaky
    signals, blind iron hand, three ties to nobody)."""
    cases = []
    for name in variant_names():
        specs = find_variant(name).option_specs
        flors = [False, True] if any(s.name == "flor" for s in specs) else [None]
        for flor in flors:
            base: dict[str, Any] = {} if flor is None else {"flor": flor}
            other = dict(base)
            for spec in specs:
                if spec.name != "flor":
                    other[spec.name] = spec.choices[1]
            for options in (base, other):
                label = "-".join(f"{k}={v}" for k, v in options.items()) or "defaults"
                cases.append(pytest.param(name, options, id=f"{name}-{label}"))
    return cases


CASES = _cases()


def _random_signal(rng: random.Random) -> Signal:
    kind = rng.choice(list(SignalKind))
    value = rng.randrange(34) if kind is SignalKind.ENVIDO and rng.random() < 0.5 else None
    text = rng.choice(["", "", "vamos", "tengo algo", "x" * 40])
    if kind is SignalKind.TEXT and not text:
        text = "hola"
    return Signal(kind, text, value)


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
                elif not (item is None or isinstance(item, int | str | float)):
                    stack.append(item)
        elif kind is Card:
            found.append(value)  # type: ignore[arg-type]
        elif value is None or isinstance(value, int | str | float):
            continue
        else:
            names = _FIELDS.get(kind)
            if names is None:
                assert dataclasses.is_dataclass(value), f"unexpected {kind.__name__} in a view"
                names = _FIELDS[kind] = tuple(f.name for f in dataclasses.fields(value))
            stack.extend([getattr(value, name) for name in names])
    return found


@dataclasses.dataclass
class Tracker:
    """What the test knows of the hand being played, from the actions it applied."""

    gallo: int | None = None
    discard: Card | None = None
    sung: set[int] = dataclasses.field(default_factory=set)  # flor sung this hand or duel
    folded: set[int] = dataclasses.field(default_factory=set)
    envidos: list[EnvidoOutcome] = dataclasses.field(default_factory=list)
    flors: list[FlorOutcome] = dataclasses.field(default_factory=list)
    flor_duels: int = 0
    signals: dict[int, list[tuple[int, int, Signal]]] = dataclasses.field(
        default_factory=dict
    )
    play_start: list[int] = dataclasses.field(default_factory=list)  # scores at play start
    hand_start: list[int] = dataclasses.field(default_factory=list)
    all_envidos: list[EnvidoOutcome] = dataclasses.field(default_factory=list)
    all_flors: list[FlorOutcome] = dataclasses.field(default_factory=list)

    def new_play(self, scores: list[int]) -> None:
        self.sung, self.folded = set(), set()
        self.envidos, self.flors, self.flor_duels = [], [], 0
        self.play_start = list(scores)

    def kept(self, dealt: Deal) -> list[tuple[Card, ...]]:
        return [tuple(c for c in cards if c != self.discard) for cards in dealt]


def _expected_sides(match: Match) -> tuple[tuple[int, ...], int | None]:
    """RULES.md §1, §4.7: seat % 2; in gallo the gallo (seat 0 fixed, else the dealer) is side
    0 alone."""
    n = match.num_seats
    if match.variant.seating != "gallo":
        return tuple(s % 2 for s in range(n)), None
    gallo = 0 if match.options.gallo == "fixed" else match.hand.dealer
    return tuple(0 if s == gallo else 1 for s in range(n)), gallo


def _played(hand: Any, discard: Card | None) -> set[Card]:
    """Cards played so far in `hand`: dealt, no longer held, and not the gallo's discard."""
    return {
        c
        for seat, cards in enumerate(hand.dealt)
        for c in cards
        if c not in hand.held[seat] and c != discard
    }


def _known(match: Match, hand: Any, seat: int, t: Tracker, played: set[Card]) -> set[Card]:
    known = set(played)
    if not hand.blind:
        known |= set(hand.held[seat])
    if seat == t.gallo and t.discard is not None:
        known.add(t.discard)
    return known


def _check_views(match: Match, t: Tracker) -> list[SeatView]:
    """No seat's view holds a card it may not know (RULES.md §4.7, §4.8, §5.2, §5.3); sides,
    the gallo, the discard and the signals each seat was sent are what they must be."""
    hand = match.hand
    played = _played(hand, t.discard)
    at_ten = [s for s in (0, 1) if match.family == "mineiro" and match.scores[s] >= 10]
    blind = len(at_ten) == 2 and match.options.blind_iron_hand
    assert hand.blind == blind
    side_of, gallo = _expected_sides(match)
    views = [match.view(seat) for seat in range(match.num_seats)]
    for seat, view in enumerate(views):
        side = side_of[seat]
        assert (view.side, view.side_of, view.gallo) == (side, side_of, gallo)
        assert view.team == match.team_of[seat]
        known = _known(match, hand, seat, t, played)
        partners_visible = at_ten == [side]
        if partners_visible:
            for other in range(match.num_seats):
                if other != seat and side_of[other] == side:
                    known |= set(hand.dealt[other])
        leaked = {c for c in _cards_in(view) if c not in known}
        assert not leaked, f"seat {seat} sees {sorted(map(str, leaked))}"
        assert view.discard == (t.discard if seat == gallo else None)
        if not partners_visible:
            assert view.partner_cards == ()
        if blind:
            assert view.hand == ()
        assert view.hand_size == len(hand.held[seat])
        assert [(s.seat, s.move, s.signal) for s in view.signals] == t.signals.get(seat, [])
        if seat == match.to_act:
            assert view.legal_actions == match.legal_actions()
        else:
            assert view.legal_actions == ()
    return views


def _check_legal(match: Match, legal: tuple[Action, ...], view: SeatView, t: Tracker) -> None:
    """The gallo discards first (§4.7); flor is sung first by its holders and only by them,
    and closes the envido (§4.5)."""
    seat = match.to_act
    assert seat is not None
    kinds = {a.kind for a in legal}
    if t.gallo is not None and t.discard is None:
        assert seat == t.gallo
        assert legal == tuple(Action(K.DISCARD, card=c) for c in match.hand.dealt[seat])
        return
    assert K.DISCARD not in kinds
    pending = view.pending
    if pending is not None and pending.kind in FLOR_CALLS:
        assert kinds <= FLOR_KINDS - {K.FLOR}
        return
    kept = t.kept(match.hand.dealt)[seat]
    holder = match.options.flor and match.family == "argentine" and has_flor(kept)
    if holder and seat not in t.sung:
        assert legal == (Action(K.FLOR),)
    else:
        assert not kinds & FLOR_KINDS
    if t.sung:
        assert not kinds & ENVIDO_KINDS or (pending is not None and pending.kind in ENVIDO_KINDS)


def _check_events(
    events: tuple[Event, ...], match: Match, hand: Any, t: Tracker, seen: Counter[str]
) -> None:
    """Every event holds only cards its audience may know (RULES.md §4.7, §4.8): played cards,
    a seat's own cards and discard, and at the end of a hand the envido winners' envido cards
    (§4.4) and the flors that scored (§4.5). Signals reach the sender's side and, only when
    leaky, opponents (§4.9)."""
    played = _played(hand, t.discard)
    everyone = frozenset(range(match.num_seats))
    side_of = hand.side_of
    for event in events:
        body = event.body
        if isinstance(body, SignalEvent):
            side = side_of[body.seat]
            mine = {s for s in everyone if side_of[s] == side}
            assert mine <= event.audience
            caught = event.audience - mine
            opponents = len(everyone - mine)
            if match.options.signals != "leaky":
                assert not caught
            seen["signal opportunities"] += opponents
            seen["signal leaks"] += len(caught)
            for s in event.audience:
                t.signals.setdefault(s, []).append((body.seat, body.move, body.signal))
            continue
        if isinstance(body, MoveEvent) and body.move.action.kind is K.DISCARD:
            # The gallo alone learns the card; every other seat is told a card-less discard
            # (protocol 1.1: their views list the move, so their events must too).
            if body.move.action.card is None:
                assert event.audience == everyone - {body.move.seat}
            else:
                assert event.audience == {body.move.seat}
                assert body.move.action.card == t.discard
            continue
        assert event.audience == everyone
        if isinstance(body, HandEndEvent):
            summary = body.summary
            won = [o.winner for o in t.all_envidos if o.winner is not None]
            assert [seat for seat, _ in summary.revealed] == won
            kept = t.kept(hand.dealt)
            for seat, shown in summary.revealed:
                assert set(shown) <= set(kept[seat])
                assert envido_value(shown) == envido_value(kept[seat])
            shown_flors = [
                o.winner if o.winner is not None else o.singer
                for o in t.all_flors
                if o.winner is not None or o.chain == (K.FLOR,)
            ]
            assert [seat for seat, _ in summary.flor_revealed] == shown_flors
            for seat, shown in summary.flor_revealed:
                assert shown == kept[seat]
                assert has_flor(shown)
            bare = dataclasses.replace(summary, revealed=(), flor_revealed=())
            assert all(c in played for c in _cards_in(bare))
        else:
            assert all(c in played for c in _cards_in(body))


def _trick_winner(trick: Trick, side_of: tuple[int, ...]) -> int | None:
    """RULES.md §3: the strongest card; equal top cards of one side go to the first of them,
    of both sides make a parda."""
    best = max(trick_strength(p.card) for p in trick.plays)
    top = [p for p in trick.plays if trick_strength(p.card) == best]
    if len({side_of[p.seat] for p in top}) > 1:
        return None
    return top[0].seat


def _hand_winner(
    results: list[int | None], family: str, mano_side: int, dealer_side: int, all_tied: str
) -> tuple[bool, int | None]:
    """RULES.md §3 tables: (decided, winning side) for a list of trick results."""
    wins = Counter(r for r in results if r is not None)
    for side, count in wins.items():
        if count >= 2:
            return True, side
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
                return True, mano_side
            return True, None if all_tied == "nobody" else dealer_side
        raise AssertionError(f"three tricks {results} must decide")
    return False, None


def _order(before: dict[str, Any], n: int) -> list[int]:
    """The seats playing this hand or duel, not folded, in turn order from its mano."""
    return [
        s
        for s in ((before["mano"] + i) % n for i in range(n))
        if s in before["active"] and s not in before["folded"]
    ]


def _check_envido(outcome: EnvidoOutcome, before: dict[str, Any], match: Match) -> None:
    """An envido settled by the last action: the chain is legal, the winner is the best
    envido nearest mano among seats of the hand (or duel) that did not fold, announcements
    follow §4.4, and the points are the table's (falta: 6 in pico a pico, §4.7)."""
    chain = "".join(CHAIN_CODE[k] for k in outcome.chain)
    assert chain in LEGAL_CHAINS
    side_of = before["side_of"]
    if outcome.accepted:
        order = _order(before, match.num_seats)
        values = {s: envido_value(before["kept"][s]) for s in order}
        best = max(values.values())
        winner = next(s for s in order if values[s] == best)
        assert outcome.winner == winner
        assert outcome.team == side_of[winner]
        announced: list[tuple[int, int | None]] = []
        leader: tuple[int, int] | None = None
        for s in order:
            if leader is None or (side_of[leader[0]] != side_of[s] and values[s] > leader[1]):
                announced.append((s, values[s]))
                leader = (s, values[s])
            else:
                announced.append((s, None))
        assert outcome.announcements == tuple(announced)
        if "F" in chain:
            falta = match.options.target - max(before["scores"])
            assert outcome.points == (PICO_FALTA if before["duel"] else falta)
        else:
            assert outcome.points == sum(ENVIDO_POINTS[k] for k in outcome.chain)
    else:
        assert outcome.winner is None
        assert outcome.announcements == ()
        expected = 1 if len(chain) == 1 else sum(ENVIDO_POINTS[k] for k in outcome.chain[:-1])
        assert outcome.points == expected
        assert outcome.team == side_of[before["pending"].caller]


def _check_flor(outcome: FlorOutcome, before: dict[str, Any], match: Match, t: Tracker) -> None:
    """A flor payout from the §4.5 tables: 3 for a flor no opponent can answer; a flor duel
    pays once per hand (or duel), the better flor (ties nearer to mano) when accepted, the
    caller's side when conceded; al resto is the leader's need, at most 6 in pico a pico."""
    side_of = before["side_of"]
    holders = [s for s in _order(before, match.num_seats) if has_flor(before["kept"][s])]
    assert t.flor_duels == 0, "a flor duel pays once; later songs score nothing"
    if outcome.chain == (K.FLOR,):
        assert outcome.points == 3
        assert outcome.winner is None
        assert outcome.team == side_of[outcome.singer]
        assert all(side_of[s] == outcome.team for s in holders)
        return
    t.flor_duels += 1
    assert {side_of[s] for s in holders} == {0, 1}
    *raised, answer = outcome.chain
    accepted, conceded = FLOR_DUELS[tuple(raised)]
    pending = before["pending"]
    assert pending.kind is raised[-1]
    if answer is K.CON_FLOR_QUIERO:
        winner = max(holders, key=lambda s: flor_value(before["kept"][s]))
        best = flor_value(before["kept"][winner])
        winner = next(s for s in holders if flor_value(before["kept"][s]) == best)
        assert (outcome.winner, outcome.team) == (winner, side_of[winner])
        if accepted is None:
            need = match.options.target - max(before["scores"])
            accepted = min(need, 6) if before["duel"] else need
        assert outcome.points == accepted
    else:
        assert answer is K.CON_FLOR_ME_ACHICO
        assert outcome.winner is None
        assert (outcome.team, outcome.points) == (side_of[pending.caller], conceded)


def _check_trick_order(
    tricks: tuple[Trick, ...], mano: int, active: set[int], folded: set[int], seats: int
) -> None:
    """RULES.md §1, §3: mano leads the first trick, a trick's winner leads the next, after a
    parda the seat that led it leads again; cards go in turn order; only folded seats (and, in
    pico a pico, seats outside the duel) are skipped."""
    designated = mano
    for trick in tricks:
        played = [p.seat for p in trick.plays]
        order = [s for s in ((designated + i) % seats for i in range(seats)) if s in active]
        assert played == [s for s in order if s in played]
        assert trick.leader == played[0]
        assert all(s in folded for s in order if s not in played)
        assert all(s in folded for s in order[: order.index(played[0])])
        designated = trick.winner if trick.winner is not None else trick.leader


def _side_awards(
    awards: tuple[Award, ...], side_of: tuple[int, ...], team_of: tuple[int, ...]
) -> list[tuple[int, int, AwardReason]]:
    """The awards as (side, points, reason): a side's points go to each of its accounts, in a
    row (R4: the pair of a rotating gallo scores twice, once per player)."""
    seats = range(len(side_of))
    accounts = [sorted({team_of[s] for s in seats if side_of[s] == x}) for x in (0, 1)]
    out = []
    rest = list(awards)
    while rest:
        first = rest[0]
        side = next(x for x in (0, 1) if first.team in accounts[x])
        group, rest = rest[: len(accounts[side])], rest[len(accounts[side]) :]
        assert [a.team for a in group] == accounts[side]
        assert {(a.points, a.reason) for a in group} == {(first.points, first.reason)}
        out.append((side, first.points, first.reason))
    return out


def _check_play(
    awards: tuple[Award, ...],
    tricks: tuple[Trick, ...],
    winner_team: int | None,
    ended_by: str,
    before: dict[str, Any],
    match: Match,
    t: Tracker,
    seen: Counter[str],
) -> None:
    """The awards of a finished hand, or pico a pico duel, come from the tables (RULES.md
    §3-§5)."""
    family = match.family
    side_of = before["side_of"]
    action: Action = before["action"]
    view: SeatView = before["view"]
    pending = view.pending
    for trick in tricks:
        assert trick.winner == _trick_winner(trick, side_of)
    results = [tr.winner_team for tr in tricks]
    tied = match.options.all_tied
    if ended_by == "tricks":
        decided, side = _hand_winner(
            results, family, side_of[before["mano"]], side_of[before["dealer"]], tied
        )
        assert decided
        assert winner_team == side
        # Play stops as soon as the tricks decide (RULES.md §3): one trick fewer did not.
        assert not _hand_winner(results[:-1], family, 0, 0, tied)[0]
    elif tricks:
        assert not _hand_winner(results, family, 0, 0, tied)[0]
    _check_trick_order(tricks, before["mano"], before["active"], t.folded, match.num_seats)
    envidos = [(o.team, o.points) for o in t.envidos]
    flors = [(o.team, o.points) for o in t.flors]
    for side, points, reason in _side_awards(awards, side_of, match.team_of):
        seen[reason.name] += 1
        if reason is AwardReason.FLOR:
            assert flors.pop(0) == (side, points)
            continue
        assert reason in FAMILY_REASONS[family]
        if reason is AwardReason.HAND:
            assert ended_by == "tricks"
            assert side == winner_team
            assert points == view.hand_value
            if view.hand_of_ten is not None:
                assert points == 4
            else:
                table = ARGENTINE_ACCEPTED if family == "argentine" else MINEIRO_ACCEPTED
                assert points in {1 if family == "argentine" else 2, *table.values()}
        elif reason is AwardReason.TRUCO_REJECTED:
            assert pending is not None
            assert action.kind in (K.NO_QUIERO, K.RUN)
            table = ARGENTINE_REJECTED if family == "argentine" else MINEIRO_REJECTED
            assert points == table[pending.kind]
            assert side == side_of[pending.caller]
        elif reason is AwardReason.FOLD:
            assert action.kind is K.FOLD
            assert side != side_of[before["seat"]]
            assert points == view.hand_value
        elif reason is AwardReason.HAND_OF_TEN_DECLINED:
            assert action.kind is K.DECLINE_HAND
            assert points == 2
            assert side != view.hand_of_ten
        elif reason is AwardReason.IRON_HAND:
            assert view.iron_hand
            assert points == 12 - t.play_start[side]
        else:  # envido: the outcome settled in this hand, checked when it was settled
            assert envidos.pop(0) == (side, points)
    assert not envidos
    assert not flors


def _check_duels(summary: Any, match: Match, hand_start: list[int]) -> None:
    """Pico a pico (RULES.md §4.7, R6): odd hands of a game while no side has `pico_until`,
    never otherwise; even seat i duels seat i + 3; the duel holding mano first, then in turn
    order; each duel's mano is its seat nearer to mano; all duels unless the chico ended."""
    n = match.num_seats
    pico = (
        match.variant.pico
        and summary.hand_number % 2 == 1
        and max(hand_start) < match.options.pico_until
    )
    if not pico:
        assert summary.duels == ()
        return
    assert summary.ended_by in ("duels", "target")
    assert summary.winner_team is None
    pairs = [d.duel.seats for d in summary.duels]
    if summary.ended_by == "duels":
        assert len(pairs) == n // 2
    distance = {s: (s - summary.mano) % n for s in range(n)}
    expected = []
    done: set[int] = set()
    for step in range(n):
        seat = (summary.mano + step) % n
        if seat in done:
            continue
        other = (seat + 3) % n if seat % 2 == 0 else (seat - 3) % n
        done |= {seat, other}
        expected.append((seat, other))
    assert pairs == expected[: len(pairs)]
    for a, b in pairs:
        assert distance[a] < distance[b]
    assert summary.tricks == tuple(tr for d in summary.duels for tr in d.tricks)
    assert summary.awards == tuple(a for d in summary.duels for a in d.awards)


def _before(match: Match, seat: int, action: Action, view: SeatView, t: Tracker) -> dict[str, Any]:
    hand = match.hand
    return {
        "seat": seat,
        "action": action,
        "view": view,
        "scores": tuple(match.scores),
        "folded": set(t.folded),
        "kept": t.kept(hand.dealt),
        "mano": view.mano,
        "dealer": hand.dealer,
        "pending": view.pending,
        "side_of": view.side_of,
        "duel": view.duel is not None,
        "active": set(view.duel.seats) if view.duel is not None else set(range(match.num_seats)),
    }


def _play_match(
    variant: str,
    options: dict[str, Any],
    seed: int,
    seen: Counter[str],
    deals: dict[tuple[int, int], Deal] | None = None,
    lean: float = 0.6,
    signal_rate: float = 0.2,
) -> Match:
    rng = random.Random(seed)
    match = Match(variant, options, seed, deals=deals)
    t = Tracker()
    t.new_play(match.scores)
    t.hand_start = list(match.scores)
    t.gallo = _expected_sides(match)[1]
    steps = 0
    while not match.is_over:
        steps += 1
        assert steps < 20000, "the match does not finish"
        legal = match.legal_actions()
        assert legal
        assert [a.kind for a in legal] == sorted(a.kind for a in legal)
        views = _check_views(match, t)
        seat = match.to_act
        assert seat is not None
        _check_legal(match, legal, views[seat], t)
        action = _choose(rng, legal, lean)
        signal = _random_signal(rng) if rng.random() < signal_rate else None
        if signal is not None and match.options.signals == "off":
            with pytest.raises(IllegalSignalError):
                match.apply(action, signal)
            seen["signal refused"] += 1
            signal = None
        hand = match.hand
        before = _before(match, seat, action, views[seat], t)
        if hand.hand_of_ten is not None:
            seen["hand of ten"] += 1
        if hand.iron:
            seen["iron hand"] += 1
        events = match.apply(action, signal)
        if action.kind is K.FOLD:
            t.folded.add(seat)
        if action.kind is K.DISCARD:
            t.discard = action.card
        if action.kind in FLOR_KINDS:
            t.sung.add(seat)
        for event in events:
            body = event.body
            if isinstance(body, EnvidoEvent):
                _check_envido(body.outcome, before, match)
                t.envidos.append(body.outcome)
                t.all_envidos.append(body.outcome)
            elif isinstance(body, FlorEvent):
                _check_flor(body.outcome, before, match, t)
                t.flors.append(body.outcome)
                t.all_flors.append(body.outcome)
                seen["flor " + "-".join(k.name for k in body.outcome.chain)] += 1
        _check_events(events, match, hand, t, seen)
        for event in events:
            body = event.body
            if isinstance(body, DuelEndEvent):
                d = body.summary
                seen["duel " + d.ended_by] += 1
                _check_play(d.awards, d.tricks, d.winner_team, d.ended_by, before, match, t, seen)
                t.new_play(match.scores)
            elif isinstance(body, HandEndEvent):
                summary = body.summary
                seen[summary.ended_by] += 1
                if len(summary.tricks) == 3 and all(tr.parda for tr in summary.tricks):
                    seen["three pardas"] += 1
                seen["pardas"] += sum(tr.parda for tr in summary.tricks)
                assert summary.gallo == t.gallo
                _check_duels(summary, match, t.hand_start)
                if not summary.duels:
                    _check_play(
                        summary.awards, summary.tricks, summary.winner_team, summary.ended_by,
                        before, match, t, seen,
                    )
                scores = list(t.hand_start)
                for award in summary.awards:
                    scores[award.team] += award.points
                assert tuple(scores) == summary.scores
                t = Tracker()
                t.hand_start = list(summary.scores)
                t.new_play(summary.scores)
                t.gallo = None if match.is_over else _expected_sides(match)[1]
            elif isinstance(body, GameEndEvent):
                t.hand_start = [0] * match.num_teams
                t.new_play(t.hand_start)
                t.gallo = None if match.is_over else _expected_sides(match)[1]
    _check_record(match)
    return match


def _check_record(match: Match) -> None:
    """Deals, score sums and replay of a finished match (RULES.md §1, §4.1, §4.7, §6)."""
    record = match.record()
    result = match.result
    assert result is not None
    deck = find_variant(match.variant.name).deck
    totals = [0] * match.num_teams
    per_game: dict[int, list[int]] = {}
    for hand in record.hands:
        sizes = [4 if seat == hand.summary.gallo else 3 for seat in range(match.num_seats)]
        assert [len(cards) for cards in hand.deal] == sizes
        flat = [c for cards in hand.deal for c in cards]
        assert len(flat) == len(set(flat))
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
    again = replay(record)
    assert again.result == result
    assert again.record().hands == record.hands


def _matches(variant: str) -> int:
    v = find_variant(variant)
    return MINEIRO_MATCHES if v.family == "mineiro" else MATCHES[v.num_seats]


@pytest.mark.parametrize(("variant", "options"), CASES)
def test_random_playouts_keep_the_invariants(variant: str, options: dict[str, Any]) -> None:
    """Seeded random matches of this variant and options finish and keep every invariant listed
    in the module docstring (RULES.md §1-§6); across them the random players reach the rules'
    corners (every award reason of the family, flor duels, hands of ten, iron hands, chicos
    ended mid-hand, pico a pico duels)."""
    v = find_variant(variant)
    seen: Counter[str] = Counter()
    count = _matches(variant)
    for seed in range(count):
        _play_match(variant, options, seed, seen)
    expected_reasons = set(FAMILY_REASONS[v.family])
    flor = v.options(options).flor
    if flor:
        expected_reasons.add(AwardReason.FLOR)
    for reason in expected_reasons:
        assert seen[reason.name], f"no {reason.name} award in {count} matches"
    if not flor:
        assert not seen[AwardReason.FLOR.name]
    expected = {"tricks", "rejected"}
    if v.family == "mineiro":
        expected |= {"declined", "hand of ten", "iron hand"}
    else:
        expected |= {"fold", "target"}
    if v.pico:  # a whole side of 3 or 4 seldom folds; a duel player does
        expected = (expected - {"fold"}) | {"duels", "duel tricks", "duel fold", "duel rejected"}
    if flor:
        expected.add("flor FLOR")
    assert expected <= set(seen), sorted(seen)


FLOR_CASES = [case for case in CASES if find_variant(case.values[0]).options(case.values[1]).flor]
FLOR_ROWS = [
    "flor FLOR",
    "flor FLOR-CON_FLOR_QUIERO",
    "flor FLOR-CON_FLOR_ME_ACHICO",
    "flor FLOR-CONTRAFLOR-CON_FLOR_QUIERO",
    "flor FLOR-CONTRAFLOR-CON_FLOR_ME_ACHICO",
    "flor FLOR-CONTRAFLOR-CONTRAFLOR_AL_RESTO-CON_FLOR_QUIERO",
    "flor FLOR-CONTRAFLOR-CONTRAFLOR_AL_RESTO-CON_FLOR_ME_ACHICO",
    "flor FLOR-CONTRAFLOR_AL_RESTO-CON_FLOR_QUIERO",
    "flor FLOR-CONTRAFLOR_AL_RESTO-CON_FLOR_ME_ACHICO",
]


def _flor_rich_deals(
    variant: str, seed: int, options: dict[str, Any]
) -> dict[tuple[int, int], Deal]:
    """Stacked deals (the first 40 hands of each game) where up to four seats hold a flor each,
    in four different suits, the rest of the cards at random (the gallo's fourth card too)."""
    v = find_variant(variant)
    rng = random.Random(seed)
    deals: dict[tuple[int, int], Deal] = {}
    for game in range(3):
        dealer: int | None = None
        for hand in range(40):
            gallo = None
            if v.seating == "gallo":
                dealer = first_dealer(v, seed, game) if dealer is None else (dealer + 1) % 3
                gallo = 0 if v.options(options).gallo == "fixed" else dealer
            deck = list(full_deck(v.deck))
            rng.shuffle(deck)
            suits = list(Suit)
            rng.shuffle(suits)
            holders = rng.sample(range(v.num_seats), min(v.num_seats, 4, rng.choice((2, 3, 4))))
            dealt: list[list[Card]] = [[] for _ in range(v.num_seats)]
            for seat, suit in zip(holders, suits, strict=False):
                dealt[seat] = [c for c in deck if c.suit is suit][:3]
            rest = [c for c in deck if all(c not in cards for cards in dealt)]
            for seat in range(v.num_seats):
                while len(dealt[seat]) < (4 if seat == gallo else 3):
                    dealt[seat].append(rest.pop())
            deals[(game, hand)] = tuple(tuple(cards) for cards in dealt)
    return deals


@pytest.mark.parametrize(("variant", "options"), FLOR_CASES)
def test_random_playouts_with_flor_rich_deals(variant: str, options: dict[str, Any]) -> None:
    """The same invariants with deals where two to four seats hold flor, so that every row of
    the flor tables come up (unopposed, con flor quiero / me achico, contraflor and contraflor
    al resto accepted and conceded: at least four of them in each case) (RULES.md §4.5)."""
    seen: Counter[str] = Counter()
    for seed in range(FLOR_MATCHES[find_variant(variant).num_seats]):
        _play_match(variant, options, seed, seen, _flor_rich_deals(variant, seed, options))
    rows = [row for row in FLOR_ROWS if seen[row]]
    assert len(rows) >= 4, sorted(seen)  # every row is pinned by tests/test_rules_flor.py


# Ranks whose four cards are all equal in trick strength (RULES.md §2): no manilha, no special
# ace or seven, so hands built from them are full of pardas.
TIE_RANKS = {"argentine": (2, 3, 4, 5, 6, 10, 11, 12), "mineiro": (2, 3, 5, 6, 10, 11, 12)}


def _tie_rich_deals(
    variant: str, seed: int, options: dict[str, Any]
) -> dict[tuple[int, int], Deal]:
    """Stacked deals (the first 40 hands of each game) where every seat holds the same three
    ranks in different suits (the gallo a fourth card of another rank); later hands come from
    the seed as usual. With 6 or 8 seats the deal repeats four suits, so ranks go by pairs of
    seats: seats 0-3 share three ranks, seats 4-7 three others."""
    v = find_variant(variant)
    deck = {(c.suit, c.rank): c for c in full_deck(v.deck)}
    suits = list(Suit)
    rng = random.Random(seed)
    deals: dict[tuple[int, int], Deal] = {}
    for game in range(3):
        dealer = None
        for hand in range(40):
            groups = (v.num_seats + 3) // 4
            ranks = rng.sample(TIE_RANKS[v.family], 3 * groups + 1)
            dealt = []
            for seat in range(v.num_seats):
                mine = ranks[3 * (seat // 4) : 3 * (seat // 4) + 3]
                cards = [deck[suits[(seat + i) % 4], r] for i, r in enumerate(mine)]
                dealt.append(cards)
            if v.seating == "gallo":
                if dealer is None:
                    dealer = first_dealer(v, seed, game)
                else:
                    dealer = (dealer + 1) % v.num_seats
                gallo = 0 if v.options(options).gallo == "fixed" else dealer
                dealt[gallo].append(deck[suits[gallo], ranks[-1]])
            deals[(game, hand)] = tuple(tuple(cards) for cards in dealt)
    return deals


@pytest.mark.parametrize(("variant", "options"), CASES)
def test_random_playouts_with_tie_rich_deals(variant: str, options: dict[str, Any]) -> None:
    """The same invariants with deals full of equal cards, so that pardas, three tied tricks
    (mano's side in Argentine, the dealer's side or nobody in Mineiro) and same-side equal top
    cards come up often (RULES.md §3)."""
    v = find_variant(variant)
    family = v.family
    seen: Counter[str] = Counter()
    for seed in range(TIE_MATCHES[family]):
        deals = _tie_rich_deals(variant, seed, options)
        _play_match(variant, options, seed, seen, deals, lean=0.95)
    if v.seating == "gallo":  # two cards of the pair against one: three pardas are rare
        assert seen["pardas"] >= 10, dict(seen)
    else:
        assert seen["three pardas"] >= TIE_PARDAS[family], dict(seen)
