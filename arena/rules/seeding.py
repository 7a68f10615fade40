"""Deterministic randomness from the match seed (RULES.md §6).

Every random choice the rules need (shuffles, the first dealer) is drawn from SHA-256 in counter
mode over a label that names what is drawn, e.g. ("deal", seed, game, hand). This is portable
(any language can reproduce it) and independent of Python's `random` module.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Iterator, Sequence
from typing import TypeVar

T = TypeVar("T")
_WORDS = struct.Struct(">8I")
_SPAN = 1 << 32  # the 32-bit words drawn


class SeededStream:
    """An endless stream of uniform integers derived from a label."""

    __slots__ = ("_blocks", "_buffer")

    def __init__(self, *label: object) -> None:
        key = "/".join(str(part) for part in ("truco-arena", "v1", *label)).encode()
        self._blocks = self._generate(key)
        self._buffer = 0

    @staticmethod
    def _generate(key: bytes) -> Iterator[int]:
        counter = 0
        while True:
            digest = hashlib.sha256(key + counter.to_bytes(8, "big")).digest()
            yield from _WORDS.unpack(digest)  # eight big-endian 32-bit words
            counter += 1

    def below(self, n: int) -> int:
        """A uniform integer in [0, n), by rejection sampling on 32-bit words."""
        if not 0 < n <= _SPAN:
            raise ValueError(f"cannot draw below {n}")
        limit = _SPAN - _SPAN % n
        while True:
            word = next(self._blocks)
            if word < limit:
                return word % n

    def shuffle(self, items: Sequence[T]) -> list[T]:
        """A Fisher-Yates shuffle of a copy of `items`: for each i from the last index down
        to 1, swap item i with item `below(i + 1)` (drawn inline: a deal shuffles 40 cards
        for every hand)."""
        out = list(items)
        blocks = self._blocks
        for i in range(len(out) - 1, 0, -1):
            n = i + 1
            limit = _SPAN - _SPAN % n
            word = next(blocks)
            while word >= limit:
                word = next(blocks)
            j = word % n
            out[i], out[j] = out[j], out[i]
        return out
