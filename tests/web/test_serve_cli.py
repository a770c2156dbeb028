"""``stackmap serve``: a real uvicorn process on a loopback port, and its refusals."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from mapper.cli import app
from web.cli import is_loopback
from web.data import MapData

STACKMAP = Path(sys.executable).parent / "stackmap"


@pytest.fixture
def served(mini_map: MapData) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    proc = subprocess.Popen(
        [
            str(STACKMAP),
            "serve",
            "--root",
            str(mini_map.root),
            "--port",
            "0",
            "--token",
            "tok-123",
        ],
        stderr=subprocess.PIPE,
        text=True,
    )
    line = proc.stderr.readline() if proc.stderr else ""  # the server bound port 0: which one?
    assert line.startswith("stackmap: serving "), line
    url = line.split(" on ", 1)[1].split("/?", 1)[0]
    deadline = time.monotonic() + 90
    while True:
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        try:
            httpx.get(url + "/api/status", timeout=2)
            break
        except httpx.TransportError:
            assert time.monotonic() < deadline, "stackmap serve did not answer within 90 s"
            time.sleep(0.2)
    yield url, proc
    proc.terminate()
    proc.wait(timeout=30)


def test_serve_answers_with_the_token_only(served: tuple[str, subprocess.Popen[str]]) -> None:
    url, _ = served
    assert httpx.get(url + "/api/status").status_code == 401
    ok = httpx.get(url + "/api/status", headers={"Authorization": "Bearer tok-123"})
    assert ok.status_code == 200
    assert ok.json()["name"] == "mini"


def test_serve_refuses_a_public_address_without_a_token(
    mini_map: MapData, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("STACKMAP_TOKEN", raising=False)
    result = CliRunner().invoke(app, ["serve", "--root", str(mini_map.root), "--host", "0.0.0.0"])
    assert result.exit_code == 2
    assert "binding to 0.0.0.0 needs a token" in result.output


def test_serve_on_a_busy_port_is_one_line(mini_map: MapData) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = CliRunner().invoke(
            app, ["serve", "--root", str(mini_map.root), "--port", str(port)]
        )
    assert result.exit_code == 2
    assert result.output == f"error: cannot bind 127.0.0.1:{port}: Address already in use\n"


def test_serve_refuses_a_bad_port_and_a_missing_config(tmp_path: Path) -> None:
    runner = CliRunner()
    port = runner.invoke(app, ["serve", "--root", str(tmp_path), "--port", "70000"])
    assert port.exit_code == 2
    assert "--port must be 0..65535" in port.output
    config = runner.invoke(app, ["serve", "--root", str(tmp_path)])
    assert config.exit_code == 2
    assert "stackmap.toml" in config.output


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("localhost", True),
        ("::1", True),
        ("127.1.2.3", True),
        ("0.0.0.0", False),
        ("10.0.0.5", False),
        ("example.com", False),
        ("[::1]", True),
    ],
)
def test_is_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback
