"""Rules engine cost in instructions per hand, counted with callgrind: exact under any load,
where `rules_speed`'s hands per second move with whatever else the machine runs.

For each build of `rules_speed` (``base``: commit `rules_speed.BASELINE` exported from git;
``pure``: this checkout's sources; ``mypyc``: its compiled build) and each variant of
`CASES`, the same seeded random play as `rules_speed.measure` runs under ``valgrind
--tool=callgrind`` twice: with ``BENCH_CALLGRIND_MATCHES`` matches (default 20) and with none
(the interpreter's start-up and the imports). The difference divided by the hands played is
the engine's instructions per hand. Without valgrind the part says so in one row.

    python -m bench rules_instructions
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from bench import rules_speed

CASES = (("argentine-1v1", "plain"), ("argentine-2v2", "plain"),
         ("argentine-3v3", "views"), ("mineiro-2v2", "views"))
"""(variant, plain or views): the cases of docs/ARCHITECTURE.md "A compiled core"."""

_COLLECTED = re.compile(r"Collected\s*:\s*(\d+)")


def instructions(
    root: Path, pure: bool, variant: str, matches: int, mode: str
) -> tuple[int, int, str]:
    """(instructions, hands, the engine imported) of one run of `matches` matches under
    callgrind."""
    count, out = callgrind(
        [rules_speed.__file__, "--count", variant, str(matches), mode], root, pure
    )
    hands, engine = out.split()[-2:]
    return count, int(hands), engine


def callgrind(
    script: list[str], root: Path, pure: bool, extra_env: dict[str, str] | None = None
) -> tuple[int, str]:
    """(instructions, standard output) of ``python *script`` under callgrind, importing
    `arena` from `root` (its Python sources if `pure`), with `extra_env` set."""
    env = dict(os.environ, PYTHONPATH=str(root))
    env.pop("ARENA_PURE_RULES", None)
    env.pop("ARENA_PURE_WIRE", None)
    if pure:
        env["ARENA_PURE_RULES"] = "1"
    env.update(extra_env or {})
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
         sys.executable, *script],
        env=env, capture_output=True, text=True, check=True, timeout=3600,
    )
    found = _COLLECTED.search(done.stderr)
    if found is None:
        raise RuntimeError(f"no instruction count from callgrind: {done.stderr[-500:]}")
    return int(found[1]), done.stdout


def part(_seconds: float) -> list[dict[str, object]]:
    """Rows for `python -m bench`: instructions per hand of each build, and the ratios."""
    if shutil.which("valgrind") is None:
        return [{"variant": "-", "note": "valgrind is not installed: no instruction counts"}]
    matches = int(os.environ.get("BENCH_CALLGRIND_MATCHES", "20"))
    rows: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory(prefix="arena-bench-base-") as tmp:
        base = rules_speed.export_baseline(
            os.environ.get("BENCH_BASELINE", rules_speed.BASELINE), Path(tmp))
        builds = {"base": (base, True), "pure": (rules_speed.ROOT, True),
                  "mypyc": (rules_speed.ROOT, False)}
        for variant, mode in CASES:
            row: dict[str, object] = {"variant": variant, "run": mode}
            per_hand: dict[str, float] = {}
            for name, (root, pure) in builds.items():
                if root is None:
                    row[f"{name} Ir/hand"] = "n/a"
                    continue
                played, hands, engine = instructions(root, pure, variant, matches, mode)
                if name == "mypyc" and engine != "compiled":  # not built, or stale
                    row[f"{name} Ir/hand"] = "n/a"
                    continue
                start_up, _, _ = instructions(root, pure, variant, 0, mode)
                per_hand[name] = (played - start_up) / hands
                row[f"{name} Ir/hand"] = per_hand[name]
            for name in ("pure", "mypyc"):
                ok = "base" in per_hand and name in per_hand
                row[f"base/{name}"] = per_hand["base"] / per_hand[name] if ok else "n/a"
            rows.append(row)
    return rows
