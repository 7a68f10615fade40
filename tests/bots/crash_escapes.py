"""A bot that fails before it connects after printing what a terminal would act on: rich
markup, an emoji code, a window title (OSC), cursor up, erase line and colours (CSI), a bell,
a backspace and an 8-bit CSI; then exit status 3."""

from __future__ import annotations

import sys

if __name__ == "__main__":
    print("[bold green]PASS: arena verified this bot[/] :white_check_mark:", flush=True)
    print("\x1b]0;pwned-title\x07\x1b[2K\x1b[1A\x1b[31mRED\x1b[0m\x07\x08", file=sys.stderr,
          flush=True)
    print("\x1bPdevice\x1b\\\x9b2Jend-of-crash", flush=True)
    sys.exit(3)
