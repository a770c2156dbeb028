"""Hostile input to ``refstack``: every refusal is one line and an exit status, nothing is lost.

Each case runs the real console script in a child process bounded in time (``timeout``) and
memory (``RLIMIT_AS``) and asserts the exit status, the one-line message and that nothing was
lost or left behind. The sweep at the end gives every numeric option of every command each
malformed value and asserts a usage error (exit 2) without a traceback.
"""

from __future__ import annotations

import io
import socket
import struct
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import redirect_stderr
from pathlib import Path

import onnx
import pytest
from typer.main import get_command
from typer.testing import CliRunner

from stack.adapter.zoo import mlp
from stack.cli import app
from stack.cli._common import progress

REFSTACK = Path(sys.executable).parent / "refstack"
MEMORY_LIMIT = 6 << 30  # address space: a 16 TiB allocation cannot happen under it


# The limit is set by a small launcher that then execs refstack, not by ``preexec_fn``: that
# runs Python in a fork of this (multi-threaded, gRPC-using) process before exec, where a
# lock held by another thread at fork time can hang or abort the child under load.
_LAUNCH = (
    "import os, resource, sys; n = int(sys.argv[1]); "
    "resource.setrlimit(resource.RLIMIT_AS, (n, n)); os.execv(sys.argv[2], sys.argv[2:])"
)


def refstack(
    *argv: str, cwd: Path | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _LAUNCH, str(MEMORY_LIMIT), str(REFSTACK), *argv],
        capture_output=True, text=True, timeout=timeout, cwd=cwd,
    )  # fmt: skip


def refused(result: subprocess.CompletedProcess[str], code: int, *phrases: str) -> str:
    """Assert a refusal: exit ``code``, no traceback, the phrases in the message; returns it."""
    err = result.stderr
    assert result.returncode == code, (result.returncode, err)
    assert "Traceback" not in err + result.stdout
    for phrase in phrases:
        assert phrase in err, err
    return err


def one_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, err
    return lines[0]


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("hostile")
    onnx.save(mlp(), d / "m.onnx")
    assert refstack("compile", str(d / "m.onnx"), "-o", str(d / "m.sx")).returncode == 0
    hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': (4398046511104,), }"
    hdr = hdr.ljust(117) + "\n"  # 16 TiB of float32 claimed by a 200-byte file
    (d / "huge.npy").write_bytes(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode())
    (d / "garbage.onnx").write_bytes(b"\x00\x01not a model" * 10)
    return d


def test_compile_refuses_to_overwrite_its_input(files: Path) -> None:
    model = files / "m.onnx"
    before = model.read_bytes()
    for spelling in (str(model), str(files / ".." / files.name / "m.onnx")):
        refused(refstack("compile", str(model), "-o", spelling), 2, "is also an input")
    assert model.read_bytes() == before


def test_compile_input_shape_that_is_not_a_shape(files: Path) -> None:
    result = refstack("compile", str(files / "m.onnx"), "-o", str(files / "o.sx"),
                      "--input-shape", "x=abc")  # fmt: skip
    refused(result, 2, "dims must be integers")
    assert not (files / "o.sx").exists()


def test_compile_input_shape_for_an_unknown_input(files: Path) -> None:
    result = refstack("compile", str(files / "m.onnx"), "-o", str(files / "o.sx"),
                      "--input-shape", "nope=1,2")  # fmt: skip
    line = one_line(refused(result, 2, "not an input"))
    assert "'nope'" in line and "inputs: x" in line


def test_compile_output_in_a_missing_folder(files: Path) -> None:
    out = files / "missing" / "deeper" / "o.sx"
    one_line(
        refused(refstack("compile", str(files / "m.onnx"), "-o", str(out)), 2, "does not exist")
    )
    assert not (files / "missing").exists()


def test_compile_a_file_that_is_not_a_model(files: Path) -> None:
    one_line(
        refused(refstack("compile", str(files / "garbage.onnx"), "-o", str(files / "g.sx")), 2)
    )
    assert not (files / "g.sx").exists()


def test_compile_a_missing_model_names_the_built_ins(files: Path) -> None:
    result = refstack("compile", str(files / "absent.onnx"), "-o", str(files / "a.sx"))
    refused(result, 2, "not a built-in model", "cnn", "resnet50")


def test_compile_accepts_a_built_in_model_by_name(files: Path) -> None:
    result = refstack("compile", "mlp", "-o", str(files / "builtin.sx"), cwd=files)
    assert result.returncode == 0, result.stderr
    assert (files / "builtin.sx").read_bytes() == (files / "m.sx").read_bytes()


def test_run_a_npy_whose_header_claims_16_tib(files: Path) -> None:
    out = files / "out16"
    result = refstack("run", str(files / "m.sx"), "--input", f"x={files / 'huge.npy'}",
                      "--output-dir", str(out))  # fmt: skip
    one_line(refused(result, 2, "cannot read input 'x'"))
    assert not out.exists()


def test_run_a_malformed_input_option(files: Path) -> None:
    refused(refstack("run", str(files / "m.sx"), "--input", "x"), 2, "is not NAME=FILE.npy")


def test_run_an_executable_that_is_not_one(files: Path) -> None:
    one_line(refused(refstack("run", str(files / "garbage.onnx")), 2))


def test_run_a_umd_that_is_not_host_port(files: Path) -> None:
    refused(refstack("run", str(files / "m.sx"), "--umd", "localhost"), 2, "is not HOST:PORT")


@pytest.fixture
def busy_port() -> Iterator[tuple[socket.socket, int]]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        yield s, int(s.getsockname()[1])


def test_run_on_a_umd_nobody_serves(files: Path) -> None:
    with socket.socket() as held:  # bound, never listening: connections are refused, and
        held.bind(("127.0.0.1", 0))  # nobody else can take the port meanwhile
        port = int(held.getsockname()[1])
        result = refstack("run", str(files / "m.sx"), "--umd", f"127.0.0.1:{port}")
    one_line(refused(result, 2, "cannot open a UMD session"))


def test_umd_serve_on_a_busy_port(busy_port: tuple[socket.socket, int]) -> None:
    _, port = busy_port
    line = one_line(refused(refstack("umd", "serve", "--port", str(port)), 2, "cannot bind"))
    assert f"127.0.0.1:{port}" in line
    with socket.create_connection(("127.0.0.1", port), timeout=10):  # its owner still serves
        pass


def test_debug_shows_the_traceback(busy_port: tuple[socket.socket, int]) -> None:
    _, port = busy_port
    result = refstack("--debug", "umd", "serve", "--port", str(port))
    assert result.returncode == 1 and "Traceback" in result.stderr


@pytest.mark.parametrize(
    "argv",
    [
        ["umd", "serve", "--port", "99999"],
        ["umd", "serve", "--max-message-mib", "0"],
        ["compile", "mlp", "-o", "x.sx", "--streams", "0"],
        ["bench", "model", "mlp", "--runs", "0"],
        ["run", "x.sx", "--timeout", "0"],
    ],
)
def test_out_of_range_numbers_are_usage_errors(argv: list[str], tmp_path: Path) -> None:
    refused(refstack(*argv, cwd=tmp_path), 2, "Invalid value")
    assert list(tmp_path.iterdir()) == []


def _numeric_options() -> Iterator[tuple[list[str], str]]:
    """(command path, option) for every int/float option of every refstack command."""

    def walk(cmd: object, path: list[str]) -> Iterator[tuple[list[str], str]]:
        sub = getattr(cmd, "commands", None)
        if sub:
            for name, child in sub.items():
                yield from walk(child, [*path, name])
            return
        for param in getattr(cmd, "params", []):
            if param.param_type_name == "option" and param.bare_type() in ("int", "float"):
                yield path, param.opts[-1]

    yield from walk(get_command(app), [])


SWEEP = list(_numeric_options())
MALFORMED = ["abc", "-1", "1e99", "99999999999999999999", ""]


def test_the_sweep_covers_every_command_with_numbers() -> None:
    commands = {" ".join(path) for path, _ in SWEEP}
    assert {"umd serve", "compile", "run", "bench model", "bench kmd", "bench umd"} <= commands


@pytest.mark.parametrize(("path", "option"), SWEEP, ids=[f"{' '.join(p)} {o}" for p, o in SWEEP])
def test_every_numeric_option_refuses_malformed_values(
    path: list[str], option: str, tmp_path: Path
) -> None:
    runner = CliRunner()
    positional = {"compile": ["mlp", "-o", str(tmp_path / "x.sx")], "run": [str(tmp_path / "x.sx")],
                  "bench model": ["mlp"]}.get(" ".join(path), [])  # fmt: skip
    for value in MALFORMED:
        result = runner.invoke(app, [*path, *positional, option, value])
        assert result.exit_code == 2, (path, option, value, result.output)
        assert isinstance(result.exception, SystemExit), result.exception
        assert "Traceback" not in result.output
    assert list(tmp_path.iterdir()) == []


def test_progress_lines_on_stderr_only_for_long_steps() -> None:
    err = io.StringIO()
    with redirect_stderr(err):
        with progress("quick step", after_s=5):
            pass
        with progress("slow step", after_s=0.01, every_s=0.05):
            deadline = time.monotonic() + 60  # the step lasts until a "still" line came out
            while "still slow step" not in err.getvalue() and time.monotonic() < deadline:
                time.sleep(0.01)
    lines = err.getvalue().splitlines()
    assert lines[0] == "refstack: slow step..."
    assert lines[-1].startswith("refstack: slow step: done in ")
    assert all("quick" not in line for line in lines)
    assert any(line.startswith("refstack: ... still slow step (") for line in lines)
