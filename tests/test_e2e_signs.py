"""End to end: señas through the real referee (`arena match`, real bot processes, a real gRPC
server) in 2v2 matches. A sign sent WITH an action reaches the partner, for a bot written from
arena.proto alone (raw stubs), for the Node.js sample and for the Python SDK. In protocol 1.0
`ActionReply.signal` sat inside `oneof choice`, so setting the action dropped every sign.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from test_e2e_support import FIXED_KEY, SAMPLE_BOTS, TEST_BOTS, arena, explain, read_replay

RANDOM = f"python {SAMPLE_BOTS / 'random_bot.py'}"
SHORT = ["--option", "target=15", "--option", "chicos=1"]
REPLAY = re.compile(r"^replay: (?P<path>.+)$", re.MULTILINE)


def _dumped(folder: Path, prefix: str) -> list[dict[str, Any]]:
    return [
        json.loads(line)
        for path in sorted(folder.glob(f"{prefix}-*.jsonl"))
        for line in path.read_text().splitlines()
    ]


def _received(records: list[dict[str, Any]], what: str) -> set[tuple[int, int]]:
    """(receiving seat, sending seat) pairs of the signs received as `what` (event / view),
    a seat's own signs left out."""
    return {(r[what]["seat"], r[what]["from"]) for r in records if what in r} - {
        (s, s) for s in range(4)
    }


def _play(tmp_path: Path, team0: str, team1: str) -> tuple[list[dict[str, Any]], Path]:
    dump = tmp_path / "dump"
    dump.mkdir()
    # The same deals every run (a fixed secret): with a fresh secret a falta envido can end
    # the match in its first hand, before every seat has acted.
    key = tmp_path / "deals.key"
    key.write_text(FIXED_KEY + "\n", encoding="ascii")
    run = arena(
        "match", "argentine-2v2", team0, team1, "--seed", "3", "--secret-file", key, *SHORT,
        "--database", tmp_path / "m.db", "--pass-env", "SIGN_DUMP_DIR", "--writable", dump,
        cwd=tmp_path, env={"SIGN_DUMP_DIR": str(dump)},
    )
    assert run.returncode == 0, explain(run)
    found = REPLAY.search(run.stdout)
    assert found is not None, explain(run)
    return read_replay(Path(found["path"])), dump


@pytest.mark.e2e
def test_a_raw_stub_bot_signs_with_its_actions_and_its_partner_receives_them(
    tmp_path: Path,
) -> None:
    """Two processes of a bot written from arena.proto alone (seats 0 and 2) answer every
    decision with index 0 AND a sign: the referee records each sign with its action, and each
    seat receives its partner's signs both as SignalEvents and in View.signals; the opponents
    (signals "team") receive none."""
    replay, dump = _play(tmp_path, f"python {TEST_BOTS / 'raw_signer.py'}", RANDOM)
    signed = [line for line in replay if line.get("type") == "action" and line.get("signal")]
    assert signed, "the referee recorded no sign"
    assert {line["seat"] for line in signed} == {0, 2}
    assert all(line["signal"]["kind"] == "ancho_de_espada" for line in signed)
    records = _dumped(dump, "raw")
    assert _received(records, "event") == {(0, 2), (2, 0)}
    assert _received(records, "view") <= {(0, 2), (2, 0)}
    assert _received(records, "view"), "no partner sign in any view"


@pytest.mark.e2e
def test_the_sdk_and_the_node_sample_sign_and_their_partners_receive_them(
    tmp_path: Path, js_random: list[str]
) -> None:
    """An SDK bot (team 0, seats 0 and 2) signs with every action; the Node.js sample with
    `--signs 1` (team 1, seats 1 and 3) too, seeded so the match is the same every run. The
    replay records both teams' signs; the SDK seats receive each other's signs (SignalEvent
    via `on_event`, and `view.signals`); each Node.js seat logs the signs of its partner
    seat."""
    replay, dump = _play(
        tmp_path,
        f"python {TEST_BOTS / 'sdk_signer.py'}",
        # Seeded: an unseeded Node.js seat could accept a falta envido that ends the match
        # before seat 1 ever acts (the deals are fixed, the SDK bot plays its first legal;
        # seed 6 gives seven hands, every seat acting).
        " ".join([*js_random, "--signs", "1", "--seed", "6"]),
    )
    signed = {
        line["seat"] for line in replay if line.get("type") == "action" and line.get("signal")
    }
    assert signed == {0, 1, 2, 3}
    records = _dumped(dump, "sdk")
    assert _received(records, "event") == {(0, 2), (2, 0)}
    assert _received(records, "view"), "no partner sign in any SDK view"
    for seat, partner in ((1, 3), (3, 1)):
        (log,) = tmp_path.rglob(f"*.seat{seat}.*.log")
        received = set(re.findall(r"sign received from seat (\d)", log.read_text()))
        assert received == {str(seat), str(partner)}, log.read_text()[-2000:]
