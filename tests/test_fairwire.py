"""Fault semantics from the outside: `arena serve` in a subprocess with remote bots that
speak raw arena.v1 (tests/bots/remote_moody.py), and tournaments in-process against a real
gRPC server and a real SQLite file. No honest bot punished, no tournament hung."""

from __future__ import annotations

import json
import os
import resource
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import trio
from structlog.testing import capture_logs
from test_e2e_support import ARENA, TEST_BOTS, stored_matches

from arena.rpc.server import Hub
from arena.tournament import TournamentRunner
from arena.tournament.config import parse_config

MOODY = TEST_BOTS / "remote_moody.py"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _remote(port: int, name: str, *args: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "ARENA_SERVER": f"127.0.0.1:{port}", "ARENA_TOKEN": f"tok-{name}",
           "ARENA_BOT_NAME": name}
    return subprocess.Popen(
        [sys.executable, str(MOODY), *args], env=env, cwd=TEST_BOTS,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )


def _wait_listening(port: int, referee: subprocess.Popen[str]) -> None:
    """Wait until the referee accepts TCP connections on `port` (bots dial once)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and referee.poll() is None:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    if referee.poll() is not None:  # it ended: say how, with what it printed
        out, err = referee.communicate()
        raise AssertionError(f"the referee exited with {referee.returncode} before it listened "
                             f"on {port}:\n{(err or '')[-3000:]}\n{(out or '')[-1000:]}")
    raise AssertionError(f"the referee did not listen on {port}")


def _log_events(folder: Path, name: str) -> list[dict[str, object]]:
    path = folder / "logs" / f"{name}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_serve_neither_hangs_nor_punishes_a_stalled_bot(tmp_path: Path) -> None:
    """`arena serve` with four remote bots: one steady, one that stalls 3 s then answers its
    backlog, one that vanishes after a few decisions, one that never shows up. The run ends
    (no 24 h wait per match): the absent bot forfeits at `no_show_ms` with a `no_show`
    warning, the vanished one within `reconnect_ms` of leaving (`remote_bot_gone`); the
    stalled bot is never disconnected as a flood (its late answers are LATE_ANSWER, not
    strays); every match is stored; `arena serve` prints who is connected and missing.
    (`no_show_ms` is 8 s: the three present bots dial within a few seconds of the start even
    on a loaded machine, and the absent one's matches wait for nothing longer.)"""
    port = _free_port()
    bots = ["steady", "staller", "ghost", "absent"]
    config = tmp_path / "serve.toml"
    config.write_text(
        '[tournament]\nname = "fw"\nseed = 1\ngames = 2\nvariants = ["argentine-1v1"]\n'
        "concurrency = 2\n"
        "[options.argentine-1v1]\ntarget = 15\nchicos = 1\n"
        "[time_control]\ndecision_ms = 300\n"
        "[faults]\nmax_strikes = 100\nreconnect_ms = 1000\nno_show_ms = 8000\n"
        + "".join(f'[[bot]]\nname = "{b}"\ntoken = "tok-{b}"\n' for b in bots)
    )
    referee = subprocess.Popen(
        [str(ARENA), "serve", str(config), "--listen", f"127.0.0.1:{port}"], cwd=tmp_path,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    _wait_listening(port, referee)
    remotes = [
        _remote(port, "steady", "steady"),
        _remote(port, "staller", "stall", "--after", "4", "--stall", "3"),
        _remote(port, "ghost", "vanish", "--after", "3"),
    ]
    try:
        _, err = referee.communicate(timeout=150)
    finally:
        referee.kill()
        for bot in remotes:
            bot.kill()
            bot.wait()
    assert referee.returncode == 0, err
    rows = stored_matches(tmp_path / "arena.db")
    assert len(rows) == 12, err  # 6 pairs x 2 games, every one stored
    for row in rows:
        if "staller" in (row["bot0"], row["bot1"]):
            assert row["faulty_bot"] != "staller" or row["termination"] != "disconnect", row
        if "absent" in (row["bot0"], row["bot1"]):
            assert row["termination"] == "forfeit", row
    assert "missing: absent" in err, err
    events = _log_events(tmp_path, "fw")
    assert not [e for e in events if "flood" in json.dumps(e)]
    assert any(e["event"] == "no_show" and e.get("bot") == "absent" for e in events)
    ghost = [r for r in rows if "ghost" in (r["bot0"], r["bot1"]) and "absent" not in
             (r["bot0"], r["bot1"])]
    assert all(r["faulty_bot"] == "ghost" for r in ghost), ghost
    if any(r["termination"] == "forfeit" for r in ghost):  # seats it had not taken yet
        assert any(e["event"] == "remote_bot_gone" and e.get("bot") == "ghost" for e in events)


def test_when_both_seats_never_connect_neither_wins(tmp_path: Path) -> None:
    """Two remote bots that never connect: each match is a FORFEIT with no winner and no
    single faulty bot, its detail naming both seats (not a win for whichever bot happened to
    fail second)."""
    cfg = parse_config(
        {
            "tournament": {"name": "both", "games": 2, "variants": ["argentine-1v1"],
                           "database": "arena.db"},
            "faults": {"no_show_ms": 300},
            "bot": [{"name": "a", "token": "ta"}, {"name": "b", "token": "tb"}],
        },
        base=tmp_path,
    )
    trio.run(TournamentRunner(cfg).run)
    rows = stored_matches(tmp_path / "arena.db")
    assert len(rows) == 2
    for row in rows:
        assert row["termination"] == "forfeit"
        assert row["winner_bot"] is None, row
        assert row["faulty_bot"] is None, row
        assert "seat 0: a did not connect" in row["detail"] or "seat 0: b" in row["detail"]
        assert "seat 1:" in row["detail"], row["detail"]


def test_a_stolen_seat_token_is_refused_and_charged_to_the_thief(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hostile launched bot (unsandboxed) that gets its sibling's one-off token (leaked
    to it through a file, as /proc/<pid>/environ would) and presents it first, from its own
    process, is refused (UNAUTHENTICATED: the connecting socket belongs to another process
    tree); the attempt is logged as `hijack_attempt` naming both bots, the thief's own
    connection is ended so its match is recorded against it, and the victim, which connects
    late, is never charged anything."""
    leak = tmp_path / "leak.txt"
    leak.write_text("")
    admit = Hub.admit

    def leaky_admit(self: Hub, token: str, bot_name: str, *args: Any, **kwargs: Any) -> None:
        with leak.open("a") as out:
            out.write(f"{bot_name} {token}\n")
        admit(self, token, bot_name, *args, **kwargs)

    monkeypatch.setattr(Hub, "admit", leaky_admit)
    cfg = parse_config(
        {
            "tournament": {"name": "theft", "games": 2, "variants": ["argentine-1v1"],
                           "concurrency": 1},
            "options": {"argentine-1v1": {"target": 15, "chicos": 1}},
            # Unsandboxed on purpose: the process-tree check must hold even without the
            # sandbox (in it, the thief could not read the leak, nor any /proc of a sibling).
            "sandbox": {"mode": "none"},
            "bot": [
                {"name": "thief", "command": ["python", str(TEST_BOTS / "thief.py"),
                                              str(leak), "victim"]},
                {"name": "victim", "command": ["python", str(TEST_BOTS / "late_start.py")]},
            ],
        },
        base=tmp_path,
    )
    with capture_logs() as logs:
        trio.run(TournamentRunner(cfg).run)
    outcomes = Path(f"{leak}.outcome").read_text().split()
    assert outcomes == ["UNAUTHENTICATED", "UNAUTHENTICATED"]
    rows = stored_matches(tmp_path / "arena.db")
    assert len(rows) == 2
    for row in rows:
        assert row["faulty_bot"] == "thief", (row["termination"], row["detail"])
        assert "hijack attempt" in row["detail"], row
    attempts = [e for e in logs if e["event"] == "hijack_attempt"]
    assert len(attempts) == 2
    assert all(e["thief"] == "thief" and e["victim"] == "victim" for e in attempts)


def _lower_open_files() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))


def test_an_idle_connection_flood_under_a_low_file_limit_costs_honest_bots_nothing(
    tmp_path: Path,
) -> None:
    """The referee runs with at most 256 open files (soft and hard); while two honest
    launched bots play, 1,100 TCP connections are opened to it that never send a byte. The
    referee caps its connections below its file limit and closes connections that do not
    complete the handshake by the hello deadline, so it never runs out of file descriptors:
    every match ends normally and the run exits 0."""
    port = _free_port()
    config = tmp_path / "flood.toml"
    config.write_text(
        f'[tournament]\nname = "flood"\nseed = 3\ngames = 6\nvariants = ["argentine-1v1"]\n'
        f'concurrency = 2\nlisten = "127.0.0.1:{port}"\n'
        "[options.argentine-1v1]\ntarget = 15\nchicos = 1\n"
        "[faults]\nhello_ms = 1500\n"
        f'[[bot]]\nname = "one"\ncommand = ["python", "{TEST_BOTS / "first_legal.py"}"]\n'
        f'[[bot]]\nname = "two"\ncommand = ["python", "{TEST_BOTS / "first_legal.py"}"]\n'
    )
    referee = subprocess.Popen(
        [str(ARENA), "tournament", str(config), "--no-progress"], cwd=tmp_path,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=_lower_open_files,
    )
    flood: list[socket.socket] = []
    try:
        _wait_listening(port, referee)
        for _ in range(1100):
            try:
                flood.append(socket.create_connection(("127.0.0.1", port), timeout=5))
            except OSError:
                break  # the door is shut: that is admission control too
        _, err = referee.communicate(timeout=240)
    finally:
        referee.kill()
        referee.communicate()  # (its pipes closed, even when the test failed)
        for sock in flood:
            sock.close()
    assert referee.returncode == 0, err
    rows = stored_matches(tmp_path / "arena.db")
    assert len(rows) == 6, err
    assert [r["termination"] for r in rows] == ["normal"] * 6, [r["detail"] for r in rows]
