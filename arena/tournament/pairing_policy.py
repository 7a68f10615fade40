"""Which pairing teaches the ladder the most: pure, no I/O, no clock.

As the Halite and AI Challenge ladders did, the next pairing starts from the bot that has
played least (each bot gets its share of games), and picks its opponent at random, weighted by
how much the match would teach: OpenSkill's predicted draw probability (close to 1 when the two
ratings are close: the result is hard to guess) times the two bots' combined uncertainty
(sigma_a + sigma_b: a new or rarely seen bot is worth meeting). Weighted sampling rather than the
best score, so every pair keeps meeting now and then.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from openskill.models import PlackettLuce

MODEL = PlackettLuce()
"""The rating model of the ladder (OpenSkill's Plackett-Luce, default mu 25, sigma 25/3)."""


@dataclass(frozen=True, slots=True)
class Skill:
    """A bot's rating: mean mu and uncertainty sigma."""

    mu: float = MODEL.mu
    sigma: float = MODEL.sigma


def teaching_weight(a: Skill, b: Skill) -> float:
    """How much a match of `a` against `b` would teach: closeness times uncertainty."""
    teams = [[MODEL.rating(mu=a.mu, sigma=a.sigma)], [MODEL.rating(mu=b.mu, sigma=b.sigma)]]
    closeness = float(MODEL.predict_draw(teams))
    return closeness * (a.sigma + b.sigma)


def choose_pair(
    bots: Sequence[str],
    skills: Mapping[str, Skill],
    games: Mapping[str, int],
    rng: random.Random,
) -> tuple[str, str] | None:
    """The next pairing among `bots` (None with fewer than two): the least-played bot first
    (ties broken by the larger sigma, then by name), against an opponent drawn with probability
    proportional to `teaching_weight`, among those that have not had more than their share
    (at most the field's median number of games, plus one)."""
    if len(bots) < 2:
        return None

    def skill(bot: str) -> Skill:
        return skills.get(bot, Skill())

    first = min(bots, key=lambda b: (games.get(b, 0), -skill(b).sigma, b))
    others = [b for b in bots if b != first]
    counts = sorted(games.get(b, 0) for b in others)
    share = counts[len(counts) // 2] + 1
    candidates = [b for b in others if games.get(b, 0) <= share] or others
    weights = [teaching_weight(skill(first), skill(b)) for b in candidates]
    if sum(weights) <= 0:
        return first, rng.choice(candidates)
    return first, rng.choices(candidates, weights=weights)[0]
