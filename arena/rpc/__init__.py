"""The wire: gRPC streams carried into the trio world.

`arena.rpc.bridge` runs the grpc.aio server on its own thread and event loop and hands each
bidirectional stream to trio as a `BridgedStream`; its module docstring explains the thread
model.
"""
