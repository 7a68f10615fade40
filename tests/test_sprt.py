"""The SPRT over duplicate pairs (arena/tournament/sprt.py), checked by simulation: no
processes, seeded, so every figure here is exact and repeatable.

The simulated match: bot A is `elo` stronger than B; each deal has a luck term that favours
whichever bot sits on side 0, and the two matches of a duplicate pair play the same deal from
both sides (A on side 0, then on side 1), as `schedule.round_robin` does.
"""

from __future__ import annotations

import math
import random

import pytest

from arena.tournament.sprt import (
    MATCH_SCORES,
    PAIR_SCORES,
    Sprt,
    Verdict,
    elo_to_score,
    estimate,
    gsprt_llr,
    pentanomial,
    score_to_elo,
)


def _win(rng: random.Random, elo: float) -> float:
    return 1.0 if rng.random() < elo_to_score(elo) else 0.0


def simulate_pair(rng: random.Random, elo: float, luck: float) -> tuple[float, float]:
    """A's scores in the two matches of one duplicate pair: the deal's luck (in Elo, for
    side 0) helps A in the first match and B in the second."""
    swing = rng.gauss(0.0, luck)
    return _win(rng, elo + swing), _win(rng, elo - swing)


def expected_score(elo: float, luck: float, steps: int = 4001) -> float:
    """A's expected score per match under `simulate_pair`: the logistic score averaged over
    the normal luck (a Riemann sum over ±8 standard deviations)."""
    if luck == 0:
        return elo_to_score(elo)
    width = 16 * luck / (steps - 1)
    total = 0.0
    for i in range(steps):
        x = -8 * luck + i * width
        density = math.exp(-0.5 * (x / luck) ** 2) / (luck * math.sqrt(2 * math.pi))
        total += density * width * (elo_to_score(elo + x) + elo_to_score(elo - x)) / 2
    return total


def run_sprt(
    sprt: Sprt, rng: random.Random, elo: float, luck: float, max_pairs: int = 20_000
) -> tuple[Verdict, int]:
    """Play pairs until the test decides; the verdict and the pairs it took. The LLR only
    depends on the pentanomial counts, kept incrementally."""
    counts = [0] * 5
    for played in range(1, max_pairs + 1):
        a, b = simulate_pair(rng, elo, luck)
        counts[round((a + b) * 2)] += 1
        verdict = sprt.verdict(sprt.llr(counts))
        if verdict is not Verdict.CONTINUE:
            return verdict, played
    return Verdict.CONTINUE, max_pairs


def test_elo_and_score_are_inverse_logistic() -> None:
    """400 Elo is 10:1 odds (score 10/11); the two conversions invert each other."""
    assert elo_to_score(400) == pytest.approx(10 / 11)
    assert elo_to_score(0) == 0.5
    for elo in (-300.0, -20.0, 0.0, 35.0, 250.0):
        assert score_to_elo(elo_to_score(elo)) == pytest.approx(elo)
    # a perfect record is no finite difference (it printed as a made-up +4800)
    assert (score_to_elo(1.0), score_to_elo(0.0)) == (math.inf, -math.inf)
    assert score_to_elo(1.2) == math.inf


def test_pentanomial_counts_pairs_by_their_score() -> None:
    """Pairs scoring 0, ½, 1, 1½ and 2 match points land in the five bins, and a score that
    no pair can have is refused."""
    assert pentanomial([0.0, 0.25, 0.5, 0.5, 0.75, 1.0, 1.0]) == (1, 1, 2, 1, 2)
    with pytest.raises(ValueError, match="multiple of 1/4"):
        pentanomial([0.3])


def test_llr_is_zero_halfway_and_signed_by_the_evidence() -> None:
    """A sample whose mean lies exactly halfway between the hypotheses' scores favours
    neither (LLR ≈ 0 for a symmetric sample); more wins push the LLR up, more losses down."""
    sprt = Sprt(elo0=-20, elo1=20)
    assert sprt.llr([5, 10, 20, 10, 5]) == pytest.approx(0.0, abs=1e-9)
    assert sprt.llr([5, 10, 20, 15, 10]) > 2
    assert sprt.llr([10, 15, 20, 10, 5]) < -2


def test_llr_matches_the_normal_approximation_on_a_large_sample() -> None:
    """For close hypotheses the GSPRT's LLR approaches the classic normal approximation
    N (s1 - s0)(2 ŝ - s0 - s1) / (2 σ²) (fishtest's earlier formula)."""
    counts = [300, 1500, 3000, 1700, 500]
    s0, s1 = elo_to_score(0), elo_to_score(5)
    n = sum(counts)
    mean = sum(c * x for c, x in zip(counts, PAIR_SCORES, strict=True)) / n
    var = sum(c * (x - mean) ** 2 for c, x in zip(counts, PAIR_SCORES, strict=True)) / n
    approx = n * (s1 - s0) * (2 * mean - s0 - s1) / (2 * var)
    assert gsprt_llr(counts, PAIR_SCORES, s0, s1) == pytest.approx(approx, rel=0.01)


def test_bounds_are_walds() -> None:
    """alpha = beta = 0.05 gives the bounds ±log(19) ≈ ±2.944, as in cutechess and fastchess; bad
    parameters are refused with the name of the parameter."""
    lower, upper = Sprt(alpha=0.05, beta=0.05).bounds
    assert lower == pytest.approx(-math.log(19))
    assert upper == pytest.approx(math.log(19))
    with pytest.raises(ValueError, match="elo0"):
        Sprt(elo0=10, elo1=10)
    with pytest.raises(ValueError, match="alpha"):
        Sprt(alpha=0.7)


def test_a_clearly_stronger_bot_is_accepted_within_a_bounded_number_of_pairs() -> None:
    """A bot 200 Elo stronger (the heuristic bot beats the random one 81-93 % of matches)
    against H0: 0, H1: 50 — every one of 50 seeded runs accepts H1, each within 200 pairs."""
    sprt = Sprt(elo0=0, elo1=50)
    rng = random.Random(2026)
    taken = []
    for _ in range(50):
        verdict, pairs = run_sprt(sprt, rng, elo=200, luck=150)
        assert verdict is Verdict.H1
        taken.append(pairs)
    assert max(taken) <= 200


def test_equal_bots_stay_within_the_error_rates() -> None:
    """A bot against itself (true Elo 0 = elo0): over 300 seeded runs, H1 is accepted in at
    most alpha plus three standard errors of the runs (alpha = 0.05: at most 0.088), and every run
    ends. At elo1 the other way round: H0 accepted in at most beta plus the same margin."""
    sprt = Sprt(elo0=0, elo1=60, alpha=0.05, beta=0.05)
    rng = random.Random(7)
    runs = 300
    margin = 3 * math.sqrt(0.05 * 0.95 / runs)
    false_h1 = 0
    for _ in range(runs):
        verdict, _pairs = run_sprt(sprt, rng, elo=0, luck=150)
        assert verdict is not Verdict.CONTINUE
        false_h1 += verdict is Verdict.H1
    assert false_h1 / runs <= 0.05 + margin
    false_h0 = sum(
        run_sprt(sprt, rng, elo=60, luck=150)[0] is Verdict.H0 for _ in range(runs)
    )
    assert false_h0 / runs <= 0.05 + margin


def test_pairing_narrows_the_error_bar_when_deals_carry_luck() -> None:
    """With luck in the deal, scoring each duplicate pair as one unit gives a smaller
    standard error of the mean score than counting the same matches as independent games;
    the paired interval still covers the true Elo. With no luck at all the two agree."""
    rng = random.Random(11)
    pairs = [simulate_pair(rng, elo=50, luck=400) for _ in range(4000)]
    result = Sprt(elo0=0, elo1=50).result(pairs)
    assert result.paired.units == 4000
    assert result.unpaired.units == 8000
    assert result.paired.stderr < 0.85 * result.unpaired.stderr
    # Luck flattens the logistic curve: the true mean score is its average over the luck.
    true_score = expected_score(elo=50, luck=400)
    assert result.paired.score - 1.96 * result.paired.stderr < true_score
    assert true_score < result.paired.score + 1.96 * result.paired.stderr
    calm = [simulate_pair(rng, elo=50, luck=0) for _ in range(4000)]
    quiet = Sprt(elo0=0, elo1=50).result(calm)
    assert quiet.paired.stderr == pytest.approx(quiet.unpaired.stderr, rel=0.1)


def test_estimate_of_an_even_sample_is_zero_elo() -> None:
    """Equal wins and losses: 0 Elo, an interval symmetric around it; no units, no bound."""
    even = estimate([10, 0, 10], MATCH_SCORES)
    assert even.elo == pytest.approx(0.0)
    assert even.low == pytest.approx(-even.high)
    empty = estimate([0, 0, 0], MATCH_SCORES)
    assert empty.units == 0
    assert math.isinf(empty.high)
