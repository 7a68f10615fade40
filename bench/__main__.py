"""Run the benchmarks and print one table per part: ``python -m bench [PART ...]``.

``BENCH_SECONDS`` sets the seconds of each measurement (default 3). To add a part, write a
module with ``part(seconds) -> rows`` (each row a dict from column name to value, the same
columns in every row) and list it in `PARTS`.
"""

from __future__ import annotations

import os
import platform
import sys
from collections.abc import Callable

from bench import (
    fairness,
    floor_instructions,
    path_instructions,
    raw_pingpong,
    referee_path,
    rules_instructions,
    rules_speed,
    socket_count,
    stream_flood,
    wakeups,
    workers,
)

Rows = list[dict[str, object]]

PARTS: dict[str, Callable[[float], Rows]] = {
    "rules_speed": rules_speed.part,
    "rules_instructions": rules_instructions.part,
    "floor_instructions": floor_instructions.part,
    "path_instructions": path_instructions.part,
    "raw_pingpong": raw_pingpong.part,
    "referee_path": referee_path.part,
    "fairness": fairness.part,
    "workers": workers.part,
    "socket_count": socket_count.part,
    "stream_flood": stream_flood.part,
    "seat_door": stream_flood.door_part,
    "wakeups": wakeups.part,
}


def format_value(value: object) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.2f}"


def format_table(title: str, rows: Rows) -> str:
    if not rows:
        return f"{title}: no rows"
    columns = list(rows[0])
    cells = [[format_value(row[c]) for c in columns] for row in rows]
    widths = [max(len(c), *(len(r[i]) for r in cells)) for i, c in enumerate(columns)]
    lines = [
        title,
        "  ".join(c.rjust(w) for c, w in zip(columns, widths, strict=True)),
        "  ".join("-" * w for w in widths),
    ]
    lines += ["  ".join(v.rjust(w) for v, w in zip(r, widths, strict=True)) for r in cells]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    names = argv or list(PARTS)
    unknown = [n for n in names if n not in PARTS]
    if unknown:
        print(f"unknown part(s) {', '.join(unknown)}; known: {', '.join(PARTS)}", file=sys.stderr)
        return 2
    seconds = float(os.environ.get("BENCH_SECONDS", "3"))
    print(
        f"python {platform.python_version()}, {os.cpu_count()} CPUs, "
        f"{seconds:g} s per measurement (BENCH_SECONDS)\n"
    )
    for name in names:
        print(format_table(name, PARTS[name](seconds)), end="\n\n", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
