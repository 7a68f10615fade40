"""A bot that says hello and then never answers: every decision is a timeout.

It keeps reading its stream (so the referee never sees a stalled reader or a disconnect) and
exits when the referee ends the stream.
"""

from __future__ import annotations

from _wire import Wire

if __name__ == "__main__":
    for _message in Wire.from_env():
        pass
