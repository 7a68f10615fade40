"""`python -m arena.stdio [--server HOST:PORT] [--token T] [--name N] [--tls-ca FILE] --
COMMAND...`: run COMMAND as a stdio bot (docs/stdio.md)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from arena import logging as arena_logging
from arena.stdio.adapter import serve


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the command line, run the adapter, return its exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    if "--" in args:
        cut = args.index("--")
        own, command = args[:cut], args[cut + 1 :]
    elif args[:1] in (["-h"], ["--help"]):  # (no bot is called --help)
        own, command = args[:1], []
    else:
        own, command = [], args
    parser = argparse.ArgumentParser(
        prog="arena stdio", description="Connect a bot that speaks lines on stdin/stdout "
        "(docs/stdio.md) to a Truco Arena referee.",
        usage="arena stdio [--server HOST:PORT] [--token T] [--name N] [--tls-ca FILE] "
        "-- COMMAND...",
    )
    parser.add_argument("--server", help="referee address host:port (env ARENA_SERVER)")
    parser.add_argument("--token", help="admission token (env ARENA_TOKEN_FD: a file "
                        "descriptor to read it from, set for a launched bot; or ARENA_TOKEN)")
    parser.add_argument("--name", help="bot name (env ARENA_BOT_NAME)")
    parser.add_argument("--tls-ca", help="PEM certificate to trust: connect over TLS "
                        "(env ARENA_TLS_CA)")
    options = parser.parse_args(own)
    if not command:
        parser.error("COMMAND: give the command that starts your bot after --")
    arena_logging.configure(stream=sys.stderr)
    return serve(command, server=options.server, token=options.token, name=options.name,
                 tls_ca=options.tls_ca)


if __name__ == "__main__":
    sys.exit(main())
