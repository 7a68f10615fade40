"""A heuristic Truco strategy: `choose(view, legal)` is a pure function of what one seat sees.

Deterministic: its randomness (the playouts below, and a rare bluff) comes from a generator
seeded by the view itself, so the same view always gets the same action. It plays every variant
the engine offers (argentine 1v1/2v2/gallo/3v3/4v4 with or without flor, mineiro 1v1/2v2); an
action kind it does not plan for is only chosen when nothing else is legal (`fallback`).

The strategy, in the order `choose` asks its questions:
- flor is sung whenever it is legal (mandatory when held); a flor duel is answered by the
  flor's value. The gallo discards the card that leaves the strongest three.
- Mineiro hand of ten: play it when the playouts (own + partner cards known) win often enough.
- Envido (Argentine): the value of the three dealt cards (played ones included) decides.
  Call envido from 26, real envido from 29, falta envido from 31 when losing it cannot hand the
  opponents the chico; accept from 27 (more for a bigger or falta chain), raise from 30,
  reject below; mano (who wins ties) counts one point more. A strong envido is sung first when
  answering a truco (envido va primero).
- Truco and its raises: `win_probability` plays the rest of the hand out many times with the
  unseen cards dealt at random. Call or raise when it is high (64% for truco, more per level;
  a very weak hand bluffs a truco now and then); accept when it beats the call's break-even
  plus a margin (a caller usually holds something), else reject, unless rejecting hands the
  opponents the game anyway. Mineiro: answer a request with the next one when very strong.
- Card play: a rule of thumb (lead a middle card in the first trick; follow with the cheapest
  card that wins, or ties when a tie is as good; play low when the partner already wins the
  trick; throw the lowest card when the trick is lost), overruled only when the playouts show
  another card clearly better. Never fold: folding scores the same as losing the hand.
"""

from __future__ import annotations

import random
import zlib
from collections.abc import Sequence

from arena.rules import (
    Action,
    ActionKind,
    Card,
    Deck,
    SeatView,
    envido_value,
    find_variant,
    full_deck,
    trick_strength,
)
from arena.rules.actions import ENVIDO_CALLS, TRUCO_CALLS
from arena.rules.cards import flor_value, has_flor

K = ActionKind

ARGENTINE = "argentine"
MINEIRO = "mineiro"

# Truco ladders and hand values by level (RULES.md §4.3, §5.1): level i accepted is worth
# VALUES[i]; a call to level i rejected scores VALUES[i - 1] for the caller.
LADDER = {
    ARGENTINE: (K.TRUCO, K.RETRUCO, K.VALE_CUATRO),
    MINEIRO: (K.TRUCO, K.SIX, K.TEN, K.TWELVE),
}
VALUES = {ARGENTINE: (1, 2, 3, 4), MINEIRO: (2, 4, 6, 10, 12)}
ENVIDO_POINTS = {K.ENVIDO: 2, K.REAL_ENVIDO: 3}

# Envido thresholds (envido value; one point lower for mano, who wins ties).
ENVIDO_CALL = 26
REAL_ENVIDO_CALL = 29
FALTA_CALL = 31
ENVIDO_ACCEPT = 27
ENVIDO_RAISE = 30

# Truco thresholds, as a chance to win the hand's tricks. CALL[i]: call level i on one's turn.
TRUCO_CALL = (0.0, 0.64, 0.74, 0.82, 0.86)
COUNTER_RAISE = 0.82  # Mineiro: answer a request by raising it
ACCEPT_MARGIN = 0.22  # over the break-even, plus ACCEPT_MARGIN_STEP per level
ACCEPT_MARGIN_STEP = 0.04
HAND_OF_TEN_PLAY = 0.38
BLUFF_BELOW = 0.3  # a hand this weak sometimes calls truco anyway, so calls are not a tell
BLUFF_RATE = 0.08  # per decision, from the view-seeded generator

SAMPLES = 72  # playouts per view
ROLLOUT_EDGE = 0.03  # how much better (win chance) a card must be to overrule the rule of thumb


def choose(view: SeatView, legal: Sequence[Action]) -> Action:
    """The action this strategy takes in `view`; always one of `legal` (which must not be
    empty)."""
    if not legal:
        raise ValueError("choose() needs at least one legal action")
    legal = tuple(legal)
    action = _decide(_Situation(view), legal)
    return action if action in legal else fallback(legal)


def fallback(legal: Sequence[Action]) -> Action:
    """A sensible legal action when the strategy has nothing better: accept a waiting call,
    play the weakest card, anything but folding or running."""
    for kind in (K.QUIERO, K.ACCEPT, K.PLAY_HAND, K.CON_FLOR_QUIERO, K.FLOR):
        for action in legal:
            if action.kind is kind:
                return action
    cards = [a for a in legal if a.kind in (K.PLAY, K.DISCARD) and a.card is not None]
    if cards:
        return min(cards, key=lambda a: _strength(a.card))
    for action in legal:
        if action.kind not in (K.FOLD, K.NO_QUIERO, K.RUN, K.DECLINE_HAND, K.CON_FLOR_ME_ACHICO):
            return action
    return legal[0]


def _strength(card: Card | None) -> int:
    return trick_strength(card) if card is not None else 0


# ---------------------------------------------------------------------------- the situation


class _Situation:
    """What the strategy derives from a view: family, sides, seats in play, own dealt cards,
    cards already seen, scores.

    Sides and accounts (arena.rules.views): tricks and partners go by *side* (`side_of`; equal
    to `team_of` except in argentine-gallo, and absent from older views), scores by account. In
    a pico a pico duel only the duel's two seats play, and the duel has its own mano.
    """

    def __init__(self, view: SeatView) -> None:
        self.view = view
        self.family, self.deck = _family_and_deck(view)
        self.seats = len(view.team_of)
        self.side_of: tuple[int, ...] = tuple(getattr(view, "side_of", ()) or view.team_of)
        self.side = self.side_of[view.seat]
        duel = getattr(view, "duel", None)
        in_play = tuple(duel.seats) if duel is not None else tuple(range(self.seats))
        self.mano: int = duel.mano if duel is not None else view.mano
        self.folded = frozenset(view.folded) | {s for s in range(self.seats) if s not in in_play}
        plays = [p for t in view.tricks for p in t.plays] + list(view.current_trick)
        self.played = plays
        own_played = tuple(p.card for p in plays if p.seat == view.seat)
        self.dealt = tuple(view.hand) + own_played
        self.envido = envido_value(self.dealt) if self.dealt else 0
        self.is_mano = view.seat == self.mano
        seen = {p.card for p in plays} | set(self.dealt)
        for done in getattr(view, "duels", ()):
            seen |= {p.card for t in done.tricks for p in t.plays}
        discard = getattr(view, "discard", None)
        if discard is not None:
            seen.add(discard)
        self.partners = {
            s: cards for s, cards in view.partner_cards if self.side_of[s] == self.side
        }
        for cards in self.partners.values():
            seen |= set(cards)
        self.seen = seen
        accounts = view.scores
        mine = view.team if view.team < len(accounts) else 0
        self.my_score = accounts[mine] if accounts else 0
        theirs = {view.team_of[s] for s in range(self.seats) if self.side_of[s] != self.side}
        self.opp_score = max((accounts[a] for a in theirs if a < len(accounts)), default=0)
        self.target = view.target
        self._playouts: _Playouts | None = None

    def team_of(self, seat: int) -> int:
        """The seat's side this hand."""
        return self.side_of[seat]

    @property
    def falta_points(self) -> int:
        """What a falta envido is worth now (target - the leader's score)."""
        return max(1, self.target - max(self.my_score, self.opp_score))

    def falta_safe(self, value: int) -> bool:
        """Losing a falta envido cannot give the opponents the chico (we lead), or `value`
        cannot lose (33 held by mano)."""
        return self.my_score > self.opp_score or (value >= 33 and self.is_mano)

    def loses_game_anyway(self, points: int) -> bool:
        """Conceding `points` already hands the opponents the game."""
        return self.opp_score + points >= self.target

    def playouts(self) -> _Playouts:
        """The playouts of this view, drawn once and shared by every question about it."""
        if self._playouts is None:
            self._playouts = _Playouts(self, SAMPLES)
        return self._playouts

    def rng(self, salt: str = "") -> random.Random:
        """A generator seeded from the view: the same view draws the same samples."""
        v = self.view
        key = (
            salt, v.variant, v.seat, v.game_number, v.hand_number, len(v.moves), v.scores,
            tuple(str(c) for c in v.hand),
        )
        return random.Random(zlib.crc32(repr(key).encode()))


def _family_and_deck(view: SeatView) -> tuple[str, Deck]:
    try:
        variant = find_variant(view.variant)
        return variant.family, variant.deck
    except ValueError:
        pass
    if view.variant.startswith(MINEIRO):
        return MINEIRO, Deck.BRAZILIAN
    cards = list(view.hand) + [p.card for p in view.current_trick]
    return ARGENTINE, cards[0].deck if cards else Deck.SPANISH


# ---------------------------------------------------------------------------- decisions


def _decide(s: _Situation, legal: tuple[Action, ...]) -> Action | None:
    kinds = {a.kind for a in legal}
    if K.FLOR in kinds:
        return Action(K.FLOR)
    if kinds & {K.CON_FLOR_QUIERO, K.CON_FLOR_ME_ACHICO, K.CONTRAFLOR, K.CONTRAFLOR_AL_RESTO}:
        return _answer_flor(s, kinds)
    if K.DISCARD in kinds:
        return _discard(legal)
    if K.PLAY_HAND in kinds:
        return _hand_of_ten(s)
    pending = s.view.pending
    if pending is not None and pending.responder == s.view.seat:
        if pending.kind in ENVIDO_CALLS:
            return _answer_envido(s, kinds)
        if pending.kind in TRUCO_CALLS:
            return _answer_truco(s, kinds, pending.kind)
        return None
    if kinds & ENVIDO_CALLS:
        call = _envido_call(s, kinds)
        if call is not None:
            return call
    raise_to = next((a.kind for a in legal if a.kind in TRUCO_CALLS), None)
    if raise_to is not None and _wants_to_raise(s, raise_to):
        return Action(raise_to)
    plays = [a for a in legal if a.kind is K.PLAY and a.card is not None]
    if plays:
        return _play_card(s, plays)
    face_down = [a for a in legal if a.kind is K.PLAY_FACE_DOWN]
    if face_down:
        return face_down[0]  # blind: every slot is the same unknown
    return None


# ---- flor (RULES.md §4.5)


def _answer_flor(s: _Situation, kinds: set[ActionKind]) -> Action:
    value = flor_value(s.dealt) if has_flor(s.dealt) else 0
    edge = 1 if s.is_mano else 0
    pending = s.view.pending.kind if s.view.pending is not None else K.FLOR
    if K.CONTRAFLOR_AL_RESTO in kinds and value + edge >= 36 and s.falta_safe(value):
        return Action(K.CONTRAFLOR_AL_RESTO)
    if K.CONTRAFLOR in kinds and value + edge >= 33:
        return Action(K.CONTRAFLOR)
    need = {K.CONTRAFLOR_AL_RESTO: 33, K.CONTRAFLOR: 30}.get(pending, 26)
    if K.CON_FLOR_QUIERO in kinds and (value + edge >= need or K.CON_FLOR_ME_ACHICO not in kinds):
        return Action(K.CON_FLOR_QUIERO)
    return Action(K.CON_FLOR_ME_ACHICO)


# ---- gallo discard (RULES.md §4.7)


def _discard(legal: tuple[Action, ...]) -> Action:
    """Keep the three cards with the best trick strength, envido as the tie-break."""
    cards = [a.card for a in legal if a.kind is K.DISCARD and a.card is not None]

    def kept_value(drop: Card) -> tuple[int, int]:
        kept = [c for c in cards if c != drop]
        return sum(trick_strength(c) for c in kept), envido_value(kept)

    best = max(cards, key=kept_value)
    return Action(K.DISCARD, card=best)


# ---- Mineiro hand of ten (RULES.md §5.2)


def _hand_of_ten(s: _Situation) -> Action:
    p = win_probability(s)
    return Action(K.PLAY_HAND if p >= HAND_OF_TEN_PLAY else K.DECLINE_HAND)


# ---- envido (RULES.md §4.4)


def _envido_chain(s: _Situation) -> list[ActionKind]:
    """The envido chain waiting for an answer: the calls at the end of the moves (a chain is
    answered at once, so nothing else comes between its calls)."""
    chain: list[ActionKind] = []
    for move in reversed(s.view.moves):
        if move.action.kind not in ENVIDO_CALLS:
            break
        chain.insert(0, move.action.kind)
    return chain


def _envido_call(s: _Situation, kinds: set[ActionKind]) -> Action | None:
    """Open the envido when the value is good enough; None to stay quiet."""
    e = s.envido + (1 if s.is_mano else 0)
    if s.my_score + 2 >= s.target:
        e += 2  # an envido won ends the chico: worth a little more risk
    if K.FALTA_ENVIDO in kinds and e >= FALTA_CALL and s.falta_safe(s.envido):
        return Action(K.FALTA_ENVIDO)
    if K.REAL_ENVIDO in kinds and e >= REAL_ENVIDO_CALL:
        return Action(K.REAL_ENVIDO)
    if K.ENVIDO in kinds and e >= ENVIDO_CALL:
        return Action(K.ENVIDO)
    return None


def _answer_envido(s: _Situation, kinds: set[ActionKind]) -> Action:
    chain = _envido_chain(s)
    falta = K.FALTA_ENVIDO in chain
    accepted = s.falta_points if falta else sum(ENVIDO_POINTS.get(k, 0) for k in chain)
    rejected = 1 if len(chain) <= 1 else sum(ENVIDO_POINTS.get(k, 0) for k in chain[:-1])
    e = s.envido + (1 if s.is_mano else 0)
    # Raise when very strong.
    if K.FALTA_ENVIDO in kinds and e >= FALTA_CALL and s.falta_safe(s.envido):
        return Action(K.FALTA_ENVIDO)
    if K.REAL_ENVIDO in kinds and e >= ENVIDO_RAISE:
        return Action(K.REAL_ENVIDO)
    need = ENVIDO_ACCEPT
    if accepted >= 5:
        need += 1
    if falta:
        need += 2 if s.falta_safe(s.envido) else 4
    if s.loses_game_anyway(rejected) or e >= need or K.NO_QUIERO not in kinds:
        return Action(K.QUIERO)
    return Action(K.NO_QUIERO)


# ---- truco (RULES.md §4.3, §5.1)


def _level(s: _Situation, kind: ActionKind) -> int:
    ladder = LADDER.get(s.family, ())
    return ladder.index(kind) + 1 if kind in ladder else 1


def _wants_to_raise(s: _Situation, kind: ActionKind) -> bool:
    level = _level(s, kind)
    threshold = TRUCO_CALL[min(level, len(TRUCO_CALL) - 1)]
    p = win_probability(s)
    if p >= threshold:
        return True
    return level == 1 and p < BLUFF_BELOW and s.rng(salt="bluff").random() < BLUFF_RATE


def _answer_truco(s: _Situation, kinds: set[ActionKind], called: ActionKind) -> Action:
    # Envido va primero: settle a strong envido before answering the truco.
    if kinds & ENVIDO_CALLS:
        call = _envido_call(s, kinds)
        if call is not None:
            return call
    accept = K.ACCEPT if K.ACCEPT in kinds else K.QUIERO
    reject = K.RUN if K.RUN in kinds else K.NO_QUIERO
    values = VALUES.get(s.family, VALUES[ARGENTINE])
    level = min(_level(s, called), len(values) - 1)
    if_accepted, if_rejected = values[level], values[level - 1]
    if reject not in kinds or s.loses_game_anyway(if_rejected):
        return Action(accept)
    p = win_probability(s)
    counter = next((k for k in kinds if k in TRUCO_CALLS), None)
    if counter is not None and p >= COUNTER_RAISE:
        return Action(counter)
    break_even = (1 - if_rejected / if_accepted) / 2
    margin = ACCEPT_MARGIN + ACCEPT_MARGIN_STEP * level
    return Action(accept if p >= break_even + margin else reject)


# ---- card play


def _play_card(s: _Situation, plays: list[Action]) -> Action:
    """The rule of thumb's card, unless playouts show another card clearly better."""
    choice = _rule_card(s, plays)
    if len({_strength(a.card) for a in plays}) < 2:
        return choice
    scores = {a: win_probability(s, forced=a.card) for a in plays}
    best = max(plays, key=lambda a: (scores[a], -_strength(a.card)))
    return best if scores[best] > scores[choice] + ROLLOUT_EDGE else choice


def _rule_card(s: _Situation, plays: list[Action]) -> Action:
    by_strength = sorted(plays, key=lambda a: _strength(a.card))  # stable: hand order on ties
    lowest = by_strength[0]
    current = s.view.current_trick
    trick_index = len(s.view.tricks)
    if not current:
        if trick_index == 0:
            return by_strength[len(by_strength) // 2]  # a middle card
        first = s.view.tricks[0].winner_team
        if first == s.side and len(by_strength) > 1:
            strongest = by_strength[-1]
            # Won the first trick: a winner or a tie now takes the hand. Lead a near-certain
            # card to close it, otherwise lead low and keep the strong one for the last trick.
            return strongest if _strength(strongest.card) >= _near_certain(s) else lowest
        return by_strength[-1]  # after a parda the next trick decides: lead the strongest

    ours = max((trick_strength(p.card) for p in current if s.team_of(p.seat) == s.side), default=0)
    theirs = max((trick_strength(p.card) for p in current if s.team_of(p.seat) != s.side),
                 default=0)
    if ours > theirs:
        return lowest  # the partner already wins this trick
    winners = [a for a in by_strength if _strength(a.card) > theirs]
    ties = [a for a in by_strength if _strength(a.card) == theirs]
    first = s.view.tricks[0].winner_team if s.view.tricks else None
    if trick_index == 0:
        if winners:
            return winners[0]
        return ties[0] if ties and ours < theirs else lowest
    if first == s.side:  # a tie in a later trick is as good as a win
        if ties and ours < theirs:
            return ties[0]
        return winners[0] if winners else lowest
    if first is None and trick_index == 1 and s.view.tricks[0].parda:
        if winners:
            return winners[0]
        return ties[0] if ties and ours < theirs else lowest
    return winners[0] if winners else lowest


def _near_certain(s: _Situation) -> int:
    """The trick strength of the best card still unseen: a card at least this strong cannot
    lose the trick it leads (a tie counts as won after winning the first trick)."""
    return max((trick_strength(c) for c in full_deck(s.deck) if c not in s.seen), default=0)


# ---------------------------------------------------------------------------- playouts


class _Playouts:
    """The rest of a hand played out many times from one view (RULES.md §3).

    Each sample deals the unseen cards at random to the hidden hands; every seat then plays a
    simple policy: lead the strongest card; follow with the cheapest card that beats the
    opponents' best, a tie in the first trick, or the lowest card when that fails or its own
    team already wins the trick. Cards are reduced to their trick strengths. The samples are
    drawn once, so comparing candidate cards uses the same deals (common random numbers).
    """

    def __init__(self, s: _Situation, samples: int) -> None:
        view = s.view
        n = s.seats
        self.team = s.side
        self.team_of = s.side_of
        self.me = view.seat
        self.all_tied = s.side_of[s.mano if s.family == ARGENTINE else view.dealer]
        active = [seat for seat in range(n) if seat not in s.folded]
        self.order_from: dict[int, tuple[int, ...]] = {}
        for seat in range(n):
            start = next((seat + k) % n for k in range(n) if (seat + k) % n not in s.folded)
            i = active.index(start)
            self.order_from[seat] = tuple(active[i:] + active[:i])
        played_count = dict.fromkeys(range(n), 0)
        for p in s.played:
            played_count[p.seat] = played_count.get(p.seat, 0) + 1
        self.known: dict[int, list[int]] = {self.me: [trick_strength(c) for c in view.hand]}
        for seat, cards in s.partners.items():
            if seat in active:
                played = {p.card for p in s.played if p.seat == seat}
                self.known[seat] = [trick_strength(c) for c in cards if c not in played]
        hidden = [(seat, max(0, 3 - played_count[seat])) for seat in active
                  if seat not in self.known]
        pool = [trick_strength(c) for c in full_deck(s.deck) if c not in s.seen]
        needed = sum(count for _, count in hidden)
        self.deals: list[list[tuple[int, list[int]]]] = []
        if needed <= len(pool) and set(s.side_of) <= {0, 1}:  # two sides, as in every variant
            rng = s.rng()
            for _ in range(samples):
                draw = rng.sample(pool, needed)
                deal, at = [], 0
                for seat, count in hidden:
                    deal.append((seat, draw[at : at + count]))
                    at += count
                self.deals.append(deal)
        self.results: list[int | None] = [t.winner_team for t in view.tricks]
        self.current = [(p.seat, trick_strength(p.card)) for p in view.current_trick]
        if self.current:
            self.leader = self.current[0][0]
        elif view.tricks:
            last = view.tricks[-1]
            self.leader = last.winner if last.winner is not None else last.leader
        else:
            self.leader = s.mano
        if self.leader in s.folded:
            self.leader = self.order_from[self.leader][0]

    def probability(self, forced: int | None = None) -> float:
        """The share of samples this seat's team wins (a hand nobody wins counts one half),
        with this seat's next card `forced` (a trick strength) if given."""
        if not self.deals or not self.known[self.me]:
            return 0.5
        total = 0.0
        for deal in self.deals:
            hands = {seat: list(cards) for seat, cards in self.known.items()}
            hands.update((seat, list(cards)) for seat, cards in deal)
            winner = self._play_out(hands, forced)
            if winner == self.team:
                total += 1.0
            elif winner is None:
                total += 0.5
        return total / len(self.deals)

    def _play_out(self, hands: dict[int, list[int]], forced: int | None) -> int | None:
        team_of = self.team_of
        results = list(self.results)
        current = list(self.current)
        leader = self.leader
        if forced is not None:
            hands[self.me].remove(forced)
        for _ in range(3):
            best = [0, 0]
            for seat, c in current:
                if c > best[team_of[seat]]:
                    best[team_of[seat]] = c
            played = {seat for seat, _ in current}
            first_trick = not results
            for seat in self.order_from[leader]:
                if seat in played:
                    continue
                team = team_of[seat]
                if forced is not None and seat == self.me:
                    card, forced = forced, None
                else:
                    cards = hands[seat]
                    if not cards:
                        continue
                    if not current:
                        card = max(cards)
                    elif best[team] > best[1 - team]:
                        card = min(cards)
                    else:
                        theirs = best[1 - team]
                        card = min((c for c in cards if c > theirs), default=0)
                        if not card:
                            card = theirs if first_trick and theirs in cards else min(cards)
                    cards.remove(card)
                current.append((seat, card))
                if card > best[team]:
                    best[team] = card
            if not current:
                return None
            if best[0] == best[1]:
                winner = None
                results.append(None)
            else:
                top = max(best)
                winner = next(seat for seat, c in current if c == top)
                results.append(team_of[winner])
            decided, team_won = self._decide(results)
            if decided:
                return team_won
            leader = winner if winner is not None else current[0][0]
            current = []
        return None

    def _decide(self, results: list[int | None]) -> tuple[bool, int | None]:
        """Whether the tricks decide the hand, and for whom (RULES.md §3 tables)."""
        if len(results) < 2:
            return False, None
        first, second = results[0], results[1]
        if first is not None:
            if second is None or second == first:
                return True, first
            if len(results) < 3:
                return False, None
            return True, first if results[2] is None else results[2]
        if second is not None:
            return True, second
        if len(results) < 3:
            return False, None
        return True, results[2] if results[2] is not None else self.all_tied


def win_probability(s: _Situation, forced: Card | None = None) -> float:
    """The chance that this seat's team wins the hand's tricks (see `_Playouts`), playing
    `forced` next if given."""
    return s.playouts().probability(None if forced is None else trick_strength(forced))
