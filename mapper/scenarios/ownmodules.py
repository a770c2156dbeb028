"""A code folder whose ops each have a module of their own: the new op gets one there too.

Where at least :data:`OWN` ops each have a module named after them in a code folder, under
one name pattern (``kernels/{}.py``, ``kernels/abi_{}.py``, ``translators/{}.py``), the
folder's convention is a module per op: the counterpart of the similar op's code in a module
of that folder that several ops share (``kernels/linalg.py``, ``kernels/abi.py``), or the
branches and rows of the family handler it joins there (``translators/linear.py``, the module
mapping the similar op's values onto each other: :mod:`.branches`), go into the new op's
module of the pattern that module's name fits (``abi.py`` → ``abi_{}.py``,
``ops_math.py`` → ``ops_{}.py``, else ``{}.py``), as a module without room does
(:mod:`.capacity`). Each module listing at least :data:`~.newop_places.SIBLINGS` of the
convention's modules (a package's translators, a backend's kernel modules, ``abi.py``'s
imports of the ABI modules) lists the new one too, beside them, and names the new module's
definition wherever it names theirs (an ``__all__``, a factory building each translator).
The new module defines what the convention's modules each define under the op's name
(``{Camel}Translator``: :mod:`.ownnames`).

Where the ONNX schemas can be read (:func:`~.similar.onnx_schemas`), a module counts towards a
convention only when its op is an ONNX operator: ``binary.py``, ``unary.py`` and ``reduce.py``
are named after a family's generic kernel, which many ONNX operators share, not after one op.

A module named after an op is no shared module: :mod:`.newop_places` gives a module devoted
to the similar op its new sibling, and the registrations made there (``@register`` above the
similar op's definition) are made in the sibling here. A devoted module that names the
similar op's values but defines nothing spelt after it (``abi_det.py``: a registration call
at module level) gets its sibling here too. Nor is a module named after a family the new op's
name says it joins shared: a word of four letters or more of the module's name within the
op's (``pool.py`` for GlobalLpPool, ``quant.py`` for DynamicQuantizeLinear) makes it the
family module the op extends. A shared module whose counterparts include none of the similar
op's definitions and that is no family handler (a table or a list naming every op) keeps its
points.
"""

from __future__ import annotations

import dataclasses
import posixpath

from mapper.impact.mapview import Edge, MapView, Node
from mapper.impact.records import hop_of
from mapper.ingest.code import python_module
from mapper.model import EdgeKind, NodeKind
from mapper.scenarios import (
    capacity,
    footprint,
    importers,
    namestyle,
    newop_places,
    ownnames,
    similar,
    vocab,
)
from mapper.scenarios.records import ChangePoint, PointKind

OWN = 4  # ops with a module of their own under one pattern in a code folder: its convention
_WORD = 4  # letters of a module name's word that, within the op's name, make it its family's


def conventions(
    view: MapView, known: dict[str, list[vocab.Value]]
) -> dict[tuple[str, str], dict[str, Node]]:
    """(code folder, module name pattern) → op → its module, for the layered Python modules
    whose name spells one known op (``abi_det.py`` under ``abi_{}.py``), an ONNX operator
    where the schemas can be read."""
    operators = {vocab.compact(s.name) for s in similar.onnx_schemas()}
    spelling: dict[str, str] = {}
    for op, values in known.items():
        if operators and op not in operators:
            continue
        for s in vocab.spellings(values):
            spelling.setdefault(s, op)
    found: dict[tuple[str, str], dict[str, Node]] = {}
    for file in view.nodes(NodeKind.FILE):
        path = file.path or ""
        if not path.endswith(".py") or view.config.is_test(path) or not file.layer:
            continue
        folder, base = posixpath.split(path)
        parts = base[:-3].split("_")
        for i in range(len(parts)):
            named = spelling.get(vocab.compact("_".join(parts[i:])))
            if named is not None:
                pattern = "_".join([*parts[:i], "{}"]) + ".py"
                found.setdefault((folder, pattern), {}).setdefault(named, file)
                break
    return found


def _operators(known: dict[str, list[vocab.Value]]) -> list[str]:
    """The known ops that are ONNX operators where the schemas can be read (all of them
    where they cannot): ``reduce.py`` holds the generic kernel many operators share, a family
    module like any other, not a module devoted to one op."""
    operators = {vocab.compact(s.name) for s in similar.onnx_schemas()}
    return [op for op in known if not operators or op in operators]


def _family_named(path: str, name: str) -> bool:
    """Whether a word of four letters or more of the module's name lies within ``name``."""
    words = posixpath.basename(path)[:-3].split("_")
    return any(len(w) >= _WORD and vocab.compact(w) in vocab.compact(name) for w in words)


def _beside_siblings(
    view: MapView, points: list[ChangePoint], spelt: set[str]
) -> list[ChangePoint]:
    """``points`` with each registration made in a module devoted to the similar op
    (``@register(OpType.MAXPOOL)`` in ``maxpool.py``) made in the sibling module the new op's
    counterpart of that module's code goes into (:func:`~.newop_places.new_module`)."""
    sibling: dict[str, str] = {}
    for point in points:
        like = view.node(point.like) if point.kind is PointKind.IMPLEMENTATION else None
        home = like.path if like is not None else None
        new = view.node(f"file:{point.path}") is None
        if home and new and point.path != home and newop_places.devoted_path(home, spelt):
            sibling.setdefault(home, point.path or "")
    return [
        dataclasses.replace(p, path=sibling[p.path], line=1)
        if p.kind is PointKind.REGISTRATION and p.path in sibling
        else p
        for p in points
    ]


def _devoted_files(
    view: MapView,
    values: list[vocab.Value],
    name: str,
    spelt: set[str],
    points: list[ChangePoint],
) -> list[ChangePoint]:
    """The sibling of each module devoted to the similar op that names one of its values but
    defines nothing spelt after it (``abi_det.py``: one registration call at module level),
    and the lists it joins (:func:`~.newop_places.new_module`)."""
    done = {like.path for p in points if (like := view.node(p.like)) is not None}
    forms = vocab.new_forms(spelt, vocab.compact(name))
    spelt_as = namestyle.Spelling(view, values, spelt)
    out: list[ChangePoint] = []
    for value in values:
        for edge in view.neighbours(value.node.id, {EdgeKind.REFERENCES}, "in"):
            user = view.node(edge.source)
            path = user.path if user is not None else None
            if user is None or user.kind is not NodeKind.FILE or not path or path in done:
                continue
            if view.config.is_test(path) or not newop_places.devoted_path(path, spelt):
                continue
            done.add(path)
            layer = view.config.layer_of(path)
            made = newop_places.new_module(view, user, name, layer, spelt, forms, spelt_as)
            why = (hop_of(view, edge, False),)  # the module names the similar op's value
            out += [dataclasses.replace(made[0], predicted="", why=why), *made[1:]]
    return out


def _patterns(path: str) -> list[str]:
    """The name patterns a shared module's counterpart may follow, the most specific first."""
    stem = posixpath.basename(path)[:-3]
    out = [f"{stem}_{{}}.py"]
    if "_" in stem:
        out.append(f"{stem.partition('_')[0]}_{{}}.py")
    return [*out, "{}.py"]


def into_own_modules(
    view: MapView,
    known: dict[str, list[vocab.Value]],
    token: str,
    name: str,
    points: list[ChangePoint],
    family: set[str],
) -> list[ChangePoint]:
    """``points`` with those in a shared module of a folder with a module-per-op convention
    moved into the new op's module, and the modules listing the convention's modules (see
    the module docstring); ``token``: the similar op; ``family``: the paths of the family
    handlers the new op joins."""
    spelt = vocab.spellings(known[token])
    points = _beside_siblings(view, points, spelt)
    points += _devoted_files(view, known[token], name, spelt, points)
    found = conventions(view, known)
    every = {s for op in _operators(known) for s in vocab.spellings(known[op])}
    by_path: dict[str, list[ChangePoint]] = {}
    for point in points:
        if point.kind in capacity.MOVED and point.path and point.path.endswith(".py"):
            by_path.setdefault(point.path, []).append(point)
    moved: dict[str, tuple[str, dict[str, Node], str, str]] = {}
    for path, here in by_path.items():
        if path not in family and not any(p.kind is PointKind.IMPLEMENTATION for p in here):
            continue
        if newop_places.devoted_path(path, every) or view.node(f"file:{path}") is None:
            continue
        if _family_named(path, name):
            continue
        folder = posixpath.dirname(path)
        for pattern in _patterns(path):
            modules = found.get((folder, pattern), {})
            if len(modules) >= OWN:
                target = posixpath.join(folder, pattern.format(newop_places.module_name(name)))
                why = f"{len(modules)} ops have a module {pattern} in {folder}"
                moved[path] = (target, modules, why, pattern)
                break
    made_elsewhere = _made_elsewhere(view, found, name, points, {t for t, *_ in moved.values()})
    if not moved and not made_elsewhere:
        return points
    roots = view.config.python_roots
    out: list[ChangePoint] = []
    for point in points:
        into = moved.get(point.path or "") if point.kind in capacity.MOVED else None
        if into is None:
            out.append(point)
            continue
        target, _, why, _ = into
        old, new = python_module(point.path or "", roots), python_module(target, roots)
        out.append(capacity.rehome(point, old, new, target, spelt | {vocab.compact(name)}, why))
    made: set[str] = set()
    for path, (target, modules, _, pattern) in sorted(moved.items()):
        likes = {p.like for p in by_path[path] if p.kind is PointKind.IMPLEMENTATION}
        out.extend(_listings(view, target, modules, view.config.layer_of(path), likes, spelt))
        if target not in made:
            made.add(target)
            have = {p.predicted for p in out if p.path == target}
            out.extend(ownnames.new_definitions(view, pattern, target, modules, name, have))
    for target, (modules, pattern) in sorted(made_elsewhere.items()):
        likes = {p.like for p in out if p.path == target and p.kind is PointKind.IMPLEMENTATION}
        out.extend(_listings(view, target, modules, view.config.layer_of(target), likes, spelt))
        have = {p.predicted for p in out if p.path == target}
        out.extend(ownnames.new_definitions(view, pattern, target, modules, name, have))
    return out


def _made_elsewhere(
    view: MapView,
    found: dict[tuple[str, str], dict[str, Node]],
    name: str,
    points: list[ChangePoint],
    moved: set[str],
) -> dict[str, tuple[dict[str, Node], str]]:
    """The new op's modules that other rules made (a module without room: :mod:`.capacity`)
    in a folder with a module-per-op convention, under its pattern: new module → (the
    convention's modules, its pattern). They join the convention's lists as moved ones do."""
    stem = newop_places.module_name(name)
    paths = {p.path for p in points if p.path and view.node(f"file:{p.path}") is None} - moved
    out = {}
    for (folder, pattern), modules in sorted(found.items()):
        target = posixpath.join(folder, pattern.format(stem))
        if len(modules) >= OWN and target in paths:
            out[target] = (modules, pattern)
    return out


def _with_room(view: MapView, listing: dict[str, list[Edge]]) -> dict[str, list[Edge]]:
    """``listing`` (module → its imports of the convention's modules) without the modules at
    the configured ``module_lines``, where another one has room for the new import: the team
    registers the new module where a line fits (``evaluate.py`` beside ``evaluate_ops.py``)."""
    limit = view.config.module_lines
    if not limit:
        return listing
    room = {
        source: edges
        for source, edges in listing.items()
        if (node := view.node(source)) is None or int(node.get("loc") or 0) < limit
    }
    return room or listing


def _listings(
    view: MapView,
    target: str,
    modules: dict[str, Node],
    layer: str | None,
    likes: set[str],
    spelt: set[str],
) -> list[ChangePoint]:
    """The import of ``target`` in each module importing at least ``SIBLINGS`` of the
    convention's ``modules`` (those with room: :func:`_with_room`), at the line of the last of
    them (the list it joins), and the lists there naming the similar op's ``likes`` or the
    definitions of those modules (an ``__all__``, a factory building each module's class:
    :func:`~.importers.listings`)."""
    ids = {m.id for m in modules.values()}
    siblings = {  # what the convention's modules define
        e.target for m in ids for e in view.neighbours(m, {EdgeKind.DEFINES}, "out")
    }
    importers_of: dict[str, list[Edge]] = {}
    for module in ids:
        for edge in view.neighbours(module, {EdgeKind.IMPORTS}, "in"):
            importers_of.setdefault(edge.source, []).append(edge)
    listing = {
        source: edges
        for source, edges in importers_of.items()
        if len(edges) >= newop_places.SIBLINGS and source != f"file:{target}"
    }
    out = []
    for source, edges in sorted(_with_room(view, listing).items()):
        edge = max(edges, key=lambda e: view.citation(e).line or 0)
        ev = view.citation(edge)
        enclosing = footprint.enclosing(view, ev.path, ev.line, spelt)
        why = f"it lists {len(edges)} of the modules of {posixpath.dirname(target)} named after ops"
        out.append(importers.beside(view, edge, target, layer, enclosing, why))
        out.extend(importers.listings(view, source, likes | siblings, target))
    return out
