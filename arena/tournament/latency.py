"""Decision latency as log-spaced histograms: small to store per match and seat, exact to add.

A latency of `ms` milliseconds falls in bucket `b = 1 + floor(log(ms / FLOOR_MS) / log(RATIO))`
(bucket 0 holds everything under `FLOOR_MS`); a bucket stands for its geometric middle, so a
percentile read from a histogram is within `sqrt(RATIO) - 1` (under 2 %) of the same
percentile of the raw latencies. Histograms of many matches add exactly (counts per bucket),
so a bot's p50 / p99 over a tournament is the percentile of all its decisions, not an average
of per-match percentiles. Pure: no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

RATIO = 1.04
"""Each bucket's upper bound over its lower bound."""
FLOOR_MS = 0.01
"""Latencies below this (10 µs) share bucket 0, read as 0 ms."""
MAX_ERROR = math.sqrt(RATIO) - 1
"""The largest relative error of a value read from a bucket (about 1.98 %)."""

Histogram = dict[int, int]
"""Bucket number → how many latencies fell in it."""


def bucket(ms: float) -> int:
    """The bucket of a latency of `ms` milliseconds."""
    if not ms >= FLOOR_MS:  # also NaN
        return 0
    return 1 + math.floor(math.log(ms / FLOOR_MS) / math.log(RATIO))


def bucket_value(b: int) -> float:
    """The latency (ms) a bucket stands for: the geometric middle of its bounds."""
    return 0.0 if b <= 0 else FLOOR_MS * RATIO ** (b - 0.5)


def histogram(latencies_ms: Iterable[float]) -> Histogram:
    """The histogram of some latencies."""
    out: Histogram = {}
    for ms in latencies_ms:
        b = bucket(ms)
        out[b] = out.get(b, 0) + 1
    return out


def add(into: Histogram, other: Mapping[int, int]) -> Histogram:
    """Add `other`'s counts to `into` (in place); return `into`."""
    for b, n in other.items():
        into[b] = into.get(b, 0) + n
    return into


def percentile(hist: Mapping[int, int], q: float) -> float | None:
    """The `q` quantile (0 < q <= 1) of the latencies counted, by nearest rank: the value of
    the bucket holding the ceil(q * n)-th smallest latency. None when the histogram is empty."""
    total = sum(hist.values())
    if total <= 0:
        return None
    rank = max(1, math.ceil(q * total))
    seen = 0
    for b in sorted(hist):
        seen += hist[b]
        if seen >= rank:
            return bucket_value(b)
    return bucket_value(max(hist))  # not reached: rank <= total


def to_json(hist: Mapping[int, int]) -> dict[str, int]:
    """A histogram as a JSON object (bucket numbers as strings, in order)."""
    return {str(b): hist[b] for b in sorted(hist)}


def from_json(data: Mapping[str, int]) -> Histogram:
    return {int(b): int(n) for b, n in data.items()}
