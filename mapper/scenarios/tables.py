"""A table without room for the new op's entry, that other modules register entries into.

A module holding a table of every op (``KernelAbi`` entries in ``kmd/kernels/abi.py``) may be
full: its lines (``loc``) plus a new entry (as long as the table's entries are, by their
median: read from the map's copy of the module) would pass ``module_lines``.
Where the table also takes entries from modules of its own (``abi_pool.py`` calls
``abi.register`` at module level: the module defines the registration function, and modules of
its folder call it outside any function), the new op's entry goes into a new module of that
kind, named as they are (their shared prefix, ``abi_``, then the op: ``abi_center_crop_pad.py``),
calling the same function; and each module loading those modules (``abi.py``'s import of
``abi_pool`` at its end) loads the new one too. A table nobody registers into from outside is
left as it is: only its team knows how they would split it.
"""

from __future__ import annotations

import ast
import posixpath
import statistics

from mapper.impact.mapview import MapView
from mapper.impact.records import hop_of
from mapper.model import EdgeKind
from mapper.scenarios import importers, newop_places
from mapper.scenarios.records import ChangePoint, PointKind


def entry_lines(view: MapView, path: str, line: int | None) -> int:
    """Lines a new entry of the table holding ``path:line`` takes: the median of its entries'
    (the elements of the outermost list, tuple, set or dict around the line; a long entry of
    the similar op's says little of the new op's); 1 where none holds it."""
    text = view.source(path)
    if text is None or not line:
        return 1
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return 1
    tables = [
        node
        for node in ast.walk(tree)
        if isinstance(node, (ast.List, ast.Tuple, ast.Set, ast.Dict))
        and node.lineno <= line <= (node.end_lineno or node.lineno)
    ]
    if not tables:
        return 1
    table = tables[0]  # the outermost: ast.walk visits a literal before those inside it
    items = table.values if isinstance(table, ast.Dict) else table.elts
    return int(statistics.median((i.end_lineno or i.lineno) - i.lineno + 1 for i in items) or 1)


def registrants(view: MapView, path: str) -> tuple[str, list[str]] | None:
    """(the registration function ``path`` defines, the modules of its folder calling it at
    module level), or None where no other module registers into it."""
    folder = posixpath.dirname(path)
    for edge in view.neighbours(f"file:{path}", {EdgeKind.DEFINES}, "out"):
        defined = view.node(edge.target)
        if defined is None or defined.get("symbol_kind") != "function":
            continue  # a record class its entries are made of is no way in
        callers = sorted(
            e.source.removeprefix("file:")
            for e in view.neighbours(edge.target, {EdgeKind.CALLS}, "in")
            if e.source.startswith("file:")
            and e.source != f"file:{path}"
            and posixpath.dirname(e.source.removeprefix("file:")) == folder
        )
        if callers:
            return edge.target, callers
    return None


def _prefix(paths: list[str]) -> str:
    """The ``_``-ended prefix every one of the file names ``paths`` shares (``abi_``)."""
    names = [posixpath.basename(p) for p in paths]
    head = posixpath.commonprefix(names)
    return head[: head.rfind("_") + 1] if "_" in head else ""


def split_entries(
    view: MapView, path: str, uses: list[ChangePoint], name: str, layer: str | None
) -> list[ChangePoint]:
    """The new module registering the new op's entry and the imports loading it, where the
    table in ``path`` has no room and takes entries from modules of its own; [] else."""
    limit = view.config.module_lines
    module = view.node(f"file:{path}")
    found = registrants(view, path)
    if not limit or module is None or found is None:
        return []
    loc = int(module.get("loc") or 0)
    added = sum(entry_lines(view, path, p.line) for p in uses)
    if loc + added <= limit:
        return []
    function, modules = found
    model = next(
        e
        for e in view.neighbours(function, {EdgeKind.CALLS}, "in")
        if e.source == f"file:{modules[0]}"
    )
    folder = posixpath.dirname(path)
    called = function.removeprefix("symbol:")
    target = posixpath.join(folder, f"{_prefix(modules)}{newop_places.module_name(name)}.py")
    why = (
        f"{path} has {loc} lines and an entry of its table {added}; modules stay under "
        f"{limit}, and {', '.join(modules)} register theirs through {called}"
    )
    out = [
        ChangePoint(
            PointKind.IMPLEMENTATION,
            layer,
            target,
            1,
            function,
            "",
            f"register {name}'s entry through {called} in a new module {target} ({why})",
            (hop_of(view, model, True),),
        )
    ]
    for edge in view.neighbours(f"file:{modules[0]}", {EdgeKind.IMPORTS}, "in"):
        why = "it loads the modules registering entries"
        out.append(importers.beside(view, edge, target, layer, "", why))
    return out
