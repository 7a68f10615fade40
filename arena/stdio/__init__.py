"""The stdio door: bots in any language that read and write lines (docs/stdio.md).

A bot whose `[[bot]]` says `protocol = "stdio"` is launched as `python -m arena.stdio --
COMMAND...`: this adapter process is the seat's process (the sandbox and the process group
wrap it and the bot). It connects to the referee like any gRPC bot (the SDK's address, token
and TLS settings), starts COMMAND as a child with pipes, and translates: every message the
referee sends becomes one line on the bot's stdin, and each `action` line the bot writes on
its stdout answers its oldest unanswered decision. The bot's stderr goes where the adapter's
goes (the seat's log). A remote author runs the same adapter by hand:

    arena stdio --server HOST:PORT --token TOKEN -- ./mybot

`lines` is the protocol itself (pure: engine values to lines and back); `adapter` the
processes and the connection.
"""

from arena.stdio.adapter import Adapter, serve
from arena.stdio.lines import VERSION

__all__ = ["VERSION", "Adapter", "serve"]
