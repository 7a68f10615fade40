"""Match ids and replay files unique by construction (issue 9, finding 6) and deals no bot
can compute (issue 8, part 3), through real tournaments of the real CLI.

Before: a match id was `tournament:variant:a-b:k` and a replay file its id with every other
character made `_`, so bots `mc-v1`+`greedy` and `mc`+`v1-greedy` shared an id (5 rows for 6
matches) and `a b` / `a_b` shared a replay file; and a match seed was SHA-256 of the config's
seed and the match id, so a bot that read the config computed every deal.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from test_e2e_support import (
    arena,
    bot_cmd,
    explain,
    read_replay,
    stored_matches,
    write_config,
)

from arena.rules import Match, Options
from arena.tournament.schedule import match_seed, parse_match_id

pytestmark = pytest.mark.e2e

FIRST = bot_cmd("first_legal")
SHORT = {"target": 15, "chicos": 1}


def _run(folder: Path, name: str, bots: list[str], **kwargs: Any) -> list[dict[str, Any]]:
    config = write_config(
        folder, name=name, bots=dict.fromkeys(bots, FIRST), variants=["argentine-1v1"],
        **kwargs,
    )
    run = arena("tournament", config, "--no-progress", cwd=folder)
    assert run.returncode == 0, explain(run)
    return [r for r in stored_matches(folder / "arena.db") if r["tournament"] == name]


def _assert_one_replay_each(rows: list[dict[str, Any]]) -> None:
    paths = [r["replay"] for r in rows]
    assert len(set(paths)) == len(rows), paths
    for row in rows:
        assert read_replay(Path(row["replay"]))[0]["match_id"] == row["id"]


def test_names_that_collided_get_distinct_ids_and_replays(tmp_path: Path) -> None:
    """Bots mc-v1, greedy, mc and v1-greedy: 6 pairs, 6 matches, 6 rows with 6 ids and 6
    replay files, each replay holding its own match (mc-v1 + greedy and mc + v1-greedy once
    shared an id)."""
    rows = _run(tmp_path, "t", ["mc-v1", "greedy", "mc", "v1-greedy"], games=1)
    assert len(rows) == 6
    assert len({r["id"] for r in rows}) == 6
    assert {frozenset((r["bot0"], r["bot1"])) for r in rows} == {
        frozenset(p) for p in [("mc-v1", "greedy"), ("mc-v1", "mc"), ("mc-v1", "v1-greedy"),
                               ("greedy", "mc"), ("greedy", "v1-greedy"), ("mc", "v1-greedy")]
    }
    _assert_one_replay_each(rows)


def test_names_that_sanitise_alike_get_their_own_files(tmp_path: Path) -> None:
    """Tournaments "t x" and "t_x" in one folder (one database, one replays folder) with
    bots "a b", "a_b" and "a:b": 3 matches each, 6 rows, 6 distinct replay files, each
    replay holding its own match; every id splits back into its exact parts."""
    bots = ["a b", "a_b", "a:b"]
    rows = _run(tmp_path, "t x", bots, games=1) + _run(tmp_path, "t_x", bots, games=1)
    assert len(rows) == 6 == len({r["id"] for r in rows})
    _assert_one_replay_each(rows)
    for row in rows:
        parsed = parse_match_id(row["id"])
        assert parsed is not None
        assert (parsed[0], parsed[2], parsed[3]) == (row["tournament"], *sorted(
            (row["bot0"], row["bot1"]), key=bots.index))


def _first_deal(variant: str, options: dict[str, Any], seed: int) -> list[list[str]]:
    game = Match(variant, Options(**options), seed)
    return [[str(c) for c in game.view(seat).hand] for seat in range(game.num_seats)]


def _guesses(config_seed: int, row: dict[str, Any]) -> list[int]:
    """Seeds a bot could derive from what it can read: the config's seed and the match id."""
    _t, variant, a, b, k = parse_match_id(row["id"])  # type: ignore[misc]
    old = "/".join(str(p) for p in ("truco-arena-match", config_seed, variant, a, b, k // 2))
    by_id = hashlib.sha256(f"{config_seed}/{row['id']}".encode()).digest()
    return [
        config_seed,
        int.from_bytes(hashlib.sha256(old.encode()).digest()[:8], "big") >> 1,
        int.from_bytes(by_id[:8], "big") >> 1,
        int.from_bytes(hashlib.sha256(row["id"].encode()).digest()[:8], "big") >> 1,
    ]


def test_deals_follow_from_the_secret_not_from_the_config(tmp_path: Path) -> None:
    """A real run with a key file: from the config's seed and the match ids (what a bot can
    read) the deals cannot be reproduced, not even by the derivation the referee used
    before; with the key file they can (match seed = HMAC(secret, seed, label), and the
    rules deal exactly the recorded cards). The key file is created 0600; a second run in
    another folder with the same key file stores identical results."""
    key = tmp_path / "deals.key"
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    rows = _run(tmp_path / "one", "secret", ["x", "y"], games=4, seed=77, secret_file=key)
    assert key.stat().st_mode & 0o777 == 0o600
    secret = bytes.fromhex(key.read_text().strip())
    options = {"target": 15, "chicos": 1}
    for row in rows:
        lines = read_replay(Path(row["replay"]))
        deal = next(line["deal"] for line in lines if line["type"] == "hand")
        stored_options = json.loads(row["options"])
        for guess in _guesses(77, row):
            assert _first_deal(row["variant"], stored_options, guess) != deal
        _t, variant, a, b, k = parse_match_id(row["id"])  # type: ignore[misc]
        seed = match_seed(secret, 77, variant, a, b, k)  # each match its own deals (no duplicate)
        assert row["seed"] == seed == int(lines[0]["seed"])
        assert _first_deal(variant, stored_options, seed) == deal
        assert stored_options["target"] == options["target"]
    again = _run(tmp_path / "two", "secret", ["x", "y"], games=4, seed=77, secret_file=key)
    columns = ("id", "seed", "termination", "winner_bot", "points0", "points1", "decisions")
    assert [[r[c] for c in columns] for r in again] == [[r[c] for c in columns] for r in rows]


def test_a_tournament_keeps_its_stored_secret_and_fresh_draws_a_new_one(tmp_path: Path) -> None:
    """Without a key file the secret is kept in the database's tournaments row: a match
    lost from the database and played again on resume is dealt anew (its bots saw its
    hands) with the seed that secret gives its second attempt, HMAC(secret, first seed, 1),
    the others keep theirs; `--fresh` draws a new secret, so every seed changes, and starts
    the attempts over; a second tournament of the same config in another folder has other
    seeds."""
    rows = _run(tmp_path, "kept", ["x", "y"], games=2, fixed_secret=False)
    seeds = {r["id"]: r["seed"] for r in rows}
    with closing(sqlite3.connect(tmp_path / "arena.db")) as db:
        (secret,) = db.execute("SELECT secret FROM tournaments WHERE name = 'kept'").fetchone()
        assert len(secret) == 32
        with db:
            db.execute("DELETE FROM matches WHERE id = ?", (sorted(seeds)[0],))
    config = tmp_path / "kept.toml"
    resumed = arena("tournament", config, "--no-progress", cwd=tmp_path)
    assert resumed.returncode == 0, explain(resumed)
    assert "1 matches already stored, 1 to play" in resumed.stderr, explain(resumed)
    lost = sorted(seeds)[0]
    again = {**seeds, lost: match_seed(secret, seeds[lost], "attempt", 1)}
    assert {r["id"]: r["seed"] for r in stored_matches(tmp_path / "arena.db")} == again
    fresh = arena("tournament", config, "--no-progress", "--fresh", cwd=tmp_path)
    assert fresh.returncode == 0, explain(fresh)
    renewed = {r["id"]: r["seed"] for r in stored_matches(tmp_path / "arena.db")}
    assert renewed.keys() == seeds.keys()
    assert all(renewed[i] != seeds[i] for i in seeds)
    (tmp_path / "other").mkdir()
    other = _run(tmp_path / "other", "kept", ["x", "y"], games=2, fixed_secret=False)
    assert all(r["seed"] != seeds[r["id"]] for r in other)


def test_with_duplicate_deals_a_match_played_again_keeps_its_pairs_deals(tmp_path: Path) -> None:
    """With `tournament.duplicate` the two matches of a pair share one seed, and a match lost
    from the database and played again on resume keeps it (its bots see every deal in both
    matches of the pair anyway; new deals would only break the pair), while without
    duplicate deals the same loss is dealt anew (the test above)."""
    rows = _run(tmp_path, "dup", ["x", "y"], games=2, duplicate=True)
    seeds = {r["id"]: r["seed"] for r in rows}
    assert len(seeds) == 2
    assert len(set(seeds.values())) == 1, seeds  # one pair, one seed
    with closing(sqlite3.connect(tmp_path / "arena.db")) as db, db:
        db.execute("DELETE FROM matches WHERE id = ?", (sorted(seeds)[1],))
    resumed = arena("tournament", tmp_path / "dup.toml", "--no-progress", cwd=tmp_path)
    assert resumed.returncode == 0, explain(resumed)
    assert "1 matches already stored, 1 to play" in resumed.stderr, explain(resumed)
    assert {r["id"]: r["seed"] for r in stored_matches(tmp_path / "arena.db")} == seeds


def test_duplicate_deals_with_an_odd_number_of_matches_are_warned_of(tmp_path: Path) -> None:
    """`duplicate = true` with `matches_per_pair = 3`: the third match of each pair has a seed
    of its own (no twin), which an outside walkthrough found without a word. The tournament
    says so before it plays (and plays it); with 2, no warning."""
    config = write_config(tmp_path, name="odd", bots=dict.fromkeys(["x", "y"], FIRST),
                          variants=["argentine-1v1"], games=3, duplicate=True)
    run = arena("tournament", config, "--no-progress", cwd=tmp_path)
    assert run.returncode == 0, explain(run)
    assert ("warning: matches_per_pair = 3 is odd: with duplicate = true each pair's last "
            "match has no twin") in " ".join(run.stderr.split()), explain(run)
    seeds = sorted(r["seed"] for r in stored_matches(tmp_path / "arena.db"))
    assert len(seeds) == 3
    assert len(set(seeds)) == 2  # a twin pair, and the lone third
    (tmp_path / "even").mkdir()
    even = write_config(tmp_path / "even", name="even", bots=dict.fromkeys(["x", "y"], FIRST),
                        variants=["argentine-1v1"], games=2, duplicate=True)
    quiet = arena("tournament", even, "--no-progress", cwd=tmp_path / "even")
    assert quiet.returncode == 0, explain(quiet)
    assert "is odd" not in quiet.stderr
