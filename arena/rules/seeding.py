"""Deterministic randomness from the match seed (RULES.md §6).

Every random choice the rules need (shuffles, the first dealer) is drawn from SHA-256 in counter
mode over a label that names what is drawn, e.g. ("deal", seed, game, hand). This is portable
(any language can reproduce it) and independent of Python's `random` module.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Sequence
from typing import Final, TypeVar

T = TypeVar("T")
_SPAN: Final = 1 << 32  # the 32-bit words drawn
# Final: constants and static loads in the compiled build, where a module variable is a dict
# lookup (and a getattr, for hashlib.sha256) every time it is read.
_SHA256: Final = hashlib.sha256
_UNPACK: Final = tuple(struct.Struct(f">{8 * blocks}I").unpack for blocks in range(9))
"""`_UNPACK[blocks]` reads `blocks` digests as big-endian 32-bit words (a shuffle of 40
cards takes 5 blocks)."""


class SeededStream:
    """An endless stream of uniform integers derived from a label.

    The words are those of SHA-256 in counter mode, in order: block `i` is the digest of the
    label's key followed by `i` as 8 big-endian bytes, read as eight big-endian 32-bit words.
    Blocks are hashed a few at a time (a shuffle of 40 cards takes five at once)."""

    __slots__ = ("_counter", "_key", "_pos", "_words")

    def __init__(self, *label: object) -> None:
        self._key = "/".join(str(part) for part in ("truco-arena", "v1", *label)).encode()
        self._counter = 0
        self._words: tuple[int, ...] = ()
        self._pos = 0

    def _refill(self, blocks: int) -> None:
        """Append `blocks` more blocks of words to the unread ones."""
        key, first = self._key, self._counter
        data = b"".join(
            [_SHA256(key + c.to_bytes(8, "big")).digest() for c in range(first, first + blocks)]
        )
        if blocks < len(_UNPACK):
            words = _UNPACK[blocks](data)
        else:
            words = struct.unpack(f">{8 * blocks}I", data)
        self._words = self._words[self._pos :] + words
        self._pos = 0
        self._counter = first + blocks

    def _next(self) -> int:
        if self._pos >= len(self._words):
            self._refill(1)
        word = self._words[self._pos]
        self._pos += 1
        return word

    def below(self, n: int) -> int:
        """A uniform integer in [0, n), by rejection sampling on 32-bit words."""
        if not 0 < n <= _SPAN:
            raise ValueError(f"cannot draw below {n}")
        limit = _SPAN - _SPAN % n
        while True:
            word = self._next()
            if word < limit:
                return word % n

    def shuffle(self, items: Sequence[T]) -> list[T]:
        """A Fisher-Yates shuffle of a copy of `items`: for each i from the last index down
        to 1, swap item i with item `below(i + 1)` (drawn inline: a deal shuffles 40 cards
        for every hand)."""
        out = list(items)
        missing = len(out) - 1 - (len(self._words) - self._pos)
        if missing > 0:
            self._refill((missing + 7) // 8)
        words, pos = self._words, self._pos
        for i in range(len(out) - 1, 0, -1):
            n = i + 1
            limit = _SPAN - _SPAN % n
            while True:
                if pos == len(words):  # rejections ate the words drawn ahead
                    self._pos = pos
                    self._refill(1)
                    words, pos = self._words, self._pos
                word = words[pos]
                pos += 1
                if word < limit:
                    break
            j = word % n
            out[i], out[j] = out[j], out[i]
        self._pos = pos
        return out
