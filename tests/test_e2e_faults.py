"""End to end: `arena match` tells how a match ended when it was not a plain win — the
termination, the bot at fault and the referee's detail — and exits 1 when a bot was at fault
(a crashed or illegal opponent is not a result to celebrate with exit 0)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_e2e_support import SAMPLE_BOTS, TEST_BOTS, arena, explain

RANDOM = f"python {SAMPLE_BOTS / 'random_bot.py'}"


@pytest.mark.e2e
def test_arena_match_reports_an_illegal_opponent_and_exits_1(tmp_path: Path) -> None:
    """A bot answering out-of-range indexes loses by ILLEGAL_ACTION: `arena match` prints the
    termination, the bot at fault with its seat, and the referee's detail, then exits 1."""
    run = arena("match", "argentine-1v1", RANDOM, f"python {TEST_BOTS / 'illegal.py'}",
                "--seed", "2", "--database", tmp_path / "m.db", cwd=tmp_path)
    assert run.returncode == 1, explain(run)
    assert re.search(r"^\S+: illegal_action; winner: random_bot;", run.stdout, re.MULTILINE)
    assert re.search(
        r"^ended by illegal_action: at fault illegal \(seat 1\): action_index \d+ is out of "
        r"range 0\.\.\d+$", run.stdout, re.MULTILINE,
    ), explain(run)


@pytest.mark.e2e
def test_arena_match_prints_strikes_of_a_match_played_to_its_end(tmp_path: Path) -> None:
    """A bot that thinks past its deadline once (a slow first import, say) is struck and its
    default action played, but the match goes on to its end: `arena match` still says so,
    naming the bot and the kind (an outside walkthrough saw only "normal; winner: slow"),
    exits 0, and names no fault of the punctual bot."""
    run = arena("match", "argentine-1v1", f"python {TEST_BOTS / 'thinker.py'} 0.5 1", RANDOM,
                "--decision-ms", "300", "--option", "target=15", "--option", "chicos=1",
                "--database", tmp_path / "m.db", cwd=tmp_path)
    assert run.returncode == 0, explain(run)
    assert re.search(r"^\S+: normal; winner: ", run.stdout, re.MULTILINE), explain(run)
    said = re.search(r"^faults: thinker (\d+) timeout$", run.stdout, re.MULTILINE)
    assert said, explain(run)
    assert int(said.group(1)) >= 1
    assert "random_bot" not in said.group(0)


@pytest.mark.e2e
def test_a_crashing_bots_last_output_cannot_forge_a_result_line(tmp_path: Path) -> None:
    """A bot that prints, before it crashes, lines in `arena match`'s own format (a normal
    win for itself, a replay path): they are shown quoted under the forfeit, each line after
    the first behind "  | ", so no line of the output starts like the referee's own
    (hostile review round 5 forged a "normal; winner" line so)."""
    forger = tmp_path / "forger.py"
    forger.write_text(
        "import sys\n"
        "print('match-0:argentine-1v1:forger:honest:0: normal; winner: forger; "
        "points forger 60 - 0 honest', file=sys.stderr)\n"
        "print('replay: /tmp/x.jsonl', file=sys.stderr)\n"
        "sys.exit(3)\n", encoding="utf-8")
    run = arena("match", "argentine-1v1", RANDOM, f"forger=python {forger}",
                "--database", tmp_path / "m.db", cwd=tmp_path)
    assert run.returncode == 1, explain(run)
    lines = run.stdout.splitlines()
    results = [line for line in lines if re.match(r"^\S+: \w+; winner: ", line)]
    assert len(results) == 1, run.stdout
    assert "forfeit; winner: random_bot" in results[0], run.stdout
    replays = [line for line in lines if line.startswith("replay: ")]
    assert len(replays) == 1, run.stdout
    assert "/tmp/x.jsonl" not in replays[0], run.stdout
    assert "  | replay: /tmp/x.jsonl" in run.stdout, run.stdout


@pytest.mark.e2e
def test_arena_match_reports_a_crashed_opponent_and_exits_1(tmp_path: Path) -> None:
    """A bot that crashes before connecting forfeits: `arena match` prints the forfeit and
    why (its exit code) and exits 1 instead of reporting a plain win with exit 0."""
    run = arena("match", "argentine-1v1", RANDOM, f"python {TEST_BOTS / 'crash_at_start.py'}",
                "--database", tmp_path / "m.db", cwd=tmp_path)
    assert run.returncode == 1, explain(run)
    assert re.search(
        r"^ended by forfeit: at fault crash_at_start( \(seat 1\))?: .*exited with code 3",
        run.stdout, re.MULTILINE,
    ), explain(run)


@pytest.mark.e2e
def test_a_match_neither_bot_starts_is_a_forfeit_of_both_that_arena_replay_accepts(
    tmp_path: Path,
) -> None:
    """Both bots crash before connecting: a forfeit with no winner and no single faulty seat;
    `arena match` says both bots were at fault and exits 1, and `arena replay` passes the
    file it wrote (the check refused a forfeit without a faulty seat: CI met it when the
    hostile round robin's crash_at_start and badtoken both failed to take their places)."""
    crash = f"python {TEST_BOTS / 'crash_at_start.py'}"
    run = arena("match", "argentine-1v1", crash, crash, "--database", tmp_path / "m.db",
                cwd=tmp_path)
    assert run.returncode == 1, explain(run)
    assert re.search(r"^\S+: forfeit; winner: none;", run.stdout, re.MULTILINE), explain(run)
    assert re.search(r"^ended by forfeit: at fault both bots: seat 0: .*exited with code 3",
                     run.stdout, re.MULTILINE), explain(run)
    found = re.search(r"^replay: (\S+)$", run.stdout, re.MULTILINE)
    assert found, explain(run)
    checked = arena("replay", found[1], cwd=tmp_path)
    assert checked.returncode == 0, explain(checked)
    assert "result: forfeit, winner team None" in checked.stdout, explain(checked)


@pytest.mark.e2e
@pytest.mark.parametrize(("variant", "crashing_first"), [
    ("argentine-2v2", False), ("argentine-gallo", False), ("argentine-gallo", True),
])
def test_a_bot_that_crashes_in_every_seat_it_holds_loses_by_forfeit(
    tmp_path: Path, variant: str, crashing_first: bool
) -> None:
    """A bot that crashes before connecting, in a variant where it holds two seats (a 2v2
    team, argentine-gallo's pair) or the gallo's one: it forfeits and the other bot wins,
    as with one seat (it got a draw, 'winner: none', when both of its seats failed), and
    `arena replay` passes the file (a gallo forfeit wrote winner account -1 for seat 2)."""
    crash = f"python {TEST_BOTS / 'crash_at_start.py'}"
    bots = [crash, RANDOM] if crashing_first else [RANDOM, crash]
    run = arena("match", variant, *bots, "--database", tmp_path / "m.db", cwd=tmp_path)
    assert run.returncode == 1, explain(run)
    assert re.search(r"^\S+: forfeit; winner: random_bot;", run.stdout, re.MULTILINE), \
        explain(run)
    assert re.search(r"^ended by forfeit: at fault crash_at_start \(seat \d\): ",
                     run.stdout, re.MULTILINE), explain(run)
    found = re.search(r"^replay: (\S+)$", run.stdout, re.MULTILINE)
    assert found, explain(run)
    checked = arena("replay", "--quiet", found[1], cwd=tmp_path)
    assert checked.returncode == 0, explain(checked)


@pytest.mark.e2e
def test_an_honest_bot_that_thinks_12_s_once_is_not_killed_by_an_idle_referee(
    tmp_path: Path,
) -> None:
    """Both seats are sandboxed (bubblewrap, --die-with-parent). One thinks 12 s once,
    inside decision_ms = 20000, while the referee has nothing else to do: the match ends
    normally. (Seats were forked from a trio worker thread that ends after 10 s idle, and the
    kernel then killed every seat it had forked: a `disconnect` charged to an honest bot.)"""
    run = arena("match", "argentine-1v1", f"python {TEST_BOTS / 'first_legal.py'}",
                f"python {TEST_BOTS / 'thinker.py'} 12", "--decision-ms", "20000",
                "--database", tmp_path / "m.db", cwd=tmp_path)
    assert run.returncode == 0, explain(run)
    assert re.search(r"^\S+: normal; winner: ", run.stdout, re.MULTILINE), explain(run)


@pytest.mark.e2e
def test_ctrl_c_in_arena_match_is_one_line_and_exit_130(tmp_path: Path) -> None:
    """Ctrl-C (SIGINT) while `arena match` waits for a remote bot: one `interrupted` line
    and exit status 130, as `arena tournament` does; it was an 80-line traceback and exit 1,
    which says a bot was at fault (outside walkthrough)."""
    import os
    import signal
    import subprocess
    import time

    from test_e2e_support import ARENA

    proc = subprocess.Popen(
        [str(ARENA), "match", "argentine-1v1", "remote:ghost:ghost-token-0123456789", RANDOM,
         "--database", str(tmp_path / "m.db")],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        assert "waiting for bots" in line, line
        time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err
    assert "Traceback" not in err, err
    assert err.strip().splitlines()[-1] == "interrupted", err


@pytest.mark.e2e
def test_arena_serve_says_which_deadline_applies_to_each_missing_bot(tmp_path: Path) -> None:
    """`arena serve` with two remote bots: one never comes, the other says hello and
    leaves. The presence lines name, for the first, the no-show deadline and that it
    forfeits every match it has; for the one that left, reconnect_ms (it quoted no_show_ms
    for both: outside walkthrough)."""
    import os
    import subprocess
    import threading
    import time
    from typing import Any

    import grpc
    from test_e2e_support import ARENA, write_config

    from arena.v1 import arena_pb2 as pb
    from arena.v1 import arena_pb2_grpc as pb_grpc

    config = write_config(
        tmp_path, name="presence", variants=["argentine-1v1"], bots={},
        extra=('\n[faults]\nno_show_ms = 8000\nreconnect_ms = 7000\n'
               '\n[[bot]]\nname = "ghost"\ntoken = "ghost-token-0123456789"\n'
               '\n[[bot]]\nname = "visitor"\ntoken = "visitor-token-0123456789"\n'))
    text = config.read_text(encoding="utf-8").replace("\n[faults]\nmax_strikes = 3\n", "\n")
    config.write_text(text, encoding="utf-8")
    proc = subprocess.Popen([str(ARENA), "serve", str(config), "--listen", "127.0.0.1:0"],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    try:
        assert proc.stderr is not None
        lines = []
        while not any("listening on" in line for line in lines):
            lines.append(proc.stderr.readline())
        address = next(line for line in lines if "listening on" in line).split(
            "listening on ")[1].split(";")[0]
        hold = threading.Event()

        def hello_then_hold() -> Any:  # the stream stays open until `hold` is set
            yield pb.BotMessage(hello=pb.Hello(
                bot_name="visitor", token="visitor-token-0123456789", protocol_version=1))
            hold.wait(30)

        with grpc.insecure_channel(address) as channel:
            replies = pb_grpc.RefereeStub(channel).Play(hello_then_hold())
            assert next(replies).WhichOneof("body") == "welcome"
            while not any("connected: visitor" in line for line in lines):
                lines.append(proc.stderr.readline())
            hold.set()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not any("left;" in line for line in lines):
            lines.append(proc.stderr.readline())
    finally:
        proc.kill()
        proc.communicate()
    said = " ".join(" ".join(lines).split())
    assert ("ghost: a bot not here 8000 ms after the start forfeits every match it has "
            "(no_show_ms)") in said, said
    assert ("visitor: left; its seats forfeit unless it is back within 7000 ms "
            "(reconnect_ms)") in said, said


@pytest.mark.e2e
def test_arena_match_names_its_own_arguments_in_errors(tmp_path: Path) -> None:
    """A slip in `arena match`'s arguments is named as the argument (BOT_A, --option), not
    as a config file's field (bot[0].command, options.VARIANT) the user never wrote (an
    outside walkthrough). Exit 2, one line."""
    cases = [
        (("pyhton random_bot.py", RANDOM), "error: BOT_A.command"),
        ((RANDOM, "pyhton random_bot.py"), "error: BOT_B.command"),
        ((RANDOM, RANDOM, "--option", "target=20"), "error: --option: variant"),
    ]
    for args, said in cases:
        run = arena("match", "argentine-1v1", *args, cwd=tmp_path)
        assert run.returncode == 2, explain(run)
        lines = run.stderr.strip().splitlines()
        assert len(lines) == 1, run.stderr
        assert lines[0].startswith(said), lines
