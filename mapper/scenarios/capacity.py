"""A module with no room for the new op: its code goes into a module of its own.

A team that keeps modules under a length (``module_lines`` in the map's configuration, the
convention the stack states) does not grow a module past it for one more op: the counterpart
goes into a new sibling module named after the op (``kernels/pool.py`` at 294 lines →
``kernels/grid_sample.py``). A module has no room when its lines (``loc``) plus what the
similar op occupies there would pass the limit: the line spans of the definitions the new op
gets counterparts of, and one line per row, branch or use naming it there.

Every change point in the full module moves to the new one. A point keeps its predicted name,
re-homed in the new module, only where that name spells the new op: a table or a handler
class the new module gets its own of is no definition the change extends. The new module must
be loaded where the full one is: each module importing it as a module (a backend's list of
kernel modules, ``from pkg import op_rules  # register``: none of its definitions named
there), or naming the similar op's code there, imports the new module too. A table without
room for the new op's entry, which other modules register entries into, gets it from a new
module of theirs (:mod:`.tables`).
"""

from __future__ import annotations

import dataclasses
import posixpath

from mapper.impact.mapview import MapView
from mapper.ingest.code import python_module
from mapper.model import EdgeKind, NodeKind
from mapper.scenarios import footprint, importers, newop_places, tables, vocab
from mapper.scenarios.records import ChangePoint, PointKind

MOVED = (PointKind.IMPLEMENTATION, PointKind.USE, PointKind.REGISTRATION)


def _occupied(view: MapView, points: list[ChangePoint]) -> int:
    """Lines the similar op occupies among ``points`` (all in one module)."""
    lines = 0
    for point in points:
        like = view.node(point.like)
        end = like.get("end_line") if like is not None else None
        if point.kind is PointKind.IMPLEMENTATION and like is not None and like.line and end:
            lines += int(end) - like.line + 1
        else:
            lines += 1
    return lines


def _target(view: MapView, path: str, name: str) -> str:
    """The new module beside ``path``: the op's words in snake case, after the prefix most of
    the folder's modules share with ``path`` (``ops_pool.py`` → ``ops_grid_sample.py``)."""
    folder, base = posixpath.split(path)
    stem = newop_places.module_name(name)
    prefix = base.partition("_")[0] + "_" if "_" in base else ""
    if prefix:
        siblings = [
            n.path
            for n in view.nodes(NodeKind.FILE)
            if n.path and n.path.endswith(".py") and posixpath.dirname(n.path) == folder
        ]
        shared = sum(1 for p in siblings if posixpath.basename(p).startswith(prefix))
        if 2 * shared < len(siblings):
            prefix = ""
    return posixpath.join(folder, f"{prefix}{stem}.py")


def rehome(
    point: ChangePoint, old: str, new: str, target: str, spelt: set[str], full: str
) -> ChangePoint:
    predicted = point.predicted
    if predicted.startswith(old + "."):
        predicted = new + predicted[len(old) :]
    if not (vocab.runs(vocab.short_name_of(predicted)) & spelt):
        predicted = ""  # its own table or handler in the new module: nothing extended
    action = f"{point.action}, in a new module {target} ({full})"
    return dataclasses.replace(
        point, kind=PointKind.IMPLEMENTATION, path=target, line=1, predicted=predicted,
        action=action,
    )  # fmt: skip


def _loaders(
    view: MapView, path: str, target: str, layer: str | None, likes: set[str], spelt: set[str]
) -> list[ChangePoint]:
    """Modules that must import ``target`` as they import ``path``: those naming none of its
    definitions (a module list, an import for registration) or one the new op gets a
    counterpart of (``likes``); an importer of other helpers of ``path`` needs nothing new.
    Each point names the definition holding the import (a registry's loader), if any."""
    own = f"file:{path}"
    defined = {e.target for e in view.neighbours(own, {EdgeKind.DEFINES}, "out")}
    out = []
    for edge in view.neighbours(own, {EdgeKind.IMPORTS}, "in"):
        scopes = [edge.source] + [
            e.target for e in view.neighbours(edge.source, {EdgeKind.DEFINES}, "out")
        ]
        used = {
            e.target
            for scope in scopes
            for e in view.neighbours(scope, {EdgeKind.CALLS, EdgeKind.REFERENCES}, "out")
            if e.target in defined
        }
        if used and not used & likes:
            continue
        ev = view.citation(edge)
        why = "it names the similar op's code there" if used else "it loads it as a module"
        loader = footprint.enclosing(view, ev.path, ev.line, spelt)
        out.append(importers.beside(view, edge, target, layer, loader, why))
        out.extend(importers.listings(view, edge.source, likes, target))
    return out


def into_new_modules(
    view: MapView, points: list[ChangePoint], name: str, spelt: set[str]
) -> list[ChangePoint]:
    """``points`` with those in a module without room for the new op moved into a new
    module of its own, and the modules that must load it (see the module docstring). Without
    ``module_lines`` configured, ``points`` unchanged."""
    limit = view.config.module_lines
    if not limit:
        return points
    by_path: dict[str, list[ChangePoint]] = {}
    for point in points:
        if point.kind in MOVED and point.path and point.path.endswith(".py"):
            by_path.setdefault(point.path, []).append(point)
    full: dict[str, tuple[str, str]] = {}  # full module → (new module, why)
    registered: list[ChangePoint] = []  # entries of full tables, in modules of their own
    for path, here in by_path.items():
        module = view.node(f"file:{path}")
        if module is None:
            continue
        if not any(p.kind is PointKind.IMPLEMENTATION for p in here):
            uses = [p for p in here if p.kind is PointKind.USE]
            layer = view.config.layer_of(path)
            registered += tables.split_entries(view, path, uses, name, layer) if uses else []
            continue
        loc, added = int(module.get("loc") or 0), _occupied(view, here)
        if loc + added > limit:
            why = (
                f"{path} has {loc} lines, the similar op {added} there; modules stay under {limit}"
            )
            full[path] = (_target(view, path, name), why)
    if not full:
        return points + registered
    roots = view.config.python_roots
    out: list[ChangePoint] = []
    for point in points:
        moved = full.get(point.path or "") if point.kind in MOVED else None
        if moved is None:
            out.append(point)
            continue
        target, why = moved
        old, new = python_module(point.path or "", roots), python_module(target, roots)
        out.append(rehome(point, old, new, target, spelt | {vocab.compact(name)}, why))
    for path, (target, _) in sorted(full.items()):
        layer = view.config.layer_of(path)
        likes = {p.like for p in by_path[path] if p.kind is PointKind.IMPLEMENTATION}
        out.extend(_loaders(view, path, target, layer, likes, spelt))
    return out + registered
