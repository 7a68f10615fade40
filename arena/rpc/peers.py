"""Who is on the other end of a loopback TCP connection: the process holding its socket.

A launched seat's one-off token is bound to that seat's process tree (`Hub.bind_owner`); a
hello presenting it over TCP loopback is checked here. The client's socket is found by its
port (the peer address gRPC reports is the client's local address) in /proc/net/tcp and
/proc/net/tcp6, which give its inode; the process holding ``socket:[inode]`` among its file
descriptors is the connecting process. Linux only; anything that cannot be read counts as
"not found" (the caller decides what that means). Over a Unix socket there is no port to
look up: `socket_inodes` returns None and the caller accepts (sandboxed seats, whose socket is
private to them).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

PROC = Path("/proc")
_ESTABLISHED = "01"


def launched_socket(peer: str) -> bool:
    """Whether a gRPC peer came through a unix socket: the referee's only one is the launched
    bots' door, bound into their sandboxes (gRPC names every peer on it "unix:")."""
    return peer.startswith("unix:")


def peer_host(peer: str) -> str:
    """A gRPC peer string without its client port (``ipv4:1.2.3.4:5`` -> ``ipv4:1.2.3.4``,
    ``ipv6:[::1]:5`` -> ``ipv6:[::1]``): the client's host; other peers as they are."""
    if peer.startswith(("ipv4:", "ipv6:")):
        return peer.rsplit(":", 1)[0]
    return peer


def peer_port(peer: str) -> int | None:
    """The client's port in a gRPC peer string (``ipv4:127.0.0.1:53412``,
    ``ipv6:[::1]:53412``, possibly %-encoded); None for a Unix socket or anything else."""
    if not peer.startswith(("ipv4:", "ipv6:")):
        return None
    tail = peer.rsplit(":", 1)[-1]
    return int(tail) if tail.isdigit() else None


def socket_inodes(peer: str) -> set[int] | None:
    """Inodes of the established TCP sockets whose local port is the peer's port (the client's
    end of the connection); None if the peer is not TCP."""
    port = peer_port(peer)
    if port is None:
        return None
    found: set[int] = set()
    for table in ("tcp", "tcp6"):
        try:
            lines = (PROC / "net" / table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) < 10 or fields[3] != _ESTABLISHED:
                continue
            local_port = int(fields[1].rsplit(":", 1)[1], 16)
            if local_port == port:
                found.add(int(fields[9]))
    found.discard(0)
    return found


def process_tree(root: int) -> list[int]:
    """`root` and every descendant still running (through /proc/<pid>/task/*/children)."""
    tree, todo, seen = [], [root], set()
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.add(pid)
        tree.append(pid)
        try:
            tasks = list((PROC / str(pid) / "task").iterdir())
        except OSError:
            continue
        for task in tasks:
            try:
                todo.extend(int(c) for c in (task / "children").read_text().split())
            except (OSError, ValueError):
                continue
    return tree


def holds_socket(pids: Iterable[int], inodes: set[int]) -> bool:
    """Whether any of `pids` has one of the sockets `inodes` among its file descriptors."""
    wanted = {f"socket:[{inode}]" for inode in inodes}
    for pid in pids:
        fd_dir = f"/proc/{pid}/fd"
        try:
            fds = os.listdir(fd_dir)
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(f"{fd_dir}/{fd}") in wanted:
                    return True
            except OSError:
                continue
    return False
