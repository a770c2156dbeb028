"""Dead-code elimination: drop nodes whose outputs nobody reads, and unused constants.

A node stays when any of its outputs is read; its other outputs (TopK's indices, a
DynamicQuantizeLinear's scale) are still written, so they keep their types."""

from __future__ import annotations

from stack.compiler.ir import Graph
from stack.compiler.options import CompileOptions
from stack.compiler.passes import register


def dce(graph: Graph, options: CompileOptions) -> Graph:
    """Return ``graph`` without dead nodes and constants (graph outputs are always live)."""
    live = set(graph.outputs)
    kept = []
    for node in reversed(graph.nodes):
        if any(out in live for out in node.outputs if out):
            kept.append(node)
            live.update(v for v in (*node.inputs, *node.outputs) if v)
    kept.reverse()
    consts = {k: v for k, v in graph.constants.items() if k in live}
    types = {k: v for k, v in graph.types.items() if k in live or k in graph.inputs}
    return graph.replace(nodes=tuple(kept), constants=consts, types=types)


register("dce", dce)
