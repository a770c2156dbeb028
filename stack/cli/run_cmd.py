"""``refstack run``: an Executable through runtime → UMD → KMD."""

from __future__ import annotations

from pathlib import Path

import typer

from stack.cli._common import not_implemented


def register(app: typer.Typer) -> None:
    app.command("run")(run_model)


def run_model(
    executable: Path = typer.Argument(..., help="An Executable written by `refstack compile`."),
    inputs: list[str] = typer.Option([], "--input", help="NAME=FILE.npy, once per input."),
    output_dir: Path = typer.Option(Path("out"), "--output-dir", help="Where outputs go."),
) -> None:
    """Run an Executable through runtime → UMD → KMD and write each output as .npy."""
    not_implemented("refstack run")
