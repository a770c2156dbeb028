"""``stackmap search`` and ``ls``: looking for nodes of the map from the terminal."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import typer

from mapper.cli._common import emit_json, fail
from mapper.errors import MapperError


def register(app: typer.Typer) -> None:
    app.command("search")(search)
    app.command("ls")(ls)


ROOT = typer.Option(Path("."), "--root", "-C", help="Repository root.")


def search(
    query: str = typer.Argument(..., help="Words or a code name."),
    root: Path = ROOT,
    limit: int = typer.Option(10, "--limit", "-n", min=1, max=1000, help="Most hits to print."),
    kind: str | None = typer.Option(None, "--kind", help="Only nodes of this kind."),
    layer: str | None = typer.Option(None, "--layer", help="Only nodes of this layer."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Hybrid search: exact code names first, then vector similarity."""
    from mapper.config import load_config
    from mapper.search import node_kind, vector_lag
    from mapper.search import search as run

    try:
        if not query.strip():
            raise MapperError("an empty query matches nothing: give words or a code name")
        node_kind(kind)
        config = load_config(root)
        lag = vector_lag(config)
        if lag is not None:
            typer.echo(f"warning: semantic search is off: {lag}", err=True)
        hits = run(root, query, limit=limit, kind=kind, layer=layer, config=config)
    except MapperError as exc:
        fail(exc, as_json=as_json)
    if as_json:
        emit_json([h.to_dict() for h in hits])
        return
    for h in hits:
        place = " / ".join(x for x in (h.layer, h.component) if x) or "-"
        typer.echo(f"{h.score:.2f} {h.match:7} {h.kind:9} {h.id}  [{place}]  {h.where}")
        if h.snippet:
            typer.echo(f"        {h.snippet}")


def ls(
    root: Path = ROOT,
    kind: str | None = typer.Option(None, "--kind", help="layer, component, interface, ..."),
    layer: str | None = typer.Option(None, "--layer", help="Only this layer."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """List nodes of the map, by kind and/or layer."""
    from mapper.ingest import load_map
    from mapper.search import listing

    try:
        rows = listing(load_map(root), kind, layer)
    except MapperError as exc:
        fail(exc, as_json=as_json)
    if as_json:
        emit_json(rows)
        return
    for r in rows:
        where = f"{r['path']}:{r['line']}" if r.get("path") else "-"
        hole = f"  HOLE: missing {', '.join(r['hole']['missing'])}" if r.get("hole") else ""
        uses = f"  {r['source']}, {len(r['consumers'])} use(s)" if r.get("source") else ""
        typer.echo(f"{r['id']}  [{r['layer'] or '-'}]  {where}{hole}{uses}")
    sources = Counter(r["source"] for r in rows if r.get("source"))
    if sources:
        typer.echo(
            f"interfaces: {sources['both']} in code and contract, {sources['discovered']} "
            f"discovered without a contract, {sources['contract']} in a contract without code "
            "using them"
        )
