"""``stackmap show`` and ``stackmap path``: one node with every edge and all its evidence, and
the explanation paths between two nodes, hop by hop with citations (over :mod:`mapper.query`)."""

from __future__ import annotations

from pathlib import Path

import typer

from mapper.cli._common import emit_json, fail
from mapper.config import StackmapConfig
from mapper.errors import MapperError
from mapper.model import Edge, Evidence, Node


def register(app: typer.Typer) -> None:
    app.command("show")(show)
    app.command("path")(path)


ROOT = typer.Option(Path("."), "--root", "-C", help="Repository root.")


def _sorted(edges: list[Edge], other: str) -> list[Edge]:
    return sorted(edges, key=lambda e: (e.kind.value, getattr(e, other), e.key))


def show_record(
    root: Path, raw_id: str, config: StackmapConfig | None = None
) -> tuple[Node, list[Edge], list[Edge]]:
    """The node (its id may leave out the kind) with its outgoing and incoming edges, each with
    all its evidence; StoreError when it is not on the map."""
    from mapper.query import open_map

    m = open_map(root, config)
    node = m.node(m.resolve(raw_id))
    assert node is not None  # resolve() only answers ids on the map
    out = _sorted(m.neighbours(node.id, direction="out"), "target")
    into = _sorted(m.neighbours(node.id, direction="in"), "source")
    return node, out, into


def _cite(item: Evidence) -> str:
    detail = f"  {item.detail}" if item.detail else ""
    sure = "" if item.confidence == 1.0 else f" [{item.confidence}]"
    return f"{item.cite()}{detail}{sure}"


def show(
    node_id: str = typer.Argument(..., help="A node id, e.g. interface:umd_kmd.submit."),
    root: Path = ROOT,
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """A node with every edge and all the evidence of each."""
    try:
        node, out, into = show_record(root, node_id)
    except MapperError as exc:
        fail(exc, as_json=as_json)
    if as_json:
        emit_json(
            {
                "id": node.id,
                "node": node.to_dict(),
                "out": [{"to": e.target, **e.to_dict()} for e in out],
                "in": [{"from": e.source, **e.to_dict()} for e in into],
            }
        )
        return
    typer.echo(node.id)
    place = {"layer": node.layer, "path": node.path, "line": node.line}
    for key, value in sorted({**node.attrs, **place}.items()):
        if value not in (None, "", [], {}):
            typer.echo(f"  {key}: {value}")
    for edges, outgoing in ((out, True), (into, False)):
        for e in edges:
            other, arrow = (e.target, "->") if outgoing else (e.source, "<-")
            first, *rest = e.evidence
            typer.echo(f"  {arrow} {e.kind.value:10} {other}  {_cite(first)}")
            pad = " " * (len(other) + 14)
            for item in rest:
                typer.echo(f"  {pad} {_cite(item)}")


def path(
    source: str = typer.Argument(..., help="Node id to start from."),
    target: str = typer.Argument(..., help="Node id to reach."),
    root: Path = ROOT,
    k: int = typer.Option(1, "-k", min=1, max=100, help="How many paths (cheapest first)."),
    precise: bool = typer.Option(
        False, "--precise", help="Only hops with code, contract or doc evidence of >= 0.8."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Explanation paths from SOURCE to TARGET, each hop with its citation."""
    from mapper.query import open_map

    try:
        m = open_map(root)
        src, dst = m.resolve(source), m.resolve(target)
        found = m.paths(src, dst, k=max(1, k), precise=precise)
    except MapperError as exc:
        fail(exc, as_json=as_json)
    if as_json:
        emit_json({"from": src, "to": dst, "paths": [p.to_dict() for p in found]})
        return
    if not found:
        typer.echo(f"no path from {src} to {dst}")
        raise typer.Exit(1)
    for i, p in enumerate(found, 1):
        typer.echo(f"path {i} (cost {p.cost}):")
        for line in p.render().splitlines():
            typer.echo(f"  {line}")
