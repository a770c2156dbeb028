"""Run the UMD service until SIGTERM/SIGINT: ``python -m stack.umd.service --port N``.

The signal handler only sets an event; the main thread then runs the graceful shutdown.
The bound port is printed on stdout as ``port=N`` once serving (data on stdout, logs on stderr).
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator

from stack.umd.errors import TransportError
from stack.umd.service.server import ServerConfig, UmdServer


def serve(config: ServerConfig) -> None:
    """Serve until SIGTERM or SIGINT, then shut down gracefully."""
    server = UmdServer(config)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    try:
        port = server.start()
    except BaseException:
        server.stop(0)
        raise
    sys.stdout.write(f"port={port}\n")
    sys.stdout.flush()
    while not stop.wait(0.5):
        pass
    server.stop()


@contextlib.contextmanager
def child_server(*extra: str) -> Iterator[str]:
    """A server in a child process (its own GIL) on a free loopback port: yields its
    ``127.0.0.1:PORT``; SIGTERM (graceful shutdown) when the block ends. ``extra``: arguments."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "stack.umd.service", "--port", "0", *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        if not line.startswith("port="):
            raise TransportError(f"the UMD server did not start: {line!r}")
        yield f"127.0.0.1:{int(line.split('=')[1])}"
    finally:
        proc.terminate()
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m stack.umd.service", description=__doc__)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=50051)
    ap.add_argument("--max-message-mib", type=int, default=64)
    ap.add_argument("--session-timeout-s", type=float, default=30.0)
    ap.add_argument("--backend", default=None)
    args = ap.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(name)s %(message)s"
    )
    serve(
        ServerConfig(
            host=args.host,
            port=args.port,
            max_message_bytes=args.max_message_mib << 20,
            session_timeout_s=args.session_timeout_s,
            backend=args.backend,
        )
    )


if __name__ == "__main__":
    main()
