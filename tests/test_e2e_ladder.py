"""End to end: `arena ladder serve` as a real subprocess with real bot processes, stopped with
a real signal; `arena ladder add` from another process while it runs; `arena ladder show`
reading what it stored; `arena sprt` playing duplicate pairs until the test decides.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from test_e2e_support import (
    ARENA,
    HEURISTIC_BOT,
    REPO,
    SAMPLE_BOTS,
    arena,
    bot_cmd,
    explain,
    processes_with,
    python_bot,
    write_config,
)

pytestmark = pytest.mark.e2e

RANDOM = python_bot(SAMPLE_BOTS / "random_bot.py")
HEURISTIC = python_bot(HEURISTIC_BOT)
FIELD = {  # strongest first (an offline playout of the four: each beats the next ones)
    "heuristic": HEURISTIC,
    "first": bot_cmd("first_legal"),
    "random": RANDOM,
    "folder": bot_cmd("folder"),
}
K = 3.0


def _toml(value: Any) -> str:
    return json.dumps(value)  # strings and lists of strings: JSON is TOML here


def write_ladder(folder: Path, bots: dict[str, list[str]], *, versions: dict[str, str] | None
                 = None, concurrency: int = 4, min_games: int = 4,
                 duplicate: bool = False) -> Path:
    """A ladder config over the two fast variants (Argentine to 15, one chico; Mineiro)."""
    lines = [
        "[ladder]", 'name = "main"', 'variants = ["argentine-1v1", "mineiro-1v1"]',
        f"concurrency = {concurrency}", f"min_games = {min_games}", 'database = "arena.db"',
        f"duplicate = {_toml(duplicate)}",
        f"k = {K}", "poll_ms = 200", "",
        "[time_control]", "decision_ms = 2000", "",
        "[options.argentine-1v1]", "target = 15", "chicos = 1", "",
    ]
    for name, command in bots.items():
        lines += ["[[bot]]", f"name = {_toml(name)}", f"command = {_toml(command)}"]
        if versions and name in versions:
            lines.append(f"version = {_toml(versions[name])}")
        lines.append("")
    path = folder / "ladder.toml"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def rows(database: Path) -> list[dict[str, Any]]:
    if not database.exists():
        return []
    with closing(sqlite3.connect(database, timeout=30)) as db:
        db.row_factory = sqlite3.Row
        try:
            found = db.execute("SELECT * FROM matches ORDER BY id").fetchall()
        except sqlite3.OperationalError:  # the service has not created its tables yet
            return []
        return [dict(r) for r in found]


def pairs_after(database: Path, moment: float) -> list[tuple[str, str]]:
    """The pairs the ladder scheduled after `moment` (its ladder_pairs table)."""
    with closing(sqlite3.connect(database, timeout=30)) as db:
        found = db.execute("SELECT bot_a, bot_b FROM ladder_pairs WHERE scheduled_at > ?",
                           (moment,)).fetchall()
        return [(a, b) for a, b in found]


def games_of(found: list[dict[str, Any]], bot: str) -> int:
    return sum(bot in (r["bot0"], r["bot1"]) for r in found)


def _met(found: list[dict[str, Any]], a: str, b: str) -> int:
    """How many stored matches `a` and `b` played against each other."""
    return sum({r["bot0"], r["bot1"]} == {a, b} for r in found)


def wait_for(what: str, check: Any, proc: subprocess.Popen[str], seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        if proc.poll() is not None:
            raise AssertionError(f"the ladder exited (code {proc.returncode}) before {what}: "
                                 f"{proc.stderr.read() if proc.stderr else ''}")
        if time.monotonic() > deadline:
            raise AssertionError(f"no {what} within {seconds} s")
        time.sleep(0.5)


def show(folder: Path) -> dict[str, list[dict[str, Any]]]:
    run = arena("ladder", "show", "--database", folder / "arena.db", "--format", "json",
                cwd=folder)
    assert run.returncode == 0, explain(run)
    return {title: t["standings"] for title, t in json.loads(run.stdout).items()}


def assert_sides_one_after_the_other(found: list[dict[str, Any]]) -> None:
    """The two matches of each duplicate pair (one seed: the same deals, sides swapped) never
    ran at once: a bot in both would hold, in one, its opponent's cards in the other."""
    pairs: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for row in found:
        pairs.setdefault((row["variant"], row["seed"]), []).append(row)
    assert any(len(pair) == 2 for pair in pairs.values()), pairs.keys()
    for pair in pairs.values():
        if len(pair) == 2:
            first, second = sorted(pair, key=lambda r: r["started_at"])
            assert second["started_at"] >= first["finished_at"], (first, second)


def test_the_ladder_ranks_four_bots_by_strength_and_rates_a_version_entered_mid_run(
    tmp_path: Path,
) -> None:
    """A ladder of four bots of clearly different strength, run as `arena ladder serve`
    until SIGTERM: it schedules matches by itself; a version entered while it runs (`arena
    ladder add random --version 2` from another process) gets games and a rating inherited
    from its predecessor; a retired version (`arena ladder retire`) gets no new pairs; on
    SIGTERM it finishes the matches in flight and exits 0; `arena ladder show` then ranks
    heuristic first and the folding bot last of the bots still playing by mu - k*sigma, and
    no weaker bot's interval
    [mu - k*sigma, mu + k*sigma] lies wholly above a stronger one's."""
    config = write_ladder(tmp_path, FIELD, versions={"random": "1"}, duplicate=True)
    database = tmp_path / "arena.db"
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.Popen([str(ARENA), "ladder", "serve", str(config)], cwd=tmp_path,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for("8 stored matches", lambda: len(rows(database)) >= 8, proc, 120)
        added = arena("ladder", "add", "random", "--version", "2", "--command",
                      " ".join(RANDOM), "--database", database, cwd=tmp_path)
        assert added.returncode == 0, explain(added)
        assert "entered random@2 in ladder main" in added.stdout
        wait_for("4 matches of random@2",
                 lambda: games_of(rows(database), "random@2") >= 4 and len(rows(database)) >= 24,
                 proc, 120)
        retired = arena("ladder", "retire", "random", "--version", "1", "--config", config,
                        cwd=tmp_path)
        assert retired.returncode == 0, explain(retired)
        assert "retired random@1 from ladder main" in retired.stdout
        settled = time.time() + 2  # the service polls every 200 ms: 2 s is ample
        wait_for("2 pairs scheduled after the retirement",
                 lambda: len(pairs_after(database, settled)) >= 2, proc, 120)
        # The top of the table is decided by the top two meeting: without it, "heuristic
        # first" rested on results against the others alone (1 run in 4 saw 44 matches and
        # no heuristic-first pair, and first on top).
        wait_for("2 pairs of heuristic and first",
                 lambda: _met(rows(database), "heuristic", "first") >= 4, proc, 180)
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, stderr
    assert "stopped" in stderr, stderr
    assert "0 abandoned" in stderr, stderr

    found = rows(database)
    assert len({r["id"] for r in found}) == len(found)
    assert_sides_one_after_the_other(found)
    late = pairs_after(database, settled)
    assert all("random@1" not in pair for pair in late), late
    tables = show(tmp_path)
    overall = {line["bot"]: line for line in tables["ladder main: overall"]}
    for bot, line in overall.items():
        assert line["games"] == games_of(found, bot), (bot, line)
    assert overall["random@2"]["games"] >= 4
    assert overall["random@2"]["sigma"] < 25 / 3  # rated: less uncertain than a newcomer
    field = [overall[b] for b in ("heuristic", "first", "random@1", "folder")]
    by_rank = sorted(field, key=lambda x: -x["conservative"])
    assert by_rank[0]["bot"] == "heuristic", tables["ladder main: overall"]
    # Last among those still playing: random@1, retired mid-run, keeps the sigma of its few
    # games, and mu - k*sigma may rightly put it below the folder (a fresh clone saw mu
    # 15.64 / sigma 6.04 against the folder's 15.49 / 5.16).
    playing = [line for line in by_rank if line["bot"] != "random@1"]
    assert playing[-1]["bot"] == "folder", tables["ladder main: overall"]
    for i, stronger in enumerate(field):
        for weaker in field[i + 1:]:
            assert weaker["mu"] - K * weaker["sigma"] <= stronger["mu"] + K * stronger["sigma"], (
                stronger, weaker)
    assert "ladder main: argentine-1v1" in tables
    assert "ladder main: mineiro-1v1" in tables


def test_a_restarted_ladder_continues_where_it_stopped(tmp_path: Path) -> None:
    """A ladder stopped hard (two Ctrl-C, SIGINT, in a row: the matches in flight are
    abandoned, not stored, and no bot process outlives it), then run again with `arena
    ladder serve --duration`: the second run keeps every match of the first untouched,
    completes a pair cut between its sides, numbers its new pairs after the first's (no
    match id reused, none stored twice), and the games in `arena ladder show` (recomputed
    from the stored matches) keep growing."""
    config = write_ladder(tmp_path, {"random": RANDOM, "first": bot_cmd("first_legal")},
                          concurrency=2, min_games=1)
    database = tmp_path / "arena.db"
    mark = os.urandom(6).hex()
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "ARENA_E2E_MARK": mark}
    proc = subprocess.Popen([str(ARENA), "ladder", "serve", str(config)], cwd=tmp_path,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for("2 stored matches", lambda: len(rows(database)) >= 2, proc, 120)
        proc.send_signal(signal.SIGINT)
        time.sleep(0.2)
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, stderr
    assert "abandoned (not stored)" in stderr, stderr
    assert processes_with(mark) == []
    before = rows(database)
    games_before = {line["bot"]: line["games"] for line in show(tmp_path)["ladder main: overall"]}

    second = arena("ladder", "serve", config, "--duration", "4", cwd=tmp_path)
    assert second.returncode == 0, explain(second)
    after = rows(database)
    assert len({r["id"] for r in after}) == len(after)
    kept = {r["id"]: r for r in after}
    for row in before:
        assert kept[row["id"]] == row
    new = [r for r in after if r["id"] not in {b["id"] for b in before}]
    assert new, explain(second)

    def pair(row: dict[str, Any]) -> int:
        return int(row["id"].split(":")[1])

    # A pair the hard stop cut between its sides gets its missing side first, under its own
    # number (see the next test); every other new match is numbered after the first run's.
    halves = {row["id"][:-2] for row in before if row["id"].endswith(":0")} - {
        row["id"][:-2] for row in before if row["id"].endswith(":1")}
    completed = [r for r in new if r["id"].endswith(":1") and r["id"][:-2] in halves]
    assert {r["id"][:-2] for r in completed} == halves, explain(second)
    fresh = [r for r in new if r not in completed]
    assert fresh, explain(second)
    assert min(pair(r) for r in fresh) > max(pair(r) for r in before)
    games_after = {line["bot"]: line["games"] for line in show(tmp_path)["ladder main: overall"]}
    for bot in ("random", "first"):
        assert games_after[bot] > games_before[bot]
        assert games_after[bot] == games_of(after, bot)


def _halves(database: Path) -> list[str]:
    """Pairs with side 0 stored and side 1 not: their match-id stems."""
    ids = {r["id"] for r in rows(database)}
    return [i[:-2] for i in ids if i.endswith(":0") and i[:-2] + ":1" not in ids]


def test_a_pair_cut_by_a_kill_gets_its_second_side_after_the_restart(tmp_path: Path) -> None:
    """`arena ladder serve` killed with SIGKILL between the two sides of a duplicate pair
    keeps the first side stored; run again, the service plays the missing side first (the
    same deals, sides swapped, its own match id) instead of leaving a half pair in the
    ratings for good (an outside walkthrough: pair 164 kept one side, and the restart
    numbered new pairs past it)."""
    config = write_ladder(tmp_path, {"first": bot_cmd("first_legal"), "folder": bot_cmd("folder")},
                          concurrency=1, min_games=1, duplicate=True)
    database = tmp_path / "arena.db"
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    for _attempt in range(5):  # the kill must land between two sides: usually the first try
        proc = subprocess.Popen([str(ARENA), "ladder", "serve", str(config)], cwd=tmp_path,
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
        try:
            wait_for("a stored first side", lambda: bool(_halves(database)), proc, 120)
            proc.kill()
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.communicate()
        cut = _halves(database)
        if cut:
            break
    assert cut, "no kill landed between the two sides of a pair in 5 tries"
    before = {r["id"]: r for r in rows(database)}

    again = arena("ladder", "serve", config, "--duration", "3", cwd=tmp_path)
    assert again.returncode == 0, explain(again)
    assert f"{len(cut)} pairs stored with one side only" in again.stderr, explain(again)
    after = {r["id"]: r for r in rows(database)}
    for stem in cut:
        first, second = after[stem + ":0"], after[stem + ":1"]
        assert first == before[stem + ":0"]
        assert second["seed"] == first["seed"]  # duplicate: the same deals
        assert (second["bot0"], second["bot1"]) == (first["bot1"], first["bot0"])
        new = [r for i, r in after.items() if i not in before]
        assert second["started_at"] == min(r["started_at"] for r in new), new
    assert _halves(database) == []


def test_sprt_accepts_that_the_heuristic_bot_is_stronger_than_the_random_bot(
    tmp_path: Path,
) -> None:
    """`arena sprt` with the heuristic bot as A and the random bot as B plays duplicate pairs
    (`duplicate = true`: the two sides of a pair one after the other) until the SPRT accepts H1
    (within 40 pairs), printing after each pair the LLR, the bounds, the pentanomial counts and
    both Elo estimates; the verdict is the last line, the exit code 0, and the matches are
    stored as their own tournament."""
    config = write_config(
        tmp_path, name="sprt", bots={"heuristic": HEURISTIC, "random": RANDOM},
        variants=("argentine-1v1", "mineiro-1v1"), concurrency=4, decision_ms=2000,
        duplicate=True,
    )
    run = arena("sprt", config, "--a", "heuristic", "--b", "random", "--elo0", "0",
                "--elo1", "100", "--max-pairs", "40", cwd=tmp_path)
    assert run.returncode == 0, explain(run)
    lines = run.stdout.strip().splitlines()
    assert lines[-1].startswith("verdict: H1 accepted after "), explain(run)
    pairs = [line for line in lines if line.startswith("pair ")]
    assert 1 <= len(pairs) <= 40
    assert int(lines[-1].split("after ")[1].split()[0]) == len(pairs)
    last = pairs[-1]
    for part in ("LLR", "pentanomial [", "Elo paired", "unpaired"):
        assert part in last
    llr, bounds = last.split("LLR ")[1].split(" [", 1)
    upper = float(bounds.split("]")[0].split(", ")[1])
    assert float(llr) >= upper
    stored = rows(tmp_path / "arena.db")
    assert all(r["tournament"].startswith("sprt-heuristic-random-") for r in stored)
    assert len(stored) >= 2 * len(pairs)
    assert_sides_one_after_the_other(stored)


def test_a_gauntlet_tournament_plays_the_challenger_against_the_field(tmp_path: Path) -> None:
    """`arena tournament` with `format = "gauntlet"` and `challenger`: only the challenger's
    pairs are played and stored (each twice, sides swapped), never a pair of the field."""
    config = write_config(
        tmp_path, name="g", bots={"new": bot_cmd("first_legal"), "random": RANDOM,
                                  "folder": bot_cmd("folder")},
        variants=("mineiro-1v1",), games=2, concurrency=4,
    )
    text = config.read_text(encoding="utf-8").replace(
        "[tournament]\n", '[tournament]\nformat = "gauntlet"\nchallenger = "new"\n', 1)
    config.write_text(text, encoding="utf-8")
    run = arena("tournament", config, "--no-progress", cwd=tmp_path)
    assert run.returncode == 0, explain(run)
    stored = rows(tmp_path / "arena.db")
    assert sorted(r["id"] for r in stored) == [
        "g:mineiro-1v1:new:folder:0", "g:mineiro-1v1:new:folder:1",
        "g:mineiro-1v1:new:random:0", "g:mineiro-1v1:new:random:1"]


def test_a_remote_bot_in_another_language_enters_the_running_ladder_with_a_token(
    tmp_path: Path, js_random: list[str]
) -> None:
    """From the outside: while `arena ladder serve` runs (two launched bots), `arena ladder
    add js --token T` enters a remote bot, and the Node.js sample (no Python SDK) dials the
    address the service printed with that token; the ladder then schedules it, its matches
    end normally, and it appears in `arena ladder show`. By default (no `duplicate`) the two
    sides of every pair have deals of their own: a remote bot remembers the first side's
    deals, and with shared deals would know its opponent's hand in the second."""
    config = write_ladder(tmp_path, {"first": bot_cmd("first_legal"), "folder": bot_cmd("folder")},
                          concurrency=2, min_games=1)
    database = tmp_path / "arena.db"
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.Popen([str(ARENA), "ladder", "serve", str(config)], cwd=tmp_path,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    js: subprocess.Popen[str] | None = None
    try:
        assert proc.stderr is not None
        banner = proc.stderr.readline()
        assert "listening on " in banner, banner
        address = banner.split("listening on ")[1].split(";")[0]
        token = "js-" + os.urandom(8).hex()
        added = arena("ladder", "add", "js", "--version", "0.1", "--token", token,
                      "--config", config, cwd=tmp_path)
        assert added.returncode == 0, explain(added)
        js = subprocess.Popen([*js_random, "--server", address, "--token", token, "--name",
                               "js"], cwd=tmp_path, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
        wait_for("2 matches of js@0.1", lambda: games_of(rows(database), "js@0.1") >= 2,
                 proc, 60)
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=60)
    finally:
        for p in (proc, js):
            if p is not None and p.poll() is None:
                p.kill()
                p.communicate()
    assert proc.returncode == 0, stderr
    mine = [r for r in rows(database) if "js@0.1" in (r["bot0"], r["bot1"])]
    assert all(r["termination"] == "normal" for r in mine), [
        (r["termination"], r["detail"]) for r in mine
    ]
    overall = {line["bot"]: line for line in show(tmp_path)["ladder main: overall"]}
    assert overall["js@0.1"]["games"] == len(mine)
    pairs: dict[str, list[int]] = {}  # "<ladder>:<pair>:<variant>:<bots>" -> seeds by side
    for row in rows(database):
        pairs.setdefault(row["id"].rsplit(":", 1)[0], []).append(row["seed"])
    whole = [seeds for seeds in pairs.values() if len(seeds) == 2]
    assert whole, pairs
    assert all(first != second for first, second in whole), pairs


C_KIT = SAMPLE_BOTS / "c_random" / "bot"
LINER = """\
import os, sys
print(f"liner: GREETING={os.environ.get('GREETING')}", file=sys.stderr, flush=True)
for line in sys.stdin:  # docs/stdio.md: answer every decision with an index of `legal`
    if line.startswith("decision "):
        print("action 0", flush=True)
"""


def c_kit() -> Path:
    """The C starter kit (docs/stdio.md), built by the Makefile when missing or stale."""
    run = subprocess.run(["make", "--no-print-directory", str(C_KIT.relative_to(REPO))],
                         cwd=REPO, capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 0, f"building the C kit failed:\n{run.stdout}\n{run.stderr}"
    return C_KIT


def test_stdio_bots_from_the_config_and_from_ladder_add_play_the_ladder(tmp_path: Path) -> None:
    """A stdio bot in a real ladder (an outside user's could not enter one): the C starter
    kit from the config (`protocol = "stdio"`, `dir`, `env`) and a Python script speaking
    the line protocol entered while the ladder runs with `arena ladder add --stdio --dir
    --env` both play against a gRPC bot behind the adapter, as in a tournament; every
    match of theirs is stored with a normal ending, `arena ladder show` rates them, and the
    script's seat log shows the variable it was given."""
    kit = c_kit()
    config = write_ladder(tmp_path, {"first": bot_cmd("first_legal")}, concurrency=2,
                          min_games=1)
    with config.open("a", encoding="utf-8") as text:
        text.write(f'[[bot]]\nname = "c"\ncommand = [{_toml(str(kit))}]\nprotocol = "stdio"\n'
                   f'dir = {_toml(str(kit.parent))}\nenv = {{ARENA_BOT_SEED = "7"}}\n')
    (tmp_path / "liner").mkdir()
    (tmp_path / "liner" / "liner.py").write_text(LINER, encoding="utf-8")
    database = tmp_path / "arena.db"
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.Popen([str(ARENA), "ladder", "serve", str(config)], cwd=tmp_path,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for("a match of c", lambda: games_of(rows(database), "c") >= 1, proc, 120)
        added = arena("ladder", "add", "liner", "--version", "0.1", "--stdio", "--command",
                      "python liner/liner.py", "--dir", "liner", "--env", "GREETING=hola",
                      "--config", config, cwd=tmp_path)
        assert added.returncode == 0, explain(added)
        wait_for("2 matches of liner@0.1 and of c",
                 lambda: min(games_of(rows(database), b) for b in ("liner@0.1", "c")) >= 2,
                 proc, 180)
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, stderr
    stored = rows(database)
    for bot in ("c", "liner@0.1"):
        mine = [r for r in stored if bot in (r["bot0"], r["bot1"])]
        assert len(mine) >= 2, (bot, stored)
        assert all(r["termination"] == "normal" for r in mine), [
            (r["termination"], r["detail"]) for r in mine]
    overall = {line["bot"]: line for line in show(tmp_path)["ladder main: overall"]}
    assert overall["c"]["games"] == games_of(stored, "c")
    assert overall["liner@0.1"]["games"] == games_of(stored, "liner@0.1")
    logs = [p.read_text(encoding="utf-8") for p in (tmp_path / "logs").rglob("*.liner_0.1.log")]
    assert len(logs) >= 2
    assert all("liner: GREETING=hola" in log for log in logs), logs


def _hello(address: str, token: str) -> str:
    """What a raw gRPC client (no SDK) gets for a hello with `token`: the first reply's kind
    (`welcome`), or the refusal's error code name."""
    import grpc

    from arena.v1 import arena_pb2 as pb
    from arena.v1 import arena_pb2_grpc as pb_grpc

    with grpc.insecure_channel(address) as channel:
        replies = pb_grpc.RefereeStub(channel).Play(iter([pb.BotMessage(hello=pb.Hello(
            bot_name="probe", token=token, protocol_version=1))]), timeout=10)
        try:
            first = next(replies)
        except grpc.RpcError as exc:
            return f"status {exc.code().name}"
        if first.WhichOneof("body") == "error":
            return pb.ErrorCode.Name(first.error.code)
        return first.WhichOneof("body")


@contextlib.contextmanager
def two_bot_ladder(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], Path, str]]:
    """`arena ladder serve` of two launched bots, one pair at a time: the process, its config
    and the address it listens on. On leaving, SIGTERM twice (the second abandons a match
    waiting for a remote bot); it must exit 0."""
    config = write_ladder(tmp_path, {"first": bot_cmd("first_legal"), "folder": bot_cmd("folder")},
                          concurrency=1, min_games=1)
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.Popen([str(ARENA), "ladder", "serve", str(config)], cwd=tmp_path,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        banner = proc.stderr.readline()
        assert "listening on " in banner, banner
        yield proc, config, banner.split("listening on ")[1].split(";")[0]
        for _ in range(2):
            proc.send_signal(signal.SIGTERM)
            time.sleep(0.3)
        proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0


def test_a_retired_or_replaced_token_no_longer_gets_in(tmp_path: Path) -> None:
    """A remote bot's token stops working once the running ladder has read that its bot was
    given a new token (`ladder add` again) or retired: a hello with it is refused as an
    unknown token, the new one gets in until it is retired in turn. Kept admitted, a retired
    entrant kept a door to the referee, for floods, until a restart (hostile review round
    5)."""
    with two_bot_ladder(tmp_path) as (proc, config, address):
        old, new = "old-" + os.urandom(8).hex(), "new-" + os.urandom(8).hex()

        def add(token: str) -> None:
            added = arena("ladder", "add", "remote", "--token", token, "--config", config,
                          cwd=tmp_path)
            assert added.returncode == 0, explain(added)

        def gets(token: str, wanted: str) -> bool:
            return _hello(address, token) == wanted

        add(old)
        wait_for("the old token admitted", lambda: gets(old, "welcome"), proc, 30)
        add(new)
        wait_for("the new token admitted", lambda: gets(new, "welcome"), proc, 30)
        wait_for("the old token refused",
                 lambda: gets(old, "ERROR_CODE_UNAUTHENTICATED"), proc, 30)
        retired = arena("ladder", "retire", "remote", "--config", config, cwd=tmp_path)
        assert retired.returncode == 0, explain(retired)
        wait_for("the new token refused",
                 lambda: gets(new, "ERROR_CODE_UNAUTHENTICATED"), proc, 30)


class _Held:
    """A raw gRPC client (no SDK) holding one stream open with `token`: it answers every
    decision with the first legal action and keeps what the referee sends, and how the
    stream ended."""

    def __init__(self, address: str, token: str) -> None:
        import queue

        import grpc

        from arena.v1 import arena_pb2 as pb
        from arena.v1 import arena_pb2_grpc as pb_grpc

        self.pb = pb
        self.errors: list[tuple[str, str]] = []  # (code name, message)
        self.games = 0
        self.ended: tuple[str, str] | None = None  # (status name, details)
        self._out: queue.Queue[Any] = queue.Queue()
        self._out.put(pb.BotMessage(hello=pb.Hello(bot_name="held", token=token,
                                                   protocol_version=1)))
        self._channel = grpc.insecure_channel(address)
        self._replies = pb_grpc.RefereeStub(self._channel).Play(iter(self._out.get, None))
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        import grpc

        pb = self.pb
        try:
            for message in self._replies:
                for item in (message.batch.messages if message.WhichOneof("body") == "batch"
                             else [message]):
                    body = item.WhichOneof("body")
                    if body == "error":
                        self.errors.append((pb.ErrorCode.Name(item.error.code),
                                            item.error.message))
                    elif body == "game_started":
                        self.games += 1
                    elif body == "decision":
                        d = item.decision
                        self._out.put(pb.BotMessage(action=pb.ActionReply(
                            request_id=d.request_id, match_id=d.match_id, seat=d.seat,
                            action_index=0)))
            self.ended = ("OK", "")
        except grpc.RpcError as exc:
            self.ended = (exc.code().name, exc.details() or "")

    def close(self) -> None:
        self._out.put(None)
        self._channel.close()
        self._thread.join(timeout=10)


def test_a_retired_or_replaced_token_closes_its_idle_connection_saying_why(
    tmp_path: Path,
) -> None:
    """A remote bot connected with a token the ladder withdraws (`ladder add` with a new
    token, `ladder retire`) finishes the match it is in, then is told why (an in-band
    UNAUTHENTICATED error naming the change) and its stream ends PERMISSION_DENIED. Left
    open, the old connection sat silent until the service stopped and its author never
    learnt why no match came (an outside walkthrough)."""
    with two_bot_ladder(tmp_path) as (proc, config, address):
        old, new = "old-" + os.urandom(8).hex(), "new-" + os.urandom(8).hex()
        added = arena("ladder", "add", "remote", "--token", old, "--config", config,
                      cwd=tmp_path)
        assert added.returncode == 0, explain(added)
        wait_for("the old token admitted", lambda: _hello(address, old) == "welcome", proc, 30)
        first = _Held(address, old)
        try:
            # Connected, it is paired: it plays (answers every decision) until withdrawn.
            wait_for("a match for the connected bot", lambda: first.games > 0, proc, 60)
            added = arena("ladder", "add", "remote", "--token", new, "--config", config,
                          cwd=tmp_path)
            assert added.returncode == 0, explain(added)
            wait_for("the old connection closed", lambda: first.ended is not None, proc, 90)
        finally:
            first.close()
        assert first.ended is not None
        assert first.ended[0] == "PERMISSION_DENIED", first.ended
        assert "remote was given a new token in ladder 'main'" in first.ended[1], first.ended
        told = [m for code, m in first.errors if code == "ERROR_CODE_UNAUTHENTICATED"]
        assert told, first.errors
        assert "was given a new token" in told[-1], first.errors
        assert "ERROR_CODE_TIMEOUT" not in {code for code, _ in first.errors}, first.errors

        second = _Held(address, new)
        try:
            wait_for("the new token's stream open", lambda: second.games > 0
                     or second.ended is not None, proc, 60)
            retired = arena("ladder", "retire", "remote", "--config", config, cwd=tmp_path)
            assert retired.returncode == 0, explain(retired)
            wait_for("the retired connection closed", lambda: second.ended is not None,
                     proc, 90)
        finally:
            second.close()
        assert second.ended is not None
        assert second.ended[0] == "PERMISSION_DENIED", second.ended
        assert "remote was retired from ladder 'main'" in second.ended[1], second.ended
    stored = rows(tmp_path / "arena.db")
    mine = [r for r in stored if "remote" in (r["bot0"], r["bot1"])]
    assert mine, stored
    assert {r["termination"] for r in mine} == {"normal"}, mine


def test_a_sighup_with_a_config_the_book_refuses_keeps_the_ladder_running(
    tmp_path: Path,
) -> None:
    """SIGHUP re-reads the config's bots; one the ladder's book refuses (here a remote bot
    whose token an earlier `arena ladder add` gave another bot) is logged
    (`ladder_reload_failed`) and skipped, and the ladder goes on: it died of it (hostile
    review round 5), and with it the matches in flight."""
    with two_bot_ladder(tmp_path) as (proc, config, _address):
        token = "shared-" + os.urandom(8).hex()
        added = arena("ladder", "add", "early", "--token", token, "--config", config,
                      cwd=tmp_path)
        assert added.returncode == 0, explain(added)
        with config.open("a", encoding="utf-8") as f:
            f.write(f'\n[[bot]]\nname = "late"\ntoken = "{token}"\n')
        said: list[str] = []
        reader = threading.Thread(target=lambda: said.extend(
            proc.stderr.readline() for _ in range(2)) if proc.stderr else None, daemon=True)
        reader.start()
        proc.send_signal(signal.SIGHUP)
        log = tmp_path / "logs" / "main.jsonl"
        wait_for("the reload refused", lambda: log.exists()
                 and "ladder_reload_failed" in log.read_text(encoding="utf-8"), proc, 30)
        time.sleep(1)
        assert proc.poll() is None, "the ladder stopped"
        # ... and the organizer's console says so, then that the rest was reloaded (it said
        # nothing of a SIGHUP: an outside walkthrough).
        reader.join(timeout=30)
        assert said[0].startswith("ladder main: reload: bot late refused: "), said
        assert said[1].startswith(f"ladder main: reloaded {config}: 3 bots in the config"), said


def test_sprt_counts_no_forfeit_and_stops_when_a_bot_never_plays(tmp_path: Path) -> None:
    """`arena sprt` with a remote B that never connects: it says where remote bots connect,
    counts no pair with a match lost by forfeit (an outside walkthrough saw "H1 accepted
    after 23 pairs" of no-shows, not one game played, exit 0), and after three such pairs in
    a row stops with no verdict, exit 1, saying why; the forfeited matches stay stored."""
    config = write_config(
        tmp_path, name="sprtremote", bots={"heuristic": HEURISTIC},
        variants=("argentine-1v1",), concurrency=1,
        extra='\n[[bot]]\nname = "ghost"\ntoken = "ghost-token-0123456789abc"\n',
    )
    text = config.read_text(encoding="utf-8")
    config.write_text(text.replace("[faults]\n", "[faults]\nno_show_ms = 1500\n"),
                      encoding="utf-8")
    run = arena("sprt", config, "--a", "heuristic", "--b", "ghost", "--max-pairs", "40",
                cwd=tmp_path)
    assert run.returncode == 1, explain(run)
    lines = run.stdout.strip().splitlines()
    assert any(line.startswith("referee listening on 127.0.0.1:") for line in lines), lines
    skipped = [line for line in lines if "not counted, a match lost by forfeit" in line]
    assert len(skipped) == 3, lines
    assert "ghost did not connect within no_show_ms = 1500" in skipped[0]
    assert not [line for line in lines if line.startswith("pair ") and "LLR" in line], lines
    assert lines[-1].startswith("verdict: none: the test stopped after 0 counted pairs: 3 "
                                "pairs in a row lost a match by forfeit"), lines
    assert "accepted" not in run.stdout
    stored = rows(tmp_path / "arena.db")
    assert stored, explain(run)
    assert {r["termination"] for r in stored} == {"forfeit"}


def test_a_remote_bot_that_is_not_connected_is_not_paired(tmp_path: Path) -> None:
    """A remote entry nobody has connected (never yet, or gone, or its token just changed)
    is left out of the pairings until it connects. Paired, it held a slot for `no_show_ms`
    and lost both matches by forfeit, counted in its rating: an outside walkthrough saw a
    ladder with two slots play nothing for a minute, then store four forfeits, after an
    author rotated a token. Here, for four seconds, the two launched bots play each other
    and `ghost` (a token, never connected) has no match at all, forfeit or other."""
    config = write_ladder(tmp_path, {"first": bot_cmd("first_legal"), "folder": bot_cmd("folder")},
                          concurrency=2, min_games=1)
    text = config.read_text(encoding="utf-8")
    config.write_text(text + '\n[[bot]]\nname = "ghost"\ntoken = "ghost-token-0123456789abc"\n'
                      .replace("[[bot]]", "[faults]\nno_show_ms = 1000\n\n[[bot]]", 1),
                      encoding="utf-8")
    run = arena("ladder", "serve", config, "--duration", "4", cwd=tmp_path)
    assert run.returncode == 0, explain(run)
    stored = rows(tmp_path / "arena.db")
    assert stored, explain(run)
    assert all("ghost" not in (r["bot0"], r["bot1"]) for r in stored), stored
    assert {r["termination"] for r in stored} == {"normal"}


def test_a_bot_that_cannot_start_is_refused_at_add_and_benched_in_the_service(
    tmp_path: Path,
) -> None:
    """`arena ladder add` checks a command as a tournament does: `python missing.py` is one
    error line naming --command, exit 2, nothing entered (it said "entered", exit 0). A bot
    whose program exists but crashes at start is benched by the running service after three
    forfeits in a row, logged `ladder_bot_benched`: it used to be paired again and again (it
    has the fewest games) and a 20 s run stored 66 forfeits and no game. Here, in 6 s, the
    crasher loses at most a few matches and the two working bots play normally."""
    config = write_ladder(tmp_path, {"first": bot_cmd("first_legal"), "folder": bot_cmd("folder"),
                                     "crasher": bot_cmd("crash_at_start")},
                          concurrency=2, min_games=1)
    bad = arena("ladder", "add", "pybad", "--command", "python missing.py", "--config", config,
                cwd=tmp_path)
    assert bad.returncode == 2, explain(bad)
    assert "--command (bot 'pybad'): script 'missing.py' does not exist" in bad.stderr, explain(bad)
    run = arena("ladder", "serve", config, "--duration", "6", cwd=tmp_path)
    assert run.returncode == 0, explain(run)
    stored = rows(tmp_path / "arena.db")
    assert all("pybad" not in (r["bot0"], r["bot1"]) for r in stored)
    crashed = [r for r in stored if "crasher" in (r["bot0"], r["bot1"])]
    assert all(r["termination"] == "forfeit" for r in crashed), crashed
    assert 3 <= len(crashed) <= 3 + 2 * 2, len(crashed)  # three, and pairs then in flight
    assert [r for r in stored if r["termination"] == "normal"], stored
    log = (tmp_path / "logs" / "main.jsonl").read_text(encoding="utf-8")
    assert '"ladder_bot_benched"' in log
