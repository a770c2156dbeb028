"""``refstack umd …``: the UMD as a standalone gRPC service."""

from __future__ import annotations

import logging
import sys

import typer

app = typer.Typer(help="The user-mode driver's gRPC service.", no_args_is_help=True)


@app.command("serve")
def serve(
    port: int = typer.Option(
        50051, min=0, max=65535, help="TCP port (0: any free port; the bound one is printed)."
    ),
    host: str = typer.Option("127.0.0.1", help="Address to bind (loopback by default)."),
    max_message_mib: int = typer.Option(64, min=1, max=2047, help="Largest gRPC message, MiB."),
    session_timeout_s: float = typer.Option(
        30.0, min=0.1, max=86_400, help="KeepAlive timeout of a session, seconds."
    ),
    backend: str = typer.Option(None, help="Kernel backend: numpy | cupy (default: auto)."),
) -> None:
    """Serve the InstructionTranslator service until SIGTERM (then shut down gracefully)."""
    from stack.umd.service.serve import serve as run
    from stack.umd.service.server import ServerConfig

    logging.basicConfig(
        level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(name)s %(message)s"
    )
    run(
        ServerConfig(
            host=host,
            port=port,
            max_message_bytes=max_message_mib << 20,
            session_timeout_s=session_timeout_s,
            backend=backend,
        )
    )
