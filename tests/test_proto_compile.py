"""The .proto is a contract for every language, not only Python: generate C++ and Java from it
with a real protoc and compile the result, so a name clash in generated code can never ship
again (protocol 1.0's `View.hand` + `View.hand_size` both made a C++ `hand_size()`).

Needs Debian's protobuf-compiler, libprotobuf-dev and libprotobuf-java, g++ and javac (`make
install` installs the Debian packages when run as root). A missing tool FAILS the test, it is
never skipped: the check is the point.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from arena.rpc import codegen

PROTOBUF_JAR = Path("/usr/share/java/protobuf.jar")
PROTOBUF_HEADERS = Path("/usr/include/google/protobuf")
COMPILE_TIMEOUT = 600  # seconds: a loaded 2-core machine compiles slowly, never forever


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.fail(
            f"{name} is not on PATH: install protobuf-compiler, libprotobuf-dev, "
            "libprotobuf-java, g++ and a JDK (`make install` as root does it)"
        )
    return path


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args, cwd=cwd, capture_output=True, text=True, timeout=COMPILE_TIMEOUT, check=False
    )


def compile_cpp(proto_root: Path, proto: Path, out: Path) -> subprocess.CompletedProcess[str]:
    """protoc --cpp_out, then `g++ -fsyntax-only` on every generated .cc."""
    if not PROTOBUF_HEADERS.is_dir():
        pytest.fail(f"no protobuf headers in {PROTOBUF_HEADERS}: install libprotobuf-dev")
    out.mkdir(parents=True, exist_ok=True)
    gen = _run([_tool("protoc"), f"-I{proto_root}", f"--cpp_out={out}", str(proto)], out)
    if gen.returncode != 0:
        return gen
    sources = sorted(str(p) for p in out.rglob("*.pb.cc"))
    assert sources, "protoc wrote no C++ source"
    return _run([_tool("g++"), "-std=c++17", "-fsyntax-only", f"-I{out}", *sources], out)


def compile_java(proto_root: Path, proto: Path, out: Path) -> subprocess.CompletedProcess[str]:
    """protoc --java_out, then javac against Debian's protobuf jar."""
    if not PROTOBUF_JAR.is_file():
        pytest.fail(f"no {PROTOBUF_JAR}: install libprotobuf-java")
    src, classes = out / "src", out / "classes"
    src.mkdir(parents=True, exist_ok=True)
    classes.mkdir(parents=True, exist_ok=True)
    gen = _run([_tool("protoc"), f"-I{proto_root}", f"--java_out={src}", str(proto)], out)
    if gen.returncode != 0:
        return gen
    sources = sorted(str(p) for p in src.rglob("*.java"))
    assert sources, "protoc wrote no Java source"
    return _run(
        [_tool("javac"), "-nowarn", "-cp", str(PROTOBUF_JAR), "-d", str(classes), *sources], out
    )


def _arena_proto() -> tuple[Path, Path]:
    (proto,) = codegen.proto_files()
    return codegen.PROTO_ROOT, proto


def test_arena_proto_compiles_as_cpp(tmp_path: Path) -> None:
    """C++ generated from proto/arena/v1/arena.proto compiles (g++ -fsyntax-only against the
    protobuf headers of the same release as protoc). Fails on protocol 1.0's .proto: View's
    `hand` and `hand_size` both generate `hand_size()`."""
    root, proto = _arena_proto()
    run = compile_cpp(root, proto, tmp_path)
    assert run.returncode == 0, f"C++ from {proto} does not compile:\n{run.stderr[-4000:]}"


def test_arena_proto_compiles_as_java(tmp_path: Path) -> None:
    """Java generated from proto/arena/v1/arena.proto compiles with javac against the
    protobuf jar of the same release as protoc."""
    root, proto = _arena_proto()
    run = compile_java(root, proto, tmp_path)
    assert run.returncode == 0, f"Java from {proto} does not compile:\n{run.stderr[-4000:]}"


def test_the_cpp_check_catches_an_accessor_clash(tmp_path: Path) -> None:
    """The C++ check is not vacuous: a message with a repeated `hand` and an int `hand_size`
    (protocol 1.0's View, reduced) fails to compile, naming `hand_size`."""
    root = tmp_path / "proto"
    root.mkdir()
    proto = root / "clash.proto"
    proto.write_text(
        'syntax = "proto3";\npackage clash;\n'
        "message Card { int32 rank = 1; }\n"
        "message View { repeated Card hand = 12; int32 hand_size = 13; }\n"
    )
    run = compile_cpp(root, proto, tmp_path / "out")
    assert run.returncode != 0
    assert "hand_size" in run.stderr
