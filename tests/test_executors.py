"""Executors: the `processes` executor plays matches in worker processes (one referee per
core by default) and the coordinator stores them exactly as the `local` one does.

The end-to-end tests run the real `arena tournament` CLI in a subprocess (its own process
group) with deterministic bots (tests/bots/pondering.py and the sample random bot seeded with
ARENA_BOT_SEED), against the same key file, and compare what is stored with a `local` run:
the same rows, the same actions in every replay, the same standings.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
from collections.abc import Callable, Collection
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing
from structlog.testing import capture_logs
from test_e2e_support import (
    ARENA,
    CLI_TIMEOUT,
    FIXED_KEY,
    SAMPLE_BOTS,
    TEST_BOTS,
    arena,
    expected_ids,
    explain,
    flat,
    poll,
    processes_with,
    python_bot,
    read_replay,
    stored_count,
    stored_matches,
    write_config,
)

from arena.errors import ConfigError
from arena.rules import Match
from arena.tournament import Store, TournamentRunner, load_config, parse_config, standings
from arena.tournament.executors import LocalExecutor, ProcessExecutor, choose_executor

NAME = "spread"
VARIANTS = ("argentine-1v1",)
# Two duplicate pairs: the first match of each starts at once, its twin when it ends, so a
# worker is busy from the first decision to the last store (the kill and Ctrl-C tests need
# one caught mid-match, and matches left to play after it).
GAMES = 4
# pondering.py thinks 15 ms a decision: matches last long enough to be caught in flight.
BOTS = {
    "slow": python_bot(TEST_BOTS / "pondering.py", "15"),
    "random": python_bot(SAMPLE_BOTS / "random_bot.py"),
}
OUTCOME = ("variant", "bot0", "bot1", "seed", "termination", "winner_bot", "faulty_bot",
           "points0", "points1", "games0", "games1", "strikes", "decisions")


def _config(folder: Path, executor: str, workers: int = 2) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    key = folder / "arena.key"
    key.write_text(FIXED_KEY + "\n", encoding="ascii")
    table = f'\n[executor]\nkind = "{executor}"\n'
    if executor in ("processes", "auto"):
        table += f"workers = {workers}\n"
    return write_config(folder, name=NAME, bots=BOTS, variants=VARIANTS, games=GAMES,
                        concurrency=4, secret_file=key, extra=table)






def _env(mark: str) -> dict[str, str]:
    return {"ARENA_BOT_SEED": "7", "ARENA_E2E_MARK": mark}


def _rows(folder: Path) -> dict[str, dict[str, Any]]:
    rows = stored_matches(folder / "arena.db")
    ids = [r["id"] for r in rows]
    assert len(ids) == len(set(ids)), "a match was stored twice"
    return {r["id"]: r for r in rows}


def _actions(path: str) -> list[tuple[Any, ...]]:
    return [(ln["game"], ln["hand"], ln["seat"], ln["action"]["text"])
            for ln in read_replay(Path(path)) if ln["type"] == "action"]


def _standings(folder: Path) -> list[Any]:
    store = Store(folder / "arena.db")
    try:
        # Latency is measured, not played: it differs from run to run.
        return [replace(line, latency={}) for line in standings(store.matches(NAME), None)]
    finally:
        store.close()


def _events(folder: Path, log_name: str) -> list[dict[str, Any]]:
    path = folder / "logs" / log_name
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _same_as(folder: Path, reference: Path, anew: Collection[str] = ()) -> None:
    """`folder`'s tournament stored exactly what the reference (local) run stored, but for
    the matches in `anew` (played again after their worker died), dealt anew."""
    rows, expected = _rows(folder), _rows(reference)
    assert set(rows) == set(expected) == expected_ids(NAME, BOTS, VARIANTS, GAMES)
    for match_id, row in rows.items():
        if match_id in anew:
            assert row["seed"] != expected[match_id]["seed"], match_id
            continue
        assert [row[c] for c in OUTCOME] == [expected[match_id][c] for c in OUTCOME], match_id
        assert _actions(row["replay"]) == _actions(expected[match_id]["replay"]), match_id
    if not anew:
        assert _standings(folder) == _standings(reference)


def _kill_a_busy_worker(
    argv: list[str], cwd: Path, env: dict[str, str], busy_pids: Callable[[], list[int]],
    what: str,
) -> int:
    """Run the `arena tournament` command `argv`, SIGKILL the first worker `busy_pids` finds
    playing a match, let the tournament end (it must exit 0) and return the killed pid."""
    process = subprocess.Popen(
        argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, start_new_session=True,
    )
    try:
        busy: list[int] = []
        poll(lambda: bool(busy.extend(busy_pids()) or busy) or process.poll() is not None,
             CLI_TIMEOUT, what)
        assert process.poll() is None, process.communicate()
        victim = busy[0]
        os.kill(victim, signal.SIGKILL)
        out, err = process.communicate(timeout=CLI_TIMEOUT)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    assert process.returncode == 0, explain(subprocess.CompletedProcess([], 0, out, err))
    return victim


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tournament played by the local executor (every match in the CLI's process)."""
    folder = tmp_path_factory.mktemp("local")
    run = arena("tournament", _config(folder, "local"), "--no-progress", cwd=folder,
                env=_env(os.urandom(8).hex()))
    assert run.returncode == 0, explain(run)
    assert not list((folder / "logs").glob("*.worker-*.jsonl"))
    return folder


@pytest.mark.e2e
def test_worker_processes_store_the_same_results_as_the_local_executor(
    tmp_path: Path, reference: Path
) -> None:
    """`[executor] kind = "processes"` with two workers: every match is refereed in a worker
    process (its decisions are in the workers' logs, none in the coordinator's), and the
    coordinator stores the same rows, replays' actions and standings as the local executor
    for the same secret; no worker or bot outlives the run."""
    mark = os.urandom(8).hex()
    run = arena("tournament", _config(tmp_path, "processes"), "--no-progress", cwd=tmp_path,
                env=_env(mark))
    assert run.returncode == 0, explain(run)
    _same_as(tmp_path, reference)
    main_log = _events(tmp_path, f"{NAME}.jsonl")
    start = next(e for e in main_log if e["event"] == "tournament_start")
    assert start["executor"] == "processes"
    assert not [e for e in main_log if e["event"] == "decision"]
    refereed = {e["match_id"] for k in range(2)
                for e in _events(tmp_path, f"{NAME}.worker-{k}.jsonl")
                if e["event"] == "match_start"}
    assert refereed == set(_rows(tmp_path))
    assert processes_with(mark) == []


def _worker_pids(mark: str) -> list[int]:
    """The worker processes of the run marked `mark` (they inherit its environment)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes()
            environ = (proc / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"arena.tournament.worker" in cmdline and f"ARENA_E2E_MARK={mark}".encode() in environ:
            found.append(int(proc.name))
    return found


def _busy(pid: int) -> bool:
    """Whether worker `pid` has bot processes (a match in flight)."""
    try:
        return any((task / "children").read_text().split()
                   for task in Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return False


@pytest.mark.e2e
def test_a_worker_killed_mid_tournament_has_its_matches_played_again_once(
    tmp_path: Path, reference: Path
) -> None:
    """SIGKILL to a worker process while it plays a match (from outside, as the OOM killer
    would): the coordinator logs `worker_died`, plays that worker's unfinished matches again
    on another (or a new) worker (`match_rerun`), and the tournament ends with exactly one
    row per scheduled match, equal to the local executor's but for those played again, which
    are dealt anew (`match_dealt_anew`: new seeds, so no bot meets the hands it saw in the
    killed attempt); the killed worker's bots do not outlive the run."""
    mark = os.urandom(8).hex()
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", **_env(mark)}
    config = _config(tmp_path, "processes")
    victim = _kill_a_busy_worker(
        [str(ARENA), "tournament", str(config), "--no-progress"], tmp_path, env,
        lambda: [p for p in _worker_pids(mark) if _busy(p)], "a worker playing a match")
    log = _events(tmp_path, f"{NAME}.jsonl")
    died = [e for e in log if e["event"] == "worker_died"]
    assert died, log
    assert died[0]["pid"] == victim, died
    reruns = {e["match_id"] for e in log if e["event"] == "match_rerun"}
    assert reruns, died
    assert reruns <= set(died[0]["matches"]), (reruns, died)
    # Played again with new deals: the killed attempt's bots had seen its hands.
    anew = {e["match_id"] for e in log if e["event"] == "match_dealt_anew"}
    assert anew == reruns, (anew, reruns)
    _same_as(tmp_path, reference, anew)
    poll(lambda: processes_with(mark) == [], 10, "the killed worker's bots to exit")


@pytest.mark.e2e
def test_ctrl_c_stops_the_workers_and_their_bots(tmp_path: Path) -> None:
    """Ctrl-C (SIGINT to the process group, as a terminal sends it) while worker processes
    play: the CLI says how to resume and exits non-zero, and no worker process and no bot
    is left running once it has exited; the matches stored before are whole."""
    mark = os.urandom(8).hex()
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", **_env(mark)}
    process = subprocess.Popen(
        [str(ARENA), "tournament", str(_config(tmp_path, "processes")), "--no-progress"],
        cwd=tmp_path, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, start_new_session=True,
    )
    database = tmp_path / "arena.db"
    try:
        poll(lambda: (stored_count(database) >= 1 and any(_busy(p) for p in _worker_pids(mark)))
              or process.poll() is not None, CLI_TIMEOUT, "a stored match and a busy worker")
        assert process.poll() is None, "the tournament ended before it could be interrupted"
        os.killpg(process.pid, signal.SIGINT)
        _out, err = process.communicate(timeout=CLI_TIMEOUT)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    assert process.returncode > 0, err
    assert "interrupted" in flat(err), err
    assert "Traceback" not in err, err
    assert _worker_pids(mark) == [], "worker processes outlived the interrupted tournament"
    assert processes_with(mark) == [], "bot processes outlived the interrupted tournament"
    for row in stored_matches(database):
        assert row["termination"] == "normal"
        assert Path(row["replay"]).is_file()


@pytest.mark.e2e
def test_spectators_see_each_worker_match_in_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With someone watching every match (`runner.demand`, as a gRPC watcher of all
    matches or a spectator delay), every move a worker applies reaches a copy of the match
    in the coordinator's `runner.live`: each copy seen there ends where the stored match
    ended (same record), and `live` is empty at the end."""
    config = load_config(_config(tmp_path, "processes"))
    runner = TournamentRunner(config)
    runner.executor = ProcessExecutor(2)
    runner.demand.append(lambda: None)  # every match watched
    seen: dict[str, Match] = {}
    records: dict[str, Any] = {}
    runner.on_match_done = lambda pairing, report: records.__setitem__(pairing.match_id,
                                                                       report.record)

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            async def watch() -> None:
                while True:
                    for match_id, (_names, game) in list(runner.live.items()):
                        seen.setdefault(match_id, game)
                    await trio.sleep(0.005)

            nursery.start_soon(watch)
            await runner.run()
            nursery.cancel_scope.cancel()

    monkeypatch.setenv("ARENA_BOT_SEED", "7")
    trio.run(main)
    assert len(records) == GAMES
    assert seen, "no match was ever seen live"
    for match_id, game in seen.items():
        assert game.is_over, match_id
        assert game.record() == records[match_id], match_id
    assert runner.live == {}


def _raw(executor: dict[str, Any]) -> dict[str, Any]:
    return {"tournament": {"name": "t"}, "executor": executor,
            "bot": [{"name": "a", "command": ["x"]}, {"name": "b", "command": ["y"]}]}


@pytest.mark.parametrize(("table", "message"), [
    ({"kind": "threads"},
     "executor.kind: must be one of auto, local, processes, ray, got 'threads'"),
    ({"kind": "processes", "workers": -1}, "executor.workers: must be at least 1"),
    ({"kind": "processes", "workers": "2"}, "executor.workers: must be a whole number"),
    ({"kind": "local", "workers": 2}, 'executor.workers: only for kind = "processes"'),
    ({"kind": "processes", "address": "auto"}, 'executor.address: only for kind = "ray"'),
    ({"kind": "ray", "address": "nowhere"}, "executor.address: \"auto\", \"ray://HOST:PORT\""),
    ({"kind": "ray", "nodes": 2}, "executor: unknown field 'nodes'"),
])
def test_a_bad_executor_table_is_one_line_naming_the_field(
    table: dict[str, Any], message: str
) -> None:
    """Each mistake in [executor] is a ConfigError of one line that names the field."""
    with pytest.raises(ConfigError) as caught:
        parse_config(_raw(table))
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_auto_is_one_worker_per_core_from_four_cores_when_launched_bots_have_matches(
) -> None:
    """`kind = "auto"` (the default): worker processes, one per core (at most one per match
    played at once), on a machine of at least four cores when there are enough matches
    between launched bots; otherwise (two or three cores, where the bots need more of the
    CPU than the one referee, a handful of matches, only remote bots) this process."""
    launched = parse_config(_raw({}))
    chosen = choose_executor(launched, matches=40, cpus=4)
    assert isinstance(chosen, ProcessExecutor)
    assert chosen.workers == 4
    assert isinstance(choose_executor(launched, matches=40, cpus=1), LocalExecutor)
    assert isinstance(choose_executor(launched, matches=40, cpus=2), LocalExecutor)
    assert isinstance(choose_executor(launched, matches=40, cpus=3), LocalExecutor)
    assert isinstance(choose_executor(launched, matches=2, cpus=4), LocalExecutor)
    few_at_once = parse_config({**_raw({}), "tournament": {"name": "t", "concurrency": 2}})
    assert choose_executor(few_at_once, matches=40, cpus=8).workers == 2  # type: ignore[attr-defined]
    remote = parse_config({"tournament": {"name": "t"}, "bot": [
        {"name": "a", "token": "x"}, {"name": "b", "token": "y"}]})
    assert isinstance(choose_executor(remote, matches=40, cpus=4), LocalExecutor)
    fixed = parse_config(_raw({"kind": "processes", "workers": 3}))
    assert isinstance(choose_executor(fixed, matches=40, cpus=2), ProcessExecutor)
    assert choose_executor(fixed, matches=40, cpus=8).workers == 3  # type: ignore[attr-defined]
    assert choose_executor(fixed, matches=2, cpus=8).workers == 2  # type: ignore[attr-defined]


def test_the_cli_refuses_workers_for_another_executor(tmp_path: Path) -> None:
    """`--workers` with `--executor local` is a usage error naming --workers (exit 2)."""
    run = arena("tournament", _config(tmp_path, "local"), "--executor", "local", "--workers",
                "2", cwd=tmp_path)
    assert run.returncode == 2, explain(run)
    assert "--workers: only for the processes executor" in flat(run.stderr)


def test_the_pace_plays_fewer_matches_at_once_while_a_worker_lags(tmp_path: Path) -> None:
    """Backpressure covers the workers: when a worker process reports a lag past the limit
    (`runner.workers_lag`, fed by its `lag` frames) the coordinator's `_pace` cuts how many
    matches run at once (`referee_lagging`), though the coordinator itself keeps up; once
    the worker is calm again, the matches come back. On trio's MockClock: nothing sleeps."""
    config = parse_config({"tournament": {"name": "t", "database": str(tmp_path / "a.db")},
                           "bot": [{"name": "a", "token": "x"}, {"name": "b", "token": "y"}]})
    runner = TournamentRunner(config)
    lagging = [True]
    runner.workers_lag = lambda: 1.0 if lagging[0] else 0.0
    seen: list[float] = []

    async def main() -> None:
        limiter = trio.CapacityLimiter(8)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(runner._pace, limiter, 8)
            await trio.sleep(5)
            seen.append(limiter.total_tokens)
            lagging[0] = False
            await trio.sleep(30)
            seen.append(limiter.total_tokens)
            nursery.cancel_scope.cancel()

    with capture_logs() as logs:
        trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    assert seen[0] < 8, seen
    assert seen[1] == 8, seen
    assert any(e["event"] == "referee_lagging" for e in logs)


def test_a_ray_address_where_nothing_listens_is_one_line_naming_the_field(tmp_path: Path) -> None:
    """`[executor] kind = "ray"` with an address where nothing listens: the CLI exits 2 at
    once with one line naming executor.address (Ray alone would retry for minutes), no
    traceback, nothing played."""
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = _config(tmp_path, "local")
    config.write_text(config.read_text(encoding="utf-8").replace(
        '[executor]\nkind = "local"\n', f'[executor]\nkind = "ray"\naddress = "127.0.0.1:{port}"\n'
    ), encoding="utf-8")
    run = arena("tournament", config, "--no-progress", cwd=tmp_path)
    assert run.returncode == 2, explain(run)
    errors = [line for line in run.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, explain(run)
    assert errors[0].startswith("error: executor.address: nothing answers at"), explain(run)
    assert "Traceback" not in run.stderr
    assert stored_count(tmp_path / "arena.db") == 0
