"""Watch a referee's live matches over gRPC, public information only (README "Watching the
contest"): `python spectator.py HOST:PORT [MATCH_ID] [TOKEN]`. Raw stubs, no SDK."""

import sys

import grpc

from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

address, match_id, token = [*sys.argv[1:], "", ""][:3]  # match_id "": every live match
try:
    with grpc.insecure_channel(address) as channel:
        stub = pb_grpc.SpectatorStub(channel)
        for live in stub.ListMatches(pb.ListMatchesRequest(token=token)).matches:
            print(f"live: {live.match_id} ({' vs '.join(live.bots)})", flush=True)
        for update in stub.Watch(pb.WatchRequest(match_id=match_id, token=token)):
            t = update.table
            played = " ".join(f"{p.seat}:{p.card.text}" for p in t.current_trick) or "-"
            print(f"{update.match.match_id} #{update.step} game {t.game_number} hand "
                  f"{t.hand_number} scores {list(t.scores)} trick {played}"
                  + (" ended" if update.ended else ""), flush=True)
except grpc.RpcError as exc:  # the referee says why (a wrong token, no such match...)
    print(f"error: {exc.code().name}: {exc.details()}", file=sys.stderr)
    sys.exit(1)
