"""The referee's floor in instructions per decision, counted with callgrind: exact under any
load, where `referee_path`'s ``floor µs`` moves by tens of µs with whatever else runs.

The floor is the referee's own work with no wire (as `referee_path.measure_floor`): `run_match`
with the rules engine, a real `RemoteSeatLink` per seat building every message and serializing
it (a connection that keeps nothing and answers each request at once with the first legal
action), and the decision lines written to a real JSON-lines file. The same seeded matches
(argentine-1v1, seeds 0 to ``BENCH_CALLGRIND_MATCHES`` - 1, default 20) run under ``valgrind
--tool=callgrind`` for each build, and again with no match (start-up and imports); the
difference over the decisions played is the floor's instructions per decision.

Builds: ``base`` (`rules_speed.BASELINE`, issue 14's "today", Python sources), ``start``
(``BENCH_START``, default 7c4040b: the previous state of this work, Python sources), ``pure``
(this checkout, ``ARENA_PURE_RULES=1``), ``mypyc-rules`` (this checkout's compiled engine, the
wire encoder from its sources: ``ARENA_PURE_WIRE=1``) and ``mypyc`` (engine and encoder
compiled, `make compile`); ``BENCH_FLOOR_BUILDS`` (e.g. ``mypyc-rules,mypyc``) runs only
those named. The ``engine`` column says what each run imported: rules engine / wire encoder.
Run as a script, this file plays the matches on whatever `arena` its ``PYTHONPATH`` holds.

    python -m bench floor_instructions
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

VARIANT = "argentine-1v1"
START = "7c4040b"


class Answered:
    """A `PendingAnswer` answered at once with the first legal action, at a wire time."""

    __slots__ = ("handed_at", "received_at", "sent_at")

    def __init__(self) -> None:
        self.sent_at = self.received_at = self.handed_at = time.monotonic()

    def unread_since(self) -> float | None:
        return None

    async def wait(self) -> Any:
        import trio

        from arena.referee import Answer

        await trio.lowlevel.checkpoint()  # as a real wait: a schedule point
        return Answer(action_index=0)

    def abandon(self) -> None:
        pass

    def interrupt(self) -> None:  # (the deadline never passes: `wait` returns at once)
        pass


class WireFreeConnection:
    """Stands in for `arena.rpc.server.Connection` under a real `RemoteSeatLink`: every
    message the link builds is serialized as for the wire (and dropped); every request is
    answered at once with the first legal action. What is left is the referee's own work.
    (Also used by `referee_path.measure_floor`; here it must run on older code too.)"""

    hub = None
    token = ""
    close_reason = ""
    bot_name = "bench"

    def __init__(self) -> None:
        self.bytes = 0

    def send(self, message: Any) -> None:
        self.bytes += len(message if type(message) is bytes else message.SerializeToString())

    def post(self, match_id: str, seat: int, deck: Any, message: Any, rid: str) -> Any:
        self.send(message)
        return Answered()

    async def ask(self, match_id: str, seat: int, deck: Any, message: Any, rid: str) -> Any:
        self.send(message)
        return await Answered().wait()


def _play(matches: int) -> tuple[int, str]:
    """Play `matches` seeded matches through the real links; (decisions, engine)."""
    import trio

    import arena.rules
    from arena import logging as arena_logging
    from arena.referee import run_match
    from arena.rpc.server import RemoteSeatLink
    from arena.rules import Match

    async def main() -> int:
        decisions = 0
        for number in range(matches):
            match_id = f"floor:{number}"
            links: list[Any] = [
                RemoteSeatLink(WireFreeConnection(), match_id, seat, "bench", False)  # type: ignore[arg-type]
                for seat in (0, 1)
            ]
            report = await run_match(match_id, Match(VARIANT, seed=number), links)
            decisions += len(report.decisions)
        return decisions

    with tempfile.TemporaryDirectory(prefix="bench-floor-") as folder:
        arena_logging.configure(path=Path(folder) / "referee.jsonl")
        decisions = trio.run(main)
        arena_logging.configure(stream=open(os.devnull, "w"))  # noqa: SIM115  (flushes the file)
    import arena.rpc

    engines = (getattr(arena.rules, "ENGINE", "python"), getattr(arena.rpc, "ENCODER", "python"))
    return decisions, "/".join(engines)


def _count(
    root: Path, pure: bool, matches: int, env: dict[str, str] | None = None
) -> tuple[int, int, str]:
    """(instructions, decisions, engine) of `matches` matches under callgrind."""
    from bench.rules_instructions import callgrind

    count, out = callgrind([__file__, str(matches)], root, pure, env)
    decisions, engine = out.split()[-2:]
    return count, int(decisions), engine


def part(_seconds: float) -> list[dict[str, object]]:
    """One row per build: instructions per decision, and base's count over it."""
    if shutil.which("valgrind") is None:
        return [{"build": "-", "note": "valgrind is not installed: no instruction counts"}]
    from bench import rules_speed

    matches = int(os.environ.get("BENCH_CALLGRIND_MATCHES", "20"))
    rows: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory(prefix="arena-bench-floor-") as tmp:
        wanted = os.environ.get("BENCH_FLOOR_BUILDS", "base,start,pure,mypyc-rules,mypyc")
        names = [name.strip() for name in wanted.split(",") if name.strip()]
        exported = {
            name: rules_speed.export_baseline(os.environ.get(var, default), Path(tmp, name))
            for name, var, default in (("base", "BENCH_BASELINE", rules_speed.BASELINE),
                                       ("start", "BENCH_START", START))
            if name in names
        }
        builds: dict[str, tuple[Path | None, bool, dict[str, str]]] = {
            "base": (exported.get("base"), True, {}),
            "start": (exported.get("start"), True, {}),
            "pure": (rules_speed.ROOT, True, {}),
            "mypyc-rules": (rules_speed.ROOT, False, {"ARENA_PURE_WIRE": "1"}),
            "mypyc": (rules_speed.ROOT, False, {}),
        }
        unknown = sorted(set(names) - set(builds))
        if unknown:
            raise SystemExit(f"BENCH_FLOOR_BUILDS: unknown build {', '.join(unknown)} "
                             f"(builds: {', '.join(builds)})")
        base_per: float | None = None
        rules_per: float | None = None  # the compiled engine with the encoder's sources
        for name in names:
            root, pure, env = builds[name]
            if root is None:
                rows.append({"build": name, "note": "commit not found"})
                continue
            played, decisions, engine = _count(root, pure, matches, env)
            start_up, _, _ = _count(root, pure, 0, env)
            per = (played - start_up) / decisions
            if name == "base":
                base_per = per
            if name == "mypyc-rules":
                rules_per = per
            ratio = round(base_per / per, 2) if base_per else "n/a"
            rows.append({"build": name, "engine": engine, "decisions": decisions,
                         "Ir/decision": round(per), "base/this": ratio,
                         "mypyc-rules/this": round(rules_per / per, 3) if rules_per else "n/a"})
    return rows


if __name__ == "__main__":
    played, engine = _play(int(sys.argv[1]))
    print(played, engine)
