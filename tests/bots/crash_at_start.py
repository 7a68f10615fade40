"""A bot that fails before it connects: one line on stderr, exit status 3."""

from __future__ import annotations

import sys

MESSAGE = "crash_at_start: cannot load weights.bin (deliberate test crash)"

if __name__ == "__main__":
    print(MESSAGE, file=sys.stderr, flush=True)
    sys.exit(3)
