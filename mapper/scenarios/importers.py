"""What a module importing the new op's new module must list besides the import line.

A module that imports the module the new one mirrors (a package ``__init__`` importing each
translator family) names the mirrored definitions somewhere: a factory calling each family's
class (``default_translators()`` building ``ConvPoolTranslator()``), an ``__all__`` re-exporting
it. The new module's counterparts are named in the same places: each definition of the
importer calling or referencing one of the mirrored definitions, and its ``__all__`` where that
lists one of their names, gains a line for the new op.
"""

from __future__ import annotations

from typing import Any

from mapper.impact.mapview import Edge, MapView
from mapper.impact.records import Hop, hop_of
from mapper.model import EdgeKind, EvidenceKind, NodeKind
from mapper.scenarios import vocab
from mapper.scenarios.footprint import source_lines
from mapper.scenarios.records import ChangePoint, PointKind


def beside(
    view: MapView, edge: Edge, target: str, layer: str | None, predicted: str, why: str
) -> ChangePoint:
    """The import of the new module ``target`` at the line of ``edge`` (an import of the module
    it mirrors, or of one like it), in that file's layer (``layer`` where it has none)."""
    ev = view.citation(edge)
    return ChangePoint(
        PointKind.REGISTRATION,
        view.config.layer_of(ev.path) if ev.path else layer,
        ev.path,
        ev.line,
        edge.target,
        predicted,
        f"import {target} beside {edge.target.removeprefix('file:')} ({why})",
        (hop_of(view, edge, False),),
    )


def listings(view: MapView, importer: str, likes: set[str], target: str) -> list[ChangePoint]:
    """USE points in the module ``importer`` (a file node id) for the new module ``target``,
    modelled on the mirrored definitions ``likes`` (see the module docstring)."""
    out = []
    shown = {vocab.short_name(n) for n in map(view.node, likes) if n is not None}
    for defined in view.neighbours(importer, {EdgeKind.DEFINES}, "out"):
        node = view.node(defined.target)
        if node is None or node.kind is not NodeKind.SYMBOL:
            continue
        if vocab.short_name(node) == "__all__":
            line = _listed(view, node.path, node.line, node.get("end_line"), shown)
            if line is not None:
                why = f"{node.name} re-exports the similar op's {', '.join(sorted(shown))}"
                hop = Hop(
                    node.id, node.id, "names", EvidenceKind.CODE_REFERENCE, node.path, line,
                    0.8, True, why,
                )  # fmt: skip
                out.append(_point(view, node.name, node.path, line, target, hop))
            continue
        for edge in view.neighbours(node.id, {EdgeKind.CALLS, EdgeKind.REFERENCES}, "out"):
            if edge.target in likes:
                ev = view.citation(edge)
                hop = hop_of(view, edge, True)
                out.append(_point(view, node.name, ev.path, ev.line, target, hop))
                break
    return out


def _listed(
    view: MapView, path: str | None, first: int | None, last: Any, names: set[str]
) -> int | None:
    """The line of ``path`` in ``first..last`` quoting one of ``names``, or None."""
    if not path or not first:
        return None
    lines = source_lines(view, path)
    end = last if isinstance(last, int) else first
    for number in range(first, min(end, len(lines)) + 1):
        if any(f'"{n}"' in lines[number - 1] or f"'{n}'" in lines[number - 1] for n in names):
            return number
    return None


def _point(
    view: MapView, qualname: str, path: str | None, line: int | None, target: str, hop: Hop
) -> ChangePoint:
    return ChangePoint(
        PointKind.USE,
        view.config.layer_of(path) if path else None,
        path,
        line,
        hop.target if hop.forward else hop.source,
        qualname,
        f"name the new op's counterpart from {target} in {qualname}, as it names the similar "
        f"op's at {path}:{line}",
        (hop,),
    )
