"""``stackmap init``, ``ingest``, ``search``, ``show``, ``ls`` and ``bench ingest``."""

from __future__ import annotations

from pathlib import Path

import typer

from mapper.cli._common import not_implemented


def register(app: typer.Typer) -> None:
    app.command("init")(init)
    app.command("ingest")(ingest)


def init(path: Path = typer.Argument(..., help="Repository to propose a config for.")) -> None:
    """Propose a stackmap.toml for another repository."""
    not_implemented("stackmap init")


def ingest(
    root: Path = typer.Argument(Path("."), help="Repository root."),
    as_json: bool = typer.Option(False, "--json", help="Print the ingest report as JSON."),
) -> None:
    """Build (or incrementally refresh) the graph and the vector index."""
    not_implemented("stackmap ingest")
