"""Text a bot wrote, made safe to show on the organizer's terminal.

A bot controls its own output (the last lines kept when it crashes) and some of what it sends;
shown raw, an escape sequence in it could retitle the window, move the cursor over earlier
lines, erase them or recolour what follows. `printable` keeps the words and drops the controls.
Pure: no I/O, usable from any layer.
"""

from __future__ import annotations

import re

# Whole escape sequences first, so their parameters ("[2K", "]0;title") go with them.
_SEQUENCE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor moves, erasing
    r"|\x1b[\]PX^_][^\x07\x1b\n]*(?:\x07|\x1b\\)?"  # OSC (window title), DCS, SOS, PM, APC
    r"|\x1b[ -/]*[0-~]"  # the other escapes (character sets, keypad modes, reset)
    r"|\x9b[0-?]*[ -/]*[@-~]"  # an 8-bit CSI
)
# What is left: C0 controls except tab and newline, DEL, C1 controls (ESC alone among them).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """`text` without escape sequences or control characters (tabs and newlines kept)."""
    return _CONTROL.sub("", _SEQUENCE.sub("", text))


def brief(text: str, most: int = 64) -> str:
    """A bot's short text (its hello's name or version) fit for one log line: printable, on
    one line, at most `most` characters, then how long it was. A hello's name is bounded only
    by the 1 MiB message cap: a hostile review (round 5) filled the log at 22 MB/s with
    hellos carrying 1 MiB names."""
    shown = " ".join(printable(text[: most * 4]).split())[:most]
    return shown if len(text) <= most else f"{shown}... ({len(text)} characters)"
