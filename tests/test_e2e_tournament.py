"""End to end: `arena tournament` on localhost, a real referee and real bot processes.

Each run is the real CLI in a subprocess with a config written under tmp_path; the tests then
read what it left behind: its exit code and output, the SQLite database, the replay files.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import secrets
import sqlite3
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from test_e2e_support import (
    ALL_VARIANTS,
    HEURISTIC_BOT,
    SAMPLE_BOTS,
    arena,
    bot_cmd,
    expected_ids,
    explain,
    flat,
    processes_with,
    python_bot,
    read_replay,
    safe,
    stored_matches,
    write_config,
)

from arena.replay import load_replay, verify_replay
from arena.tournament import Store, standings

RANDOM = python_bot(SAMPLE_BOTS / "random_bot.py")


@dataclass
class Played:
    """A finished `arena tournament` run and what it left in its folder."""

    folder: Path
    name: str
    bots: dict[str, list[str]]
    run: Any  # subprocess.CompletedProcess[str]
    rows: list[dict[str, Any]]
    mark: str = ""  # ARENA_E2E_MARK in the referee's (and so every bot's) environment

    @property
    def replays(self) -> Path:
        return self.folder / "replays" / safe(self.name)


def _play(
    folder: Path,
    name: str,
    bots: dict[str, list[str]],
    env: dict[str, str] | None = None,
    **config: Any,
) -> Played:
    path = write_config(folder, name=name, bots=bots, **config)
    mark = secrets.token_hex(8)
    env = {**(env or {}), "ARENA_E2E_MARK": mark}
    run = arena("tournament", path, "--no-progress", cwd=folder, env=env)
    assert run.returncode == 0, explain(run)
    return Played(folder, name, bots, run, stored_matches(folder / "arena.db"), mark)


def _standings_lines(out: str, bot: str) -> int:
    """How many standings tables in `out` have a line for `bot` (rank, then the name)."""
    return len(re.findall(rf"^\W*\d+\W+{re.escape(bot)}\W*│", out, re.MULTILINE))


# ---------------------------------------------------------------------------------------------
# A full round robin of the sample bots over every variant


@pytest.fixture(scope="module")
def full(tmp_path_factory: pytest.TempPathFactory, js_random: list[str]) -> Played:
    bots = {"random": RANDOM, "js-random": js_random}
    if HEURISTIC_BOT.exists():  # written by another engineer; used as soon as it is there
        bots["heuristic"] = python_bot(HEURISTIC_BOT)
    return _play(tmp_path_factory.mktemp("full"), "full", bots, games=2, concurrency=4,
                 duplicate=True)


@pytest.mark.e2e
def test_full_round_robin_stores_every_match_played_to_the_end(full: Played) -> None:
    """Every pair x variant x game is stored exactly once, with the scheduled sides (the first
    bot of the pair on team 0 in even games, team 1 in odd ones), ended normally with a
    winner and no fault, and the score shows the [options.<variant>] tables were applied (one
    Argentine chico to 15; Mineiro to 12)."""
    names = list(full.bots)
    pairs = len(names) * (len(names) - 1) // 2
    assert len(full.rows) == pairs * len(ALL_VARIANTS) * 2
    assert {r["id"] for r in full.rows} == expected_ids("full", names, ALL_VARIANTS, 2)
    for row in full.rows:
        _, variant, _, _, game = row["id"].split(":")
        first, second = (row["bot0"], row["bot1"]) if game == "0" else (row["bot1"], row["bot0"])
        assert names.index(first) < names.index(second), row
        assert row["variant"] == variant
        assert row["termination"] == "normal", row
        assert row["winner_bot"] in (0, 1), row
        assert row["faulty_bot"] is None, row
        assert row["faulty_seat"] is None, row
        assert all(s == 0 for s in json.loads(row["strikes"])), row
        points = (row["points0"], row["points1"])
        target = 15 if variant.startswith("argentine") else 12
        winner, loser = points[row["winner_bot"]], points[1 - row["winner_bot"]]
        assert target <= winner < 2 * target, row
        assert loser < target, row
        assert json.loads(row["options"])["target"] == target


@pytest.mark.e2e
def test_the_two_matches_of_a_duplicate_pair_never_run_at_once(full: Played) -> None:
    """With `duplicate = true`, the two matches of a duplicate pair (one seed: the same
    deals, sides swapped) never overlap: the second starts after the first has ended,
    while other matches do run side by side (concurrency 4). Run at once, a bot in both
    held, in one, the cards its opponent held in the other, live (a hostile review read 52
    of 52 hidden hands so)."""
    twins: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for row in full.rows:
        twins.setdefault((row["variant"], row["seed"]), []).append(row)
    assert twins
    assert all(len(pair) == 2 for pair in twins.values()), twins.keys()
    for pair in twins.values():
        first, second = sorted(pair, key=lambda r: r["started_at"])
        assert second["started_at"] >= first["finished_at"], (first, second)
    spans = sorted((r["started_at"], r["finished_at"]) for r in full.rows)
    overlapping = sum(1 for (_, end), (start, _) in itertools.pairwise(spans) if start < end)
    assert overlapping > 0, spans  # the tournament did play matches at once


@pytest.mark.e2e
def test_full_round_robin_prints_standings_naming_every_bot(full: Played) -> None:
    """The CLI prints one standings table per variant and an overall one, each naming every
    bot, and says how many matches it played."""
    out = full.run.stdout
    for title in (*ALL_VARIANTS, "overall"):
        assert f"full: {title}" in out, out
    for name in full.bots:
        assert _standings_lines(out, name) == len(ALL_VARIANTS) + 1, out
    assert f"played {len(full.rows)} matches" in flat(full.run.stderr), full.run.stderr
    assert "ended by a fault" not in out


@pytest.mark.e2e
def test_the_overall_table_shows_each_bots_elo_from_the_stored_matches(full: Played) -> None:
    """The overall standings print each bot's Elo and 95 % bar, the Bradley-Terry fit of the
    stored matches (arena.tournament.ratings), in the table's rank order."""
    overall = full.run.stdout.split("full: overall", 1)[1]
    printed = {}
    for line in overall.splitlines():
        cells = [c.strip() for c in line.split("│")[1:-1]]
        if len(cells) == 18 and cells[0].isdigit():
            printed[cells[1]] = (int(cells[0]), cells[6], cells[7])
    store = Store(full.folder / "arena.db")
    try:
        lines = standings(store.matches("full"))
    finally:
        store.close()
    assert set(printed) == set(full.bots)
    for rank, line in enumerate(lines, 1):
        assert line.rating is not None
        assert printed[line.bot] == (
            rank, f"{line.rating.elo:+.0f}", f"{line.rating.error:.0f}"
        ), printed


@pytest.mark.e2e
def test_full_round_robin_writes_one_verifiable_replay_per_match(full: Played) -> None:
    """Exactly one replay file per stored match, at the path the database names; each one
    replays through the rules engine to the stored result (same winner and points)."""
    files = {p.name for p in full.replays.iterdir()}
    assert files == {f"{safe(r['id'])}.jsonl" for r in full.rows}
    for row in full.rows:
        path = Path(row["replay"])
        assert path == full.replays / f"{safe(row['id'])}.jsonl"
        replay = load_replay(path)
        assert replay.header["match_id"] == row["id"]
        assert [s["bot"] for s in replay.header["seats"]][:2] == [row["bot0"], row["bot1"]]
        verify_replay(replay)
        assert replay.result is not None
        assert replay.result["winner_team"] == row["winner_bot"]
        assert replay.result["points"] == [row["points0"], row["points1"]]


@pytest.mark.e2e
@pytest.mark.parametrize("variant", ALL_VARIANTS)
def test_arena_replay_checks_a_replay_ok(full: Played, variant: str) -> None:
    """`arena replay FILE` on a replay of each variant exits 0, prints the match and says OK."""
    row = next(r for r in full.rows if r["variant"] == variant)
    run = arena("replay", row["replay"], cwd=full.folder)
    assert run.returncode == 0, explain(run)
    assert "replay check: OK" in run.stdout
    assert row["id"] in run.stdout


def _tamper_action(lines: list[dict[str, Any]]) -> None:
    """Make the first card play of the replay play a card the seat was never dealt."""
    deals = {(ln["game"], ln["hand"]): ln["deal"] for ln in lines if ln["type"] == "hand"}
    for line in lines:
        if line["type"] == "action" and line["action"]["kind"] == "play":
            deal = deals[(line["game"], line["hand"])]
            foreign = next(
                c for seat, cards in enumerate(deal) if seat != line["seat"] for c in cards
            )
            line["action"].update(card=foreign, text=f"play {foreign}")
            return
    raise AssertionError("no card play in the replay")


def _tamper_result(lines: list[dict[str, Any]]) -> None:
    """Give the loser one more point in the result line."""
    result = lines[-1]
    assert result["type"] == "result"
    result["points"][1 - result["winner_team"]] += 1


@pytest.mark.e2e
@pytest.mark.parametrize("tamper", [_tamper_action, _tamper_result], ids=["action", "result"])
def test_arena_replay_rejects_a_tampered_replay(full: Played, tmp_path: Path, tamper: Any) -> None:
    """Changing one action (a card the seat did not hold) or the recorded points makes
    `arena replay` fail with a non-zero exit and say why; the untouched file still passes."""
    row = full.rows[0]
    lines = read_replay(Path(row["replay"]))
    tamper(lines)
    bad = tmp_path / "tampered.jsonl"
    bad.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    run = arena("replay", "--quiet", bad, cwd=tmp_path)
    assert run.returncode != 0, explain(run)
    assert "replay check failed" in flat(run.stderr), explain(run)
    assert "OK" not in run.stdout
    good = arena("replay", "--quiet", row["replay"], cwd=tmp_path)
    assert good.returncode == 0, explain(good)


# ---------------------------------------------------------------------------------------------
# Faulty bots among honest ones

HONEST = ("random", "js-random")
# Each faulty bot has one way of ending a match, and words its detail must contain.
FAULTS = {
    "silent": ("timeout", "no answer within 1000 ms"),
    "illegal": ("illegal_action", "out of range"),
    "garbage": ("illegal_action", "bad card"),
    "disconnect": ("disconnect", "disconnect: the "),  # the bot's name, then why the stream ended
    "crash_at_start": ("forfeit", "exited with code 3 before connecting"),
}
MAX_STRIKES = 3


@pytest.fixture(scope="module")
def faulty(tmp_path_factory: pytest.TempPathFactory, js_random: list[str]) -> Played:
    # The honest bots are seeded, so every match plays the same way each time. That matters:
    # a fault plays the default action (accept a call), and an honest bot's falta envido
    # accepted that way can end a match normally before the faulty bot reaches max_strikes.
    # These seeds give no such match; the assertions below would say so if one appeared.
    bots = {"random": RANDOM, "js-random": [*js_random, "--seed", "7"]} | {
        name: bot_cmd(name) for name in FAULTS
    }
    folder = tmp_path_factory.mktemp("faulty")
    key = folder / "arena.key"  # a fixed secret: the same deals every run
    key.write_text("7a" * 32 + "\n", encoding="ascii")
    return _play(
        folder,
        "faulty",
        bots,
        secret_file=key,
        env={"ARENA_BOT_SEED": "7"},
        variants=["argentine-1v1"],
        games=1,
        concurrency=4,
        decision_ms=1000,  # generous: honest bots must never miss it on a loaded machine
        max_strikes=MAX_STRIKES,
    )


@pytest.mark.e2e
def test_faulty_tournament_plays_every_match_and_reports_the_faults(faulty: Played) -> None:
    """A tournament with broken bots still exits 0 and stores every scheduled match; the
    output lists every faulty match with its termination and the bot at fault, and the
    standings still name every bot."""
    ids = expected_ids("faulty", faulty.bots, ["argentine-1v1"], 1)
    assert {r["id"] for r in faulty.rows} == ids
    bad = [r for r in faulty.rows if r["termination"] != "normal"]
    out = faulty.run.stdout
    assert f"{len(bad)} of {len(ids)} matches ended by a fault:" in out, out
    for row in bad:
        assert f"{row['id']}: {row['termination']} by {row['faulty_bot']}" in out, out
    for name in faulty.bots:
        assert _standings_lines(out, name) == 2, out  # argentine-1v1 and overall


@pytest.mark.e2e
def test_matches_between_honest_bots_end_normally_without_strikes(faulty: Played) -> None:
    """The honest pair's match is untouched by the faulty bots playing alongside it: normal
    end, a winner, zero strikes, under the same 1000 ms deadline."""
    rows = [r for r in faulty.rows if {r["bot0"], r["bot1"]} == set(HONEST)]
    assert len(rows) == 1
    row = rows[0]
    assert row["termination"] == "normal", row
    assert row["winner_bot"] in (0, 1)
    assert json.loads(row["strikes"]) == [0, 0], row


@pytest.mark.e2e
@pytest.mark.parametrize("bot", list(FAULTS))
def test_a_faulty_bot_loses_with_its_termination(faulty: Played, bot: str) -> None:
    """Every match of a faulty bot ends with that bot's kind of fault: silent -> timeout,
    illegal and garbage -> illegal_action (after max_strikes strikes, each playing the
    default action), disconnect -> disconnect at once, crash_at_start -> forfeit with its
    stderr in the detail. The faulty bot and seat are named, its side loses, the honest side
    has no strike. Against another faulty bot either may fault first; whichever did must have
    its own termination."""
    rows = [r for r in faulty.rows if bot in (r["bot0"], r["bot1"])]
    assert len(rows) == len(faulty.bots) - 1
    for row in rows:
        opponent = row["bot1"] if row["bot0"] == bot else row["bot0"]
        if opponent in HONEST or bot == "crash_at_start":
            assert row["faulty_bot"] == bot, row
        elif opponent == "crash_at_start":
            assert row["faulty_bot"] == opponent, row
        else:
            assert row["faulty_bot"] in (bot, opponent), row
        culprit = row["faulty_bot"]
        termination, words = FAULTS[culprit]
        assert row["termination"] == termination, row
        assert words in row["detail"], row
        seat = 0 if row["bot0"] == culprit else 1  # 1v1: seat = team
        assert row["faulty_seat"] == seat, row
        assert row["winner_bot"] == 1 - seat, row
        strikes = json.loads(row["strikes"])
        if termination in ("timeout", "illegal_action"):
            assert strikes[seat] == MAX_STRIKES, row
        if opponent in HONEST:
            assert strikes[1 - seat] == 0, row
        if termination == "forfeit":
            assert "cannot load weights.bin (deliberate test crash)" in row["detail"], row
            assert row["decisions"] == 0, row
            assert strikes == [0, 0], row


@pytest.mark.e2e
def test_faulty_matches_leave_verifiable_replays(faulty: Played) -> None:
    """A match cut short by a fault still leaves a replay that replays through the engine
    (the default actions played for faults included) and records the same ending."""
    for row in faulty.rows:
        replay = load_replay(Path(row["replay"]))
        verify_replay(replay)
        assert replay.result is not None
        assert replay.result["termination"] == row["termination"]
        assert replay.result["faulty_seat"] == row["faulty_seat"]
        faults = [ln for ln in replay.lines if ln["type"] == "action" and ln["fault"]]
        assert len(faults) == sum(json.loads(row["strikes"])) - (
            1 if row["termination"] in ("timeout", "illegal_action") else 0
        ), row


@pytest.mark.e2e
def test_no_bot_process_outlives_the_tournament(faulty: Played) -> None:
    """Every bot process the referee launched (silent, dying and crashing ones included) is
    gone when `arena tournament` returns: none of them is still running with the marker the
    test put in the referee's environment."""
    assert os.path.isdir("/proc")
    assert processes_with(faulty.mark) == []


# ---------------------------------------------------------------------------------------------
# Resume


def _snapshot(database: Path) -> dict[str, tuple[float, float]]:
    return {r["id"]: (r["started_at"], r["finished_at"]) for r in stored_matches(database)}


@pytest.mark.e2e
def test_running_the_same_tournament_again_resumes(tmp_path: Path) -> None:
    """Running the same command again plays nothing and changes no row; after a match is
    lost from the database only that one is played again; `--fresh` plays them all again,
    still one row per match."""
    bots = {"random": RANDOM, "first": bot_cmd("first_legal")}
    config = write_config(
        tmp_path, name="resumed", bots=bots, variants=["argentine-1v1", "mineiro-1v1"], games=2
    )
    database = tmp_path / "arena.db"
    ids = expected_ids("resumed", bots, ["argentine-1v1", "mineiro-1v1"], 2)

    first = arena("tournament", config, "--no-progress", cwd=tmp_path)
    assert first.returncode == 0, explain(first)
    assert "played 4 matches" in flat(first.stderr)
    before = _snapshot(database)
    assert set(before) == ids

    second = arena("tournament", config, "--no-progress", cwd=tmp_path)
    assert second.returncode == 0, explain(second)
    assert "resuming resumed: 4 matches already stored, 0 to play" in flat(second.stderr)
    assert "played 0 matches" in flat(second.stderr)
    assert _snapshot(database) == before

    lost = sorted(ids)[0]
    with closing(sqlite3.connect(database)) as db, db:
        db.execute("DELETE FROM matches WHERE id = ?", (lost,))
    third = arena("tournament", config, "--no-progress", cwd=tmp_path)
    assert third.returncode == 0, explain(third)
    assert "3 matches already stored, 1 to play" in flat(third.stderr)
    after = _snapshot(database)
    assert set(after) == ids
    assert after[lost][0] > before[lost][1]
    assert {k: v for k, v in after.items() if k != lost} == {
        k: v for k, v in before.items() if k != lost
    }

    fresh = arena("tournament", config, "--no-progress", "--fresh", cwd=tmp_path)
    assert fresh.returncode == 0, explain(fresh)
    assert "played 4 matches" in flat(fresh.stderr)
    assert "resuming" not in fresh.stderr
    replayed = _snapshot(database)
    assert set(replayed) == ids
    assert len(stored_matches(database)) == len(ids)
    assert all(replayed[i][0] > after[i][1] for i in ids)


@pytest.mark.e2e
def test_resumed_with_more_matches_per_pair_the_tournament_records_its_new_size(
    tmp_path: Path,
) -> None:
    """A tournament played with 1 match a pair, then resumed with `--matches-per-pair 3`
    (more matches only add matches): the recorded size the web shows becomes 3 a pair and
    3 matches, finished once they are played (an outside walkthrough saw "60/48 matches,
    finished" and the old matches a pair). A run narrowed again (`--matches-per-pair 1`)
    leaves the size as it is."""
    from arena.web.data import Database

    bots = {"random": RANDOM, "first": bot_cmd("first_legal")}
    config = write_config(tmp_path, name="grown", bots=bots, variants=["argentine-1v1"])
    for games, expected in (("1", (1, 1, 1)), ("3", (3, 3, 3)), ("1", (3, 3, 3))):
        run = arena("tournament", config, "--no-progress", "--matches-per-pair", games,
                    cwd=tmp_path)
        assert run.returncode == 0, explain(run)
        grown = Database(tmp_path / "arena.db").tournament("grown")
        assert grown is not None
        assert (grown.games, grown.planned, grown.matches) == expected, (games, grown)
        assert grown.finished_at is not None, grown


@pytest.mark.e2e
def test_fresh_on_a_new_database_keeps_the_console_free_of_log_lines(tmp_path: Path) -> None:
    """`make run` is `arena tournament --fresh` on a new database: the store's migrations
    (info events) go to the tournament's log file like every other event, and the console
    gets only what is written for people (no JSON line a newcomer reads as an error)."""
    bots = {"random": RANDOM, "first": bot_cmd("first_legal")}
    config = write_config(tmp_path, name="newdb", bots=bots, variants=["argentine-1v1"])
    run = arena("tournament", config, "--no-progress", "--fresh", cwd=tmp_path)
    assert run.returncode == 0, explain(run)
    for stream in (run.stdout, run.stderr):
        assert "schema_migrated" not in stream
        assert not [line for line in stream.splitlines() if line.lstrip().startswith("{")]
    logged = [json.loads(line) for line in
              (tmp_path / "logs" / "newdb.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [e["version"] for e in logged if e["event"] == "schema_migrated"] == list(
        range(1, 1 + max(e["version"] for e in logged if e["event"] == "schema_migrated"))
    )


# ---------------------------------------------------------------------------------------------
# Bad configs


def _bad(tmp_path: Path, case: str) -> tuple[Path, list[str]]:
    bots = {"random": RANDOM, "first": bot_cmd("first_legal")}
    if case == "unknown field":
        path = write_config(tmp_path, name="bad", bots=bots)
        text = path.read_text(encoding="utf-8")
        path.write_text(
            text.replace('name = "bad"', 'name = "bad"\ngmaes = 2', 1), encoding="utf-8"
        )
        return path, ["tournament: unknown field 'gmaes'", "allowed fields:", "games"]
    if case == "bad variant":
        path = write_config(
            tmp_path, name="bad", bots=bots, options={}, variants=["argentine-1v1", "paulista-1v1"]
        )
        return path, ["tournament.variants:", "'paulista-1v1'", "argentine-2v2"]
    if case == "bad option":
        path = write_config(
            tmp_path,
            name="bad",
            bots=bots,
            variants=["argentine-1v1"],
            options={"argentine-1v1": {"target": 20}},
        )
        return path, ["options.argentine-1v1:", "'target'", "20"]
    if case == "missing executable":
        bots["ghost"] = ["no-such-bot-program-e2e", "--fast"]
        path = write_config(tmp_path, name="bad", bots=bots, variants=["argentine-1v1"])
        return path, ["bot[2].command", "'ghost'", "'no-such-bot-program-e2e'", "not on PATH"]
    raise AssertionError(case)


@pytest.mark.parametrize(
    "case", ["unknown field", "bad variant", "bad option", "missing executable"]
)
def test_a_bad_config_exits_2_naming_the_field(tmp_path: Path, case: str) -> None:
    """A config with an unknown field, an unknown variant, an option value the variant does
    not allow, or a bot whose program does not exist: exit code 2, an error on stderr that
    names the field (and the bad value), nothing played and no standings."""
    path, words = _bad(tmp_path, case)
    run = arena("tournament", path, "--no-progress", cwd=tmp_path)
    assert run.returncode == 2, explain(run)
    err = flat(run.stderr)
    assert err.startswith("error:"), explain(run)
    for word in words:
        assert word in err, explain(run)
    assert run.stdout == ""
    assert not (tmp_path / "replays").exists()


@pytest.mark.e2e
def test_standings_tables_come_in_the_configs_order_every_time(tmp_path: Path) -> None:
    """The tables of standings come in the config's variant order, on the console and on the
    web, whatever the run: an outside walkthrough saw a run narrowed with `--variant` print
    the other variants' tables in a new order on each run (set order under hash
    randomisation), and the web sort them by name while the CLI kept the config's."""
    variants = ["mineiro-1v1", "argentine-2v2", "argentine-1v1"]  # neither by name nor by rule
    config = write_config(tmp_path, name="ordered", variants=variants,
                          bots={"random": RANDOM, "first": bot_cmd("first_legal")})
    full = arena("tournament", config, "--no-progress", cwd=tmp_path)
    assert full.returncode == 0, explain(full)

    def headings(text: str) -> list[str]:
        found = re.findall(r"ordered: ([a-z0-9-]+)", text)
        return list(dict.fromkeys(v for v in found if v in [*variants, "overall"]))

    assert headings(full.stdout) == [*variants, "overall"], full.stdout
    for hash_seed in ("1", "2", "3"):
        narrowed = arena("tournament", config, "--no-progress", "--variant", "argentine-1v1",
                         cwd=tmp_path, env={"PYTHONHASHSEED": hash_seed})
        assert narrowed.returncode == 0, explain(narrowed)
        assert headings(narrowed.stdout) == [*variants, "overall"], narrowed.stdout

    from arena.web.data import Database

    titles = [t.title for t in Database(tmp_path / "arena.db").tables("ordered")]
    assert titles == [*variants, "overall"]
