"""Elo ratings with error bars from match results (a Bradley-Terry fit, as Ordo and BayesElo
make for engine tournaments).

Each match is a win for one bot and a loss for the other (a match with no winner counts for
neither). The strengths are the maximum-likelihood Bradley-Terry fit, computed with Hunter's
MM iteration, after adding every bot one virtual match against an average opponent, won half
(BayesElo's prior): a bot that won or lost everything still gets a finite rating, and the
prior weighs less the more a bot plays. Ratings are on the Elo scale (400 points = 10:1 odds)
and centred on 0, the field's average. The error bar is 1.96 standard errors (95 %) of the
rating relative to that average, from the curvature of the likelihood at the fit.

Pure and deterministic: the same results in any order give the same ratings.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

ELO_PER_NAT = 400 / math.log(10)
PRIOR_GAMES = 1.0  # virtual matches per bot against an average opponent, won half
Z95 = 1.959964


@dataclass(frozen=True, slots=True)
class Rating:
    """A bot's Elo rating relative to the field's average, with its 95 % error bar."""

    elo: float
    error: float  # half-width of the 95 % interval
    games: int


def elo_ratings(
    results: Iterable[tuple[str, str]], *, iterations: int = 10_000, tolerance: float = 1e-10
) -> dict[str, Rating]:
    """Ratings from (winner, loser) pairs; every bot named in a pair gets one."""
    wins: dict[str, float] = {}
    games: dict[str, int] = {}
    meetings: dict[tuple[str, str], int] = {}
    for winner, loser in results:
        if winner == loser:
            raise ValueError(f"{winner!r} cannot beat itself")
        for bot in (winner, loser):
            wins.setdefault(bot, 0.0)
            games[bot] = games.get(bot, 0) + 1
        wins[winner] += 1
        pair = (winner, loser) if winner < loser else (loser, winner)
        meetings[pair] = meetings.get(pair, 0) + 1
    bots = sorted(wins)
    if not bots:
        return {}
    index = {bot: i for i, bot in enumerate(bots)}
    n = len(bots)
    opponents: list[list[tuple[int, int]]] = [[] for _ in bots]
    for (a, b), count in meetings.items():
        opponents[index[a]].append((index[b], count))
        opponents[index[b]].append((index[a], count))
    score = [wins[bot] + PRIOR_GAMES / 2 for bot in bots]
    strength = [1.0] * n  # the virtual opponent's strength is 1
    for _ in range(iterations):
        new = []
        for i in range(n):
            denominator = PRIOR_GAMES / (strength[i] + 1.0) + sum(
                count / (strength[i] + strength[j]) for j, count in opponents[i]
            )
            new.append(score[i] / denominator)
        change = max(abs(math.log(a / b)) for a, b in zip(new, strength, strict=True))
        strength = new
        if change < tolerance:
            break
    theta = [math.log(s) for s in strength]
    # Observed information of theta (the virtual opponent fixed at 0): a positive definite
    # matrix; its inverse is the covariance of the estimates.
    info = [[0.0] * n for _ in range(n)]
    for i in range(n):
        p = 1 / (1 + math.exp(-theta[i]))  # against the virtual opponent
        info[i][i] += PRIOR_GAMES * p * (1 - p)
        for j, count in opponents[i]:
            p = 1 / (1 + math.exp(theta[j] - theta[i]))
            w = count * p * (1 - p)
            info[i][i] += w
            info[i][j] -= w
    covariance = _inverse(info)
    mean = sum(theta) / n
    return {
        bot: Rating(
            elo=(theta[i] - mean) * ELO_PER_NAT,
            error=Z95 * math.sqrt(max(_centred_variance(covariance, i), 0.0)) * ELO_PER_NAT,
            games=games[bot],
        )
        for bot, i in index.items()
    }


def _centred_variance(covariance: list[list[float]], i: int) -> float:
    """The variance of theta_i minus the mean of all theta: the error of a rating relative
    to the field (what is common to every bot, the field's own level, cancels out)."""
    n = len(covariance)
    v = [(1.0 if k == i else 0.0) - 1 / n for k in range(n)]
    return sum(v[a] * covariance[a][b] * v[b] for a in range(n) for b in range(n))


def _inverse(matrix: list[list[float]]) -> list[list[float]]:
    """The inverse of a small positive definite matrix (Gauss-Jordan with pivoting)."""
    n = len(matrix)
    a = [row[:] + [1.0 if i == j else 0.0 for j in range(n)] for i, row in enumerate(matrix)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(a[r][col]))
        a[col], a[pivot] = a[pivot], a[col]
        lead = a[col][col]
        a[col] = [x / lead for x in a[col]]
        for r in range(n):
            if r != col and a[r][col]:
                factor = a[r][col]
                a[r] = [x - factor * y for x, y in zip(a[r], a[col], strict=True)]
    return [row[n:] for row in a]
