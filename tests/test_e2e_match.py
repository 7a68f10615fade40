"""End to end: `arena match`, one match between two launched bots, on localhost.

The CLI runs in a subprocess in a folder under tmp_path (where it puts its replays and logs),
with the bots given by absolute path.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from test_e2e_support import (
    ARENA,
    CLI_TIMEOUT,
    SAMPLE_BOTS,
    TEST_BOTS,
    arena,
    explain,
    read_replay,
    stored_matches,
)

RESULT = re.compile(
    r"^(?P<id>\S+): (?P<termination>\w+); winner: (?P<winner>\S+); "
    r"points (?P<bot0>\S+) (?P<points0>\d+) - (?P<points1>\d+) (?P<bot1>\S+)$",
    re.MULTILINE,
)
REPLAY = re.compile(r"^replay: (?P<path>.+)$", re.MULTILINE)
RANDOM = f"python {SAMPLE_BOTS / 'random_bot.py'}"
FIRST_LEGAL = f"python {TEST_BOTS / 'first_legal.py'}"
SHORT = ["--option", "target=15", "--option", "chicos=1"]


def _printed(run: subprocess.CompletedProcess[str]) -> tuple[dict[str, str], Path]:
    result, replay = RESULT.search(run.stdout), REPLAY.search(run.stdout)
    assert result is not None, explain(run)
    assert replay is not None, explain(run)
    return result.groupdict(), Path(replay["path"])


@pytest.mark.e2e
def test_arena_match_plays_a_python_bot_against_the_js_bot(
    tmp_path: Path, js_random: list[str]
) -> None:
    """`arena match argentine-1v1 "python random_bot.py" "node bot.js" --seed 5` exits 0 and
    prints the result (the match played to the end, the winner, the points) and the path of a
    replay that holds that match and its match seed (derived from seed 5 and a secret, so not
    5) and passes `arena replay`; the database has the same result and seed."""
    database = tmp_path / "match.db"
    run = arena(
        "match",
        "argentine-1v1",
        RANDOM,
        " ".join(js_random),
        "--seed",
        "5",
        "--database",
        database,
        cwd=tmp_path,
    )
    assert run.returncode == 0, explain(run)
    printed, replay = _printed(run)
    assert printed["termination"] == "normal"
    assert (printed["bot0"], printed["bot1"]) == ("random_bot", "bot")
    points = (int(printed["points0"]), int(printed["points1"]))
    assert printed["winner"] == ("random_bot", "bot")[points.index(max(points))]
    assert replay.is_file()
    assert replay.is_relative_to(tmp_path)
    lines = read_replay(replay)
    assert lines[0]["match_id"] == printed["id"]
    assert lines[0]["seed"] != "5"  # format 2: seeds are strings; derived from 5 and a secret
    assert [s["bot"] for s in lines[0]["seats"]] == ["random_bot", "bot"]
    assert lines[-1]["points"] == list(points)
    (row,) = stored_matches(database)
    assert row["id"] == printed["id"]
    assert str(row["seed"]) == lines[0]["seed"]
    assert row["termination"] == "normal"
    assert (row["points0"], row["points1"]) == points
    check = arena("replay", "--quiet", replay, cwd=tmp_path)
    assert check.returncode == 0, explain(check)
    assert "replay check: OK" in check.stdout


def _essence(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A replay without what may differ between two runs of the same match: the match id
    (named after the time), timestamps and latencies."""
    varying = {"match_id", "started_at", "finished_at", "latency_ms"}
    return [{k: v for k, v in line.items() if k not in varying} for line in lines]


def _play(folder: Path, seed: int, *extra: str | Path) -> list[dict[str, Any]]:
    folder.mkdir()
    run = arena(
        "match",
        "argentine-1v1",
        FIRST_LEGAL,
        RANDOM,
        "--seed",
        str(seed),
        *SHORT,
        "--database",
        folder / "match.db",
        "--pass-env",
        "ARENA_BOT_SEED",
        *extra,
        cwd=folder,
        env={"ARENA_BOT_SEED": "1"},
    )
    assert run.returncode == 0, explain(run)
    return read_replay(_printed(run)[1])


@pytest.mark.e2e
def test_the_same_seed_with_deterministic_bots_replays_the_same_match(tmp_path: Path) -> None:
    """Two runs of `arena match --seed 5 --secret-file KEY` (one fixed key file) between
    deterministic bots (first legal action, and the random bot with a fixed ARENA_BOT_SEED)
    give the same replay but for ids, times and latencies: the same deals, actions, awards
    and result. Seed 6 deals other cards."""
    key = tmp_path / "match.key"
    key.write_text("5a" * 32 + "\n", encoding="ascii")
    first = _play(tmp_path / "first", 5, "--secret-file", key)
    again = _play(tmp_path / "again", 5, "--secret-file", key)
    other = _play(tmp_path / "other", 6, "--secret-file", key)
    assert first[0]["match_id"] != again[0]["match_id"]
    assert _essence(first) == _essence(again)
    assert sum(line["type"] == "action" for line in first) > 20  # this key: a long match
    deals = [[ln["deal"] for ln in lines if ln["type"] == "hand"] for lines in (first, other)]
    assert deals[0][0] != deals[1][0]


@pytest.mark.e2e
def test_the_seed_alone_does_not_determine_the_deal(tmp_path: Path) -> None:
    """Without a key file every `arena match` draws a new secret: two runs with the same
    --seed (which a bot may know) deal different cards, and the replay keeps the match seed
    the deals were drawn from (not the --seed given)."""
    first = _play(tmp_path / "first", 5)
    again = _play(tmp_path / "again", 5)
    deals = [[ln["deal"] for ln in lines if ln["type"] == "hand"] for lines in (first, again)]
    assert deals[0][0] != deals[1][0]
    assert first[0]["seed"] != again[0]["seed"]
    assert "5" not in (first[0]["seed"], again[0]["seed"])


@pytest.mark.e2e
def test_two_matches_at_once_on_one_database_are_both_stored(tmp_path: Path) -> None:
    """Two `arena match` runs started together in one folder with one database (so, almost
    always, in the same second) both succeed and store two matches with two replays: match
    ids do not collide."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "ARENA_BOT_SEED": "3"}
    command = [
        str(ARENA),
        "match",
        "argentine-1v1",
        FIRST_LEGAL,
        RANDOM,
        *SHORT,
        "--database",
        str(tmp_path / "match.db"),
    ]
    processes = [
        subprocess.Popen(
            [*command, "--seed", str(seed)],
            cwd=tmp_path,
            env=env,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for seed in (1, 2)
    ]
    runs = []
    for process in processes:
        stdout, stderr = process.communicate(timeout=CLI_TIMEOUT)
        runs.append(subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr))
    for run in runs:
        assert run.returncode == 0, explain(run)
    printed = [_printed(run) for run in runs]
    rows = stored_matches(tmp_path / "match.db")
    assert sorted(r["id"] for r in rows) == sorted(p[0]["id"] for p in printed)
    assert len(rows) == 2
    assert printed[0][1] != printed[1][1]
    assert all(p[1].is_file() for p in printed)
    assert len({r["seed"] for r in rows}) == 2  # --seed 1 and 2: two match seeds


@pytest.mark.e2e
def test_the_ladder_rates_every_bot_over_every_tournament_in_the_database(
    tmp_path: Path,
) -> None:
    """Three `arena match` runs into one database (each its own tournament, two variants)
    make a ladder: `arena ladder` prints one table per variant and an overall one naming both
    bots, with the match counts of all three tournaments and the Elo of all their results;
    `--variant` keeps one variant's matches; `arena standings` of an unknown tournament names
    the ones that exist. `--format json|csv|markdown` give the same standings and crosstable as
    data: the JSON's wins per bot match the stored rows, each crosstable cell mirrors its
    opponent's, and CSV and Markdown carry the same rows."""
    database = tmp_path / "ladder.db"
    for variant, seed in (("argentine-1v1", 1), ("argentine-1v1", 2), ("mineiro-1v1", 3)):
        run = arena("match", variant, FIRST_LEGAL, RANDOM, *(SHORT if "arg" in variant else []),
                    "--seed", str(seed), "--database", database, cwd=tmp_path,
                    env={"ARENA_BOT_SEED": "3"})
        assert run.returncode == 0, explain(run)
    rows = stored_matches(database)
    assert len({r["tournament"] for r in rows}) == 3
    run = arena("ladder", "--database", database, cwd=tmp_path)
    assert run.returncode == 0, explain(run)
    out = run.stdout
    assert "ladder (3 tournaments, 3 matches): overall" in out, out
    assert "ladder (3 tournaments, 3 matches): argentine-1v1" in out, out
    assert "ladder (3 tournaments, 3 matches): mineiro-1v1" in out, out
    overall = out.split(": overall", 1)[1]
    wins = {
        bot: sum(1 for r in rows if r["winner_bot"] is not None
                 and (r["bot0"], r["bot1"])[r["winner_bot"]] == bot)
        for bot in ("first_legal", "random_bot")
    }
    for bot, won in wins.items():
        cells = next(
            [c.strip() for c in line.split("│")[1:-1]]
            for line in overall.splitlines() if f" {bot} " in line
        )
        assert cells[1:5] == [bot, "3", str(won), str(3 - won)], overall
    data = json.loads(arena("ladder", "--database", database, "--format", "json",
                            cwd=tmp_path).stdout)
    overall_data = data["ladder (3 tournaments, 3 matches): overall"]
    assert {line["bot"]: line["won"] for line in overall_data["standings"]} == wins
    cells = {(c["bot"], c["opponent"]): c for c in overall_data["crosstable"]}
    assert set(cells) == {("first_legal", "random_bot"), ("random_bot", "first_legal")}
    ab, ba = cells["first_legal", "random_bot"], cells["random_bot", "first_legal"]
    assert (ab["played"], ab["won"], ab["lost"]) == (3, ba["lost"], ba["won"])
    assert ab["won"] == wins["first_legal"]
    text = arena("ladder", "--database", database, "--format", "csv", cwd=tmp_path).stdout
    tables = [t for t in text.split("# ") if t]
    overall_csv = next(t for t in tables if t.startswith("ladder (3 tournaments, 3 matches): "
                                                            "overall\n"))
    parsed = list(csv.DictReader(io.StringIO(overall_csv.split("\n", 1)[1])))
    assert {r["bot"]: int(r["won"]) for r in parsed} == wins
    markdown = arena("ladder", "--database", database, "--format", "markdown",
                     cwd=tmp_path).stdout
    assert "### ladder (3 tournaments, 3 matches): overall crosstable" in markdown
    assert "| rank | bot | played | won | lost |" in markdown, markdown
    run = arena("ladder", "--database", database, "--variant", "mineiro-1v1", cwd=tmp_path)
    assert run.returncode == 0, explain(run)
    assert "ladder (1 tournament, 1 match): mineiro-1v1" in run.stdout, run.stdout
    assert "argentine-1v1" not in run.stdout
    run = arena("standings", "nope", "--database", database, cwd=tmp_path)
    assert run.returncode == 2
    for name in {r["tournament"] for r in rows}:
        assert name in run.stderr.replace("\n", ""), run.stderr


def test_a_stdio_bot_given_as_a_grpc_bot_is_told_to_use_stdio(tmp_path: Path) -> None:
    """The C kit (a stdio bot) given to `arena match` without `stdio:` reads nothing on its
    stdin and exits 0 before connecting: the match is a forfeit, exit 1, and the output now
    ends with the hint to give it as stdio:CMD (an outside walkthrough got no hint); with the
    prefix the same bot plays the match to its end."""
    bot = str(SAMPLE_BOTS / "c_random" / "bot")
    run = arena("match", "mineiro-1v1", f"c={bot}", RANDOM, cwd=tmp_path)
    assert run.returncode == 1, explain(run)
    assert "exited with code 0 before connecting" in run.stdout, explain(run)
    assert run.stdout.strip().splitlines()[-1].startswith(
        "a bot that speaks lines on stdin/stdout (docs/stdio.md), not gRPC, is given as "
        "stdio:CMD"), explain(run)
    good = arena("match", "mineiro-1v1", f"c=stdio:{bot}", RANDOM, cwd=tmp_path)
    assert good.returncode == 0, explain(good)
    assert "stdio:CMD" not in good.stdout
