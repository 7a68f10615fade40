"""A bot written from arena.proto alone (generated stubs, no SDK) that sends a sign with every
action and records every sign it receives.

Each line of $SIGN_DUMP_DIR/raw-<pid>.jsonl is one of:
    {"sent": {"match_id", "seat", "kind"}}                 a sign it sent with an action
    {"event": {"match_id", "seat", "from", "kind"}}        a SignalEvent it received
    {"view": {"match_id", "seat", "from", "kind"}}         a sign listed in a decision's view
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from _wire import Wire

from arena.v1 import arena_pb2 as pb

if __name__ == "__main__":
    out = Path(os.environ["SIGN_DUMP_DIR"]) / f"raw-{os.getpid()}.jsonl"
    wire = Wire.from_env()
    with out.open("w", encoding="utf-8") as dump:

        def record(what: str, **fields: object) -> None:
            dump.write(json.dumps({what: fields}) + "\n")
            dump.flush()

        for message in wire:
            items = message.batch.messages if message.WhichOneof("body") == "batch" else [message]
            for item in items:
                body = item.WhichOneof("body")
                if body == "decision":
                    d = item.decision
                    for seen in d.view.signals:
                        record("view", match_id=d.match_id, seat=d.seat, **{"from": seen.seat},
                               kind=pb.SignalKind.Name(seen.signal.kind))
                    reply = pb.ActionReply(request_id=d.request_id, match_id=d.match_id,
                                           seat=d.seat)
                    # The sign first, then the action: in protocol 1.0 this lost the sign.
                    reply.signal.kind = pb.SIGNAL_KIND_ANCHO_DE_ESPADA
                    reply.signal.text = f"raw seat {d.seat}"
                    reply.action_index = 0
                    wire.send(pb.BotMessage(action=reply))
                    record("sent", match_id=d.match_id, seat=d.seat,
                           kind="SIGNAL_KIND_ANCHO_DE_ESPADA")
                elif body == "event" and item.event.WhichOneof("event") == "signal":
                    e = item.event
                    record("event", match_id=e.match_id, seat=e.seat,
                           **{"from": e.signal.seat}, kind=pb.SignalKind.Name(e.signal.signal.kind))
