"""Per-bot decision latency (p50 / p99) and faults by kind in `arena standings` (table, JSON,
CSV, Markdown) and the web's bot stats, from a real tournament of real bot processes: one
that thinks 30 ms per decision, one that answers illegally, one that disconnects mid-match.
The numbers are checked against the replays, computed independently."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path
from typing import Any

import pytest
from test_e2e_support import (
    SAMPLE_BOTS,
    TEST_BOTS,
    arena,
    bot_cmd,
    explain,
    python_bot,
    read_replay,
    stored_matches,
    write_config,
)

from arena.rpc.bridge import HOST_ENV
from arena.tournament import latency as lat
from arena.web.data import Database, bot_stats

pytestmark = pytest.mark.e2e
HOSTS = ("thread", "pump")
NAME = "slowcup"
BOTS = {
    "ponder": python_bot(TEST_BOTS / "pondering.py", "30"),
    "illegal": bot_cmd("illegal"),
    "disconnect": bot_cmd("disconnect"),
}


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("latency")
    config = write_config(folder, name=NAME, bots=BOTS, variants=["mineiro-1v1"], games=2,
                          concurrency=2, decision_ms=2000)
    run = arena("tournament", config, "--no-progress", cwd=folder)
    assert run.returncode == 0, explain(run)
    return folder


def _from_replays(folder: Path) -> tuple[dict[str, list[float]], dict[str, dict[str, int]]]:
    """Per bot: every decision's latency in the replays, and its faults by kind (faulty
    action lines, plus the fault that ended a match, from the stored row)."""
    latencies: dict[str, list[float]] = {}
    faults: dict[str, dict[str, int]] = {b: {} for b in BOTS}
    for row in stored_matches(folder / "arena.db"):
        lines = read_replay(Path(row["replay"]))
        seats = {s["seat"]: s["bot"] for s in lines[0]["seats"]}
        for line in lines:
            if line["type"] != "action":
                continue
            bot = seats[line["seat"]]
            latencies.setdefault(bot, []).append(float(line["latency_ms"]))
            if line["fault"]:
                faults[bot][line["fault"]] = faults[bot].get(line["fault"], 0) + 1
        if row["termination"] != "normal":
            kinds = faults[row["faulty_bot"]]
            kinds[row["termination"]] = kinds.get(row["termination"], 0) + 1
    return latencies, faults


def _exact(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(1, math.ceil(q * len(ordered))) - 1]


def _close(got: float | None, want: float) -> bool:
    """Within the histograms' error (plus the 0.01 ms the tables round to)."""
    return got is not None and abs(got - want) <= lat.MAX_ERROR * want + 0.01


def _overall(folder: Path, fmt: str) -> Any:
    run = arena("standings", NAME, "--database", folder / "arena.db", "--format", fmt,
                cwd=folder)
    assert run.returncode == 0, explain(run)
    return run.stdout


def test_standings_give_each_bot_its_latency_and_faults_as_the_replays_do(
    played: Path,
) -> None:
    """`arena standings --format json`: each bot's latency p50 / p99 is the nearest-rank
    percentile of its decisions in the replays (within 2 %); the pondering bot's median is
    at least its 30 ms; timeouts / illegal actions / disconnects per bot are those the
    replays and rows show (the illegal bot has some, the disconnecting bot disconnected in
    each match it reached its third decision, the pondering bot has none)."""
    latencies, faults = _from_replays(played)
    data = json.loads(_overall(played, "json"))
    rows = {r["bot"]: r for r in data[f"{NAME}: overall"]["standings"]}
    assert set(rows) == set(BOTS)
    for bot, row in rows.items():
        values = latencies.get(bot, [])
        if values:
            assert _close(row["latency_p50_ms"], _exact(values, 0.5)), (bot, row)
            assert _close(row["latency_p99_ms"], _exact(values, 0.99)), (bot, row)
        kinds = faults[bot]
        assert (row["timeouts"], row["illegal_actions"], row["disconnects"]) == (
            kinds.get("timeout", 0), kinds.get("illegal_action", 0),
            kinds.get("disconnect", 0)), (bot, row, kinds)
    assert rows["ponder"]["latency_p50_ms"] >= 30
    assert rows["ponder"]["illegal_actions"] == rows["ponder"]["disconnects"] == 0
    assert rows["illegal"]["illegal_actions"] >= 3
    assert rows["disconnect"]["disconnects"] >= 1


def test_csv_markdown_table_and_web_show_the_same_numbers(played: Path) -> None:
    """CSV and Markdown carry the JSON's latency and fault columns unchanged; the rich table
    prints the same p50 / p99 (rounded for the eye) and fault counts; the web's bot stats
    (arena.web.data.bot_stats) give the same percentiles."""
    data = json.loads(_overall(played, "json"))
    rows = {r["bot"]: r for r in data[f"{NAME}: overall"]["standings"]}
    text = _overall(played, "csv")
    block = text.split(f"# {NAME}: overall\n", 1)[1].split("\n# ", 1)[0]
    parsed = {r["bot"]: r for r in csv.DictReader(io.StringIO(block))}
    keys = ("timeouts", "illegal_actions", "disconnects", "latency_p50_ms", "latency_p99_ms")
    for bot, row in rows.items():
        for key in keys:
            assert parsed[bot][key] == ("" if row[key] is None else str(row[key])), (bot, key)
    markdown = _overall(played, "markdown")
    overall_md = markdown.split(f"### {NAME}: overall\n", 1)[1]
    header = [c.strip() for c in overall_md.strip().splitlines()[0].strip("|").split("|")]
    assert header[-5:] == list(keys)
    table = _overall(played, "table").split(f"{NAME}: overall", 1)[1]
    for line in table.splitlines():
        cells = [c.strip() for c in line.split("│")[1:-1]]
        if len(cells) == 18 and cells[1] in rows:
            row = rows[cells[1]]
            assert cells[13:16] == [str(row["timeouts"]), str(row["illegal_actions"]),
                                    str(row["disconnects"])], line
            for cell, key in ((cells[16], "latency_p50_ms"), (cells[17], "latency_p99_ms")):
                assert abs(float(cell) - row[key]) <= 0.01 * row[key] + 0.01, (line, key)
            rows.pop(cells[1])
    assert rows == {}, table
    stats = {s.bot: s for s in bot_stats(Database(played / "arena.db"), NAME)}
    again = {r["bot"]: r for r in data[f"{NAME}: overall"]["standings"]}
    for bot, s in stats.items():
        assert round(s.p50_ms, 2) == again[bot]["latency_p50_ms"]
        assert round(s.p99_ms, 2) == again[bot]["latency_p99_ms"]


@pytest.fixture(scope="module", params=HOSTS)
def quick(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Path:
    """Two bots that answer at once (the sample random bot, the first-legal test bot), with
    the gRPC loop on either host (`arena.rpc.bridge.HOST_ENV`): on a thread of its own, or
    pumped on trio's thread, where what a pass reads is stamped with the earliest it can
    have come (an answer read in the pass that wrote its request was stamped before it)."""
    folder = tmp_path_factory.mktemp(f"quick-{request.param}")
    config = write_config(folder, name="quick", variants=["argentine-1v1"], games=6,
                          concurrency=2, decision_ms=2000, options={"argentine-1v1": {}},
                          bots={"random": python_bot(SAMPLE_BOTS / "random_bot.py"),
                                "first": bot_cmd("first_legal")})
    run = arena("tournament", config, "--no-progress", cwd=folder,
                env={HOST_ENV: request.param})
    assert run.returncode == 0, explain(run)
    return folder


def test_every_answer_took_some_time(quick: Path) -> None:
    """No answer is recorded as quicker than a bot in another process can give one (50 µs:
    a gRPC round trip through the SDK takes more): its clock starts when the request is
    handed to gRPC, not when the write returns. Stamped after the write, an answer read
    before the writer resumed came out at a few µs or clamped to 0.0 (3-16 % of a fast
    bot's decisions), and the medians were too low."""
    latencies: dict[str, list[float]] = {}
    for row in stored_matches(quick / "arena.db"):
        lines = read_replay(Path(row["replay"]))
        seats = {s["seat"]: s["bot"] for s in lines[0]["seats"]}
        for line in lines:
            if line["type"] == "action" and not line["fault"]:
                latencies.setdefault(seats[line["seat"]], []).append(float(line["latency_ms"]))
    assert sum(map(len, latencies.values())) > 100
    for bot, values in latencies.items():
        quick = sorted(v for v in values if v < 0.05)
        assert not quick, f"{bot}: {len(quick)} of {len(values)} answers under 50 µs: {quick}"
