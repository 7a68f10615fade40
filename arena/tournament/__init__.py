"""Tournaments: schedules, concurrent matches, results in SQLite, standings."""

from arena.tournament.config import BotSpec, TournamentConfig, load_config, parse_config
from arena.tournament.runner import TournamentRun, TournamentRunner
from arena.tournament.schedule import Pairing, round_robin
from arena.tournament.standings import Line, standings
from arena.tournament.store import Store

__all__ = [
    "BotSpec",
    "Line",
    "Pairing",
    "Store",
    "TournamentConfig",
    "TournamentRun",
    "TournamentRunner",
    "load_config",
    "parse_config",
    "round_robin",
    "standings",
]
