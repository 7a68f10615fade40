"""Token buckets by key: how the arena bounds what one client may ask of it (streams per
connection and per host, a seat's streams, reflection requests, web requests)."""

from __future__ import annotations

from typing import final


@final
class TokenBuckets:
    """A bucket per key: `rate` tokens a second, at most `burst` held (a new key starts
    full). `take` spends one if there is one. Not thread-safe: each user keeps its own on
    one thread. Past `kept` keys, the full ones are forgotten (a full bucket and no bucket
    are the same)."""

    def __init__(self, rate: float, burst: float, kept: int = 4096) -> None:
        self.rate = rate
        self.burst = burst
        self.kept = kept
        self._buckets: dict[str, tuple[float, float]] = {}  # key -> (allowance, when)

    def take(self, key: str, now: float) -> bool:
        """One token from `key`'s bucket at time `now` (seconds): whether there was one."""
        allowance, then = self._buckets.get(key, (self.burst, now))
        allowance = min(self.burst, allowance + (now - then) * self.rate)
        if len(self._buckets) >= self.kept:
            full = self.burst / self.rate
            self._buckets = {k: b for k, b in self._buckets.items() if now - b[1] < full}
        if allowance < 1:
            self._buckets[key] = (allowance, now)
            return False
        self._buckets[key] = (allowance - 1, now)
        return True
