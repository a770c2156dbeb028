"""Small helpers shared by the rewriting passes: single-use checks and node replacement."""

from __future__ import annotations

from collections.abc import Mapping

from stack.compiler.ir import Graph, Node


def sole_consumer(graph: Graph, users: Mapping[str, list[Node]], value: str) -> Node | None:
    """The only node reading ``value``, or None when it has several readers or is an output."""
    readers = users.get(value, [])
    if len(readers) != 1 or value in graph.outputs:
        return None
    return readers[0]


def rewrite(graph: Graph, replaced: Mapping[str, Node], dropped: set[str]) -> tuple[Node, ...]:
    """Node list with nodes named in ``replaced`` swapped and those in ``dropped`` removed."""
    return tuple(replaced.get(n.name, n) for n in graph.nodes if n.name not in dropped)
