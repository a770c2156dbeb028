"""``stackmap status``: what the tool sees in a repository, as its config describes it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from mapper import __version__
from mapper.cli._common import emit_json, fail
from mapper.errors import ConfigError, StoreError


def register(app: typer.Typer) -> None:
    app.command("status")(status)


def status_record(root: Path) -> dict[str, Any]:
    """Config, contracts, doc pages and the stored map of ``root``; ConfigError when the config
    cannot be read."""
    from mapper.config import CONFIG_FILE, load_config
    from mapper.ingest.contracts import contract_paths
    from mapper.ingest.scan import scan
    from mapper.ingest.store import Store

    config = load_config(root)
    files = scan(config).files
    docs = sorted(f.path for f in files if config.is_doc(f.path))
    record: dict[str, Any] = {
        "version": __version__,
        "root": str(config.root),
        "config": CONFIG_FILE if (config.root / CONFIG_FILE).is_file() else "pyproject.toml",
        "layers": [layer.id for layer in config.layers],
        "contracts": contract_paths(config.root, config),
        "docs": list(config.docs),
        "doc_pages": len(docs),
        "store": str(config.store_path),
        "map_version": None,
        "map": None,
    }
    store = Store(config.store_path)
    try:
        record["map"] = str(store.map_path())
        record["map_version"] = store.current_version()
    except StoreError as exc:
        record["map"] = f"unusable: {exc.message}"
    return record


def status(
    root: Path = typer.Argument(Path("."), help="Repository root."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Report the config, layers, contracts, docs and stored map found under ROOT."""
    try:
        record = status_record(root)
    except ConfigError as exc:
        fail(exc, as_json=as_json)
    if as_json:
        emit_json(record)
        return
    typer.echo(f"stackmap {__version__} at {record['root']}")
    typer.echo(f"config: {record['config']}")
    typer.echo(f"layers: {', '.join(record['layers']) or 'none'}")
    typer.echo(f"contracts: {', '.join(record['contracts']) or 'none'}")
    typer.echo(f"doc pages: {record['doc_pages']} under {', '.join(record['docs']) or '-'}")
    version = record["map_version"]
    typer.echo(f"map: version {version} ({record['map']})" if version else f"map: {record['map']}")
