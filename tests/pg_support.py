"""A real PostgreSQL server for the tests, started by the tests themselves.

Debian's `postgresql` package (`make install` installs it as root) brings the binaries under
/usr/lib/postgresql/<version>/bin; its own cluster is not used. `PgServer.start` runs
`initdb` on a fresh temporary folder (trust authentication, a superuser `arena`) and `pg_ctl
start` on a free loopback port, its unix socket in that folder. PostgreSQL refuses to run as
root, so as root every command runs as the `postgres` user (`runuser`), which owns the
folder. Skipped, saying why, only where it cannot start: no binaries, or root without a
`postgres` user.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

USER = "arena"


def _bindir() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                   key=lambda p: int(p.split("/")[4]) if p.split("/")[4].isdigit() else 0)
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class PgServer:
    """One throwaway PostgreSQL server (see the module docstring)."""

    def __init__(self, bindir: Path, runas: str | None) -> None:
        self.bindir = bindir
        self.runas = runas
        # Not under pytest's tmp folders: those are 0700 root, out of reach of `postgres`.
        self.folder = Path(tempfile.mkdtemp(prefix="arena-pg-"))
        self.data = self.folder / "data"
        self.port = 0
        self._databases = 0
        if runas is not None:
            entry = pwd.getpwnam(runas)
            os.chown(self.folder, entry.pw_uid, entry.pw_gid)

    def _run(self, tool: str, *args: str, timeout: float = 120) -> None:
        argv = [str(self.bindir / tool), *args]
        if self.runas is not None:
            argv = ["runuser", "-u", self.runas, "--", *argv]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                              check=False, cwd=self.folder)
        if done.returncode != 0:
            log = self.folder / "server.log"
            tail = log.read_text()[-2000:] if log.exists() else ""
            raise AssertionError(f"{tool} failed ({done.returncode}):\n{done.stdout}\n"
                                 f"{done.stderr}\n{tail}")

    def start(self) -> None:
        if not self.data.exists():
            self._run("initdb", "-D", str(self.data), "-U", USER, "--auth=trust", "-E", "UTF8",
                      "--locale=C.UTF-8")
        self.port = self.port or _free_port()
        options = (f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 "
                   "-c fsync=off -c synchronous_commit=off -c full_page_writes=off")
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.folder / "server.log"),
                  "-w", "-t", "120", "-o", options, "start")

    def stop(self, mode: str = "fast") -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "-t", "120", "stop")

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{USER}@127.0.0.1:{self.port}/{database}"

    def socket_url(self, database: str) -> str:
        """The same database through the unix socket in the server's folder."""
        return f"postgresql://{USER}@/{database}?host={self.folder}&port={self.port}"

    def new_database(self, prefix: str = "t") -> str:
        """A fresh empty database; its URL."""
        self._databases += 1
        name = f"{prefix}{self._databases}_{os.getpid()}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def cleanup(self) -> None:
        try:
            if (self.data / "postmaster.pid").exists():
                self.stop("immediate")
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)


def start_server() -> Iterator[PgServer]:
    """The body of the `postgres` fixture: a started server, removed afterwards."""
    bindir = _bindir()
    if bindir is None:
        pytest.skip("PostgreSQL is not installed: no /usr/lib/postgresql/*/bin/initdb and no "
                    "initdb on PATH (as root, `make install` installs Debian's postgresql)")
    runas = None
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("running as root and there is no `postgres` user to run PostgreSQL as "
                        "(it refuses to run as root)")
        runas = "postgres"
    server = PgServer(bindir, runas)
    try:
        server.start()
        yield server
    finally:
        server.cleanup()


def wait_for(condition: object, what: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)
