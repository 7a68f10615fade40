"""Finding the process behind a loopback TCP connection (arena/rpc/peers.py), on real
sockets and real processes."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

from arena.rpc import peers


def test_peer_port_reads_grpc_peer_strings() -> None:
    """The client's port comes out of gRPC's ipv4/ipv6 peer strings; a Unix socket has none
    (the caller then accepts: a sandboxed seat's socket is its own)."""
    assert peers.peer_port("ipv4:127.0.0.1:53412") == 53412
    assert peers.peer_port("ipv6:[::1]:40000") == 40000
    assert peers.peer_port("ipv6:%5B::1%5D:40001") == 40001
    assert peers.peer_port("unix:/tmp/seat.sock") is None
    assert peers.socket_inodes("unix:/tmp/seat.sock") is None


def test_the_socket_is_found_in_its_owners_tree_and_not_in_another() -> None:
    """A connected client socket is found among this process's descriptors (this process is
    the tree's root), and not among those of an unrelated child process."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        client = socket.create_connection(server.getsockname())
        accepted, _ = server.accept()
        try:
            port = client.getsockname()[1]
            inodes = peers.socket_inodes(f"ipv4:127.0.0.1:{port}")
            assert inodes
            assert peers.holds_socket(peers.process_tree(os.getpid()), inodes)
            other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"],
                                     start_new_session=True)
            try:
                assert other.pid in peers.process_tree(other.pid)
                assert not peers.holds_socket([other.pid], inodes)
            finally:
                other.kill()
                other.wait()
        finally:
            accepted.close()
            client.close()
