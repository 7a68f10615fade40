"""Fair clocks: a bot is charged only for its own time, measured on the wire, not for the
referee's lag. A real gRPC server on 127.0.0.1, two bots that speak raw arena.v1 from
threads (no SDK) and answer at once, and a referee whose trio thread is made to stall."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterator

import grpc
import trio

from arena.referee import FaultPolicy, TimeControl, run_match
from arena.rpc.server import Hub, serve_referee
from arena.rules import Match
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc


def _instant_bot(port: int, token: str, stop: threading.Event) -> None:
    """Answer every decision at once with the first legal action (accepts batches)."""
    outbox: queue.SimpleQueue[pb.BotMessage | None] = queue.SimpleQueue()
    outbox.put(pb.BotMessage(hello=pb.Hello(bot_name=token, token=token, protocol_version=1,
                                            accepts_batches=True)))

    def outgoing() -> Iterator[pb.BotMessage]:
        while (message := outbox.get()) is not None:
            yield message

    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = pb_grpc.RefereeStub(channel)  # type: ignore[no-untyped-call]
        try:
            for message in stub.Play(outgoing()):
                items = message.batch.messages if message.HasField("batch") else [message]
                for item in items:
                    if item.HasField("decision"):
                        d = item.decision
                        outbox.put(pb.BotMessage(action=pb.ActionReply(
                            request_id=d.request_id, match_id=d.match_id, seat=d.seat,
                            action_index=0)))
                if stop.is_set():
                    break
        except grpc.RpcError:
            pass
        finally:
            outbox.put(None)


def test_a_stalled_referee_does_not_charge_instant_bots_a_timeout() -> None:
    """decision_ms = 100, no grace, bots that answer at once, and a referee whose trio
    thread stalls for 250 ms every 50 ms for two seconds (a CPU-bound referee, compressed):
    requests leave late and answers are routed late, yet no decision is a timeout, because
    the clock runs from when the request was written to when the answer was read, on the
    gRPC thread. (Before fair clocks, the decisions in flight across a stall were struck.)"""

    async def main() -> None:
        hub = Hub(hello_timeout=5)
        stop = threading.Event()
        async with serve_referee(hub) as server, trio.open_nursery() as nursery:
            links = []
            for seat, token in enumerate(("a", "b")):
                hub.admit(token, token)
                nursery.start_soon(trio.to_thread.run_sync, _instant_bot, server.port, token, stop)
                conn = await hub.connection_for(token)
                links.append(conn.link("m1", seat, token))

            async def stall() -> None:
                end = trio.current_time() + 2.0
                while trio.current_time() < end:
                    await trio.sleep(0.05)
                    time.sleep(0.25)  # the whole trio thread is busy elsewhere

            nursery.start_soon(stall)
            game = Match("argentine-1v1", {"target": 15, "chicos": 1}, seed=5)
            report = await run_match(
                "m1", game, links, time_control=TimeControl(decision_ms=100, grace_ms=0),
                policy=FaultPolicy(max_strikes=1000),
            )
            stop.set()
            await hub.close_all()
        faults = [d for d in report.decisions if d.fault]
        assert report.outcome.normal, report.outcome
        assert len(report.decisions) > 20
        assert faults == []

    trio.run(main)
