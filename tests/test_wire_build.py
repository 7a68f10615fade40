"""Which build of the wire encoder (`arena.rpc.encode` and its caches, `arena.rpc.wirecache`)
`import arena.rpc` picks (arena/rpc/_native.py): the mypyc build `make compile` puts in the
rules engine's group, only when it was built from exactly the sources beside it and the engine
runs compiled; the Python sources otherwise, and always with ARENA_PURE_RULES=1 or
ARENA_PURE_WIRE=1. Both builds write the same bytes, read by a raw gRPC client.

Each case runs a fresh interpreter on a copy of the package (with the checkout's compiled
build, or one built into the copy when the checkout has none), so a case may edit sources and
manifests without touching the checkout.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from build_support import compiled_package, copy_package

ROOT = Path(__file__).resolve().parent.parent
ENV_VARS = ("ARENA_PURE_RULES", "ARENA_PURE_WIRE")

PROBE = (
    "import json, arena.rules, arena.rpc, arena.rpc._native as n\n"
    "import arena.rpc.encode as e, arena.rpc.wirecache as w, arena.rules.views as v\n"
    "from arena.rules import Match\n"
    "m = Match('argentine-2v2', seed=3)\n"
    "view = m.view(m.to_act)\n"
    "data = e.decision_message(e.decision_address('m', view.seat), 'r', view,\n"
    "                          view.legal_actions, 5, 6)\n"
    "print(json.dumps({'engine': arena.rules.ENGINE, 'encoder': arena.rpc.ENCODER,\n"
    "                  'encode': e.__file__, 'wirecache': w.__file__, 'views': v.__file__,\n"
    "                  'why': n.REASON, 'bytes': len(data)}))\n"
)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the `arena` package with the engine and the encoder compiled (the
    checkout's build, else one made here with tools/compile_rules.py)."""
    return compiled_package(tmp_path_factory.mktemp("wire"), "rpc/_compiled/manifest.json")


def _run(top: Path, script: str, **env: str) -> tuple[str, str]:
    environ = {k: v for k, v in os.environ.items() if k not in ENV_VARS}
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=top,
        env={**environ, "PYTHONPATH": str(top), **env},
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    return done.stdout, done.stderr


def _probe(top: Path, **env: str) -> tuple[dict[str, object], str]:
    out, err = _run(top, PROBE, **env)
    return json.loads(out), err


def test_a_fresh_build_is_imported(built: Path) -> None:
    """With a build of exactly these sources, `encode` and `wirecache` are the extension
    modules of `arena/rpc/_compiled/`, beside the compiled engine, and they encode."""
    seen, stderr = _probe(built)
    folder = str(built / "arena" / "rpc" / "_compiled")
    assert (seen["engine"], seen["encoder"]) == ("compiled", "compiled")
    for module in ("encode", "wirecache"):
        assert str(seen[module]).startswith(folder)
        assert str(seen[module]).endswith(".so")
    assert isinstance(seen["bytes"], int)
    assert seen["bytes"] > 100
    assert stderr == ""


def test_pure_rules_env_imports_every_source(built: Path) -> None:
    """ARENA_PURE_RULES=1 imports the encoder's .py sources too (and the engine's)."""
    seen, _ = _probe(built, ARENA_PURE_RULES="1")
    assert (seen["engine"], seen["encoder"]) == ("pure", "pure")
    assert seen["encode"] == str(built / "arena" / "rpc" / "encode.py")
    assert seen["wirecache"] == str(built / "arena" / "rpc" / "wirecache.py")
    assert "ARENA_PURE_RULES" in str(seen["why"])


def test_pure_wire_env_imports_the_encoder_sources_beside_the_compiled_engine(
    built: Path,
) -> None:
    """ARENA_PURE_WIRE=1 picks the encoder's sources and leaves the engine compiled (the
    bench's `mypyc-rules` row)."""
    seen, _ = _probe(built, ARENA_PURE_WIRE="1")
    assert (seen["engine"], seen["encoder"]) == ("compiled", "pure")
    assert seen["encode"] == str(built / "arena" / "rpc" / "encode.py")
    assert str(seen["views"]).endswith(".so")
    assert "ARENA_PURE_WIRE" in str(seen["why"])


@pytest.mark.parametrize("name", ["encode.py", "wirecache.py", "convert.py"])
def test_a_stale_encoder_is_never_imported(built: Path, tmp_path: Path, name: str) -> None:
    """A wire source edited after the build (one comment line; `convert` too, whose caches
    the compiled encoder binds) makes the import use the encoder's sources, with a warning
    that names the file and how to rebuild; the engine stays compiled."""
    top = copy_package(built, tmp_path)
    source = top / "arena" / "rpc" / name
    source.write_text(source.read_text() + "# edited after the build\n")
    seen, stderr = _probe(top)
    assert (seen["engine"], seen["encoder"]) == ("compiled", "pure")
    assert seen["encode"] == str(top / "arena" / "rpc" / "encode.py")
    assert "RuntimeWarning" in stderr
    assert f"wire encoder in {top / 'arena' / 'rpc' / '_compiled'} is stale ({name} changed" in (
        stderr
    )
    assert "make compile" in stderr


def test_a_stale_engine_takes_the_encoder_with_it(built: Path, tmp_path: Path) -> None:
    """The compiled encoder lives in the engine's shared library: when a rules source changed
    (the engine then runs from its sources), the encoder does too, and still encodes."""
    top = copy_package(built, tmp_path)
    state = top / "arena" / "rules" / "state.py"
    state.write_text(state.read_text() + "# edited after the build\n")
    seen, stderr = _probe(top)
    assert (seen["engine"], seen["encoder"]) == ("pure", "pure")
    assert "rules engine runs from its sources" in str(seen["why"])
    assert "stale (state.py changed" in stderr
    assert isinstance(seen["bytes"], int)
    assert seen["bytes"] > 100


def test_an_encoder_of_another_engine_build_is_skipped(built: Path, tmp_path: Path) -> None:
    """An engine manifest other than the one the encoder was built with (the engine rebuilt
    without it) makes the encoder use its sources."""
    top = copy_package(built, tmp_path)
    manifest = top / "arena" / "rules" / "_compiled" / "manifest.json"
    manifest.write_text(manifest.read_text() + "\n")
    seen, _ = _probe(top)
    assert (seen["engine"], seen["encoder"]) == ("compiled", "pure")
    assert "another build of the rules engine" in str(seen["why"])


def test_without_an_encoder_build_the_sources_are_used_silently(
    built: Path, tmp_path: Path
) -> None:
    """No `arena/rpc/_compiled/` (the encoder did not compile): its sources, nothing on
    stderr, beside the compiled engine."""
    top = copy_package(built, tmp_path)
    shutil.rmtree(top / "arena" / "rpc" / "_compiled")
    seen, stderr = _probe(top)
    assert (seen["engine"], seen["encoder"]) == ("compiled", "pure")
    assert stderr == ""


def test_an_encoder_that_does_not_compile_leaves_the_engine_compiled(tmp_path: Path) -> None:
    """tools/compile_rules.py on sources whose encoder mypyc refuses (a type error): a note
    naming the encoder, then the engine built alone; `arena.rpc` uses the encoder's sources."""
    shutil.copytree(
        ROOT / "arena", tmp_path / "arena",
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "_compiled"),
    )
    shutil.copytree(ROOT / "tools", tmp_path / "tools")
    encode = tmp_path / "arena" / "rpc" / "encode.py"
    encode.write_text(encode.read_text() + '\n_BROKEN: int = "not an int"\n')
    done = subprocess.run(
        [sys.executable, "tools/compile_rules.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "note: the wire encoder (arena/rpc/encode.py, arena/rpc/wirecache.py) did not" in (
        done.stderr
    )
    assert not (tmp_path / "arena" / "rpc" / "_compiled").exists()
    seen, _ = _probe(tmp_path)
    assert (seen["engine"], seen["encoder"]) == ("compiled", "pure")


BYTES = (
    "import hashlib, json, random, arena.rules, arena.rpc\n"
    "from arena.rpc import encode as e\n"
    "from arena.rules import Match, variant_names\n"
    "digest, count = hashlib.sha256(), 0\n"
    "for name in variant_names():\n"
    "    for seed in range(2):\n"
    "        m, rng = Match(name, seed=seed), random.Random(seed)\n"
    "        while not m.is_over:\n"
    "            seat = m.to_act\n"
    "            view = m.view(seat)\n"
    "            for data in (e.decision_message(e.decision_address('m\u00e9', seat), 'r', view,\n"
    "                                            view.legal_actions, 2**40 + count, count),):\n"
    "                digest.update(data); count += 1\n"
    "            for event in m.apply(rng.choice(view.legal_actions)):\n"
    "                for to in event.audience:\n"
    "                    digest.update(e.event_message(e.event_address('m\u00e9', to),\n"
    "                                                  event.body, 'm\u00e9', to)); count += 1\n"
    "print(json.dumps([arena.rules.ENGINE, arena.rpc.ENCODER, count, digest.hexdigest()]))\n"
)


def test_compiled_and_pure_encoders_write_the_same_bytes(built: Path) -> None:
    """Seeded random matches of every variant, encoded by the compiled build, by the compiled
    engine with the encoder's sources, and by the sources: every decision and event message,
    byte for byte the same (a digest over all of them)."""
    runs = {}
    for env in ({}, {"ARENA_PURE_WIRE": "1"}, {"ARENA_PURE_RULES": "1"}):
        out, _ = _run(built, BYTES, **env)
        engine, encoder, count, digest = json.loads(out)
        runs[engine, encoder] = (count, digest)
    assert set(runs) == {("compiled", "compiled"), ("compiled", "pure"), ("pure", "pure")}
    counts_and_digests = set(runs.values())
    assert len(counts_and_digests) == 1
    ((count, _),) = counts_and_digests
    assert count > 1000


RAW_CLIENT = r'''
import json, sys, threading, queue
import grpc, trio
import arena.rpc, arena.rules
from arena.referee import run_match
from arena.rpc.server import Hub, serve_referee
from arena.rules import Match
from arena.v1 import arena_pb2 as pb

def bot(port, out):
    """Raw bytes in, no SDK: hello with batches, answer every decision with index 0."""
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    play = channel.stream_stream("/arena.v1.Referee/Play",
                                 request_serializer=lambda m: m.SerializeToString(),
                                 response_deserializer=None)
    outbox = queue.SimpleQueue()
    outbox.put(pb.BotMessage(hello=pb.Hello(bot_name="raw", token="tok", protocol_version=1,
                                            protocol_minor=1, accepts_batches=True)))
    responses = play(iter(outbox.get, None))
    over = 0
    for raw in responses:
        message = pb.ServerMessage.FromString(raw)
        out.append((raw, message))
        items = message.batch.messages if message.HasField("batch") else [message]
        for item in items:
            if item.HasField("decision"):
                d = item.decision
                outbox.put(pb.BotMessage(action=pb.ActionReply(
                    request_id=d.request_id, match_id=d.match_id, seat=d.seat,
                    action_index=0)))
            over += item.HasField("game_over")
        if over == 4:
            break
    outbox.put(None)
    channel.close()

async def main():
    hub = Hub(hello_timeout=10)
    received = []
    async with serve_referee(hub) as server:
        hub.admit("tok", "raw")
        async with trio.open_nursery() as nursery:
            nursery.start_soon(trio.to_thread.run_sync, bot, server.port, received)
            conn = await hub.connection_for("tok")
            game = Match("argentine-2v2", {"target": 15, "chicos": 1}, 5)
            await run_match("raw:1", game, [conn.link("raw:1", s) for s in range(4)])
    canonical = all(raw == message.SerializeToString() for raw, message in received)
    normalized = []
    for _, message in received:
        for item in (message.batch.messages if message.HasField("batch") else [message]):
            if item.HasField("decision"):
                item.decision.request_id = ""
                item.decision.deadline_unix_ms = 0
                item.decision.time_left_ms = 0
            if item.HasField("welcome"):
                item.welcome.session_id = ""
            normalized.append(item.SerializeToString().hex())
    print(json.dumps([arena.rules.ENGINE, arena.rpc.ENCODER, canonical, normalized]))

trio.run(main)
'''


def test_a_raw_grpc_client_reads_the_same_match_from_either_build(built: Path) -> None:
    """From the outside: a real referee server on a real port and a client with no SDK that
    reads the raw response bytes (batches on) and plays all four seats of a seeded match.
    On the compiled encoder and on the sources, every message it reads is the canonical
    protobuf encoding of what it parses to, and the match it sees (ids and clocks aside) is
    the same message for message."""
    seen = {}
    for env in ({}, {"ARENA_PURE_RULES": "1"}):
        out, _ = _run(built, RAW_CLIENT, **env)  # the referee's log lines, then the result
        engine, encoder, canonical, messages = json.loads(out.splitlines()[-1])
        seen[encoder] = (engine, canonical, messages)
    assert seen["compiled"][:2] == ("compiled", True)
    assert seen["pure"][:2] == ("pure", True)
    decisions = [m for m in seen["compiled"][2] if m.startswith("1a")]  # field 3: decision
    assert len(decisions) > 20
    assert seen["compiled"][2] == seen["pure"][2]
