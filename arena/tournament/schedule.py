"""Round-robin schedules: every pair of bots plays every variant `games` times.

Sides alternate (game k: the first bot takes team k % 2) and each two consecutive games share a
seed, so every deal is played once from each side (duplicate pairs). Match ids are
deterministic, which is what lets a killed tournament resume without replaying finished
matches.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from arena.rules import Options
from arena.tournament.config import BotSpec, TournamentConfig


@dataclass(frozen=True, slots=True)
class Pairing:
    """One scheduled match: which bot sits on each team, the variant, options and seed."""

    match_id: str
    variant: str
    options: Options
    seed: int
    teams: tuple[BotSpec, BotSpec]  # the bot of team 0, the bot of team 1
    index: int


def seat_bots(pairing: Pairing, accounts: tuple[int, ...]) -> tuple[BotSpec, ...]:
    """The bot in each seat. In team variants each bot fills every seat of its team. In
    argentine-gallo (three seats) the first bot of the pairing takes seat 0 — the gallo all
    match with a fixed gallo, one of three players with a rotating one — and the second bot
    seats 1 and 2; since sides alternate between games, each bot is the lone player equally
    often."""
    if len(accounts) == 3:
        return (pairing.teams[0], pairing.teams[1], pairing.teams[1])
    return tuple(pairing.teams[account] for account in accounts)


def match_seed(tournament_seed: int, *label: object) -> int:
    """A 63-bit match seed derived from the tournament seed and a label."""
    text = "/".join(str(part) for part in ("truco-arena-match", tournament_seed, *label))
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> 1


def round_robin(config: TournamentConfig) -> list[Pairing]:
    """Every pair, every variant, `config.games` times, sides alternating. A gauntlet
    (`format = "gauntlet"`) keeps only the pairs of its challenger."""
    pairings: list[Pairing] = []
    bots = config.bots
    for variant in config.variants:
        for i, a in enumerate(bots):
            for b in bots[i + 1 :]:
                if config.format == "gauntlet" and config.challenger not in (a.name, b.name):
                    continue  # a gauntlet: only the challenger's pairs
                for k in range(config.games):
                    teams = (a, b) if k % 2 == 0 else (b, a)
                    seed = match_seed(config.seed, variant, a.name, b.name, k // 2)
                    pairings.append(
                        Pairing(
                            match_id=f"{config.name}:{variant}:{a.name}-{b.name}:{k}",
                            variant=variant,
                            options=config.options[variant],
                            seed=seed,
                            teams=teams,
                            index=k,
                        )
                    )
    return pairings
