"""Lowering to the kernel vocabulary: rewrite IR ops that have no kernel of their own.

* ``Sum(a, b, c, ...)`` -> a chain of two-input Adds (one input: Identity);
* ``Dropout`` (inference) -> Identity (a view);
* ``LayerNormalization`` with its Mean / InvStdDev outputs -> see
  :mod:`stack.compiler.passes.layernorm_stats`.
"""

from __future__ import annotations

import numpy as np

from stack.compiler.ir import Graph, Node, OpType, TensorType
from stack.compiler.options import CompileOptions
from stack.compiler.passes import register
from stack.compiler.passes.layernorm_stats import lower_layernorm_stats


def lower(graph: Graph, options: CompileOptions) -> Graph:
    """Return ``graph`` with every op expressed in kernel-backed ops and views."""
    nodes: list[Node] = []
    types: dict[str, TensorType] = dict(graph.types)
    consts = dict(graph.constants)
    for node in graph.nodes:
        if node.op is OpType.SUM:
            nodes.extend(_sum_chain(node, graph, types))
        elif node.op is OpType.DROPOUT:
            nodes.append(Node(node.name, OpType.IDENTITY, node.inputs[:1], node.outputs[:1]))
        elif node.op is OpType.LAYERNORM and len([o for o in node.outputs if o]) > 1:
            nodes.extend(lower_layernorm_stats(node, graph, types, consts))
        else:
            nodes.append(node)
    return graph.replace(nodes=tuple(nodes), types=types, constants=consts)


def _sum_chain(node: Node, graph: Graph, types: dict[str, TensorType]) -> list[Node]:
    parts = [v for v in node.inputs if v]
    out = node.outputs[0]
    if len(parts) == 1:
        return [Node(node.name, OpType.IDENTITY, (parts[0],), (out,))]
    chain: list[Node] = []
    acc = parts[0]
    out_type = graph.types.get(out)
    for i, part in enumerate(parts[1:], start=1):
        target = out if i == len(parts) - 1 else f"{node.name}.partial{i}"
        if target != out and out_type is not None:
            a, b = graph.type_of(acc) or types.get(acc), graph.type_of(part)
            shape = np.broadcast_shapes(a.shape if a else (), b.shape if b else ())
            types[target] = TensorType(out_type.dtype, tuple(shape))
        chain.append(Node(f"{node.name}.add{i}", OpType.ADD, (acc, part), (target,)))
        acc = target
    return chain


register("lower", lower)
