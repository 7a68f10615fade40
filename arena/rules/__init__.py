"""Pure Truco rules: cards, deals, calls, tricks, scoring and per-seat views.

No I/O, no clock, no logging, no randomness of its own (deals come from the seed it is given).
Importing this package must not import trio, grpc or structlog (tests/test_layers.py).

    match = Match("argentine-1v1", {"target": 15}, seed=7)
    while not match.is_over:
        seat = match.to_act
        view = match.view(seat)            # what that seat may know
        match.apply(view.legal_actions[0])  # optionally: signal=Signal(SignalKind.NADA)
    match.result, match.record()

`ENGINE` says which build was imported: "compiled" (mypyc, `make compile`) or "pure" (the
sources; always with `ARENA_PURE_RULES=1`); `arena.rules._native` explains the choice.

Seats, sides and accounts (who plays with whom in a hand, who scores what) are explained in
`arena.rules.views` and docs/RULINGS.md.
"""

from arena.errors import IllegalActionError, NotationError, UnknownVariantError

# First: picks the compiled build or the sources for every submodule imported below.
from arena.rules._native import ENGINE
from arena.rules.actions import Action, ActionKind, call, play
from arena.rules.cards import (
    Card,
    Deck,
    Suit,
    envido_cards,
    envido_value,
    flor_value,
    full_deck,
    has_flor,
    parse_card,
    parse_cards,
    trick_strength,
)
from arena.rules.deal import Deal, deal_cards, first_dealer
from arena.rules.record import HandRecord, MatchRecord, replay
from arena.rules.signals import (
    IllegalSignalError,
    SeenSignal,
    SentSignal,
    Signal,
    SignalKind,
)
from arena.rules.state import Match
from arena.rules.variants import Options, Variant, find_variant, variant_names
from arena.rules.views import (
    Award,
    AwardReason,
    Duel,
    DuelSummary,
    EnvidoOutcome,
    Event,
    FlorOutcome,
    GameResult,
    HandSummary,
    MatchResult,
    Move,
    PendingCall,
    Play,
    SeatView,
    Trick,
)

if ENGINE == "compiled":
    from arena.rules import _native, actions, cards, deal, record, state, variants, views

    _native.make_picklable((actions, cards, deal, record, state, variants, views))

__all__ = [
    "ENGINE",
    "Action",
    "ActionKind",
    "Award",
    "AwardReason",
    "Card",
    "Deal",
    "Deck",
    "Duel",
    "DuelSummary",
    "EnvidoOutcome",
    "Event",
    "FlorOutcome",
    "GameResult",
    "HandRecord",
    "HandSummary",
    "IllegalActionError",
    "IllegalSignalError",
    "Match",
    "MatchRecord",
    "MatchResult",
    "Move",
    "NotationError",
    "Options",
    "PendingCall",
    "Play",
    "SeatView",
    "SeenSignal",
    "SentSignal",
    "Signal",
    "SignalKind",
    "Suit",
    "Trick",
    "UnknownVariantError",
    "Variant",
    "call",
    "deal_cards",
    "envido_cards",
    "envido_value",
    "find_variant",
    "first_dealer",
    "flor_value",
    "full_deck",
    "has_flor",
    "parse_card",
    "parse_cards",
    "play",
    "replay",
    "trick_strength",
    "variant_names",
]
