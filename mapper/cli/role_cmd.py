"""``stackmap role NAME``: one role's view of the map on the terminal (as the web UI shows)."""

from __future__ import annotations

from pathlib import Path

import typer

from mapper.cli._common import emit_json, fail
from mapper.errors import MapperError
from mapper.roles import BoundaryInterface, Party


def register(app: typer.Typer) -> None:
    app.command("role")(role)


def role(
    name: str = typer.Argument(..., help="A role id from stackmap.toml, e.g. runtime."),
    root: Path = typer.Option(Path("."), "--root", "-C", help="Repository root."),
    since: str | None = typer.Option(
        None, "--since", help="Breaking changes from this revision to HEAD (default: 20 back)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """A role's layers, boundary interfaces, scenarios, findings, holes and breaking changes.

    Examples: `stackmap role runtime`, `stackmap role driver --json`.
    """
    from mapper.query import open_map
    from mapper.roles import role_view

    try:
        view = role_view(root, name, open_map(root), since=since)
    except MapperError as exc:
        fail(exc, as_json=as_json)
    if as_json:
        emit_json(view.to_dict())
        return
    echo = typer.echo
    echo(f"{view.role.name} ({view.role.id}): layers {', '.join(view.role.layers)}")
    if view.role.interests:
        echo(f"  interests: {', '.join(view.role.interests)}")
    for layer in view.layers:
        echo(f"\nlayer {layer.id} — {layer.name}: {len(layer.components)} components")
        echo(f"  {', '.join(c.split(':', 1)[1] for c in layer.components) or '-'}")
    echo(f"\ninterfaces at the boundaries ({len(view.interfaces)})")
    boundaries: dict[str, list[BoundaryInterface]] = {}
    for i in view.interfaces:
        boundaries.setdefault(f"{i.upper} -> {i.lower}", []).append(i)
    for boundary, found in boundaries.items():
        echo(f"  {boundary} ({len(found)})")
        for i in found:
            echo(f"    {i.name} [{i.sync or '?'}]  by {_names(i.providers)}; "
                 f"used by {_names(i.consumers)}")  # fmt: skip
    echo(f"\nscenarios crossing these layers ({len(view.scenarios)})")
    for s in view.scenarios:
        mine = sum(1 for st in s.steps if st.in_role)
        echo(f"  {s.id}: {s.name} ({mine} of {len(s.steps)} steps here)")
    echo(f"\nopen findings ({len(view.findings)})")
    for f in view.findings:
        echo(f"  {f.rule} {f.severity.value} {f.primary or '-'}: {f.message}")
    echo(f"\nholes ({len(view.holes)})")
    for h in view.holes:
        echo(f"  {h.node}: missing {', '.join(h.missing)} — {h.reason}")
    if view.changes_error:
        echo(f"\nrecent breaking changes: not available ({view.changes_error})")
    else:
        echo(f"\nrecent breaking changes since {view.changes_since} ({len(view.changes)})")
        for c in view.changes:
            echo(f"  [{c['layer']}] {c['location']}: {c['message']}")


def _names(parties: tuple[Party, ...]) -> str:
    """Short names; a layer named by a contract shows as ``[layer]``."""
    shown = [
        f"[{p.id.split(':', 1)[1]}]" if p.kind == "layer" else p.id.split(":", 1)[1]
        for p in parties
    ]
    return ", ".join(shown) or "-"
