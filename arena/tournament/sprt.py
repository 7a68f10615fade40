"""Is A stronger than B? A sequential probability ratio test over duplicate pairs.

Every deal of a round robin is played twice, once from each side (`schedule.round_robin`): a
*duplicate pair*. Luck of the deal favours one side of a deal, so the two matches of a pair
are negatively correlated; scoring each pair as one unit cancels most of that luck (the
"pentanomial" model of fastchess and cutechess, where a pair of games scores 0, ½, 1, 1½ or
2). Counting the same matches as independent games (the "trinomial" model: win, no winner,
loss) is also offered, to show how much the pairing narrows the error bar.

The test is the generalized SPRT (Michel Van den Bergh, "A practical introduction to the
GSPRT", as fishtest and fastchess use it): under each hypothesis Elo = elo0 and Elo = elo1
the outcome distribution is the maximum-likelihood one with the observed frequencies and the
hypothesis's mean score; the log-likelihood ratio of the two is compared with Wald's bounds
log(beta / (1 - alpha)) and log((1 - beta) / alpha). Elo is logistic (400 points = 10:1 odds
of a match).

Pure: no I/O, no clock; `arena sprt` (arena/cli.py) feeds it stored results.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum

Z95 = 1.959964
PAIR_SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)
"""A duplicate pair's score per match: (0, ½, 1, 1½, 2 match points) / 2."""
MATCH_SCORES = (0.0, 0.5, 1.0)
"""One match's score: loss, no winner, win."""
_PSEUDO_COUNT = 1e-3  # per outcome, so that an all-wins sample still has a finite LLR


ELO_LIMIT = 1000
"""The largest Elo difference a test may name: at 1,000 the stronger side scores 99.7 %;
beyond, the expected scores round to certainties and the test cannot be computed."""


def score_to_elo(score: float) -> float:
    """The logistic Elo difference that gives an expected score `score`: infinite at 0 and 1
    and beyond (a perfect record so far says no finite difference; clamped, it printed as a
    made-up +4800, an outside walkthrough saw)."""
    if score >= 1:
        return math.inf
    if score <= 0:
        return -math.inf
    return -400 * math.log10(1 / score - 1)


def elo_to_score(elo: float) -> float:
    """The expected score of a side `elo` points stronger (logistic)."""
    return 1 / (1 + 10 ** (-elo / 400))


class Verdict(Enum):
    """Where a sequential test stands."""

    CONTINUE = "continue"
    H0 = "H0"  # accepted: A is not elo1 stronger (at most elo0)
    H1 = "H1"  # accepted: A is at least elo1 stronger


@dataclass(frozen=True, slots=True)
class Estimate:
    """An Elo estimate with its 95 % interval, from one scoring model."""

    elo: float
    low: float
    high: float
    score: float  # mean score per match
    stderr: float  # standard error of the mean score per match
    units: int  # pairs (pentanomial) or matches (trinomial)


@dataclass(frozen=True, slots=True)
class SprtResult:
    """The state of an SPRT after the pairs seen so far."""

    llr: float
    lower: float  # accept H0 at or below
    upper: float  # accept H1 at or above
    verdict: Verdict
    pentanomial: tuple[int, int, int, int, int]  # pairs scoring 0, ½, 1, 1½, 2
    paired: Estimate
    unpaired: Estimate


def pair_score(first: float, second: float) -> float:
    """A duplicate pair's score per match from A's score in each of its two matches."""
    return (first + second) / 2


def pentanomial(pairs: Iterable[float]) -> tuple[int, int, int, int, int]:
    """Counts of pairs scoring 0, ¼, ½, ¾ and 1 per match (0, ½, 1, 1½, 2 match points)."""
    counts = [0] * 5
    for score in pairs:
        index = round(score * 4)
        if not 0 <= index <= 4 or abs(index / 4 - score) > 1e-9:
            raise ValueError(f"a pair scores a multiple of 1/4 between 0 and 1, got {score}")
        counts[index] += 1
    return (counts[0], counts[1], counts[2], counts[3], counts[4])


def _constrained_lambda(probs: Sequence[float], xs: Sequence[float], mean: float) -> float:
    """λ such that p_j = probs_j / (1 + λ (x_j - mean)) has mean `mean` (and sums to 1)."""
    shifted = [x - mean for x in xs]
    high_x, low_x = max(shifted), min(shifted)
    if high_x <= 0 or low_x >= 0:
        raise ValueError(f"mean {mean} is outside the outcomes {xs}")
    lo, hi = -1 / high_x, -1 / low_x  # where every 1 + λ d stays positive
    # f(λ) = Σ p d / (1 + λ d) decreases from +∞ to -∞ on (lo, hi): bisect, then polish.
    lam = 0.0
    for _ in range(200):
        f = sum(p * d / (1 + lam * d) for p, d in zip(probs, shifted, strict=True))
        if abs(f) < 1e-14:
            break
        if f > 0:
            lo = lam
        else:
            hi = lam
        slope = -sum(p * d * d / (1 + lam * d) ** 2 for p, d in zip(probs, shifted, strict=True))
        step = lam - f / slope if slope else (lo + hi) / 2
        lam = step if lo < step < hi else (lo + hi) / 2
    return lam


def gsprt_llr(counts: Sequence[float], xs: Sequence[float], s0: float, s1: float) -> float:
    """The generalized log-likelihood ratio of mean score s1 against s0 for outcome `counts`
    (how often each score in `xs` was seen)."""
    total = sum(counts)
    if total <= 0:
        return 0.0
    padded = [c + _PSEUDO_COUNT for c in counts]
    norm = sum(padded)
    probs = [c / norm for c in padded]
    lam0 = _constrained_lambda(probs, xs, s0)
    lam1 = _constrained_lambda(probs, xs, s1)
    return total * sum(
        p * (math.log1p(lam0 * (x - s0)) - math.log1p(lam1 * (x - s1)))
        for p, x in zip(probs, xs, strict=True)
    )


def estimate(counts: Sequence[int], xs: Sequence[float]) -> Estimate:
    """Mean score per match, its standard error, and the Elo interval, from outcome counts."""
    n = sum(counts)
    if n == 0:
        return Estimate(0.0, -math.inf, math.inf, 0.5, math.inf, 0)
    mean = sum(c * x for c, x in zip(counts, xs, strict=True)) / n
    variance = sum(c * (x - mean) ** 2 for c, x in zip(counts, xs, strict=True)) / n
    stderr = math.sqrt(variance / n)
    return Estimate(
        score_to_elo(mean),
        score_to_elo(mean - Z95 * stderr),
        score_to_elo(mean + Z95 * stderr),
        mean,
        stderr,
        n,
    )


@dataclass(frozen=True, slots=True)
class Sprt:
    """The test's parameters: H0 Elo ≤ elo0 against H1 Elo ≥ elo1, with error rates alpha, beta."""

    elo0: float = 0.0
    elo1: float = 50.0
    alpha: float = 0.05
    beta: float = 0.05

    def __post_init__(self) -> None:
        for name in ("elo0", "elo1"):
            value = getattr(self, name)
            if not -ELO_LIMIT <= value <= ELO_LIMIT:  # nan and inf too
                raise ValueError(f"{name} must be between -{ELO_LIMIT} and {ELO_LIMIT}, "
                                 f"got {value}")
        if not self.elo0 < self.elo1:
            raise ValueError(f"elo0 ({self.elo0}) must be below elo1 ({self.elo1})")
        for name in ("alpha", "beta"):
            value = getattr(self, name)
            if not 0 < value < 0.5:
                raise ValueError(f"{name} must be between 0 and 0.5, got {value}")

    @property
    def bounds(self) -> tuple[float, float]:
        """Wald's bounds: accept H0 at or below the first, H1 at or above the second."""
        return math.log(self.beta / (1 - self.alpha)), math.log((1 - self.beta) / self.alpha)

    def llr(self, counts: Sequence[int]) -> float:
        """The LLR of a pentanomial sample."""
        return gsprt_llr(counts, PAIR_SCORES, elo_to_score(self.elo0), elo_to_score(self.elo1))

    def verdict(self, llr: float) -> Verdict:
        lower, upper = self.bounds
        if llr >= upper:
            return Verdict.H1
        if llr <= lower:
            return Verdict.H0
        return Verdict.CONTINUE

    def result(self, pairs: Sequence[tuple[float, float]]) -> SprtResult:
        """Where the test stands after `pairs`: A's score in each match of each pair."""
        penta = pentanomial(pair_score(a, b) for a, b in pairs)
        matches = [0, 0, 0]
        for pair in pairs:
            for score in pair:
                matches[round(score * 2)] += 1
        llr = self.llr(penta)
        lower, upper = self.bounds
        return SprtResult(
            llr, lower, upper, self.verdict(llr), penta,
            estimate(penta, PAIR_SCORES), estimate(matches, MATCH_SCORES),
        )
