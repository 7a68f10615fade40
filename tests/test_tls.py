"""TLS: a tournament served over TLS with launched Python and JavaScript bots, and a plain
client refused."""

from __future__ import annotations

import datetime
import ipaddress
import subprocess
import sys
from pathlib import Path

import grpc
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from arena.tournament.store import Store

ROOT = Path(__file__).resolve().parent.parent


def make_certificate(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and localhost, and its key."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "truco-arena-test")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / "referee.crt", folder / "referee.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


@pytest.mark.e2e
def test_tournament_over_tls(tmp_path: Path) -> None:
    """With [tls], the referee serves TLS; launched bots (Python and JS) get ARENA_TLS_CA and
    play every match to a normal end."""
    cert, key = make_certificate(tmp_path)
    config = tmp_path / "tls.toml"
    config.write_text(
        f"""
[tournament]
name = "tls"
games = 1
variants = ["argentine-1v1", "mineiro-1v1"]
database = "arena.db"

[options.argentine-1v1]
target = 15
chicos = 1

[tls]
cert = "{cert.name}"
key = "{key.name}"

[[bot]]
name = "py"
command = ["python", "{ROOT / 'sample_bots' / 'random_bot.py'}"]

[[bot]]
name = "js"
command = ["node", "{ROOT / 'sample_bots' / 'js_random' / 'bot.js'}"]
"""
    )
    done = subprocess.run(
        [sys.executable, "-m", "arena.cli", "tournament", str(config), "--no-progress"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    rows = Store(tmp_path / "arena.db").matches("tls")
    assert len(rows) == 2
    assert {r.termination for r in rows} == {"normal"}


def test_plain_client_cannot_talk_to_a_tls_referee(tmp_path: Path) -> None:
    """A client without TLS gets no answer from a TLS referee (UNAVAILABLE); one that trusts
    the certificate does."""
    import trio

    from arena.rpc.server import Hub, serve_referee

    cert, key = make_certificate(tmp_path)
    credentials = grpc.ssl_server_credentials([(key.read_bytes(), cert.read_bytes())])

    async def main() -> grpc.StatusCode:
        async with serve_referee(Hub(), credentials=credentials) as server:

            def probe() -> grpc.StatusCode:
                from grpc_health.v1 import health_pb2, health_pb2_grpc

                plain = grpc.StatusCode.OK
                with grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
                    stub = health_pb2_grpc.HealthStub(channel)
                    try:
                        stub.Check(health_pb2.HealthCheckRequest(), timeout=3)
                    except grpc.RpcError as exc:
                        plain = exc.code()
                # The same server answers a client that trusts its certificate.
                with grpc.secure_channel(
                    f"127.0.0.1:{server.port}",
                    grpc.ssl_channel_credentials(root_certificates=cert.read_bytes()),
                ) as channel:
                    stub = health_pb2_grpc.HealthStub(channel)
                    reply = stub.Check(health_pb2.HealthCheckRequest(), timeout=5)
                    assert reply.status == health_pb2.HealthCheckResponse.SERVING
                return plain

            return await trio.to_thread.run_sync(probe)

    assert trio.run(main) == grpc.StatusCode.UNAVAILABLE


@pytest.mark.e2e
@pytest.mark.parametrize("mistake", ["swapped", "key is the cert", "another key"])
def test_a_tls_key_that_is_not_the_certificates_is_one_error_line(
    tmp_path: Path, mistake: str
) -> None:
    """The classic TLS slips, each refused before anything runs (exit 2, one `error:` line,
    no database): cert and key swapped, the certificate given as the key (an outside
    walkthrough got gRPC's "Failed to bind to address" and a 90-line traceback, after the
    tournament row was written), and the key of another certificate."""
    from test_e2e_support import arena, write_config

    cert, key = make_certificate(tmp_path)
    other_dir = tmp_path / "other"
    other_dir.mkdir()
    _, other_key = make_certificate(other_dir)
    given = {"swapped": (key, cert), "key is the cert": (cert, cert),
             "another key": (cert, other_key)}[mistake]
    config = write_config(tmp_path, name="tlsbad",
                          bots={"a": ["python", "a.py"], "b": ["python", "b.py"]},
                          variants=["argentine-1v1"],
                          extra=f'\n[tls]\ncert = "{given[0]}"\nkey = "{given[1]}"\n')
    run = arena("tournament", config, cwd=tmp_path)
    assert run.returncode == 2, (run.stdout, run.stderr)
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    assert lines[0].startswith("error: tls"), lines
    assert not (tmp_path / "arena.db").exists()


@pytest.mark.e2e
def test_a_plaintext_knock_leaves_no_grpc_line_on_the_organizers_console(tmp_path: Path) -> None:
    """A plaintext client knocking at a TLS referee's door fails its handshake; gRPC logs
    that at INFO, in its own format, and `arena serve` printed it among its own lines (an
    outside walkthrough). The arena keeps gRPC to its errors (GRPC_VERBOSITY, unless set)."""
    import os
    import socket
    import time

    from test_e2e_support import ARENA, write_config

    cert, key = make_certificate(tmp_path)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = write_config(
        tmp_path, name="knock", variants=["argentine-1v1"], bots={},
        extra=(f'\n[tls]\ncert = "{cert}"\nkey = "{key}"\n'
               '\n[[bot]]\nname = "a"\ntoken = "a-token-0123456789abc"\n'
               '\n[[bot]]\nname = "b"\ntoken = "b-token-0123456789abc"\n'))
    env = {k: v for k, v in os.environ.items() if k != "GRPC_VERBOSITY"}
    proc = subprocess.Popen([str(ARENA), "serve", str(config), "--listen", f"127.0.0.1:{port}"],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)
    try:
        assert proc.stderr is not None
        while "listening on" not in proc.stderr.readline():
            pass
        with (grpc.insecure_channel(f"127.0.0.1:{port}") as channel,
              pytest.raises(grpc.FutureTimeoutError)):
            grpc.channel_ready_future(channel).result(timeout=2)
        time.sleep(0.5)
    finally:
        proc.kill()
        _, err = proc.communicate()
    assert "ssl_transport_security" not in err, err
    assert "Handshake failed" not in err, err


@pytest.mark.e2e
def test_remote_bots_of_three_kinds_connect_over_tls_with_tls_ca(tmp_path: Path) -> None:
    """`arena serve` with [tls] and three remote bots, each given the certificate to trust
    on its own command line as README says: the Python SDK bot and the JavaScript kit
    (`--tls-ca FILE`), and the C kit (a stdio bot, built by `make kits`) through `arena
    stdio --tls-ca FILE`. Every match of
    the round robin ends normally. (An outside walkthrough found the stdio door's and the
    JS kit's TLS only by reading --help and the source.)"""
    import os
    import socket

    from test_e2e_support import ARENA, SAMPLE_BOTS, write_config

    cert, key = make_certificate(tmp_path)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    tokens = {name: f"{name}-token-0123456789abcdef" for name in ("py", "js", "lines")}
    config = write_config(
        tmp_path, name="tlsremote", variants=["argentine-1v1"], bots={},
        extra=f'\n[tls]\ncert = "{cert}"\nkey = "{key}"\n' + "".join(
            f'\n[[bot]]\nname = "{name}"\ntoken = "{token}"\n'
            for name, token in tokens.items()))
    serve = subprocess.Popen([str(ARENA), "serve", str(config), "--listen", f"127.0.0.1:{port}"],
                             cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True)
    address = f"127.0.0.1:{port}"
    env = {**os.environ, "ARENA_TLS_CA": ""}  # only the command lines say where the CA is
    bots = [
        [sys.executable, str(SAMPLE_BOTS / "random_bot.py"), "--server", address,
         "--token", tokens["py"], "--tls-ca", str(cert)],
        ["node", str(SAMPLE_BOTS / "js_random" / "bot.js"), "--server", address,
         "--token", tokens["js"], "--tls-ca", str(cert)],
        [str(ARENA), "stdio", "--server", address, "--token", tokens["lines"], "--name", "lines",
         "--tls-ca", str(cert), "--", str(SAMPLE_BOTS / "c_random" / "bot")],
    ]
    players: list[subprocess.Popen[bytes]] = []
    try:
        assert serve.stdout is not None
        while "waiting for bots" not in (line := serve.stdout.readline()):
            assert line, "arena serve ended before listening"
        players += [subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL) for cmd in bots]
        out, _ = serve.communicate(timeout=180)
        assert serve.returncode == 0, out
    finally:
        serve.kill()
        for player in players:
            player.kill()
            player.wait()
    rows = Store(tmp_path / "arena.db").matches("tlsremote")
    assert len(rows) == 3, out
    assert {r.termination for r in rows} == {"normal"}, [(r.id, r.detail) for r in rows]
