"""Elo ratings with error bars (arena.tournament.ratings): the Bradley-Terry fit behind the
standings' Elo column."""

from __future__ import annotations

import math
import random

import pytest

from arena.tournament.ratings import ELO_PER_NAT, elo_ratings
from arena.tournament.standings import standings
from arena.tournament.store import MatchRow


def _games(a: str, b: str, a_wins: int, b_wins: int) -> list[tuple[str, str]]:
    return [(a, b)] * a_wins + [(b, a)] * b_wins


def test_a_three_to_one_record_is_about_190_elo() -> None:
    """Two bots, 300-100: odds of 3:1 are 400 log10(3) = 191 Elo between them (the prior of
    one drawn virtual game each shrinks it by a hair), centred on 0, inside the error bar."""
    ratings = elo_ratings(_games("a", "b", 300, 100))
    gap = ratings["a"].elo - ratings["b"].elo
    assert gap == pytest.approx(400 * math.log10(3), rel=0.02)
    assert ratings["a"].elo == pytest.approx(-ratings["b"].elo)
    assert ratings["a"].games == ratings["b"].games == 400
    # The gap's standard error, by the delta method from a score of 0.75 over 400 games, is
    # sqrt(p(1-p)/n) * dElo/dp = 0.0217 * 400 / ln 10 / (p(1-p)) = 20.1 Elo; each rating is
    # half the gap from the field's centre, so its 95 % bar is 1.96 * 20.1 / 2.
    p, n = 0.75, 400
    gap_se = math.sqrt(p * (1 - p) / n) * ELO_PER_NAT / (p * (1 - p))
    assert ratings["a"].error == pytest.approx(1.96 * gap_se / 2, rel=0.03)


def test_an_even_record_rates_both_zero_and_more_games_narrow_the_bar() -> None:
    """Equal records give equal ratings; four times the games halve the error bar."""
    few = elo_ratings(_games("a", "b", 10, 10))
    many = elo_ratings(_games("a", "b", 40, 40))
    assert few["a"].elo == pytest.approx(0, abs=1e-6)
    assert many["b"].elo == pytest.approx(0, abs=1e-6)
    assert many["a"].error == pytest.approx(few["a"].error / 2, rel=0.05)


def test_a_perfect_record_still_gets_a_finite_rating() -> None:
    """A bot that won every match is rated high but finite (the prior), above the rest."""
    ratings = elo_ratings(_games("best", "x", 10, 0) + _games("x", "y", 5, 5))
    assert math.isfinite(ratings["best"].elo)
    assert ratings["best"].elo > ratings["x"].elo
    assert ratings["best"].elo > 200


def test_ratings_chain_through_bots_that_never_met() -> None:
    """a beat b 3:1 and b beat c 3:1; a and c never met, yet a is rated above c by about
    twice each gap (Bradley-Terry is transitive)."""
    ratings = elo_ratings(_games("a", "b", 90, 30) + _games("b", "c", 90, 30))
    ab = ratings["a"].elo - ratings["b"].elo
    bc = ratings["b"].elo - ratings["c"].elo
    assert ab == pytest.approx(bc, rel=0.05)
    assert ratings["a"].elo - ratings["c"].elo == pytest.approx(2 * ab, rel=0.01)
    assert ratings["c"].error > ratings["b"].error  # c is tied to the field only through b


def test_the_fit_recovers_simulated_strengths() -> None:
    """Results simulated from known Elo strengths (a round robin, 400 matches per pair) are
    fitted back within the error bars."""
    truth = {"p": 150.0, "q": 50.0, "r": -50.0, "s": -150.0}
    rng = random.Random(7)
    results = []
    bots = sorted(truth)
    for i, a in enumerate(bots):
        for b in bots[i + 1:]:
            p = 1 / (1 + math.exp(-(truth[a] - truth[b]) / ELO_PER_NAT))
            for _ in range(400):
                results.append((a, b) if rng.random() < p else (b, a))
    ratings = elo_ratings(results)
    for bot, elo in truth.items():
        assert abs(ratings[bot].elo - elo) < ratings[bot].error, (bot, ratings[bot], elo)


def test_the_order_of_results_does_not_matter() -> None:
    """Ratings depend on the results, not on the order they are given in."""
    results = _games("a", "b", 7, 3) + _games("b", "c", 4, 6) + _games("a", "c", 5, 5)
    shuffled = results[:]
    random.Random(1).shuffle(shuffled)
    given, reordered = elo_ratings(results), elo_ratings(shuffled)
    for bot in "abc":
        assert reordered[bot].elo == pytest.approx(given[bot].elo, abs=1e-9)
        assert reordered[bot].error == pytest.approx(given[bot].error, abs=1e-9)


def test_no_results_no_ratings_and_a_bot_cannot_beat_itself() -> None:
    """An empty list rates nobody; a pair naming one bot twice is refused."""
    assert elo_ratings([]) == {}
    with pytest.raises(ValueError, match="cannot beat itself"):
        elo_ratings([("a", "a")])


def test_standings_lines_carry_the_rating_of_their_matches() -> None:
    """Each standings line has the Elo of the matches it counts (per variant or overall);
    a match without a winner rates nobody."""

    def row(n: int, variant: str, bot0: str, bot1: str, winner: int | None) -> MatchRow:
        return MatchRow(f"m{n}", variant, bot0, bot1, "normal", winner, None, 0, 0, (0, 0))

    rows = [row(i, "argentine-1v1", "a", "b", 0 if i % 4 else 1) for i in range(40)]
    rows += [row(100 + i, "mineiro-1v1", "a", "b", 1) for i in range(10)]
    rows.append(row(999, "mineiro-1v1", "a", "b", None))
    argentine = {line.bot: line.rating for line in standings(rows, "argentine-1v1")}
    overall = {line.bot: line.rating for line in standings(rows)}
    assert argentine["a"] is not None
    assert argentine["b"] is not None
    assert argentine["a"] == elo_ratings([("a", "b")] * 30 + [("b", "a")] * 10)["a"]
    assert overall["a"] == elo_ratings([("a", "b")] * 30 + [("b", "a")] * 20)["a"]
    assert argentine["a"].elo > 0 > argentine["b"].elo
