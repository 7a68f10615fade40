"""The wire: gRPC streams carried into the trio world.

`arena.rpc.bridge` runs the grpc.aio server on its own thread and event loop and hands each
bidirectional stream to trio as a `BridgedStream`; its module docstring explains the thread
model.

`ENCODER` says which build of the wire encoder (`encode`, `wirecache`) this process imported:
``"compiled"`` (mypyc, with the rules engine: `make compile`) or ``"pure"`` (the sources;
always with ``ARENA_PURE_RULES=1`` or ``ARENA_PURE_WIRE=1``); `arena.rpc._native` chooses.
"""

from arena.rpc._native import ENCODER

__all__ = ["ENCODER"]
