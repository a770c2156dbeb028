"""A loopback UMD server per test (ephemeral port) and a client on it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from stack.umd.service.client import RetryPolicy, UmdClient
from stack.umd.service.server import ServerConfig, UmdServer


@pytest.fixture
def server() -> Iterator[UmdServer]:
    srv = UmdServer(ServerConfig(port=0, backend="numpy", drain_s=0.2, grace_s=2.0))
    srv.start()
    yield srv
    srv.stop()


@pytest.fixture
def client(server: UmdServer) -> Iterator[UmdClient]:
    c = UmdClient(f"127.0.0.1:{server.port}", policy=RetryPolicy(timeout_s=10, retry_window_s=5))
    yield c
    c.close()


class ServerProcess:
    """``python -m stack.umd.service`` in a subprocess on a fixed loopback port."""

    def __init__(self, port: int, *extra: str) -> None:
        import subprocess
        import sys

        self.port = port
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "stack.umd.service",
                "--port",
                str(port),
                "--backend",
                "numpy",
                *extra,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        line = self.proc.stdout.readline() if self.proc.stdout else ""
        if not line.startswith("port="):
            self.proc.kill()
            raise RuntimeError(f"server did not start: {line!r}")

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait(10)

    def terminate(self) -> int:
        self.proc.terminate()
        return self.proc.wait(20)


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def spawn() -> Iterator[type[ServerProcess]]:
    started: list[ServerProcess] = []

    class Tracked(ServerProcess):
        def __init__(self, port: int, *extra: str) -> None:
            super().__init__(port, *extra)
            started.append(self)

    yield Tracked
    for p in started:
        if p.proc.poll() is None:
            p.kill()


@pytest.fixture
def port() -> int:
    """A loopback port that was free a moment ago."""
    return free_port()
