"""The schedule (arena.tournament.schedule): lazy, ids unique by construction, seeds keyed by
the tournament's secret, duplicate pairs kept together."""

from __future__ import annotations

import itertools
import time
from pathlib import Path
from typing import Any

import pytest

from arena.errors import ConfigError
from arena.tournament import TournamentConfig, parse_config
from arena.tournament.ladder import parse_ladder_config
from arena.tournament.runner import duplicate_pairs, file_stem
from arena.tournament.schedule import (
    in_schedule,
    match_id,
    match_seed,
    parse_match_id,
    round_robin,
    schedule_size,
)

SECRET = bytes(range(32))
TRICKY = ["mc-v1", "greedy", "mc", "v1-greedy", "a b", "a_b", "a:b", "a%3Ab", "a%b"]


def _config(games: int, names: list[str], **tournament: Any) -> TournamentConfig:
    return parse_config({
        "tournament": {"name": "t:x", "games": games, "variants": ["argentine-1v1"],
                       **tournament},
        "bot": [{"name": n, "token": f"tok{i}"} for i, n in enumerate(names)],
    }, base=Path("."))


def test_ids_and_file_names_of_tricky_names_are_all_distinct_and_parse_back() -> None:
    """Names that collided once (mc-v1 + greedy / mc + v1-greedy; `a b` / `a_b`; names with
    `:` and `%`) give distinct match ids, each splitting back into its exact parts, and
    distinct replay file names."""
    ids = {}
    for a, b in itertools.permutations(TRICKY, 2):
        for k in (0, 1):
            ids[match_id("t:x", "argentine-1v1", a, b, k)] = ("t:x", "argentine-1v1", a, b, k)
    assert len(ids) == len(TRICKY) * (len(TRICKY) - 1) * 2
    for text, parts in ids.items():
        assert parse_match_id(text) == parts
    assert len({file_stem(text) for text in ids}) == len(ids)


def test_a_huge_schedule_is_generated_lazily() -> None:
    """games = 10^8: the first pairings come at once (nothing is materialised), the size is
    computed, and stored ids are recognised as the schedule's from the id alone."""
    config = _config(100_000_000, ["a", "b", "c"])
    started = time.monotonic()
    first = list(itertools.islice(round_robin(config, SECRET), 4))
    assert time.monotonic() - started < 5
    assert schedule_size(config) == 3 * 100_000_000
    assert [p.index for p in first] == [0, 1, 2, 3]
    assert all(in_schedule(config, p.match_id) for p in first)
    assert not in_schedule(config, match_id("t:x", "argentine-1v1", "b", "a", 0))


def test_seeds_depend_on_the_secret_and_pairs_share_one() -> None:
    """The two games of a duplicate pair share a seed; another secret gives other seeds;
    `duplicate_pairs` hands the two matches of each pair over together."""
    config = _config(3, ["a", "b"], duplicate=True)
    pairings = list(round_robin(config, SECRET))
    other = list(round_robin(config, bytes(32)))
    assert pairings[0].seed == pairings[1].seed != pairings[2].seed
    assert all(p.seed != q.seed for p, q in zip(pairings, other, strict=True))
    assert pairings[0].seed == match_seed(SECRET, 0, "argentine-1v1", "a", "b", 0)
    groups = [[p.index for p in g] for g in duplicate_pairs(pairings)]
    assert groups == [[0, 1], [2]]


def test_duplicate_deals_only_when_the_organizer_asks(tmp_path: Path) -> None:
    """A pair's two matches share their deals only with `tournament.duplicate = true`: a bot
    that remembers the first match's deals knows, hand by hand, its opponent's whole hand in
    the second, and no bot on one machine can be kept from remembering (a remote bot keeps
    notes; a launched, sandboxed one without writable folders still read 16 of 16 of its
    opponent's hands through marks it left in the page cache: hostile review round 3).
    So by default, and with "auto" (the old default, which trusted the sandbox), every
    match has a seed of its own, whoever plays; anything but true, false or "auto" is
    refused naming the field. The ladder's `[ladder] duplicate` is the same switch."""
    program = tmp_path / "bot.py"
    program.write_text("", encoding="utf-8")

    def seeds(bots: list[dict[str, Any]], **extra: Any) -> list[int]:
        raw: dict[str, Any] = {
            "tournament": {"name": "t", "games": 4, "variants": ["argentine-1v1"],
                           **extra.pop("tournament", {})},
            "bot": bots, **extra,
        }
        return [p.seed for p in round_robin(parse_config(raw, base=tmp_path), SECRET)]

    launched = [{"name": n, "command": ["python3", str(program)]} for n in ("a", "b")]
    remote = [launched[0], {"name": "b", "token": "tok-b"}]
    for alone in (seeds(launched), seeds(remote), seeds(launched, tournament={"duplicate": "auto"}),
                  seeds(launched, tournament={"duplicate": False})):
        assert len(set(alone)) == 4, alone
    for bots in (launched, remote):
        paired = seeds(bots, tournament={"duplicate": True})
        assert paired[0] == paired[1] != paired[2] == paired[3]
    with pytest.raises(ConfigError, match=r"tournament\.duplicate"):
        seeds(launched, tournament={"duplicate": "yes"})
    ladder = {"ladder": {"name": "l"}, "bot": [{"name": "a", "command": ["x"]}]}
    assert not parse_ladder_config(ladder, base=tmp_path).tournament.duplicate
    ladder["ladder"]["duplicate"] = True  # type: ignore[index]
    assert parse_ladder_config(ladder, base=tmp_path).tournament.duplicate
    ladder["ladder"]["duplicate"] = "yes"  # type: ignore[index]
    with pytest.raises(ConfigError, match=r"ladder\.duplicate"):
        parse_ladder_config(ladder, base=tmp_path)
