"""The `ray` executor on a real local Ray cluster: a head and a second node, each a
`ray start --block` process of this test (one CPU each, a temporary folder of their own),
the `arena tournament` CLI as the driver. Results must equal the local executor's for the
same secret (tests/test_executors.py's tournament and comparison), and a Ray worker killed
mid-match has its match played again, stored once.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_e2e_support import (
    ARENA,
    arena,
    explain,
    poll,
    processes_with,
)
from test_executors import (
    NAME,
    _busy,
    _config,
    _env,
    _events,
    _kill_a_busy_worker,
    _rows,
    _same_as,
    reference,
)

pytestmark = pytest.mark.e2e
_ = reference  # the local run every Ray run is compared with (a fixture)

RAY = Path(sys.executable).parent / "ray"


class Cluster:
    """A running local Ray cluster: its address, the mark in its environment, its folder."""

    def __init__(
        self, address: str, mark: str, folder: Path, nodes: list[subprocess.Popen[bytes]]
    ) -> None:
        self.address = address
        self.mark = mark
        self.folder = folder
        self.nodes = nodes


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _ours(folder: Path) -> list[int]:
    """The processes of the cluster this test started (their command lines name its
    temporary folder)."""
    found = []
    needle = str(folder).encode()
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit() and proc.name != str(os.getpid()):
            try:
                if needle in (proc / "cmdline").read_bytes():
                    found.append(int(proc.name))
            except OSError:
                continue
    return found


def _alive_nodes(address: str) -> int:
    status = subprocess.run([str(RAY), "status", f"--address={address}"], capture_output=True,
                            text=True, timeout=60, check=False)
    active = status.stdout.split("Active:", 1)[-1].split("Pending:", 1)[0]
    return sum(1 for line in active.splitlines() if "node_" in line)


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    """A head node and a worker node on this machine, stopped (by process id) at the end."""
    folder = Path(tempfile.mkdtemp(prefix="ray", dir="/tmp"))  # sockets: keep the path short
    mark = os.urandom(8).hex()
    port = _free_port()
    address = f"127.0.0.1:{port}"
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "PYTHONDONTWRITEBYTECODE": "1",
           **_env(mark)}
    common = ["--block", "--num-cpus=1", "--node-ip-address=127.0.0.1", "--disable-usage-stats"]
    nodes = [subprocess.Popen(
        [str(RAY), "start", "--head", f"--port={port}", "--include-dashboard=false",
         f"--temp-dir={folder}", *common],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )]
    try:
        poll(lambda: _alive_nodes(address) >= 1, 120, "the Ray head")
        nodes.append(subprocess.Popen(
            [str(RAY), "start", f"--address={address}", *common], env=env,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        ))
        poll(lambda: _alive_nodes(address) >= 2, 120, "the second Ray node")
        yield Cluster(address, mark, folder, nodes)
    finally:
        for node in reversed(nodes):
            node.send_signal(signal.SIGTERM)
        for node in nodes:
            try:
                node.wait(timeout=30)
            except subprocess.TimeoutExpired:
                node.kill()
                node.wait()
        deadline = time.monotonic() + 10
        while _ours(folder) and time.monotonic() < deadline:
            time.sleep(0.2)
        for pid in _ours(folder):  # what `ray start` left behind, if anything
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(folder, ignore_errors=True)


def _ray_config(folder: Path, address: str) -> Path:
    path = _config(folder, "local")
    text = path.read_text(encoding="utf-8").replace(
        '[executor]\nkind = "local"\n', f'[executor]\nkind = "ray"\naddress = "{address}"\n'
    )
    path.write_text(text, encoding="utf-8")
    return path


def test_a_ray_cluster_stores_the_same_results_as_the_local_executor(
    tmp_path: Path, reference: Path, cluster: Cluster
) -> None:
    """`[executor] kind = "ray"` on a two-node cluster: every match is a Ray task (one
    `ray_match_done` each, from Ray worker processes, none refereed in the CLI's process),
    and the stored rows, replays' actions and standings equal the local executor's."""
    run = arena("tournament", _ray_config(tmp_path, cluster.address), "--no-progress",
                cwd=tmp_path, env=_env(cluster.mark))
    assert run.returncode == 0, explain(run)
    _same_as(tmp_path, reference)
    log = _events(tmp_path, f"{NAME}.jsonl")
    assert next(e for e in log if e["event"] == "ray_connected")["nodes"] == 2
    done = [e["match_id"] for e in log if e["event"] == "ray_match_done"]
    assert sorted(done) == sorted(_rows(tmp_path))
    assert not [e for e in log if e["event"] == "decision"]
    assert {e["worker_pid"] for e in log if e["event"] == "ray_match_done"} != {os.getpid()}


def _ray_workers_busy(mark: str) -> list[int]:
    """Ray worker processes of the cluster (their environment has its mark) running a
    referee task (Ray names the process after it) with bots under them."""
    busy = []
    needle = f"ARENA_E2E_MARK={mark}".encode()
    for proc in Path("/proc").iterdir():
        try:
            if not proc.name.isdigit() or not (proc / "cmdline").read_bytes().startswith(
                b"ray::_referee_task"
            ):
                continue
            if needle in (proc / "environ").read_bytes().split(b"\0") and _busy(int(proc.name)):
                busy.append(int(proc.name))
        except OSError:
            continue
    return busy


def test_a_killed_ray_worker_has_its_match_played_again_once(
    tmp_path: Path, reference: Path, cluster: Cluster
) -> None:
    """SIGKILL to the Ray worker process that referees a match (its bots running): Ray
    plays the task again, and the tournament ends with one row per match, equal to the
    local executor's; the killed worker's bots exit."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", **_env(cluster.mark)}
    victim = _kill_a_busy_worker(
        [str(ARENA), "tournament", str(_ray_config(tmp_path, cluster.address)), "--no-progress"],
        tmp_path, env, lambda: _ray_workers_busy(cluster.mark), "a Ray worker playing a match")
    _same_as(tmp_path, reference)
    log = _events(tmp_path, f"{NAME}.jsonl")
    done = [e for e in log if e["event"] == "ray_match_done"]
    assert sorted(e["match_id"] for e in done) == sorted(_rows(tmp_path))
    assert victim not in {e["worker_pid"] for e in done}, json.dumps(done)
    poll(lambda: not _bots(cluster.mark), 20, "the killed worker's bots to exit")


def _bots(mark: str) -> list[str]:
    """The bot processes (not the cluster's own) of runs marked `mark`."""
    return [p for p in processes_with(mark)
            if any(name in p for name in ("bwrap", "random_bot.py", "pondering.py"))]
