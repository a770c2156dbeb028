"""Registered handlers: the function a registry enters under the similar op's key, which the
new op gets one of, written beside it.

A registry keyed by an op (``@register("MaxPool", "AveragePool")`` over ``def pool``,
``register(OpType.MAXPOOL)(_pool)``, ``@register(OpType.GLOBALAVGPOOL)`` over ``def _gap``)
holds one function per op or per group of ops. The function is not spelt after the op, so
the op's name does not find it: its key does. A new op is new behaviour, so it gets a handler
of its own in that module, registered under its own key and named as the module names its
handlers: the new op's words in snake case, with the handler's leading underscores
(``_max_roi_pool`` beside ``_pool``, ``max_roi_pool`` beside ``pool``).

The other way round, a definition spelt after the similar op but registered only under keys
naming other ops (``@register("GlobalMaxPool")`` over ``def global_max_pool``, spelt after
MaxPool) is another op's handler, not the similar op's counterpart.
"""

from __future__ import annotations

import re

from mapper.impact.mapview import Edge, MapView, Node, cite
from mapper.impact.records import hop_of
from mapper.ingest.code import python_module
from mapper.model import EdgeKind, NodeKind
from mapper.scenarios import footprint, vocab
from mapper.scenarios.records import ChangePoint, PointKind

_STRING = re.compile(r"""(["'])([^"'\\]+)\1""")
_APPLIED = re.compile(r"\)\s*\(\s*([A-Za-z_]\w*)\s*\)\s*$")  # register(KEY)(fn)
_HANDLERS = frozenset({"function", "method"})


def keys(view: MapView, path: str | None, line: int | None) -> set[str]:
    """The string keys a registration line names, compact (``"MaxPool"`` → ``maxpool``)."""
    text = _line(view, path, line)
    return {vocab.compact(m.group(2)) for m in _STRING.finditer(text)} - {""}


def foreign(view: MapView, node: Node, spelt: set[str]) -> bool:
    """``node`` is registered, and only under string keys naming ops other than this one."""
    found: set[str] = set()
    for edge in view.neighbours(node.id, {EdgeKind.REGISTERS}, "in"):
        ev = view.citation(edge)
        named = keys(view, ev.path, ev.line)
        if not named or named & spelt:
            return False
        found |= named
    return bool(found)


def handled(view: MapView, spelt: set[str], name: str) -> list[ChangePoint]:
    """A new handler, and its registration, beside each function a registry enters under a
    string key spelling the similar op (a function not itself spelt after the op)."""
    out: list[ChangePoint] = []
    for edge in view.map.edges(EdgeKind.REGISTERS):
        fn = view.node(edge.target)
        if fn is None or not _handler(fn) or vocab.runs(vocab.short_name(fn)) & spelt:
            continue
        ev = view.citation(edge)
        if keys(view, ev.path, ev.line) & spelt:
            out.extend(_written(view, edge, fn, name))
    return out


def keyed_handler(view: MapView, edge: Edge, spelt: set[str], name: str) -> list[ChangePoint]:
    """For a registration keyed by the similar op's value (``edge``: registry → value) that
    registers a function not spelt after the op, the new op's handler beside it."""
    ev = view.citation(edge)
    fn = _registered_function(view, edge.source, ev.path, ev.line)
    if fn is None or vocab.runs(vocab.short_name(fn)) & spelt:
        return []
    return _written(view, edge, fn, name)[:1]


def _written(view: MapView, edge: Edge, fn: Node, name: str) -> list[ChangePoint]:
    ev = view.citation(edge)
    path = fn.path or ev.path or ""
    short = vocab.short_name(fn)
    prefix = short[: len(short) - len(short.lstrip("_"))]
    new = prefix + vocab.snake(name)
    predicted = f"{python_module(path, view.config.python_roots)}.{new}"
    layer = fn.layer or view.config.layer_of(path)
    hop = (hop_of(view, edge, False),)
    return [
        ChangePoint(
            PointKind.IMPLEMENTATION,
            layer,
            path,
            fn.line,
            fn.id,
            predicted,
            f"write {new} for {name} beside {short}, which {edge.source} enters for the "
            f"similar op at {cite(ev)}",
            hop,
        ),
        ChangePoint(
            PointKind.REGISTRATION,
            layer,
            ev.path,
            ev.line,
            fn.id,
            predicted,
            f"register {new} under {name}'s key like {short} ({ev.detail or cite(ev)})",
            hop,
        ),
    ]


def _registered_function(
    view: MapView, registry: str, path: str | None, line: int | None
) -> Node | None:
    """The function a registration line enters: the one it decorates (the registry's edge to
    a function from that line), or the one it is applied to (``register(KEY)(fn)``)."""
    for edge in view.neighbours(registry, {EdgeKind.REGISTERS}, "out"):
        ev = view.citation(edge)
        target = view.node(edge.target)
        if ev.path == path and ev.line == line and target is not None and _handler(target):
            return target
    found = _APPLIED.search(_line(view, path, line))
    if found is None or path is None:
        return None
    node = view.node(f"symbol:{python_module(path, view.config.python_roots)}.{found.group(1)}")
    return node if node is not None and _handler(node) else None


def _handler(node: Node) -> bool:
    return node.kind is NodeKind.SYMBOL and node.get("symbol_kind") in _HANDLERS


def _line(view: MapView, path: str | None, line: int | None) -> str:
    if not path or not line:
        return ""
    lines = footprint.source_lines(view, path)
    return lines[line - 1] if 0 < line <= len(lines) else ""
