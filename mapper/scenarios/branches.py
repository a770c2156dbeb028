"""Per-op branches of a family module: code the new op reaches because it joins the family.

A module mapping the similar op's values onto each other (``OpKind.GATHER_ND:
KernelId.GATHER_ND``, a line :func:`~mapper.scenarios.newop_places.mapping_rows` gives the new
op) is the module of the family handler the new op joins: its translator, its dispatcher. A
function or method of that module that names the similar op's value branches on it
(``if req.op is OpKind.GATHER_ND``, ``if k is KernelId.GATHER_ND``) and gains a branch for the
new op. Elsewhere, code naming the similar op among a few others is behaviour peculiar to those
ops (see :mod:`mapper.scenarios.footprint`), which the new op does not inherit; inside the
family it joins, the op's branches are where its own attributes and shapes are read.

A definition spelt after the similar op is its counterpart, written rather than extended, and
tables (module constants) are the mapping rows themselves: neither is a branch.
"""

from __future__ import annotations

from mapper.impact.mapview import MapView, cite
from mapper.impact.walk import hop_of
from mapper.model import EdgeKind, NodeKind
from mapper.scenarios import vocab
from mapper.scenarios.records import ChangePoint, PointKind

_BRANCHING = frozenset({"function", "method"})


def family_branches(
    view: MapView, rows: list[ChangePoint], values: list[vocab.Value], name: str, spelt: set[str]
) -> list[ChangePoint]:
    """A branch to add for ``name`` in each function or method of the modules holding
    ``rows`` (the new op's mapping rows) that names one of the similar op's ``values``."""
    modules = {p.path for p in rows if p.path}
    out: list[ChangePoint] = []
    for value in values:
        for edge in view.neighbours(value.node.id, {EdgeKind.REFERENCES}, "in"):
            user = view.node(edge.source)
            if user is None or user.kind is not NodeKind.SYMBOL or user.path not in modules:
                continue
            if user.get("symbol_kind") not in _BRANCHING:
                continue
            if vocab.runs(vocab.short_name(user)) & spelt:
                continue  # the similar op's own counterpart: written, not extended
            ev = view.citation(edge)
            out.append(
                ChangePoint(
                    PointKind.USE,
                    user.layer or view.config.layer_of(user.path or ""),
                    ev.path or user.path,
                    ev.line or user.line,
                    user.id,
                    user.name,
                    f"add a {name} branch to {user.name}: it names "
                    f"{vocab.short_name(value.node)} at {cite(ev)}, in the module mapping the "
                    "family's values",
                    (hop_of(view, edge, False),),
                )
            )
    return out
