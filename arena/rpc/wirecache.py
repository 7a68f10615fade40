"""The encoding caches of `arena.rpc.convert`: a value's wire bytes, remembered.

The referee encodes a view for every decision and every event for each seat that sees it,
and a match shows the same values again and again (the same cards and legal actions; every
view of a hand repeats its moves and tricks). Those values are frozen and hashable, so their
encodings are kept as bytes. `arena.rpc.convert` says what each cache holds; this module only
remembers. It is compiled with the rules engine (tools/compile_rules.py) together with
`arena.rpc.encode`, its one hot caller, so a hit costs a native call and a dict lookup; the
Python sources stay the reference (`arena.rpc.ENCODER` says which a process got).

Each cache is emptied when it reaches `CACHE_LIMIT` entries. `Shared` caches values the engine
hands out again and again as the same objects: it looks them up by identity first (hashing a
nested frozen dataclass runs Python code at every level), then by value. An identity entry
holds the object itself, so its id cannot be reused while the entry lives. `ById` stops
there (for values encoded from other cached pieces, cheaper than hashing them); `Last` keeps
only the last object.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, Generic, TypeVar

CACHE_LIMIT: Final = 4096

_T = TypeVar("_T")


class ByValue(Generic[_T]):
    """`encode`, remembered per value (calling the cache encodes, as `get` does)."""

    def __init__(self, encode: Callable[[_T], bytes]) -> None:
        self.encode = encode
        self.cache: dict[_T, bytes] = {}

    def get(self, value: _T) -> bytes:
        """The encoding of `value`, from the cache when it was encoded before."""
        encoded = self.cache.get(value)
        if encoded is None:
            if len(self.cache) >= CACHE_LIMIT:
                self.cache.clear()
            encoded = self.encode(value)
            self.cache[value] = encoded
        return encoded

    def __call__(self, value: _T) -> bytes:
        return self.get(value)


class ById(Generic[_T]):
    """`encode`, remembered per object only: for values that cost less to encode (from other
    cached pieces) than to hash, which for a nested frozen dataclass runs Python code at every
    level."""

    def __init__(self, encode: Callable[[_T], bytes]) -> None:
        self.encode = encode
        self.by_id: dict[int, tuple[_T, bytes]] = {}

    def get(self, value: _T) -> bytes:
        """The encoding of `value`: by identity, else encoded now."""
        key = id(value)
        entry = self.by_id.get(key)
        if entry is not None and entry[0] is value:
            return entry[1]
        if len(self.by_id) >= CACHE_LIMIT:
            self.by_id.clear()
        encoded = self.encode(value)
        self.by_id[key] = (value, encoded)
        return encoded

    def __call__(self, value: _T) -> bytes:
        return self.get(value)


class Shared(ById[_T]):
    """`encode`, remembered per object, then per value (a new object equal to one seen
    before is not encoded again)."""

    def __init__(self, encode: Callable[[_T], bytes]) -> None:
        super().__init__(ByValue(encode).get)


class Last(Generic[_T]):
    """`encode`, remembered for the last object only (a hand's summary, told to each seat in
    turn)."""

    def __init__(self, encode: Callable[[_T], bytes]) -> None:
        self.encode = encode
        self.last: tuple[_T | None, bytes] = (None, b"")

    def get(self, value: _T) -> bytes:
        """The encoding of `value`, kept when it is the object encoded last."""
        last = self.last  # one read: another thread may replace it meanwhile
        if last[0] is value:
            return last[1]
        encoded = self.encode(value)
        self.last = (value, encoded)
        return encoded

    def __call__(self, value: _T) -> bytes:
        return self.get(value)
