"""Fixtures for the web UI's tests: maps to serve, app clients, and a live server.

``repo_map`` is this repository's own map, ingested once per session without embeddings
into a temporary store (the repository's ``.stackmap`` is never touched); ``mini_map`` is
the map tool's miniature fixture repository, copied and ingested per test.
"""

from __future__ import annotations

import dataclasses
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn
from fastapi.testclient import TestClient

from mapper.config import load_config
from mapper.ingest import ingest
from web.app import create_app
from web.data import MapData

REPO = Path(__file__).resolve().parents[2]
MINIREPO = REPO / "tests" / "mapper" / "fixtures" / "minirepo"
TOKEN = "s3cret-token-for-tests"


def map_data(root: Path, store: Path) -> MapData:
    config = dataclasses.replace(load_config(root), store=str(store))
    ingest(root, config, embed=False, progress=False)
    return MapData(root, config)


@pytest.fixture(scope="session")
def repo_map(tmp_path_factory: pytest.TempPathFactory) -> MapData:
    return map_data(REPO, tmp_path_factory.mktemp("repo-map") / "store")


@pytest.fixture(scope="session")
def client(repo_map: MapData) -> TestClient:
    """A client of this repository's map, without a token."""
    return TestClient(create_app(repo_map), base_url="http://127.0.0.1")


@pytest.fixture
def mini_root(tmp_path: Path) -> Path:
    dest = tmp_path / "minirepo"
    shutil.copytree(MINIREPO, dest, ignore=shutil.ignore_patterns(".stackmap"))
    return dest


@pytest.fixture
def mini_map(mini_root: Path) -> MapData:
    return map_data(mini_root, mini_root / ".stackmap")


@pytest.fixture(scope="session")
def live_url(repo_map: MapData) -> Iterator[str]:
    """This repository's map served by uvicorn on a loopback port, in a thread."""
    sock = socket.socket()  # bound here and handed over: no other process can take the port
    sock.bind(("127.0.0.1", 0))  # between picking it and serving on it
    port = int(sock.getsockname()[1])
    config = uvicorn.Config(create_app(repo_map), host="127.0.0.1", port=port, log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        assert thread.is_alive(), "uvicorn stopped before it started"
        assert time.monotonic() < deadline, "uvicorn did not start within 60 s"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=60)
    sock.close()


FREE = "    def free(self, ctx: int, va: int) -> None:"


@pytest.fixture(scope="session")
def free_patch() -> str:
    """A patch against this repository's working tree: ``KmdDevice.free`` (the provider of
    the ``umd_kmd.free`` contract entry) gains an optional parameter."""
    path = "stack/kmd/device.py"
    lines = (REPO / path).read_text(encoding="utf-8").splitlines()
    assert FREE in lines, f"{path} no longer defines {FREE.strip()!r}: update this fixture"
    at = lines.index(FREE) + 1
    return (
        f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -{at} +{at} @@\n"
        f"-{FREE}\n+{FREE.replace('va: int)', 'va: int, sync: bool = True)')}\n"
    )
