"""Signals (señas) a player attaches to an action for their partners (RULES.md §4.9).

A `Signal` is a small closed vocabulary of the classic Argentine signs plus a short free text.
The engine never checks a signal for truth (false signals are part of the game); it only checks
that it is well formed, records it in the game record, and delivers it: to the signaller's
partners of this hand, and, with the option `signals = "leaky"`, to each opponent with the
probability `leak`, drawn from the match seed (so a replay delivers exactly the same).

`SignalKind` numbers are stable: the wire protocol uses the same numbers.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from arena.errors import RulesError

MAX_TEXT = 40  # characters of free text a signal may carry
MAX_ENVIDO = 33  # the highest envido value (RULES.md §4.4), the largest ENVIDO signal value


class SignalKind(enum.IntEnum):
    """The classic signs. Numbers never change."""

    TEXT = 1  # words only (the text says it all)
    ANCHO_DE_ESPADA = 2  # "I hold the 1 of swords" (raised eyebrows)
    ANCHO_DE_BASTO = 3  # "I hold the 1 of clubs" (a wink)
    SIETE_DE_ESPADA = 4  # "I hold the 7 of swords" (mouth pulled to one side)
    SIETE_DE_ORO = 5  # "I hold the 7 of coins" (a puffed cheek)
    TRES = 6  # "I hold a three" (a bitten lip)
    FLOR = 7  # "I have flor"
    ENVIDO = 8  # "good envido" (tilted head); `value` may say how much, 0-33
    NADA = 9  # "nothing / a bad hand" (closed eyes)


class IllegalSignalError(RulesError):
    """A signal the match does not accept: signals are off, or the signal is malformed."""


@dataclass(frozen=True, slots=True)
class Signal:
    """One sign. `text` is optional free text (at most 40 printable characters); `value` is
    only for `SignalKind.ENVIDO` (the envido claimed, 0-33). Use `check()` to validate."""

    kind: SignalKind
    text: str = ""
    value: int | None = None

    def check(self) -> Signal:
        """Return the signal if it is well formed, else raise `IllegalSignalError`."""
        if not isinstance(self.kind, SignalKind):
            valid = ", ".join(k.name for k in SignalKind)
            raise IllegalSignalError(f"signal kind {self.kind!r} is not one of {valid}")
        if not isinstance(self.text, str) or len(self.text) > MAX_TEXT:
            raise IllegalSignalError(
                f"signal text must be a string of at most {MAX_TEXT} characters"
            )
        if not self.text.isprintable():
            raise IllegalSignalError("signal text must be printable (no newlines or controls)")
        if self.kind is SignalKind.TEXT and not self.text.strip():
            raise IllegalSignalError("a TEXT signal needs some text")
        if self.value is not None:
            if self.kind is not SignalKind.ENVIDO:
                raise IllegalSignalError("only an ENVIDO signal carries a value")
            if type(self.value) is not int or not 0 <= self.value <= MAX_ENVIDO:
                raise IllegalSignalError(f"an ENVIDO signal value is 0-{MAX_ENVIDO}")
        return self

    def __str__(self) -> str:
        parts = [self.kind.name.lower()]
        if self.value is not None:
            parts.append(str(self.value))
        if self.text:
            parts.append(repr(self.text))
        return " ".join(parts)


@dataclass(frozen=True, slots=True)
class SentSignal:
    """A signal as the game record holds it: who sent it, with which action of the hand (the
    index into the hand's moves), and every seat it reached (the sender, its partners, and any
    opponent who caught it)."""

    move: int
    seat: int
    signal: Signal
    audience: frozenset[int]


@dataclass(frozen=True, slots=True)
class SeenSignal:
    """A signal as a seat's view shows it: the sender, the index of the action it came with in
    the hand's moves, and the sign."""

    seat: int
    move: int
    signal: Signal
