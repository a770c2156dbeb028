"""The same index code against a `chroma run` server (HttpClient), bound to 127.0.0.1."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from mapper.config import load_config
from mapper.index import VectorIndex
from mapper.ingest import ingest
from mapper.search import search

pytestmark = pytest.mark.slow
CHROMA = Path(sys.executable).parent / "chroma"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _start(data: Path) -> tuple[subprocess.Popen[bytes], int] | None:
    """``chroma run`` on a port that was free a moment ago; None when chroma exited before it
    answered (another process took the port in between: the caller picks another)."""
    port = _free_port()
    proc = subprocess.Popen(
        [str(CHROMA), "run", "--path", str(data), "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120  # chroma's imports alone take long on a loaded machine
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return None
        try:  # chroma's own heartbeat: not merely something listening on the port
            if httpx.get(f"http://127.0.0.1:{port}/api/v2/heartbeat", timeout=5).is_success:
                return proc, port
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    proc.terminate()
    proc.wait(timeout=60)
    pytest.fail("chroma server did not start within 120 s")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A ``chroma run`` server. Chroma cannot bind port 0 and say which port it got, so a
    start that lost its port to another process is retried on another (three tries)."""
    if not CHROMA.exists():
        pytest.skip("the chroma console script is not installed")
    data = tmp_path_factory.mktemp("chroma-server")
    started = next((s for s in (_start(data) for _ in range(3)) if s is not None), None)
    assert started is not None, "chroma server exited three times before answering"
    proc, port = started
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def test_http_vector_store(server: str, minirepo: Path, tmp_path: Path) -> None:
    config = minirepo / "stackmap.toml"
    config.write_text(
        config.read_text().replace('vector_store = "embedded"', f'vector_store = "{server}"')
    )
    report = ingest(minirepo, embed=True, progress=False)
    assert not (minirepo / ".stackmap" / "chroma").exists()  # nothing embedded locally
    remote = VectorIndex.for_config(load_config(minirepo)).contents()
    assert len(remote) == report.index["chunks"]
    hits = search(minirepo, "who frees device memory after the fence")
    assert hits[0].id.startswith("doc:notes/memory-release.md")
    local = tmp_path / "local"
    shutil.copytree(minirepo, local, ignore=shutil.ignore_patterns(".stackmap"))
    (local / "stackmap.toml").write_text(
        config.read_text().replace(f'vector_store = "{server}"', 'vector_store = "embedded"')
    )
    ingest(local, embed=True, progress=False)
    assert VectorIndex.for_config(load_config(local)).contents() == remote
