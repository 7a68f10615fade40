"""A bot that plays the first legal action for `--after` decisions (default 2), then stops
itself with SIGSTOP: its process freezes with its TCP connection still open, like a machine
that vanished without a reset (a half-open connection). With `--after 0` it freezes as soon
as it is welcomed. Run it remote-style: ARENA_SERVER and ARENA_TOKEN in the environment.
"""

from __future__ import annotations

import argparse
import os
import signal

from _wire import Wire, reply

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--after", type=int, default=2)
    after = parser.parse_args().after
    wire = Wire.from_env()
    answered = 0
    for message in wire:
        body = message.WhichOneof("body")
        if body == "welcome" and after == 0:
            os.kill(os.getpid(), signal.SIGSTOP)
        if body == "decision":
            if answered == after:
                os.kill(os.getpid(), signal.SIGSTOP)
            wire.send(reply(message.decision, action_index=0))
            answered += 1
