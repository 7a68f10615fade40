"""A bot that records every ServerMessage it receives, for the privacy test.

Each message is one JSON line in $SPY_DUMP_DIR/spy-<pid>-<random>.jsonl (in a sandbox every
bot is pid 2 of its own namespace: the random part keeps the files apart): the raw bytes in
base64 (what the test parses) and the same message as JSON (google.protobuf.json_format,
for people). The spy answers every decision with a random legal action (see WEIGHTS), drawn
from an RNG seeded with the match id and seat, so a tournament of spies with a fixed seed
always plays the same games.
"""

from __future__ import annotations

import base64
import json
import os
import random
import secrets
from pathlib import Path

from _wire import Wire, reply
from google.protobuf import json_format

from arena.v1 import arena_pb2 as pb

# How likely each kind of action is (default 1). Never a call that can end the whole match in
# one hand, and card plays more often than calls: matches then last long enough for the test
# to see many hands, Mineiro hands of ten and iron hands among them.
WEIGHTS = {
    pb.ACTION_KIND_FALTA_ENVIDO: 0,
    pb.ACTION_KIND_CONTRAFLOR_AL_RESTO: 0,
    pb.ACTION_KIND_PLAY: 4,
    pb.ACTION_KIND_PLAY_FACE_DOWN: 4,
}

if __name__ == "__main__":
    out = Path(os.environ["SPY_DUMP_DIR"]) / f"spy-{os.getpid()}-{secrets.token_hex(6)}.jsonl"
    rngs: dict[tuple[str, int], random.Random] = {}
    wire = Wire.from_env()
    with out.open("w", encoding="utf-8") as dump:
        for message in wire:
            line = {
                "b64": base64.b64encode(message.SerializeToString()).decode(),
                "json": json_format.MessageToDict(message, preserving_proto_field_name=True),
            }
            dump.write(json.dumps(line) + "\n")
            dump.flush()
            body = message.WhichOneof("body")
            if body == "game_started":
                s = message.game_started
                rngs[(s.match_id, s.seat)] = random.Random(f"{s.match_id}/{s.seat}")
            elif body == "decision":
                d = message.decision
                rng = rngs[(d.match_id, d.seat)]
                weights = [WEIGHTS.get(a.kind, 1) for a in d.legal_actions]
                if not any(weights):
                    weights = [1] * len(weights)
                index = rng.choices(range(len(weights)), weights)[0]
                wire.send(reply(d, action_index=index))
