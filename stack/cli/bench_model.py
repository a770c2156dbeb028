"""``refstack bench model``: A model through the stack and onnxruntime: time, error, memory plan."""

from __future__ import annotations

from pathlib import Path

import typer

from stack.cli._common import not_implemented


def register(app: typer.Typer) -> None:
    app.command("model")(bench_model)


def bench_model(
    model: Path = typer.Argument(..., help="An ONNX model file."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """A model through the stack and onnxruntime: time, error, memory plan."""
    not_implemented("refstack bench model")
