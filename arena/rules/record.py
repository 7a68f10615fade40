"""The game record: every deal, every action and every award, and replaying it (RULES.md §6).

A `MatchRecord` is plain data. `replay(record)` runs it through the engine again and raises
`ReplayMismatchError` unless it reproduces the same awards and result; this is what
`arena replay` checks, and what the arena's replay files hold.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from arena.errors import ReplayMismatchError
from arena.rules.cards import Card
from arena.rules.signals import SentSignal
from arena.rules.variants import Options
from arena.rules.views import NATIVE, Award, HandSummary, MatchResult, Move

if TYPE_CHECKING:
    from arena.rules.state import Match


@dataclass(frozen=True, slots=True)
class HandRecord:
    """One hand: its deal (seat 0 first; the gallo's four cards), the actions in order (with
    the gallo's discard), the awards, the summary, and the signals sent with the actions (each
    naming the index of its action in `moves` and every seat it reached)."""

    game_number: int
    hand_number: int
    dealer: int
    deal: tuple[tuple[Card, ...], ...]
    moves: tuple[Move, ...]
    awards: tuple[Award, ...]
    summary: HandSummary
    signals: tuple[SentSignal, ...] = ()

    def __init__(
        self,
        game_number: int,
        hand_number: int,
        dealer: int,
        deal: tuple[tuple[Card, ...], ...],
        moves: tuple[Move, ...],
        awards: tuple[Award, ...],
        summary: HandSummary,
        signals: tuple[SentSignal, ...] = (),
    ) -> None:
        if NATIVE:  # compiled: straight into the native slots (see NATIVE)
            self.game_number = game_number  # type: ignore[misc]
            self.hand_number = hand_number  # type: ignore[misc]
            self.dealer = dealer  # type: ignore[misc]
            self.deal = deal  # type: ignore[misc]
            self.moves = moves  # type: ignore[misc]
            self.awards = awards  # type: ignore[misc]
            self.summary = summary  # type: ignore[misc]
            self.signals = signals  # type: ignore[misc]
            return
        _set = object.__setattr__  # see arena.rules.views.SeatView.__init__
        _set(self, "game_number", game_number)
        _set(self, "hand_number", hand_number)
        _set(self, "dealer", dealer)
        _set(self, "deal", deal)
        _set(self, "moves", moves)
        _set(self, "awards", awards)
        _set(self, "summary", summary)
        _set(self, "signals", signals)


@dataclass(frozen=True, slots=True)
class MatchRecord:
    """A whole match, enough to replay it exactly."""

    variant: str
    options: Options
    seed: int
    first_dealer: int
    initial_scores: tuple[int, ...]
    hands: tuple[HandRecord, ...]
    result: MatchResult | None


def replay(record: MatchRecord) -> Match:
    """Replay `record` through the engine; return the finished match, or raise
    `ReplayMismatchError` naming the first hand where it differs."""
    from arena.rules.state import Match

    deals = {(h.game_number, h.hand_number): h.deal for h in record.hands}
    try:
        match = Match(
            record.variant,
            record.options,
            record.seed,
            dealer=record.first_dealer,
            scores=record.initial_scores,
            deals=deals,
        )
    except ValueError as exc:  # unknown variant, bad scores, dealer or first deal
        raise ReplayMismatchError(f"the record cannot start a match: {exc}") from exc
    for hand in record.hands:
        where = f"game {hand.game_number} hand {hand.hand_number}"
        if (match.game_number, match.hand_number) != (hand.game_number, hand.hand_number):
            raise ReplayMismatchError(
                f"{where}: the engine is at game {match.game_number} hand {match.hand_number}"
            )
        signals = {sent.move: sent for sent in hand.signals}
        for index, move in enumerate(hand.moves):
            if match.to_act != move.seat:
                raise ReplayMismatchError(
                    f"{where}: seat {move.seat} acted but seat {match.to_act} was to act"
                )
            sent = signals.get(index)
            if sent is not None and sent.seat != move.seat:
                raise ReplayMismatchError(
                    f"{where}: a signal of seat {sent.seat} rides on seat {move.seat}'s action"
                )
            try:
                match.apply(move.action, None if sent is None else sent.signal)
            except ValueError as exc:  # an illegal action, or a bad deal for the next hand
                raise ReplayMismatchError(f"{where}: {exc}") from exc
        replayed = match.record().hands
        mine = next(
            (
                h
                for h in replayed
                if (h.game_number, h.hand_number) == (hand.game_number, hand.hand_number)
            ),
            None,
        )
        if mine is None:
            raise ReplayMismatchError(f"{where}: the recorded actions do not finish the hand")
        if mine.awards != hand.awards:
            raise ReplayMismatchError(
                f"{where}: awards {list(map(str, mine.awards))} "
                f"!= recorded {list(map(str, hand.awards))}"
            )
        if mine.signals != hand.signals:
            raise ReplayMismatchError(f"{where}: the signals reached other seats than recorded")
    if match.result != record.result:
        raise ReplayMismatchError(f"result {match.result} != recorded {record.result}")
    return match
