"""``stackmap status``: what the tool sees in a repository before anything is built."""

from __future__ import annotations

from pathlib import Path

import typer

from mapper import __version__
from mapper.cli._common import emit_json


def register(app: typer.Typer) -> None:
    app.command("status")(status)


def status(
    root: Path = typer.Argument(Path("."), help="Repository root."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Report the config, contracts and docs found under ROOT."""
    contracts = sorted(p.name for p in (root / "contracts").glob("*") if p.is_file())
    record: dict[str, object] = {
        "version": __version__,
        "root": str(root.resolve()),
        "config": (root / "stackmap.toml").is_file(),
        "contracts": contracts,
        "knowledge_base_pages": len(list((root / "knowledge_base").rglob("*.md"))),
    }
    if as_json:
        emit_json(record)
        return
    typer.echo(f"stackmap {__version__} at {record['root']}")
    typer.echo(f"config: {'stackmap.toml' if record['config'] else 'none'}")
    typer.echo(f"contracts: {', '.join(contracts) or 'none'}")
    typer.echo(f"knowledge-base pages: {record['knowledge_base_pages']}")
