"""A hostile launched bot that steals a sibling seat's token (the test leaks the tokens to a
file, as reading /proc/<pid>/environ of an unsandboxed sibling would) and presents it first,
from its own process, while holding its own seat. It writes how the referee answered the
stolen hello to `<leak file>.outcome`, then plays its own seat with the first legal action.

    python thief.py LEAK_FILE VICTIM_NAME
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import grpc
from _wire import Wire, reply

from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

if __name__ == "__main__":
    leak, victim = Path(sys.argv[1]), sys.argv[2]
    own = Wire.from_env()
    messages = iter(own)
    next(messages)  # the welcome: our own seat is in
    tried_file = Path(f"{leak}.tried")
    tried = set(tried_file.read_text().split()) if tried_file.exists() else set()
    token = ""
    for _ in range(200):
        tokens = [line.split()[1] for line in leak.read_text().splitlines()
                  if line.split()[0] == victim]
        fresh = [t for t in tokens if t not in tried]
        if fresh:
            token = fresh[-1]
            break
        time.sleep(0.01)
    with Path(f"{leak}.tried").open("a") as out:
        out.write(token + "\n")
    hello = pb.BotMessage(hello=pb.Hello(bot_name=victim, token=token, protocol_version=1))
    with grpc.insecure_channel(own.server) as channel:
        stream = pb_grpc.RefereeStub(channel).Play(iter([hello]))
        try:
            outcome = "admitted: " + ",".join(m.WhichOneof("body") for m in stream)
        except grpc.RpcError as exc:
            outcome = exc.code().name  # how the referee ended the stolen hello
    with Path(f"{leak}.outcome").open("a") as out:
        out.write(outcome + "\n")
    for message in messages:
        if message.WhichOneof("body") == "decision":
            own.send(reply(message.decision, action_index=0))
