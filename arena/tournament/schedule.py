"""Round-robin schedules: every pair of bots plays every variant `games` times.

Sides alternate (game k: the first bot takes team k % 2) and, with `duplicate` (the config's
`tournament.duplicate`), each two consecutive games share a seed, so every deal is played once
from each side (duplicate pairs); the two matches of a pair are adjacent in the schedule, and
the runner starts the second only once the first has ended.

Match ids are unique by construction: `tournament:variant:bot_a:bot_b:k`, where each part
escapes `%` and `:` (`%25`, `%3A`), so an id splits back into exactly its parts and two
different pairings never share one (`mc-v1`+`greedy` is not `mc`+`v1-greedy`). They are
deterministic, which is what lets a killed tournament resume without replaying finished
matches.

Match seeds are HMAC-SHA256 under the tournament's secret (32 random bytes kept outside every
sandbox): the config's seed and the match ids, which a bot may know, do not determine a deal.
The schedule is lazy: `round_robin` yields pairings one by one (10^8 games need no memory).
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Iterator
from dataclasses import dataclass

from arena.rules import Options
from arena.tournament.config import BotSpec, TournamentConfig

SECRET_BYTES = 32


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


def match_seed(secret: bytes, tournament_seed: int, *label: object) -> int:
    """A 63-bit match seed: HMAC-SHA256 keyed with the tournament's `secret` over the seed and
    a label (JSON, so different labels never encode alike). Without the secret nobody can
    compute it from the seed and the label."""
    if len(secret) < 16:
        raise ValueError("a tournament secret has at least 16 bytes")
    text = json.dumps(["truco-arena-match", tournament_seed, *map(str, label)])
    digest = hmac.new(secret, text.encode(), hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def _escape(part: str) -> str:
    return part.replace("%", "%25").replace(":", "%3A")


def _unescape(part: str) -> str:
    return part.replace("%3A", ":").replace("%25", "%")


def match_id(tournament: str, variant: str, a: str, b: str, k: int) -> str:
    """The id of game `k` between bots `a` and `b` (config order) in `variant`."""
    return ":".join((*(_escape(p) for p in (tournament, variant, a, b)), str(k)))


def parse_match_id(text: str) -> tuple[str, str, str, str, int] | None:
    """The parts of a match id (tournament, variant, a, b, k), or None if it is not one."""
    parts = text.split(":")
    if len(parts) != 5 or not parts[4].isdigit():
        return None
    t, v, a, b = (_unescape(p) for p in parts[:4])
    return t, v, a, b, int(parts[4])


def schedule_size(config: TournamentConfig) -> int:
    """How many matches the round robin has."""
    n = len(config.bots)
    pairs = n - 1 if config.format == "gauntlet" else n * (n - 1) // 2
    return len(config.variants) * pairs * config.games


def in_schedule(config: TournamentConfig, stored_id: str) -> bool:
    """Whether `stored_id` is a match of this config's round robin (without listing it)."""
    parts = parse_match_id(stored_id)
    if parts is None:
        return False
    t, variant, a, b, k = parts
    index = {bot.name: i for i, bot in enumerate(config.bots)}
    return (
        t == config.name and variant in config.variants and a in index and b in index
        and index[a] < index[b] and k < config.games
        and (config.format != "gauntlet" or config.challenger in (a, b))
    )


def round_robin(config: TournamentConfig, secret: bytes) -> Iterator[Pairing]:
    """Every pair, every variant, `config.games` times, sides alternating; lazily. A
    gauntlet (`format = "gauntlet"`) keeps only the pairs of its challenger."""
    bots = config.bots
    for variant in config.variants:
        for i, a in enumerate(bots):
            for b in bots[i + 1 :]:
                if config.format == "gauntlet" and config.challenger not in (a.name, b.name):
                    continue  # a gauntlet: only the challenger's pairs
                for k in range(config.games):
                    teams = (a, b) if k % 2 == 0 else (b, a)
                    # A duplicate pair (k, k + 1) shares its deals; otherwise each its own.
                    deal = k // 2 if config.duplicate else k
                    seed = match_seed(secret, config.seed, variant, a.name, b.name, deal)
                    yield Pairing(
                        match_id=match_id(config.name, variant, a.name, b.name, k),
                        variant=variant,
                        options=config.options[variant],
                        seed=seed,
                        teams=teams,
                        index=k,
                    )
