"""An honest bot below the SDK that takes its time to start (`--delay` seconds, default 1.5)
and then plays the first legal action: a sibling has that long to steal its seat."""

from __future__ import annotations

import argparse
import time

from _wire import Wire, reply

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--delay", type=float, default=1.5)
    time.sleep(parser.parse_args().delay)
    wire = Wire.from_env()
    for message in wire:
        if message.WhichOneof("body") == "decision":
            wire.send(reply(message.decision, action_index=0))
