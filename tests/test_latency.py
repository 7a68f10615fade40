"""Latency histograms (arena/tournament/latency.py): percentiles within 2 % of the exact
ones, and histograms of separate matches that add up exactly."""

from __future__ import annotations

import math
import random

import pytest

from arena.tournament import latency as lat


def _exact(values: list[float], q: float) -> float:
    """The nearest-rank percentile of raw values."""
    ordered = sorted(values)
    return ordered[max(1, math.ceil(q * len(ordered))) - 1]


@pytest.mark.parametrize("seed", range(20))
def test_percentiles_from_a_histogram_are_within_two_percent_of_the_exact_ones(
    seed: int,
) -> None:
    """Seeded latencies from 20 µs to 30 s (log-normal, plus a clump of timeouts): p50, p90
    and p99 read from the histogram are within MAX_ERROR (< 2 %) of the same nearest-rank
    percentile of the raw values."""
    rng = random.Random(seed)
    values = [min(30_000.0, max(0.02, rng.lognormvariate(math.log(5), 2.0)))
              for _ in range(rng.randrange(1, 5000))]
    values += [1000.0] * rng.randrange(0, 50)
    hist = lat.histogram(values)
    assert lat.MAX_ERROR < 0.02
    for q in (0.5, 0.9, 0.99):
        got, want = lat.percentile(hist, q), _exact(values, q)
        assert got is not None
        assert abs(got - want) <= lat.MAX_ERROR * want, (q, got, want)


def test_histograms_of_matches_add_up_to_the_histogram_of_all_decisions() -> None:
    """Split one bot's decisions over many matches: the sum of the per-match histograms is
    the histogram of all of them, so the tournament's p99 is that of every decision (not an
    average of per-match p99s, which here would be far lower)."""
    rng = random.Random(7)
    matches = [[rng.uniform(1, 3) for _ in range(100)] for _ in range(50)]
    matches[3] += [900.0] * 100  # one match where the bot was slow
    total: lat.Histogram = {}
    for values in matches:
        lat.add(total, lat.from_json(lat.to_json(lat.histogram(values))))
    everything = [v for values in matches for v in values]
    assert total == lat.histogram(everything)
    p99 = lat.percentile(total, 0.99)
    assert p99 is not None
    assert abs(p99 - 900.0) <= lat.MAX_ERROR * 900.0
    mean_of_p99s = sum(lat.percentile(lat.histogram(v), 0.99) or 0 for v in matches) / 50
    assert mean_of_p99s < 100


def test_edges_zero_tiny_empty_and_bucket_bounds() -> None:
    """0 ms, NaN and anything under FLOOR_MS read as 0 ms; an empty histogram has no
    percentile; every value lies within its bucket's bounds."""
    assert lat.percentile({}, 0.5) is None
    assert lat.percentile(lat.histogram([0.0, 0.001, float("nan")]), 0.99) == 0.0
    for ms in (0.01, 0.0100001, 0.5, 1.0, 7.3, 999.9, 1e6):
        b = lat.bucket(ms)
        low, high = lat.FLOOR_MS * lat.RATIO ** (b - 1), lat.FLOOR_MS * lat.RATIO ** b
        assert low * (1 - 1e-12) <= ms < high * (1 + 1e-12), (ms, b)
