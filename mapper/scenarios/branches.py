"""Per-op branches of a family module, and the constants about the family: code the new op
reaches because it joins the family.

A module mapping the similar op's values onto each other (``OpKind.GATHER_ND:
KernelId.GATHER_ND``, a line :func:`~mapper.scenarios.newop_places.mapping_rows` gives the new
op) is the module of the family handler the new op joins: its translator, its dispatcher. A
table there of fewer than a third of all ops names the family. A function or method of that
module gains a branch for the new op where it names the similar op's value
(``if req.op is OpKind.GATHER_ND``) or dispatches over the family (names two of its ops or
more: ``parse`` reading ``CONV2D``'s and ``GLOBALLPPOOL``'s attributes in their branches and
MaxPool's in its ``else``).

Elsewhere, code naming the similar op among a few others is behaviour peculiar to those ops
(see :mod:`mapper.scenarios.footprint`), which the new op does not inherit, unless it is about
the family: a constant naming two other ops or more, more than half of them of the family
(``NCHW_OPS``: the conv family and BatchNorm), gains the new op.

A definition spelt after the similar op is its counterpart, written rather than extended, and
tables (module constants) are the mapping rows themselves: neither is a branch.
"""

from __future__ import annotations

from collections.abc import Collection

from mapper.impact.mapview import Edge, Evidence, MapView, Node, cite
from mapper.impact.records import hop_of
from mapper.model import EdgeKind, NodeKind
from mapper.scenarios import footprint, vocab
from mapper.scenarios.records import ChangePoint, PointKind

_BRANCHING = frozenset({"function", "method"})
DISPATCH = 2  # the family's ops a function names to dispatch over them


def family_points(
    view: MapView,
    rows: list[ChangePoint],
    known: dict[str, list[vocab.Value]],
    token: str,
    name: str,
) -> list[ChangePoint]:
    """The new op's branches in the family modules holding ``rows`` (its mapping rows) and
    its entries in the constants about that family."""
    op_of = {v.node.id: op for op, vs in known.items() for v in vs}
    family = _family(view, rows, op_of)
    return [
        *_branches(view, rows, known, token, name, family, op_of),
        *_family_sets(view, rows, known, token, name, family, op_of),
    ]


def _branches(
    view: MapView,
    rows: list[ChangePoint],
    known: dict[str, list[vocab.Value]],
    token: str,
    name: str,
    family: set[str],
    op_of: dict[str, str],
) -> list[ChangePoint]:
    """A branch to add for ``name`` in each function or method of the modules holding
    ``rows`` that names one of the similar op's values, or dispatches over ``family``."""
    modules = {p.path for p in rows if p.path}
    spelt = vocab.spellings(known[token])
    out: list[ChangePoint] = []
    done: set[str] = set()
    for value in known[token]:
        for edge in view.neighbours(value.node.id, {EdgeKind.REFERENCES}, "in"):
            user = view.node(edge.source)
            if user is None or not _branching(user, modules, spelt):
                continue
            done.add(user.id)
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
    for path in sorted(modules):
        out.extend(_dispatchers(view, path, family, op_of, spelt, done, name))
    return out


def _branching(user: Node, modules: Collection[str | None], spelt: set[str]) -> bool:
    """A function or method of a family module not spelt after the similar op (its own
    counterpart is written, not extended)."""
    return (
        user.kind is NodeKind.SYMBOL
        and user.path in modules
        and user.get("symbol_kind") in _BRANCHING
        and not vocab.runs(vocab.short_name(user)) & spelt
    )


def family_modules(
    view: MapView, rows: list[ChangePoint], known: dict[str, list[vocab.Value]]
) -> set[str]:
    """The modules of the family handlers holding ``rows``: those whose table maps fewer
    than a third of all ops (a table of more maps every op: a registry, not a family)."""
    op_of = {v.node.id: op for op, vs in known.items() for v in vs}
    every = len(set(op_of.values()))
    out = set()
    for row in rows:
        if row.path and row.line:
            for table in view.definitions_at(row.path, row.line)[:1]:
                if 3 * len(named_ops(view, table, op_of)) < every:
                    out.add(row.path)
    return out


def _family(view: MapView, rows: list[ChangePoint], op_of: dict[str, str]) -> set[str]:
    """The ops the family tables holding ``rows`` map (the family the new op joins); a table
    of a third of all ops or more (``UMD_OPS``) maps every op, not a family."""
    every = len(set(op_of.values()))
    ops: set[str] = set()
    for row in rows:
        if row.path and row.line:
            for table in view.definitions_at(row.path, row.line)[:1]:
                named = named_ops(view, table, op_of)
                if 3 * len(named) < every:
                    ops |= named
    return ops


def named_ops(view: MapView, constant: Node, op_of: dict[str, str]) -> set[str]:
    """The ops whose values are named within ``constant``'s lines (a module-level constant's
    names are recorded on its module)."""
    path = constant.path or ""
    first = constant.line or 0
    last = int(constant.get("end_line") or first)
    ops = set()
    for user in (constant.id, f"file:{path}"):
        for edge in view.neighbours(user, {EdgeKind.REFERENCES}, "out"):
            if edge.target in op_of and any(
                ev.path == path and first <= (ev.line or 0) <= last for ev in edge.evidence
            ):
                ops.add(op_of[edge.target])
    return ops


def _family_sets(
    view: MapView,
    rows: list[ChangePoint],
    known: dict[str, list[vocab.Value]],
    token: str,
    name: str,
    family: set[str],
    op_of: dict[str, str],
) -> list[ChangePoint]:
    """Each constant outside the family's modules naming the similar op among others, more
    than half of them of ``family`` (``NCHW_OPS``: the conv family and BatchNorm): a set
    about the family, which the new op enters."""
    modules = {p.path for p in rows}
    out = []
    for value in known[token]:
        for edge in view.neighbours(value.node.id, {EdgeKind.REFERENCES}, "in"):
            for ev in edge.evidence:  # each place the module names the op
                if not ev.path or not ev.line or ev.path in modules:
                    continue
                out.extend(_family_set(view, edge, ev, family, op_of, token, name))
    return out


def _family_set(
    view: MapView,
    edge: Edge,
    ev: Evidence,
    family: set[str],
    op_of: dict[str, str],
    token: str,
    name: str,
) -> list[ChangePoint]:
    """The point for the constant holding ``ev`` (a place naming the similar op) when it is
    about the family: it names two or more other ops, more than half of them of ``family``."""
    path, line = str(ev.path), int(ev.line or 0)
    for constant in view.definitions_at(path, line)[:1]:
        others = named_ops(view, constant, op_of) - {token}
        inside = others & family
        if constant.get("symbol_kind") != "constant" or len(others) < DISPATCH:
            return []
        if 2 * len(inside) <= len(others):
            return []
        return [
            ChangePoint(
                PointKind.USE,
                constant.layer or view.config.layer_of(path),
                path,
                line,
                constant.id,
                constant.name,
                f"add {name} to {vocab.short_name(constant)}: it names "
                f"{vocab.short_name_of(edge.target)} with {', '.join(sorted(inside))} of the "
                f"family the new op joins, {len(inside)} of its {len(others)} others",
                (hop_of(view, edge, False),),
            )
        ]
    return []


def _dispatchers(
    view: MapView,
    path: str,
    family: set[str],
    op_of: dict[str, str],
    spelt: set[str],
    done: set[str],
    name: str,
) -> list[ChangePoint]:
    """The functions and methods of ``path`` naming :data:`DISPATCH` or more of ``family``'s
    ops, not already given a branch."""
    module = f"file:{path}"
    out = []
    for user in view.nodes(NodeKind.SYMBOL):
        if user.id in done or user.path != path or not _branching(user, {path}, spelt):
            continue
        named = {op_of[v] for v in footprint.cited_values(view, user.id) if v in op_of}
        if len(named & family) < DISPATCH:
            continue
        edges = view.neighbours(module, {EdgeKind.DEFINES}, "out")
        hop = next((hop_of(view, e, False) for e in edges if e.target == user.id), None)
        out.append(
            ChangePoint(
                PointKind.USE,
                user.layer or view.config.layer_of(path),
                path,
                user.line,
                user.id,
                user.name,
                f"add a {name} branch to {user.name}: it dispatches over "
                f"{', '.join(sorted(named & family))} of the family the new op joins",
                (hop,) if hop else (),
            )
        )
    return out
