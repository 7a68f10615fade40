"""Every error a user or a bot can trigger, in one place.

Rule errors subclass `ValueError`; bot faults share `BotError`. Each message says what was
wrong and, where it helps, what to do instead.
"""

from __future__ import annotations


class ArenaError(Exception):
    """Base of every error this package raises on purpose."""


class RulesError(ArenaError, ValueError):
    """Something is not allowed by the rules (RULES.md) or is not valid rules input."""


class NotationError(RulesError):
    """A card written in the short text notation could not be read."""


class UnknownVariantError(RulesError):
    """A variant name or a variant option is not known; the message lists the valid ones."""


class IllegalActionError(RulesError):
    """An action was applied that is not in the legal set of the seat to act."""

    def __init__(self, action: object, legal: tuple[object, ...], reason: str = "") -> None:
        self.action = action
        self.legal = legal
        listed = ", ".join(str(a) for a in legal) or "none (the game is over)"
        why = f" ({reason})" if reason else ""
        super().__init__(f"illegal action {action}{why}; legal actions are: {listed}")


class ReplayMismatchError(RulesError):
    """A game record did not replay to the result it claims."""


class ConfigError(ArenaError, ValueError):
    """A configuration file or command-line value is malformed; the message names the field."""


class BotError(ArenaError):
    """A bot misbehaved: base of every bot fault."""


class BotTimeout(BotError):
    """A bot did not answer a decision request before its deadline."""


class BotDisconnected(BotError):
    """A bot's connection dropped while it held seats in a running match."""


class ProtocolViolation(BotError):
    """A bot sent something the protocol does not allow (garbage, wrong id, illegal action)."""
