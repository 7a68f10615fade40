"""Truco Arena: a referee for Truco bot tournaments.

The package is layered; each layer only imports the ones above it in this list:

    arena.rules       pure Truco: cards, deals, calls, tricks, scoring, per-seat views.
                      No I/O, no clock, no logging, no randomness of its own.
    arena.referee     trio: drives one match, asks each seat to act, owns every deadline,
                      checks every answer against the legal actions, records the game.
    arena.rpc         grpcio: the wire. A thin adapter between gRPC streams and the referee.
    arena.tournament  schedules round robins, runs matches concurrently, stores results.
    arena.sdk         what a bot author imports: one method to implement.

`tests/test_layers.py` checks that importing `arena.rules` pulls in none of trio, grpc or
structlog.
"""

import os as _os

__version__ = "0.1.0"

# gRPC's own INFO lines (a plaintext client's failed TLS handshake at a referee's door, say)
# are not for the organizer's console, nor a bot's log; its errors still are. gRPC reads this
# when it is first imported, so here, before any layer imports it; set it to see more.
_os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
