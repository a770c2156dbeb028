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
    contracts: bool = typer.Option(
        False,
        "--contracts",
        help="Draft a contract per adjacent layer pair from the interfaces the code shows "
        "(needs PATH/stackmap.toml; existing contract files are kept).",
    ),
) -> None:
    """Propose a stackmap.toml for another repository (printed; --write to save it), or draft
    its contracts with open questions where the code is silent (--contracts)."""
    from mapper.config import CONFIG_FILE
    from mapper.ingest.propose import propose

    if not path.is_dir():
        fail(f"{path} is not a folder")
    if contracts:
        _draft(path)
        return
    text = propose(path)
    if not write:
        typer.echo(text, nl=False)
        return
    target = path / CONFIG_FILE
    if target.exists():
        fail(f"{target} exists; not overwriting it")
    target.write_text(text, encoding="utf-8")
    typer.echo(f"wrote {target}", err=True)


def _draft(root: Path) -> None:
    from mapper.check.drafts import undeclared_uses
    from mapper.config import load_config
    from mapper.ingest import ingest as run_ingest
    from mapper.ingest import load_map
    from mapper.ingest.draft_contracts import draft_contracts

    try:
        config = load_config(root)
        run_ingest(root, config=config, embed=False, progress=None)
        uses = undeclared_uses(root, config)
        drafts = draft_contracts(load_map(root), config, root, uses)
    except MapperError as exc:
        fail(exc)
    if not drafts:
        typer.echo("no adjacent layer pair without a contract has interfaces in the code", err=True)
    for rel, text in drafts.items():
        target = root / rel
        if target.exists():
            typer.echo(f"{target} exists; not overwriting it", err=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        typer.echo(str(target))


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
