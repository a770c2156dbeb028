"""Top-level commands about the KMD shim and the stack as a whole."""

from __future__ import annotations

import platform

import typer

from stack import __version__
from stack.cli._common import emit_json


def register(app: typer.Typer) -> None:
    app.command("status")(status)


def status(as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Which layers are present and which kernel backend would run."""
    layers = ["adapter", "compiler", "runtime", "umd", "kmd"]
    record = {"version": __version__, "python": platform.python_version(), "layers": layers}
    if as_json:
        emit_json(record)
    else:
        typer.echo(f"refstack {__version__} (Python {record['python']})")
        typer.echo("layers: " + " → ".join(layers))
