"""A remote bot below the SDK (arena.v1 only) whose mood is its first argument:

* ``steady``: answers every decision at once with the first legal action;
* ``stall``: answers at once, except that at its `--after`-th decision it stalls for
  `--stall` seconds, then answers its whole backlog (an honest bot whose machine hiccuped);
* ``vanish``: answers `--after` decisions, then exits without a word (a bot that is gone).

Run it remote-style: ARENA_SERVER, ARENA_TOKEN (and ARENA_BOT_NAME) in the environment.
"""

from __future__ import annotations

import argparse
import os
import time

from _wire import Wire, reply

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("mood", choices=["steady", "stall", "vanish"])
    parser.add_argument("--after", type=int, default=3)
    parser.add_argument("--stall", type=float, default=3.0)
    args = parser.parse_args()
    wire = Wire.from_env()
    answered = 0
    for message in wire:
        for item in message.batch.messages if message.HasField("batch") else [message]:
            if item.WhichOneof("body") != "decision":
                continue
            if args.mood == "vanish" and answered == args.after:
                os._exit(0)
            if args.mood == "stall" and answered == args.after:
                time.sleep(args.stall)  # the backlog piles up in the stream meanwhile
            wire.send(reply(item.decision, action_index=0))
            answered += 1
