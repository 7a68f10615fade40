"""The whole decision path in instructions per decision, counted with callgrind: exact under
any load, where `referee_path`'s µs per decision move by 10-30 % between runs of the same code
on a shared or throttled machine (two levers worth 2-3 % each cannot be told apart there).

For each stream count (``BENCH_STREAMS``, default ``1,16``), the raw grpc.aio ping-pong
(`referee_path.measure_raw`) and the referee, pumped as the commands run it
(`referee_path.measure_referee`, mode ``pump``), each run under ``valgrind --tool=callgrind``
twice, for ``BENCH_CALLGRIND_SECONDS`` (default 6) and three times that. Every thread of the
server's process is counted; the bench's bot client is a process of its own, not traced. The
difference of the two counts over the difference of the decisions the client counted is the
server's instructions per decision: start-up, imports, the server's start and the client's
warm-up are the same in both runs and cancel out.

``BENCH_PATH_ROOTS`` (``name=/path,name=/path``) also counts the referee of other checkouts
(say, a `git worktree` of main with ``make compile`` run in it), for an A/B of a change in the
same session: its rows say which checkout and ``this/first``, its count over the first's.

Under callgrind the server runs ~50 times slower than the client, so from 16 streams on it
always finds answers waiting (the saturated regime of `referee_path`'s 64 streams), and at 1
stream the client waits for it; the counts are those of the code, not of the wake-ups a quiet
machine adds.

    python -m bench path_instructions
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from bench.rules_speed import ROOT


def _count(root: Path, side: str, streams: int, seconds: float) -> tuple[int, int]:
    """(instructions, decisions counted by the client) of one run under callgrind."""
    from bench.rules_instructions import callgrind

    count, out = callgrind([__file__, side, str(streams), str(seconds)], root, False,
                           {"PYTHONHASHSEED": "0"})
    return count, int(out.split()[-1])


def per_decision(root: Path, side: str, streams: int, seconds: float) -> tuple[float, int]:
    """(instructions per decision, decisions of the longer run), from the slope between a
    run of `seconds` and one of three times as long."""
    short, short_decisions = _count(root, side, streams, seconds)
    long, long_decisions = _count(root, side, streams, 3 * seconds)
    if long_decisions <= short_decisions:
        raise RuntimeError(f"{side} at {streams} streams: {long_decisions} decisions in the "
                           f"long run, {short_decisions} in the short one")
    return (long - short) / (long_decisions - short_decisions), long_decisions


def _roots() -> list[tuple[str, Path]]:
    roots = [("this", ROOT)]
    for item in os.environ.get("BENCH_PATH_ROOTS", "").split(","):
        if not item.strip():
            continue
        name, sep, path = item.partition("=")
        if not sep or not Path(path).is_dir():
            raise SystemExit(f"BENCH_PATH_ROOTS: {item!r} is not name=/path/to/a/checkout")
        roots.append((name.strip(), Path(path)))
    return roots


def part(_seconds: float) -> list[dict[str, object]]:
    """Rows: per stream count, raw, then the referee of each checkout."""
    if shutil.which("valgrind") is None:
        return [{"streams": "-", "note": "valgrind is not installed: no instruction counts"}]
    seconds = float(os.environ.get("BENCH_CALLGRIND_SECONDS", "6"))
    streams_list = [int(s) for s in os.environ.get("BENCH_STREAMS", "1,16").split(",")]
    rows: list[dict[str, object]] = []
    for streams in streams_list:
        raw, raw_decisions = per_decision(ROOT, "raw", streams, seconds)
        rows.append({"streams": streams, "server": "raw", "checkout": "-",
                     "decisions": raw_decisions, "Ir/decision": round(raw),
                     "over raw": "-", "ref/raw": "-", "this/first": "-"})
        first: float | None = None
        for name, root in _roots():
            ref, decisions = per_decision(root, "pump", streams, seconds)
            first = first or ref
            rows.append({"streams": streams, "server": "referee", "checkout": name,
                         "decisions": decisions, "Ir/decision": round(ref),
                         "over raw": round(ref - raw), "ref/raw": round(ref / raw, 2),
                         "this/first": round(ref / first, 3)})
    return rows


if __name__ == "__main__":
    from bench import referee_path

    side, streams, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    if side == "raw":
        measured = referee_path.measure_raw(streams, seconds)
    else:
        measured = referee_path.measure_referee(streams, seconds, side)
    print(measured.tally.decisions)
