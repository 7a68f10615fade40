"""Cards, the two 40-card decks, trick strength and envido values (RULES.md §2, §4.4).

Both decks share one suit type (clubs~bastos, hearts~copas, spades~espadas, diamonds~oros) and
one rank scale: 1-7, 10, 11, 12, where the Brazilian Q, J, K are 10, 11, 12 (so K > J > Q in
Mineiro matches rey > caballo > sota). A card knows its deck, because the deck decides its
notation and its trick strength.

Notation (used wherever a person reads cards):
  Spanish   `<rank><suit>`, rank 1-7, 10, 11, 12, suit e/b/o/c (espadas, bastos, oros, copas):
            `1e`, `7o`, `12b`.
  Brazilian `<rank><suit>`, rank A, 2-7, J, Q, K, suit c/h/s/d (clubs, hearts, spades,
            diamonds): `4c` (zap), `7h`, `As`, `7d`.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Final

from arena.errors import NotationError


class Suit(enum.IntEnum):
    """The four suits, named by the Spanish deck; the Brazilian names are aliases in notation."""

    SWORDS = 0  # espadas / spades
    CLUBS = 1  # bastos / clubs (paus)
    COINS = 2  # oros / diamonds (ouros)
    CUPS = 3  # copas / hearts (copas)


class Deck(enum.Enum):
    """Which 40-card deck a card belongs to."""

    SPANISH = "spanish"
    BRAZILIAN = "brazilian"


RANKS: Final[tuple[int, ...]] = (1, 2, 3, 4, 5, 6, 7, 10, 11, 12)

_SPANISH_SUIT_LETTER: Final = {Suit.SWORDS: "e", Suit.CLUBS: "b", Suit.COINS: "o", Suit.CUPS: "c"}
_BRAZILIAN_SUIT_LETTER: Final = {Suit.SWORDS: "s", Suit.CLUBS: "c", Suit.COINS: "d", Suit.CUPS: "h"}
_BRAZILIAN_RANK_TEXT: Final = {1: "A", 10: "Q", 11: "J", 12: "K"}

# Spanish trick strength, RULES.md §2: row 1 of the table is the strongest.
_SPANISH_ROWS: tuple[tuple[tuple[int, Suit | None], ...], ...] = (
    ((1, Suit.SWORDS),),
    ((1, Suit.CLUBS),),
    ((7, Suit.SWORDS),),
    ((7, Suit.COINS),),
    ((3, None),),
    ((2, None),),
    ((1, Suit.COINS), (1, Suit.CUPS)),
    ((12, None),),
    ((11, None),),
    ((10, None),),
    ((7, Suit.CUPS), (7, Suit.CLUBS)),
    ((6, None),),
    ((5, None),),
    ((4, None),),
)

# Brazilian trick strength, RULES.md §2: the four manilhas, then ranks regardless of suit.
_BRAZILIAN_MANILHAS: tuple[tuple[int, Suit], ...] = (
    (4, Suit.CLUBS),  # zap
    (7, Suit.CUPS),  # copas / copeta (7 of hearts)
    (1, Suit.SWORDS),  # espadilha
    (7, Suit.COINS),  # pica-fumo (7 of diamonds)
)
_BRAZILIAN_RANK_ORDER: tuple[int, ...] = (3, 2, 1, 12, 11, 10, 7, 6, 5, 4)


@dataclass(frozen=True, slots=True, order=True)
class Card:
    """One card. Compare strength with `trick_strength`, never with `<` (that is only a sort)."""

    deck: Deck
    suit: Suit
    rank: int

    def __post_init__(self) -> None:
        if self.rank not in RANKS:
            raise NotationError(f"rank {self.rank} is not in a 40-card deck (1-7, 10, 11, 12)")

    def __hash__(self) -> int:
        # Same fields as the generated hash, without the slow Python-level Enum.__hash__: cards
        # are hashed on every trick-strength lookup (bench/rules_speed.py).
        return hash((self.deck._value_, self.suit._value_, self.rank))

    def __str__(self) -> str:
        if self.deck is Deck.SPANISH:
            return f"{self.rank}{_SPANISH_SUIT_LETTER[self.suit]}"
        rank = _BRAZILIAN_RANK_TEXT.get(self.rank, str(self.rank))
        return f"{rank}{_BRAZILIAN_SUIT_LETTER[self.suit]}"

    def __repr__(self) -> str:
        return f"Card({self})"


def _strength_table() -> dict[Card, int]:
    table: dict[Card, int] = {}
    rows = len(_SPANISH_ROWS)
    for index, row in enumerate(_SPANISH_ROWS):
        for rank, suit in row:
            for s in Suit:
                if suit is None or s is suit:
                    table.setdefault(Card(Deck.SPANISH, s, rank), rows - index)
    plain = len(_BRAZILIAN_RANK_ORDER)
    for index, (rank, suit) in enumerate(_BRAZILIAN_MANILHAS):
        table[Card(Deck.BRAZILIAN, suit, rank)] = plain + len(_BRAZILIAN_MANILHAS) - index
    for index, rank in enumerate(_BRAZILIAN_RANK_ORDER):
        for s in Suit:
            table.setdefault(Card(Deck.BRAZILIAN, s, rank), plain - index)
    return table


_STRENGTH: Final = _strength_table()

# Built once: every deal starts from these (cards are immutable, so sharing them is safe).
_FULL_DECKS: Final = {
    deck: tuple(Card(deck, suit, rank) for suit in Suit for rank in RANKS) for deck in Deck
}
_STRENGTH_BY_ID: Final[dict[int, int]] = {
    id(card): _STRENGTH[card] for cards in _FULL_DECKS.values() for card in cards
}
"""`_STRENGTH` keyed by the identity of the deck's own cards (what deals hold): no hashing
(enum values) or comparing (dataclass `__eq__`) per lookup; any other equal card falls back
to `_STRENGTH`. The deck's cards live as long as the module, so their ids stay theirs."""


def trick_strength(card: Card) -> int:
    """How strongly `card` wins a trick: higher is stronger, equal values tie (RULES.md §2)."""
    strength = _STRENGTH_BY_ID.get(id(card))
    return _STRENGTH[card] if strength is None else strength


def envido_points(card: Card) -> int:
    """A card's envido/flor value: 10, 11 and 12 count 0, every other card its number (§2)."""
    return card.rank if card.rank <= 7 else 0


def envido_value(cards: tuple[Card, ...] | list[Card]) -> int:
    """The envido of a hand (RULES.md §4.4): two or three of a suit score the best two + 20;
    otherwise the highest single value. Range 0-33."""
    # The best and second-best value per suit, -1 for none (one pass: this runs for every
    # seat at every envido showdown).
    first = [-1, -1, -1, -1]
    second = [-1, -1, -1, -1]
    for card in cards:
        rank = card.rank
        value = rank if rank <= 7 else 0
        suit = int(card.suit)
        if value > first[suit]:
            second[suit] = first[suit]
            first[suit] = value
        elif value > second[suit]:
            second[suit] = value
    best = 0
    for suit in range(4):
        if second[suit] >= 0:
            best = max(best, first[suit] + second[suit] + 20)
        elif first[suit] > best:
            best = first[suit]
    return best


def envido_cards(cards: tuple[Card, ...] | list[Card]) -> tuple[Card, ...]:
    """The cards that make a hand's envido value, shown when the envido winner reveals them."""
    best: tuple[int, tuple[Card, ...]] = (-1, ())
    for suit in Suit:
        same = sorted(
            (c for c in cards if c.suit is suit), key=lambda c: (-envido_points(c), c.rank)
        )
        chosen: tuple[Card, ...]
        if len(same) >= 2:
            value = envido_points(same[0]) + envido_points(same[1]) + 20
            chosen = (same[0], same[1])
        elif same:
            value, chosen = envido_points(same[0]), (same[0],)
        else:
            continue
        if value > best[0]:
            best = (value, chosen)
    return best[1]


def has_flor(cards: tuple[Card, ...] | list[Card]) -> bool:
    """Three cards of one suit (RULES.md §4.5)."""
    return len(cards) == 3 and len({c.suit for c in cards}) == 1


def flor_value(cards: tuple[Card, ...] | list[Card]) -> int:
    """A flor's value: the three cards' values + 20 (RULES.md §4.5), range 20-38."""
    return sum(envido_points(c) for c in cards) + 20


def full_deck(deck: Deck) -> tuple[Card, ...]:
    """The 40 cards of a deck in a fixed canonical order (the order shuffles start from)."""
    return _FULL_DECKS[deck]



def _quoted(text: str) -> str:
    """`text` quoted for an error message, its first 20 characters if longer: a bot's card
    text is bounded only by the message cap, and the message goes to the log, the stored
    match and back to the bot."""
    return repr(text) if len(text) <= 20 else f"{text[:20]!r}... ({len(text)} characters)"


def parse_card(text: str, deck: Deck) -> Card:
    """Read one card in the deck's notation, e.g. `parse_card("1e", Deck.SPANISH)`."""
    raw = text.strip()
    if len(raw) < 2:
        raise NotationError(
            f"card {_quoted(text)} is too short: write <rank><suit>, e.g. {_example(deck)}"
        )
    rank_text, suit_letter = raw[:-1], raw[-1]
    if deck is Deck.SPANISH:
        suits = {v: k for k, v in _SPANISH_SUIT_LETTER.items()}
        suit = suits.get(suit_letter.lower())
        if suit is None:
            raise NotationError(
                f"card {_quoted(text)}: suit {suit_letter!r} is not one of e, b, o, c "
                "(espadas, bastos, oros, copas)"
            )
        # One or two ASCII digits: "⁷".isdigit() is True and int("⁷") a ValueError, as is
        # int() of over 4,300 digits, which a bot's answer must never raise (a hostile
        # review, round 5, hung a match with "⁷e").
        if not (len(rank_text) <= 2 and rank_text.isascii() and rank_text.isdigit()) or (
                int(rank_text) not in RANKS):
            raise NotationError(
                f"card {_quoted(text)}: rank {_quoted(rank_text)} is not 1-7, 10, 11 or 12"
            )
        return Card(deck, suit, int(rank_text))
    suits = {v: k for k, v in _BRAZILIAN_SUIT_LETTER.items()}
    suit = suits.get(suit_letter.lower())
    if suit is None:
        raise NotationError(
            f"card {_quoted(text)}: suit {suit_letter!r} is not one of c, h, s, d "
            "(clubs, hearts, spades, diamonds)"
        )
    ranks = {v: k for k, v in _BRAZILIAN_RANK_TEXT.items()}
    ranks.update({str(r): r for r in range(2, 8)})
    rank = ranks.get(rank_text.upper())
    if rank is None:
        raise NotationError(
            f"card {_quoted(text)}: rank {_quoted(rank_text)} is not A, 2-7, J, Q or K"
        )
    return Card(deck, suit, rank)


def parse_cards(text: str, deck: Deck) -> tuple[Card, ...]:
    """Read space- or comma-separated cards, e.g. `parse_cards("1e 7o 12b", Deck.SPANISH)`."""
    return tuple(parse_card(t, deck) for t in text.replace(",", " ").split())


def _example(deck: Deck) -> str:
    return "1e, 7o or 12b" if deck is Deck.SPANISH else "4c, 7h or As"
