"""Hostile bots against the real referee: one `arena tournament` on localhost with honest bots
and bots that misbehave in every way the wire allows, then the rpc-level cases a tournament
cannot reach quickly (half-open connections, undecodable streams).

The tournament (module fixture `hostile`) is the real CLI in a subprocess, a config under
tmp_path, a 300 ms deadline (with a 2 s bank per seat and match), a 2 s hello deadline
(`[faults] hello_ms`), one Argentine chico to 15 and Mineiro to 12, and a round robin of:

- honest bots, deterministic when seeded: the Python random bot (ARENA_BOT_SEED) and the
  JavaScript bot (--seed);
- `confused` (tests/bots/hostile_confused.py): answers correctly, wrapped in answers to
  unknown requests, for another seat, and twice; all refused in-band, none a fault;
- bots that lose by a fault, each with its own typed termination (FAULTS below): silent,
  slow (answers after the deadline), illegal, bytes (junk on raw sockets, then bytes that are
  not protobuf on its stream), oversized (a 100 KiB message), disconnect (dies mid-hand),
  flood (20,000 stray messages at its first decision), crash_at_start, mute (opens a stream
  and never says hello), badtoken (says hello with a token that is not its own).

Each hostile bot built on tests/bots/hostile_common.py notes what the referee told it (in-band
error codes, the final gRPC status) in $HOSTILE_DUMP_DIR; the tests read those notes. The
honest pair's matches are compared with a tournament of the honest pair alone (fixture
`honest_alone`).

Half-open connections: a remote bot that freezes itself (SIGSTOP) in an `arena serve`
tournament, and, at the rpc level with a short keepalive (a tournament uses 20 s + 10 s),
the keepalive dropping a frozen client. Undecodable bytes: at the rpc level, the stream is
ended at once.
"""

from __future__ import annotations

import json
import os
import queue
import secrets
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import grpc
import pytest
import trio
from test_e2e_support import (
    ARENA,
    CLI_TIMEOUT,
    SAMPLE_BOTS,
    TEST_BOTS,
    against_random,
    arena,
    bot_cmd,
    expected_ids,
    explain,
    processes_with,
    python_bot,
    read_replay,
    stored_matches,
    write_config,
)

from arena.errors import BotDisconnected
from arena.replay import load_replay, verify_replay
from arena.rpc.bridge import serve_grpc, server_options
from arena.rpc.server import PLAY_ROUTE, Hub, serve_referee
from arena.tournament.cgroups import find_cgroups
from arena.v1 import arena_pb2 as pb

DECISION_MS = 300
MAX_STRIKES = 3
HELLO_MS = 2000  # [faults] hello_ms: how long a stream may stay silent (`mute`)
# A bank on top of the 300 ms deadline: an honest bot slowed down once by a loaded machine is
# not struck; a bot that never answers in time uses the bank up at its first decision.
BANK_MS = 2000
VARIANTS = ("argentine-1v1", "mineiro-1v1")
OPTIONS = {"argentine-1v1": {"target": 15, "chicos": 1}}
SEED = 2026
HONEST = ("random", "js-random")
BENIGN = (*HONEST, "confused")  # never at fault
# Each faulty bot: its termination, and words the stored detail must contain.
FAULTS: dict[str, tuple[str, tuple[str, ...]]] = {
    "silent": ("timeout", (f"no answer within {DECISION_MS} ms",)),
    "slow": ("timeout", (f"no answer within {DECISION_MS} ms",)),
    "illegal": ("illegal_action", ("out of range",)),
    "bytes": ("disconnect", ("bytes:", "not a valid request", "DecodeError")),
    "oversized": ("disconnect", ("oversized:", "bytes, over the limit of 65,536")),
    "disconnect": ("disconnect", ("disconnect:",)),
    "flood": ("disconnect", ("flood:", "message flood")),
    "crash_at_start": (
        "forfeit",
        ("exited with code 3 before connecting", "cannot load weights.bin (deliberate"),
    ),
    "mute": (
        "forfeit",
        (
            "mute exited with code 5 before connecting",
            f"told ERROR_CODE_BAD_HELLO: no hello within {HELLO_MS / 1000} s",
        ),
    ),
    "badtoken": (
        "forfeit",
        ("exited with code 4 before connecting", "refused: ERROR_CODE_UNAUTHENTICATED"),
    ),
}
AT_START = {bot for bot, (termination, _) in FAULTS.items() if termination == "forfeit"}
BOT_SEED = "7"


def _bots(js_random: list[str]) -> dict[str, list[str]]:
    return {
        "random": python_bot(SAMPLE_BOTS / "random_bot.py"),
        "js-random": [*js_random, "--seed", BOT_SEED],
        "confused": bot_cmd("hostile_confused"),
        "silent": bot_cmd("silent"),
        "slow": bot_cmd("hostile_slow"),
        "illegal": bot_cmd("illegal"),
        "bytes": bot_cmd("hostile_bytes"),
        "oversized": bot_cmd("hostile_oversized"),
        "disconnect": bot_cmd("disconnect"),
        "flood": bot_cmd("hostile_flood"),
        "crash_at_start": bot_cmd("crash_at_start"),
        "mute": bot_cmd("hostile_mute"),
        "badtoken": bot_cmd("hostile_badtoken"),
    }


@dataclass
class Played:
    """A finished `arena tournament` run and what it left behind."""

    name: str
    bots: list[str]
    run: subprocess.CompletedProcess[str]
    rows: list[dict[str, Any]]
    told: dict[str, Counter[str]]  # bot -> what its processes noted, line -> count
    mark: str  # ARENA_E2E_MARK in the referee's (and so every bot's) environment
    log_file: Path  # the referee's structlog lines

    def events(self, name: str) -> list[dict[str, Any]]:
        """The referee's log events called `name`."""
        lines = self.log_file.read_text(encoding="utf-8").splitlines()
        return [e for e in map(json.loads, lines) if e.get("event") == name]

    def of(self, bot: str) -> list[dict[str, Any]]:
        return [r for r in self.rows if bot in (r["bot0"], r["bot1"])]


def _tournament(folder: Path, name: str, bots: dict[str, list[str]]) -> Played:
    dumps = folder / "told"
    dumps.mkdir()
    key = folder / "arena.key"  # one secret for both tournaments: the same seed, same deals
    key.write_text("4b" * 32 + "\n", encoding="ascii")
    config = write_config(
        folder,
        secret_file=key,
        name=name,
        bots=bots,
        variants=VARIANTS,
        options=OPTIONS,
        games=1,
        concurrency=6,
        decision_ms=DECISION_MS,
        max_strikes=MAX_STRIKES,
        seed=SEED,
        writable=["told"],
    )
    text = config.read_text(encoding="utf-8")
    text = text.replace("[faults]\n", f"[faults]\nhello_ms = {HELLO_MS}\n")
    text = text.replace("[time_control]\n", f"[time_control]\nbank_ms = {BANK_MS}\n")
    config.write_text(text, encoding="utf-8")
    mark = secrets.token_hex(8)
    env = {"ARENA_BOT_SEED": BOT_SEED, "HOSTILE_DUMP_DIR": str(dumps), "ARENA_E2E_MARK": mark}
    run = arena("tournament", config, "--no-progress", cwd=folder, env=env)
    told: dict[str, Counter[str]] = {}
    for path in dumps.iterdir():
        bot = path.name.split(".")[0]
        told.setdefault(bot, Counter()).update(path.read_text(encoding="utf-8").splitlines())
    rows = stored_matches(folder / "arena.db") if (folder / "arena.db").exists() else []
    return Played(name, list(bots), run, rows, told, mark, folder / "logs" / f"{name}.jsonl")


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory, js_random: list[str]) -> Played:
    return _tournament(tmp_path_factory.mktemp("hostile"), "hostile", _bots(js_random))


@pytest.fixture(scope="module")
def honest_alone(tmp_path_factory: pytest.TempPathFactory, js_random: list[str]) -> Played:
    bots = {name: cmd for name, cmd in _bots(js_random).items() if name in HONEST}
    return _tournament(tmp_path_factory.mktemp("honest"), "honest", bots)


def _seat_of(row: dict[str, Any], bot: str) -> int:
    return 0 if row["bot0"] == bot else 1  # 1v1: seat = team


# ---------------------------------------------------------------------------------------------
# The tournament


@pytest.mark.e2e
def test_the_referee_survives_and_stores_every_scheduled_match(hostile: Played) -> None:
    """With every hostile bot in the round robin the referee still exits 0, stores exactly
    one row per scheduled match, and leaves a replay per match that replays through the rules
    engine to the stored ending."""
    assert hostile.run.returncode == 0, explain(hostile.run)
    ids = expected_ids("hostile", hostile.bots, VARIANTS, 1)
    assert [r["id"] for r in hostile.rows] == sorted(ids)
    for row in hostile.rows:
        replay = load_replay(Path(row["replay"]))
        verify_replay(replay)
        assert replay.result is not None
        assert replay.result["termination"] == row["termination"], row


@pytest.mark.e2e
@pytest.mark.parametrize("bot", list(FAULTS))
def test_a_hostile_bot_loses_by_its_own_typed_fault(hostile: Played, bot: str) -> None:
    """Every match of a faulty bot ends with the termination of the bot at fault, which the
    row names (faulty_bot and faulty_seat), with the detail that says what it did; its side
    loses. Against an honest or merely noisy bot the culprit is always the faulty bot and
    the other side has no strike; a bot that fails before the match starts (crash, no hello,
    wrong token) is always the culprit against one that fails during it; between two faulty
    bots of the same stage either may fault first, and whichever did has its own
    termination — or, when two bots both fail to take their places, neither wins and the
    detail names both. Timeouts and illegal actions end the match at the third strike, forfeits
    before any decision."""
    rows = hostile.of(bot)
    assert len(rows) == (len(hostile.bots) - 1) * len(VARIANTS)
    for row in rows:
        opponent = row["bot1"] if row["bot0"] == bot else row["bot0"]
        if opponent in BENIGN or (bot in AT_START and opponent not in AT_START):
            assert row["faulty_bot"] == bot, row
        elif opponent in AT_START and bot not in AT_START:
            assert row["faulty_bot"] == opponent, row
        elif row["faulty_bot"] is None:
            # Both failed to take their places (README "Faults"): no winner, both named.
            assert bot in AT_START, row
            assert opponent in AT_START, row
            assert row["termination"] == "forfeit", row
            assert row["winner_bot"] is None, row
            assert "seat 0" in row["detail"], row
            assert "seat 1" in row["detail"], row
            continue
        else:
            assert row["faulty_bot"] in (bot, opponent), row
        culprit = row["faulty_bot"]
        termination, words = FAULTS[culprit]
        assert row["termination"] == termination, row
        for word in words:
            assert word in row["detail"], row
        seat = _seat_of(row, culprit)
        assert row["faulty_seat"] == seat, row
        assert row["winner_bot"] == 1 - seat, row
        strikes = json.loads(row["strikes"])
        if termination in ("timeout", "illegal_action"):
            assert strikes[seat] == MAX_STRIKES, row
        if termination == "forfeit":
            assert row["decisions"] == 0, row
            assert strikes == [0, 0], row
        if opponent in BENIGN:
            assert strikes[1 - seat] == 0, row


@pytest.mark.e2e
def test_honest_and_noisy_bots_play_each_other_normally(hostile: Played) -> None:
    """Matches among the honest bots and `confused` end normally, with a winner and zero
    strikes: the refused noise of `confused` (unknown request ids, answers for another seat,
    duplicates) is never taken for its answer and never counted as a fault."""
    rows = [r for r in hostile.rows if r["bot0"] in BENIGN and r["bot1"] in BENIGN]
    assert len(rows) == 3 * len(VARIANTS)
    for row in rows:
        assert row["termination"] == "normal", row
        assert row["winner_bot"] in (0, 1), row
        assert json.loads(row["strikes"]) == [0, 0], row


@pytest.mark.e2e
def test_honest_matches_are_those_of_the_honest_pair_alone(
    hostile: Played, honest_alone: Played
) -> None:
    """The honest pair plays exactly the same matches with eleven hostile bots in the same
    tournament as in a tournament of its own with the same seed: same actions in the same
    order (replay files), same winner, points and games, and no fault recorded."""
    assert honest_alone.run.returncode == 0, explain(honest_alone.run)
    alone = {r["id"].split(":", 1)[1]: r for r in honest_alone.rows}
    among = {
        r["id"].split(":", 1)[1]: r for r in hostile.rows if {r["bot0"], r["bot1"]} == set(HONEST)
    }
    assert set(among) == set(alone)
    assert len(alone) == len(VARIANTS)
    for key, row in among.items():
        solo = alone[key]
        for column in (
            "termination",
            "winner_bot",
            "points0",
            "points1",
            "games0",
            "games1",
            "seed",
            "bot0",
            "bot1",
            "strikes",
            "decisions",
        ):
            assert row[column] == solo[column], (column, row, solo)
        assert row["termination"] == "normal", row
        assert json.loads(row["strikes"]) == [0, 0], row

        def actions(path: str) -> list[tuple[Any, ...]]:
            return [
                (ln["game"], ln["hand"], ln["seat"], ln["action"]["text"], ln["fault"])
                for ln in read_replay(Path(path))
                if ln["type"] == "action"
            ]

        played = actions(row["replay"])
        assert played == actions(solo["replay"])
        assert len(played) == row["decisions"] > 0


@pytest.mark.e2e
def test_protocol_noise_is_refused_in_band(hostile: Played) -> None:
    """What the noisy and late bots were told: `confused` got UNKNOWN_REQUEST for the request
    that does not exist, NOT_YOUR_SEAT for the answer for another seat and DUPLICATE_ANSWER
    for the second answer, and nothing else; `slow` was told each TIMEOUT strike (protocol
    1.1) and got LATE_ANSWER for its answers after the deadline (never more of them than
    timeouts), and nothing else."""
    confused = {line for line in hostile.told["confused"] if line.startswith("error ")}
    assert confused == {
        "error ERROR_CODE_UNKNOWN_REQUEST",
        "error ERROR_CODE_NOT_YOUR_SEAT",
        "error ERROR_CODE_DUPLICATE_ANSWER",
    }, hostile.told["confused"]
    # ... and the referee's log says so, per connection (what `arena check` reads as "sends
    # nothing the referee refuses"), counting each refusal the bot was told of, and at most
    # one more per code and match (the last may be written after the bot stopped reading).
    refused: Counter[str] = Counter()
    for event in hostile.events("messages_refused"):
        assert event["bot"] not in HONEST, event
        if event["bot"] == "confused":
            assert len(event["matches"]) == 1, event
            assert event["matches"][0].startswith("hostile:"), event
            refused.update(event["counts"])
    was_told = {code.removeprefix("error ERROR_CODE_"): n
                for code, n in hostile.told["confused"].items() if code.startswith("error ")}
    assert set(refused) == set(was_told), refused
    matches = len(hostile.of("confused"))
    for code, n in was_told.items():
        assert n <= refused[code] <= n + matches, (code, refused, was_told)
    slow = {line for line in hostile.told["slow"] if line.startswith("error ")}
    told = hostile.told["slow"]
    assert slow == {"error ERROR_CODE_LATE_ANSWER", "error ERROR_CODE_TIMEOUT"}, told
    assert told["error ERROR_CODE_TIMEOUT"] >= told["error ERROR_CODE_LATE_ANSWER"], told


@pytest.mark.e2e
def test_wire_abuse_ends_the_stream_with_the_right_status(hostile: Played) -> None:
    """What the wire-abusing bots were told before their streams ended: `flood` got
    RATE_LIMITED, then the status RESOURCE_EXHAUSTED; `oversized` had its 100 KiB message
    refused in-band (MESSAGE_TOO_LARGE), then RESOURCE_EXHAUSTED; `bytes` saw the referee
    close every junk socket it opened (an HTTP/1.1 request; the HTTP/2 preface and a
    malformed frame), and each undecodable message it sent was answered MALFORMED in-band,
    then INVALID_ARGUMENT (the stream is ended at once, not left open until the match
    ends)."""
    flood = hostile.told["flood"]
    assert flood["error ERROR_CODE_RATE_LIMITED"] >= 1, flood
    assert flood["status RESOURCE_EXHAUSTED"] == flood["error ERROR_CODE_RATE_LIMITED"], flood
    oversized = hostile.told["oversized"]
    assert oversized["status RESOURCE_EXHAUSTED"] >= 1, oversized
    too_large = oversized["error ERROR_CODE_MESSAGE_TOO_LARGE"]
    assert too_large == oversized["status RESOURCE_EXHAUSTED"], oversized
    told = hostile.told["bytes"]
    # Every junk socket was closed by the referee (none timed out; a bytes process stopped
    # early, when its opponent failed before the match, may have opened only one).
    sockets = {k: v for k, v in told.items() if k.startswith("socket")}
    assert list(sockets) == ["socket closed by the referee"], told
    assert sockets["socket closed by the referee"] >= 2, told
    sent_junk = [r for r in hostile.of("bytes") if r["faulty_bot"] == "bytes"]
    assert (
        told["error ERROR_CODE_MALFORMED"] == told["status INVALID_ARGUMENT"] == len(sent_junk)
    ), told


@pytest.mark.e2e
def test_no_bot_process_outlives_the_tournament(hostile: Played) -> None:
    """When `arena tournament` returns, every bot process it launched is gone: those stopped
    while still starting (their opponent failed first), those busy when their match ended
    (`slow` with answers still due, `flood` mid-flood) and the ones that died on their own.
    None still runs with the marker the test put in the referee's environment."""
    assert hostile.run.returncode == 0, explain(hostile.run)
    assert processes_with(hostile.mark) == []


# ---------------------------------------------------------------------------------------------
# Half-open connections


def _stopped(pid: int) -> bool:
    """Whether process `pid` is stopped (SIGSTOP): state T in /proc/<pid>/stat."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] in ("T", "t")


def _stall_bot(server: str, token: str, after: int, mark: str) -> subprocess.Popen[bytes]:
    """tests/bots/hostile_stall.py as a remote bot: it freezes itself after `after` answers."""
    env = {
        **os.environ,
        "ARENA_SERVER": server,
        "ARENA_TOKEN": token,
        "ARENA_BOT_NAME": "remote",
        "ARENA_E2E_MARK": mark,
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    return subprocess.Popen(
        [sys.executable, str(TEST_BOTS / "hostile_stall.py"), "--after", str(after)],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def _kill(process: subprocess.Popen[Any]) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)  # SIGKILL ends a stopped process too
    process.wait()


DOOR = 16  # [faults] max_pending of the door-filling tournament


@pytest.mark.e2e
def test_a_launched_bot_filling_the_bots_door_cannot_make_its_opponent_forfeit(
    tmp_path: Path,
) -> None:
    """`doorfill` (tests/bots/hostile_doorfill.py), launched like any bot, opens twice
    `max_pending` silent streams (each on a connection of its own: a connection holds two)
    through the launched bots' door (its own socket, into the silent streams the Hub counts
    for every launched seat) and opens another whenever one is closed (`max_pending` more in
    all: under its seat's 20 streams a second, 40 at once, which would kill it), then
    plays; its opponent starts 1.5 s later (late_start.py,
    below the SDK: no retry). The opponent never forfeits nor faults (the flooder may lose
    a match by its own flood, and at least one is played out), and the flood's streams were
    closed for newcomers (RESOURCE_EXHAUSTED). Before, a full door
    refused the opponent: it never connected and forfeited every match to the flooder."""
    dumps = tmp_path / "told"
    dumps.mkdir()
    bots = {
        "doorfill": [*bot_cmd("hostile_doorfill"), "--streams", str(2 * DOOR),
                     "--refills", str(DOOR)],
        "late": bot_cmd("late_start"),
    }
    config = write_config(tmp_path, name="doorfill", bots=bots, variants=["argentine-1v1"],
                          options=OPTIONS, games=2, concurrency=1, decision_ms=DECISION_MS,
                          writable=["told"])
    text = config.read_text(encoding="utf-8")
    config.write_text(text.replace("[faults]\n", f"[faults]\nmax_pending = {DOOR}\n"),
                      encoding="utf-8")
    run = arena("tournament", config, "--no-progress", cwd=tmp_path,
                env={"HOSTILE_DUMP_DIR": str(dumps)})
    assert run.returncode == 0, explain(run)
    rows = stored_matches(tmp_path / "arena.db")
    assert len(rows) == 2, rows
    for row in rows:
        # The flooder may lose by its own flood (its own hello refused at the door it keeps
        # full: "doorfill exited with code 0 before connecting", seen once in a fresh-clone
        # run); its opponent never forfeits nor faults.
        assert row["termination"] == "normal" or row["faulty_bot"] == "doorfill", (
            row["termination"], row["faulty_bot"], row["detail"])
    assert any(row["termination"] == "normal" and row["faulty_bot"] is None
               and row["decisions"] > 0 for row in rows), rows
    assert not any(row["strikes"] and json.loads(row["strikes"])[
        0 if row["bot0"] == "late" else 1] for row in rows), rows
    told = Counter[str]()
    for path in dumps.iterdir():
        told.update(path.read_text(encoding="utf-8").splitlines())
    assert told["silent RESOURCE_EXHAUSTED"] == len(rows), told  # once per match's process


@pytest.mark.e2e
def test_a_launched_bot_holding_connections_by_the_hundred_is_killed_and_charged(
    tmp_path: Path,
) -> None:
    """`jammer` (tests/bots/hostile_jammer.py) opens 200 idle connections to the socket every
    launched seat shares as it starts and holds them 3 s before it says hello (enough of them
    fill that socket's connection cap and keep other matches' seats out: a hostile review
    made honest seats of another match forfeit so). The referee counts a seat's sockets
    every second: past `[limits] sockets` (64) it kills the seat, which loses its match (a
    forfeit: killed before it connected; a disconnect had it been playing); its opponent is
    never charged, and the log says why (`seat_socket_flood`)."""
    rows = against_random(tmp_path, "jammer", bot_cmd("hostile_jammer"), decision_ms=DECISION_MS)
    for row in rows:
        assert row["faulty_bot"] == "jammer", row
        assert row["termination"] in ("disconnect", "forfeit"), row
        assert row["winner_bot"] == 1 - _seat_of(row, "jammer"), row
        if row["termination"] == "forfeit":  # its last output, in the detail, says why
            assert "killed by the referee: the bot held" in row["detail"], row
    log_file = tmp_path / "logs" / "jammer.jsonl"
    events = [json.loads(line) for line in log_file.read_text(encoding="utf-8").splitlines()]
    floods = [e for e in events if e["event"] == "seat_socket_flood"]
    assert len(floods) == 2, [e["event"] for e in events]
    assert all(e["sockets"] > e["most"] == 64 for e in floods), floods
    for flood in floods:  # the seat's own log says so too, for its author
        assert "killed by the referee: the bot held" in Path(flood["log"]).read_text()


@pytest.mark.e2e
@pytest.mark.parametrize("mode", ["once", "always"])
def test_card_texts_that_break_a_naive_reader_are_illegal_answers(
    tmp_path: Path, mode: str
) -> None:
    """`oddtext` (tests/bots/hostile_oddtext.py, raw gRPC, no SDK) answers with PLAY cards
    whose rank is a Unicode digit `str.isdigit` takes and `int` refuses ("⁷e"), one it reads
    (Arabic-Indic seven), a NUL, 10,000 digits. Each is a malformed answer: a strike, the
    default action played, the bot told. A hostile review (round 5) hung the match on the
    first one — the answer was taken off its request and never handed on, the referee waited
    forever, and the tournament never ended. `once`: one strike, the match plays to its end;
    `always`: every answer a strike, so at the third the bot loses by illegal_action and its
    opponent wins (unless the match ended before its third decision: the random opponent may
    win a falta envido at once)."""
    rows = against_random(tmp_path, "oddtext", [*bot_cmd("hostile_oddtext"), mode],
                          decision_ms=DECISION_MS)
    for row in rows:
        seat = _seat_of(row, "oddtext")
        strikes = json.loads(row["strikes"])
        faults = json.loads(row["faults"])
        assert strikes[1 - seat] == 0, row
        assert faults[seat] == {"illegal_action": strikes[seat]}, row
        if mode == "once":
            assert row["termination"] == "normal", row
            assert strikes[seat] == 1, row
        elif strikes[seat] == MAX_STRIKES:
            assert row["termination"] == "illegal_action", row
            assert row["faulty_bot"] == "oddtext", row
            assert row["winner_bot"] == 1 - seat, row
            assert "rank" in row["detail"], row
        else:
            assert row["termination"] == "normal", row
            assert strikes[seat] >= 1, row


@pytest.mark.e2e
def test_a_bot_forking_busy_sessions_takes_no_cpu_from_its_opponent(tmp_path: Path) -> None:
    """`hog` (tests/bots/hostile_hog.py) forks 120 children that spin forever, each in a
    session of its own (setsid): where the kernel shares the CPU by session (autogroups),
    each child weighs as much as a whole honest seat, and a hostile review (round 5) saw
    honest bots and other matches lose by timeout. Each seat is one entity of the CPU
    scheduler (its cgroup's cpu controller), so the spinners share one seat's part: the
    honest `cruncher` (30 ms of its own CPU a decision, of 1000) is never struck; the hog
    may starve itself."""
    roots = find_cgroups()
    if roots is None or not roots.cpu_shared:
        pytest.skip("no cpu cgroup here: seats share the CPU by session (logged at start)")
    rows = against_random(tmp_path, "hog", bot_cmd("hostile_hog"), decision_ms=1000,
                          opponent=("cruncher", bot_cmd("cruncher")))
    crunched = 0
    for row in rows:
        strikes = json.loads(row["strikes"])
        assert strikes[1 - _seat_of(row, "hog")] == 0, row
        assert row["faulty_bot"] in (None, "hog"), row
        honest = 1 - _seat_of(row, "hog")
        crunched += sum(1 for line in read_replay(tmp_path / row["replay"])
                        if line["type"] == "action" and line["seat"] == honest)
    assert crunched >= 10  # the cruncher did play, against the spinning hog


@pytest.mark.e2e
def test_a_frozen_remote_bot_loses_by_timeout_and_the_tournament_ends(tmp_path: Path) -> None:
    """A remote bot (config `token =`) answers two decisions, then its process freezes
    (SIGSTOP) with its TCP connection open: nothing tells the referee it is gone. The next
    deadlines notice it (the default keepalive, 20 s + 10 s, is slower than three 300 ms
    deadlines): the match ends by timeout naming the remote bot after exactly two of its
    answers, and `arena serve` finishes and exits 0 within seconds, the frozen bot still
    frozen."""
    token = secrets.token_urlsafe(16)
    config = write_config(
        tmp_path,
        name="frozen",
        bots={"first": bot_cmd("first_legal")},
        variants=["argentine-1v1"],
        options=OPTIONS,
        games=1,
        decision_ms=DECISION_MS,
        extra=f'[[bot]]\nname = "remote"\ntoken = "{token}"\n',
    )
    mark = secrets.token_hex(8)
    env = {**os.environ, "ARENA_E2E_MARK": mark, "PYTHONDONTWRITEBYTECODE": "1"}
    referee = subprocess.Popen(
        [str(ARENA), "serve", str(config)],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    lines: queue.SimpleQueue[str | None] = queue.SimpleQueue()
    said: list[str] = []

    def read_stderr() -> None:
        assert referee.stderr is not None
        for line in referee.stderr:
            said.append(line)
            lines.put(line)
        lines.put(None)

    reader = threading.Thread(target=read_stderr, daemon=True)
    reader.start()
    bot: subprocess.Popen[bytes] | None = None
    try:
        address = ""
        while not address:
            line = lines.get(timeout=60)
            assert line is not None, "".join(said)
            if "referee listening on" in line:
                address = line.split("listening on", 1)[1].split(";")[0].strip()
        bot = _stall_bot(address, token, after=2, mark=mark)
        started = time.monotonic()
        assert referee.wait(timeout=CLI_TIMEOUT) == 0
        elapsed = time.monotonic() - started
        assert _stopped(bot.pid), "the remote bot was not frozen: the test proves nothing"
    finally:
        if referee.poll() is None:
            os.killpg(referee.pid, signal.SIGKILL)
            referee.wait()
        reader.join(timeout=10)
        assert referee.stderr is not None
        referee.stderr.close()
        if bot is not None:
            _kill(bot)
    (row,) = stored_matches(tmp_path / "arena.db")
    assert row["faulty_bot"] == "remote", row
    assert row["termination"] == "timeout", row
    seat = _seat_of(row, "remote")
    assert json.loads(row["strikes"])[seat] == MAX_STRIKES, row
    answered = [
        ln
        for ln in read_replay(Path(row["replay"]))
        if ln["type"] == "action" and ln["seat"] == seat and not ln["fault"]
    ]
    assert len(answered) == 2, answered
    assert elapsed < 30, f"the tournament took {elapsed:.1f} s to give up on a frozen bot"


def test_keepalive_drops_a_frozen_client_and_keeps_a_live_one() -> None:
    """At the rpc level, with the keepalive of `bridge.server_options` made short (pings
    every 0.5 s, 0.5 s to answer): a client whose process is frozen (SIGSTOP) right after
    its welcome, so its TCP connection stays open, is dropped within about keepalive time +
    timeout, and a request waiting for it fails with BotDisconnected without any deadline of
    its own; a live client that is equally idle is still connected after the same time and
    another keepalive round."""
    keepalive, timeout = 0.5, 0.5
    mark = secrets.token_hex(8)
    processes: list[subprocess.Popen[bytes]] = []

    async def main() -> None:
        hub = Hub()
        hub.admit("frozen-token", "frozen")
        hub.admit("live-token", "live")
        options = server_options(keepalive_time_s=keepalive, keepalive_timeout_s=timeout)
        async with (
            serve_grpc("127.0.0.1:0", [PLAY_ROUTE], options=options) as server,
            trio.open_nursery() as nursery,
        ):
            nursery.start_soon(hub.accept, server.incoming)
            address = f"127.0.0.1:{server.port}"
            frozen = _stall_bot(address, "frozen-token", after=0, mark=mark)
            processes.append(frozen)
            processes.append(_stall_bot(address, "live-token", after=1000, mark=mark))
            with trio.fail_after(30):
                frozen_conn = await hub.connection_for("frozen-token")
                live_conn = await hub.connection_for("live-token")
                while not _stopped(frozen.pid):  # it stops itself once welcomed
                    await trio.sleep(0.01)
            started = trio.current_time()
            ask = pb.ServerMessage(decision=pb.DecisionRequest(request_id="r1", match_id="m"))
            with trio.fail_after(10), pytest.raises(BotDisconnected):
                await frozen_conn.ask("m", 0, None, ask, "r1")
            dropped_after = trio.current_time() - started
            assert frozen_conn.closed.is_set()
            assert dropped_after < keepalive + timeout + 2.0, dropped_after
            # Nothing must happen to the live client: there is no event to wait for.
            await trio.sleep(keepalive + timeout + 0.5)
            assert not live_conn.closed.is_set(), live_conn.close_reason
            nursery.cancel_scope.cancel()

    try:
        trio.run(main)
    finally:
        for process in processes:
            _kill(process)


# ---------------------------------------------------------------------------------------------
# Bytes that are not the protocol


def _raw_client(
    port: int, messages: list[bytes], out: list[Any], *, first_only: bool = False
) -> None:
    """A gRPC client of Referee.Play that sends `messages` as raw bytes and appends to `out`
    what it gets: the kind of each message (or its error code), then ("status", code,
    details) when the stream ends, at most 5 s later. With `first_only`, it hangs up after
    the first message."""
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    play = channel.stream_stream(
        "/arena.v1.Referee/Play",
        request_serializer=None,
        response_deserializer=pb.ServerMessage.FromString,
    )
    outbox: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
    for message in messages:
        outbox.put(message)
    call = play(iter(outbox.get, None), timeout=5)
    try:
        for reply in call:
            body = reply.WhichOneof("body")
            out.append(pb.ErrorCode.Name(reply.error.code) if body == "error" else body)
            if first_only:
                call.cancel()
                return
        out.append(("status", "OK", ""))
    except grpc.RpcError as exc:
        out.append(("status", exc.code().name, exc.details()))
    finally:
        outbox.put(None)
        channel.close()


NOT_PROTOBUF = b"\x0f\xde\xad\xbe\xef"  # wire type 7 does not exist


@pytest.mark.parametrize(
    ("after_hello", "told"),
    [(False, ["ERROR_CODE_BAD_HELLO"]), (True, ["welcome", "ERROR_CODE_MALFORMED"])],
    ids=["instead-of-hello", "after-hello"],
)
def test_undecodable_bytes_end_the_stream_at_once(after_hello: bool, told: list[str]) -> None:
    """A client that sends bytes that are no BotMessage, as its first message or after its
    hello, is told so in-band (BAD_HELLO or MALFORMED) and its stream ends at once with
    INVALID_ARGUMENT naming the decode error (not left open until its own deadline); the
    referee goes on admitting other clients."""

    async def main() -> None:
        hub = Hub()
        hub.admit("good", "bot")
        hello = pb.BotMessage(hello=pb.Hello(bot_name="b", token="good", protocol_version=1))
        async with serve_referee(hub) as server:
            out: list[Any] = []
            sent = [hello.SerializeToString()] if after_hello else []
            await trio.to_thread.run_sync(_raw_client, server.port, [*sent, NOT_PROTOBUF], out)
            *kinds, (_, code, details) = out
            assert kinds == told
            assert code == "INVALID_ARGUMENT", details
            assert "not a valid request" in details
            assert "DecodeError" in details
            again: list[Any] = []
            await trio.to_thread.run_sync(
                partial(_raw_client, first_only=True),
                server.port,
                [hello.SerializeToString()],
                again,
            )
            assert again[0] == "welcome"

    trio.run(main)
