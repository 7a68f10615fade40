"""`arena serve`: a referee that waits for remote bots, which connect with their tokens."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from arena.tournament.store import Store

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.e2e
def test_serve_plays_remote_bots_that_connect_with_their_tokens(tmp_path: Path) -> None:
    """Two remote bots (a Python SDK bot and the JS bot) dial the referee with their tokens;
    a bot with a wrong token is refused; the round robin completes and is stored."""
    port = free_port()
    config = tmp_path / "serve.toml"
    config.write_text(
        f"""
[tournament]
name = "remote"
matches_per_pair = 2
variants = ["argentine-1v1", "mineiro-2v2"]
listen = "127.0.0.1:{port}"

[options.argentine-1v1]
target = 15
chicos = 1

[[bot]]
name = "py-remote"
token = "tok-py-0123456789abcdef"

[[bot]]
name = "js-remote"
token = "tok-js-0123456789abcdef"
"""
    )
    referee = subprocess.Popen(
        [sys.executable, "-m", "arena.cli", "serve", str(config)],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    address = f"127.0.0.1:{port}"
    bots: list[subprocess.Popen[bytes]] = []
    try:
        assert referee.stderr is not None
        announced = referee.stderr.readline()  # the first thing it prints: where it listens
        assert "waiting for bots" in announced, announced
        bots = [
            subprocess.Popen(
                [sys.executable, str(ROOT / "sample_bots" / "random_bot.py"),
                 "--server", address, "--token", "tok-py-0123456789abcdef", "--name", "py"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            ),
            subprocess.Popen(
                ["node", str(ROOT / "sample_bots" / "js_random" / "bot.js"),
                 "--server", address, "--token", "tok-js-0123456789abcdef", "--name", "js",
                 "--seed", "3"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            ),
        ]
        intruder = subprocess.run(
            [sys.executable, str(ROOT / "sample_bots" / "random_bot.py"),
             "--server", address, "--token", "wrong"],
            capture_output=True, text=True, timeout=60,
        )
        out, err = referee.communicate(timeout=120)
        bot_codes = [bot.wait(timeout=30) for bot in bots]
    finally:
        for process in [referee, *bots]:
            if process.poll() is None:
                process.kill()
                process.wait()
        if referee.stderr is not None:
            referee.stderr.close()
        if referee.stdout is not None:
            referee.stdout.close()
    assert referee.returncode == 0, err
    assert "UNAUTHENTICATED" in intruder.stderr
    rows = Store(tmp_path / "arena.db").matches("remote")
    assert len(rows) == 4
    assert {r.termination for r in rows} == {"normal"}
    assert {r.bot0 for r in rows} == {"py-remote", "js-remote"}
    assert "py-remote" in out
    assert "js-remote" in out
    # The referee ended the remote bots' streams normally: both exit 0.
    assert bot_codes == [0, 0]


@pytest.mark.e2e
def test_remote_bots_started_before_their_referee_say_they_wait_then_play(
    tmp_path: Path,
) -> None:
    """Remote bots may start before their referee listens: they wait for it. They waited in
    silence, however long, so a wrong --server looked like a hang (outside walkthrough 2).
    Now a Python SDK bot and a stdio bot (`arena stdio`, the C kit) say on stderr, after
    3 s, that no referee answers at the address they dial; then `arena serve` starts there
    and they play the round robin to its end."""
    import threading

    port = free_port()
    address = f"127.0.0.1:{port}"
    config = tmp_path / "late.toml"
    config.write_text(
        f"""
[tournament]
name = "late"
variants = ["argentine-1v1"]
listen = "{address}"

[options.argentine-1v1]
target = 15
chicos = 1

[[bot]]
name = "py"
token = "tok-py-0123456789abcdef"

[[bot]]
name = "lines"
token = "tok-lines-0123456789abcdef"
"""
    )
    bots = [
        subprocess.Popen([sys.executable, str(ROOT / "sample_bots" / "random_bot.py"),
                          "--server", address, "--token", "tok-py-0123456789abcdef"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True),
        subprocess.Popen([str(Path(sys.executable).parent / "arena"), "stdio", "--server",
                          address, "--token", "tok-lines-0123456789abcdef", "--name", "lines",
                          "--", str(ROOT / "sample_bots" / "c_random" / "bot")],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True),
    ]
    said: list[list[str]] = [[], []]

    def read(index: int) -> None:
        stream = bots[index].stderr
        assert stream is not None
        for line in stream:
            said[index].append(line)

    readers = [threading.Thread(target=read, args=(i,), daemon=True) for i in range(2)]
    for reader in readers:
        reader.start()
    referee = None
    try:
        for _ in range(300):  # both have said it (within 3 s of starting, and some slack)
            if all(any(f"no referee at {address} after 3 s" in line for line in lines)
                   for lines in said):
                break
            threading.Event().wait(0.1)
        assert all(any(f"no referee at {address}" in line for line in lines)
                   for lines in said), said
        assert all(bot.poll() is None for bot in bots), said  # still waiting, not gone
        referee = subprocess.run([sys.executable, "-m", "arena.cli", "serve", str(config)],
                                 cwd=tmp_path, capture_output=True, text=True, timeout=120)
        codes = [bot.wait(timeout=30) for bot in bots]
    finally:
        for bot in bots:
            if bot.poll() is None:
                bot.kill()
                bot.wait()
        for reader in readers:
            reader.join(timeout=10)
        for bot in bots:
            if bot.stderr is not None:
                bot.stderr.close()
    assert referee is not None
    assert referee.returncode == 0, referee.stderr
    assert codes == [0, 0], said
    rows = Store(tmp_path / "arena.db").matches("late")
    assert len(rows) == 2  # both sides
    assert {r.termination for r in rows} == {"normal"}, [r.detail for r in rows]
