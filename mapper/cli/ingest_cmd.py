"""``stackmap init`` and ``stackmap ingest``: propose a config, build or refresh the map."""

from __future__ import annotations

from pathlib import Path

import typer

from mapper.cli._common import emit_json, fail
from mapper.errors import MapperError


def register(app: typer.Typer) -> None:
    app.command("init")(init)
    app.command("ingest")(ingest)


def init(
    path: Path = typer.Argument(..., help="Repository to propose a config for."),
    write: bool = typer.Option(False, "--write", help="Write PATH/stackmap.toml (not if present)."),
) -> None:
    """Propose a stackmap.toml for another repository (printed; --write to save it)."""
    from mapper.config import CONFIG_FILE
    from mapper.ingest.propose import propose

    if not path.is_dir():
        fail(f"{path} is not a folder")
    text = propose(path)
    if not write:
        typer.echo(text, nl=False)
        return
    target = path / CONFIG_FILE
    if target.exists():
        fail(f"{target} exists; not overwriting it")
    target.write_text(text, encoding="utf-8")
    typer.echo(f"wrote {target}", err=True)


def ingest(
    root: Path = typer.Argument(Path("."), help="Repository root."),
    as_json: bool = typer.Option(False, "--json", help="Print the ingest report as JSON."),
    embed: bool = typer.Option(True, "--embed/--no-embed", help="Embed and index (default on)."),
    full: bool = typer.Option(False, "--full", help="Reparse every file, not only changed ones."),
    progress: bool | None = typer.Option(
        None, "--progress/--no-progress", help="Progress bar on stderr (default: on a terminal)."
    ),
) -> None:
    """Build (or incrementally refresh) the graph and the vector index."""
    from mapper.ingest import ingest as run_ingest

    try:
        report = run_ingest(root, embed=embed, full=full, progress=progress)
    except MapperError as exc:
        fail(exc, as_json=as_json)
    if as_json:
        emit_json(report.to_dict())
    else:
        typer.echo(report.render())
