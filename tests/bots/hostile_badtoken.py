"""A bot launched by the referee that says hello with a token that is not the one it was
given (ARENA_TOKEN): it must be refused in-band (UNAUTHENTICATED), never take its seat, and
forfeit. It prints what it was told on stderr (the referee's forfeit detail quotes it) and
exits with status 4.
"""

from __future__ import annotations

import os
import sys

from _wire import Wire

from arena.sdk import token_from_env
from arena.v1 import arena_pb2 as pb

if __name__ == "__main__":
    wire = Wire(
        os.environ["ARENA_SERVER"],
        "not-" + token_from_env(),
        os.environ.get("ARENA_BOT_NAME", "badtoken"),
    )
    for message in wire:
        if message.WhichOneof("body") == "error":
            code = pb.ErrorCode.Name(message.error.code)
            print(
                f"hostile_badtoken: refused: {code}: {message.error.message}",
                file=sys.stderr,
                flush=True,
            )
    sys.exit(4)
