"""A launched bot that floods its own door to the referee with HTTP/2 streams, while it plays.

It plays its seat through the SDK (the first legal action, after `--think-ms`). From its first
decision on, `--connections` threads each run `h2_flood.flood_one` (raw HTTP/2 frames, no
grpcio) against ARENA_SERVER, the unix socket bound into its sandbox: silent `Referee/Play`
streams opened as fast as it can, its oldest reset once `--keep` are open (`--keep 1`: a
"rapid reset" flood). A connection the referee closes is opened again. Every 0.1 s, and when
a connection is refused, it prints one line to stderr (its seat log): ``seat_flood: {json}``
with h2_flood's counts.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time

from h2_flood import Stats, flood_one

from arena.rules import Action, SeatView
from arena.sdk import Bot, main

_started = threading.Event()
_stats = Stats()


def _flood(address: str, keep: int) -> None:
    while True:
        try:
            flood_one(address, keep, False, time.monotonic() + 3600, _stats)
        except OSError:  # the door is shut: say what it got so far
            _report_once()
            time.sleep(0.01)


def _report_once() -> None:
    with _stats.lock:
        line = json.dumps({**_stats.counts, "statuses": dict(_stats.statuses)})
    print(f"seat_flood: {line}", file=sys.stderr, flush=True)


def _report() -> None:
    while True:
        time.sleep(0.1)
        _report_once()


class SeatFlooder(Bot):
    """Plays the first legal action; its first decision starts the flood."""

    def __init__(self, connections: int, keep: int, think_s: float) -> None:
        self._connections = connections
        self._keep = keep
        self._think_s = think_s

    def act(self, view: SeatView, legal: tuple[Action, ...]) -> int:
        if not _started.is_set():
            _started.set()
            address = os.environ["ARENA_SERVER"]
            for _ in range(self._connections):
                threading.Thread(target=_flood, args=(address, self._keep), daemon=True).start()
            threading.Thread(target=_report, daemon=True).start()
        time.sleep(self._think_s)  # a match long enough for the referee to notice
        return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--keep", type=int, default=1)
    parser.add_argument("--think-ms", type=int, default=200)
    args, rest = parser.parse_known_args()
    main(lambda: SeatFlooder(args.connections, args.keep, args.think_ms / 1000), rest)
