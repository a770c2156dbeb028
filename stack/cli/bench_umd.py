"""``refstack bench umd``: translation cost in process and over gRPC."""

from __future__ import annotations

import typer

from stack.cli._common import not_implemented


def register(app: typer.Typer) -> None:
    app.command("umd")(bench_umd)


def bench_umd(as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Translation cost in process and over gRPC, against the transport floor."""
    not_implemented("refstack bench umd")
