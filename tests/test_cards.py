"""Card order tables for both decks, envido values and card notation (RULES.md §2, §4.4)."""

from __future__ import annotations

import itertools

import pytest

from arena import errors
from arena.rules import (
    Card,
    Deck,
    NotationError,
    Suit,
    envido_cards,
    envido_value,
    full_deck,
    parse_card,
    parse_cards,
    trick_strength,
)

# RULES.md §2, Spanish deck, every row of the table, strongest first. Cards on a row are equal.
SPANISH_ROWS = (
    "1e",
    "1b",
    "7e",
    "7o",
    "3e 3b 3o 3c",
    "2e 2b 2o 2c",
    "1o 1c",
    "12e 12b 12o 12c",
    "11e 11b 11o 11c",
    "10e 10b 10o 10c",
    "7c 7b",
    "6e 6b 6o 6c",
    "5e 5b 5o 5c",
    "4e 4b 4o 4c",
)

# RULES.md §2, Brazilian deck: the four manilhas, then 3, 2, A, K, J, Q, 7, 6, 5, 4 by rank.
BRAZILIAN_ROWS = (
    "4c",
    "7h",
    "As",
    "7d",
    "3c 3h 3s 3d",
    "2c 2h 2s 2d",
    "Ac Ah Ad",
    "Kc Kh Ks Kd",
    "Jc Jh Js Jd",
    "Qc Qh Qs Qd",
    "7c 7s",
    "6c 6h 6s 6d",
    "5c 5h 5s 5d",
    "4h 4s 4d",
)


@pytest.mark.parametrize(
    ("deck", "rows"), [(Deck.SPANISH, SPANISH_ROWS), (Deck.BRAZILIAN, BRAZILIAN_ROWS)]
)
def test_order_table_covers_the_deck_once(deck: Deck, rows: tuple[str, ...]) -> None:
    """The table rows name each of the deck's 40 cards exactly once (RULES.md §2)."""
    listed = [c for row in rows for c in parse_cards(row, deck)]
    assert len(listed) == 40
    assert set(listed) == set(full_deck(deck))


@pytest.mark.parametrize(
    ("deck", "rows"), [(Deck.SPANISH, SPANISH_ROWS), (Deck.BRAZILIAN, BRAZILIAN_ROWS)]
)
def test_order_table_rows(deck: Deck, rows: tuple[str, ...]) -> None:
    """Every row of the deck's trick-strength table (RULES.md §2): cards on one row are equal,
    and every card of a row beats every card of every later row."""
    strengths = [[trick_strength(c) for c in parse_cards(row, deck)] for row in rows]
    for row, values in zip(rows, strengths, strict=True):
        assert len(set(values)) == 1, f"row {row!r} is not all equal: {values}"
    for (upper, up), (lower, low) in itertools.pairwise(zip(rows, strengths, strict=True)):
        assert up[0] > low[0], f"{upper!r} must beat {lower!r}"


def test_brazilian_suit_never_matters_below_the_manilhas() -> None:
    """Outside the four manilhas, Mineiro ranks ignore the suit (RULES.md §2): e.g. the 7s and
    7c tie, and the 4s below the zap are the weakest cards."""
    b = Deck.BRAZILIAN
    assert trick_strength(parse_card("7s", b)) == trick_strength(parse_card("7c", b))
    assert trick_strength(parse_card("4c", b)) > trick_strength(parse_card("3c", b))
    assert trick_strength(parse_card("4d", b)) == min(map(trick_strength, full_deck(b)))


# RULES.md §4.4: two of a suit -> values + 20; three of a suit (flor off) -> best two + 20;
# three suits -> highest single value; 10, 11, 12 count 0.
ENVIDO_CASES = [
    ("7e 6e 5b", 33),  # the maximum
    ("10e 11b 12o", 0),  # the minimum: three figures of different suits
    ("10e 11e 4b", 20),  # two figures of a suit: 0 + 0 + 20
    ("12c 7c 3o", 27),  # a figure and a 7
    ("1e 2e 3e", 25),  # three of a suit without flor: best two (3 + 2) + 20
    ("7o 6o 5o", 33),  # three of a suit: 7 + 6 + 20, the 5 does not count
    ("12b 11b 10b", 20),  # three figures of a suit
    ("12b 11b 1b", 21),  # three of a suit with two figures: 1 + 0 + 20
    ("7e 7b 7o", 7),  # three suits: the highest single value
    ("4e 12b 11o", 4),
    ("1e 12e 3b", 21),
    ("5c 4c 6o", 29),  # a pair of a suit beats a higher single card
]


@pytest.mark.parametrize(("hand", "value"), ENVIDO_CASES)
def test_envido_value(hand: str, value: int) -> None:
    """The envido value of a hand (RULES.md §4.4), including three of a suit with flor off."""
    assert envido_value(parse_cards(hand, Deck.SPANISH)) == value


def _reference_envido(hand: tuple[Card, ...]) -> int:
    """RULES.md §4.4 straight from the text: the best of any single card's value and any two
    cards of one suit + 20."""
    points = [c.rank if c.rank <= 7 else 0 for c in hand]
    best = max(points)
    for (a, pa), (b, pb) in itertools.combinations(zip(hand, points, strict=True), 2):
        if a.suit is b.suit:
            best = max(best, pa + pb + 20)
    return best


def test_envido_value_every_hand_range_0_to_33() -> None:
    """Over every 3-card hand of the Spanish deck, envido values match RULES.md §4.4 read
    literally, and the range is exactly 0..33 (§4.4)."""
    values = set()
    for hand in itertools.combinations(full_deck(Deck.SPANISH), 3):
        value = envido_value(hand)
        assert value == _reference_envido(hand), hand
        values.add(value)
    assert min(values) == 0
    assert max(values) == 33


def test_figures_count_zero() -> None:
    """10, 11 and 12 are worth 0 for envido, every other card its number (RULES.md §2)."""
    for rank in (10, 11, 12):
        assert envido_value(parse_cards(f"{rank}e", Deck.SPANISH)) == 0
    for rank in range(1, 8):
        assert envido_value(parse_cards(f"{rank}e", Deck.SPANISH)) == rank


@pytest.mark.parametrize(
    ("hand", "shown"),
    [
        ("7e 6e 5b", "7e 6e"),
        ("1e 2e 3e", "3e 2e"),
        ("7e 4b 12o", "7e"),
        ("12c 11c 3o", "12c 11c"),  # two figures of a suit (20) beat a single 3
        ("12c 5b 3o", "5b"),
    ],
)
def test_envido_cards(hand: str, shown: str) -> None:
    """The cards revealed by the envido winner are the ones that make the value (RULES.md
    §4.4): the best two of a suit, or the best single card."""
    s = Deck.SPANISH
    assert set(envido_cards(parse_cards(hand, s))) == set(parse_cards(shown, s))
    assert envido_value(envido_cards(parse_cards(hand, s))) == envido_value(parse_cards(hand, s))


@pytest.mark.parametrize("deck", list(Deck))
def test_notation_round_trips_every_card(deck: Deck) -> None:
    """Every card of both decks (RULES.md §2) prints in its deck's notation and parses back."""
    for c in full_deck(deck):
        assert parse_card(str(c), deck) == c
        assert parse_card(str(c).upper(), deck) == c  # letters are case-insensitive


def test_spanish_notation() -> None:
    """Spanish notation is <rank><suit>, ranks 1-7 10 11 12, suits e/b/o/c (espadas, bastos,
    oros, copas; RULES.md §2)."""
    s = Deck.SPANISH
    assert parse_cards("1e 7o 12b 10c", s) == (
        Card(s, Suit.SWORDS, 1),
        Card(s, Suit.COINS, 7),
        Card(s, Suit.CLUBS, 12),
        Card(s, Suit.CUPS, 10),
    )
    assert parse_cards("1e,7o, 12b", s) == parse_cards("1e 7o 12b", s)
    assert parse_cards("", s) == ()


def test_brazilian_notation() -> None:
    """Brazilian notation is <rank><suit>, ranks A 2-7 Q J K, suits c/h/s/d; the suits map to
    the Spanish ones (clubs~bastos, hearts~copas, spades~espadas, diamonds~oros; RULES.md §2),
    and Q, J, K are the 10, 11, 12."""
    b = Deck.BRAZILIAN
    assert parse_cards("4c 7h As 7d", b) == (
        Card(b, Suit.CLUBS, 4),
        Card(b, Suit.CUPS, 7),
        Card(b, Suit.SWORDS, 1),
        Card(b, Suit.COINS, 7),
    )
    assert [c.rank for c in parse_cards("Qd Jd Kd", b)] == [10, 11, 12]
    assert str(Card(b, Suit.CLUBS, 4)) == "4c"
    assert str(Card(b, Suit.SWORDS, 1)) == "As"


@pytest.mark.parametrize(
    ("text", "deck", "says"),
    [
        ("8e", Deck.SPANISH, "rank '8'"),
        ("9o", Deck.SPANISH, "rank '9'"),
        ("13b", Deck.SPANISH, "rank '13'"),
        ("0c", Deck.SPANISH, "rank '0'"),
        ("Ae", Deck.SPANISH, "rank 'A'"),
        ("1x", Deck.SPANISH, "suit 'x' is not one of e, b, o, c"),
        ("1h", Deck.SPANISH, "suit 'h'"),
        ("e", Deck.SPANISH, "too short"),
        ("", Deck.SPANISH, "too short"),
        ("1c", Deck.BRAZILIAN, "rank '1' is not A, 2-7, J, Q or K"),
        ("10h", Deck.BRAZILIAN, "rank '10'"),
        ("8s", Deck.BRAZILIAN, "rank '8'"),
        ("Ke", Deck.BRAZILIAN, "suit 'e' is not one of c, h, s, d"),
        ("A", Deck.BRAZILIAN, "too short"),
        # digits str.isdigit takes and int refuses (a hostile bot's answer, review round 5)
        ("\u2077e", Deck.SPANISH, "rank '\u2077'"),
        ("\u2460e", Deck.SPANISH, "rank"),
        ("\u0667e", Deck.SPANISH, "rank"),  # Arabic-Indic 7: int() reads it; not notation
        ("1\u2077e", Deck.SPANISH, "rank"),
        ("7" * 5000 + "e", Deck.SPANISH, "rank"),  # int() refuses over 4,300 digits
        ("\u2077c", Deck.BRAZILIAN, "rank"),
    ],
)
def test_bad_notation_is_a_clear_error(text: str, deck: Deck, says: str) -> None:
    """Bad notation raises NotationError (a ValueError) naming the bad card and what is valid:
    only the ranks and suits of the two 40-card decks exist (RULES.md §2)."""
    with pytest.raises(NotationError) as caught:
        parse_card(text, deck)
    assert says in str(caught.value)
    if len(text) <= 20:
        assert repr(text) in str(caught.value)
    else:  # a bot's text, bounded only by the message cap: its start and its length
        assert f"{text[:20]!r}... ({len(text)} characters)" in str(caught.value)
        assert len(str(caught.value)) < 200
    assert isinstance(caught.value, ValueError)


def test_notation_error_is_the_package_error() -> None:
    """`arena.rules.NotationError` is the one from `arena.errors`, a rules error (STYLE.md
    "Errors"; the decks of RULES.md §2)."""
    assert NotationError is errors.NotationError
    assert issubclass(NotationError, errors.RulesError)


def test_bad_card_in_a_list_is_an_error() -> None:
    """One bad card in a list fails the whole list, no silent skipping (RULES.md §2 decks)."""
    with pytest.raises(NotationError, match="'9e'"):
        parse_cards("1e 9e 3o", Deck.SPANISH)


def test_card_constructor_rejects_ranks_outside_the_deck() -> None:
    """A Card can only hold a rank of the 40-card decks: 1-7, 10, 11, 12 (RULES.md §2)."""
    for rank in (0, 8, 9, 13):
        with pytest.raises(NotationError, match=str(rank)):
            Card(Deck.SPANISH, Suit.SWORDS, rank)
