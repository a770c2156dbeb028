"""``refstack bench kmd``: fence latency and GEMM throughput through the KMD shim."""

from __future__ import annotations

import typer

from stack.cli._common import not_implemented


def register(app: typer.Typer) -> None:
    app.command("kmd")(bench_kmd)


def bench_kmd(as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Fence latency and GEMM throughput through the KMD shim against the bare library."""
    not_implemented("refstack bench kmd")
