"""``stackmap check`` and ``stackmap diff``: map-versus-code consistency and interface changes."""

from __future__ import annotations

from pathlib import Path

import typer

from mapper.cli._common import not_implemented


def register(app: typer.Typer) -> None:
    app.command("check")(check)


def check(root: Path = typer.Argument(Path("."), help="Repository root.")) -> None:
    """Compare the map (contracts, docs, scenarios) with the code and report drift."""
    not_implemented("stackmap check")
