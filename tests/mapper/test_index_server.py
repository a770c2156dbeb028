"""The same index code against a `chroma run` server (HttpClient), bound to 127.0.0.1."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

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


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if not CHROMA.exists():
        pytest.skip("the chroma console script is not installed")
    port = _free_port()
    data = tmp_path_factory.mktemp("chroma-server")
    proc = subprocess.Popen(
        [str(CHROMA), "run", "--path", str(data), "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120  # chroma's imports alone take long on a loaded machine
        while time.monotonic() < deadline:
            assert proc.poll() is None, f"chroma server exited with {proc.returncode}"
            try:
                socket.create_connection(("127.0.0.1", port), timeout=5).close()
                break
            except OSError:
                time.sleep(0.2)
        else:
            pytest.fail("chroma server did not start within 120 s")
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
