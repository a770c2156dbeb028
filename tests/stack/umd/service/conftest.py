"""A loopback UMD server per test (ephemeral port) and a client on it."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import pytest

from stack.umd.service.client import RetryPolicy, UmdClient
from stack.umd.service.server import ServerConfig, UmdServer


def _poll(condition: Callable[[], bool], deadline_s: float = 30.0) -> bool:
    """Poll ``condition`` every 20 ms until it holds (True) or the generous deadline passes."""
    deadline = time.monotonic() + deadline_s
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


@pytest.fixture
def poll() -> Callable[..., bool]:
    """The polling helper: ``assert poll(lambda: <the condition asserted next>)``."""
    return _poll


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
    """``python -m stack.umd.service`` in a subprocess on a loopback port: ``port`` 0 (the
    default) lets the server bind a free one, which it prints (``port=N``) and ``.port`` is."""

    def __init__(self, port: int = 0, *extra: str) -> None:
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
        self.port = int(line.strip().removeprefix("port="))

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait(10)

    def terminate(self) -> int:
        self.proc.terminate()
        return self.proc.wait(20)


@pytest.fixture
def spawn() -> Iterator[type[ServerProcess]]:
    started: list[ServerProcess] = []

    class Tracked(ServerProcess):
        def __init__(self, port: int = 0, *extra: str) -> None:
            super().__init__(port, *extra)
            started.append(self)

    yield Tracked
    for p in started:
        if p.proc.poll() is None:
            p.kill()
