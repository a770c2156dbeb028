"""``refstack compile``, ``run`` and ``conformance``: models through the whole stack."""

from __future__ import annotations

from pathlib import Path

import typer

from stack.cli._common import not_implemented


def register(app: typer.Typer) -> None:
    app.command("compile")(compile_model)
    app.command("conformance")(conformance)


def compile_model(
    model: Path = typer.Argument(..., help="An ONNX model file."),
    output: Path = typer.Option(..., "-o", "--output", help="Where to write the Executable."),
) -> None:
    """Compile an ONNX model into an Executable (.sx)."""
    not_implemented("refstack compile")


def conformance(as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Run the ONNX backend node tests for the supported ops against the stack."""
    not_implemented("refstack conformance")
