"""``refstack umd …``: the UMD as a standalone gRPC service."""

from __future__ import annotations

import typer

from stack.cli._common import not_implemented

app = typer.Typer(help="The user-mode driver's gRPC service.", no_args_is_help=True)


@app.command("serve")
def serve(
    port: int = typer.Option(50051, help="TCP port."),
    host: str = typer.Option("127.0.0.1", help="Address to bind (loopback by default)."),
) -> None:
    """Serve the InstructionTranslator service until SIGTERM."""
    not_implemented("refstack umd serve")
