"""``refstack bench …``: benchmark commands. Each layer's benchmark lives in its own module."""

from __future__ import annotations

import typer

from stack.cli._common import not_implemented

app = typer.Typer(
    help="Benchmarks that print figures (``--json`` for machines).", no_args_is_help=True
)


@app.command("kmd")
def bench_kmd(as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Fence latency and GEMM throughput through the KMD shim against the bare library."""
    not_implemented("refstack bench kmd")


@app.command("umd")
def bench_umd(as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Translation cost in process and over gRPC, against the transport floor."""
    not_implemented("refstack bench umd")


@app.command("model")
def bench_model(
    model: str = typer.Argument(..., help="An ONNX model file."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Run a model through the stack and onnxruntime; report time, error and memory plan."""
    not_implemented("refstack bench model")
