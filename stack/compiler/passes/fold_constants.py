"""Constant folding: evaluate nodes whose inputs are all constants, at compile time.

Folded results become graph constants (const-segment tensors after emission). Reshape's
constant ``shape`` input is turned into a resolved ``shape`` attribute so the view can be
planned as an alias. Dropout (inference) and Identity of constants fold away entirely.
"""

from __future__ import annotations

import numpy as np

from stack.compiler.evaluate import evaluator_for
from stack.compiler.ir import Graph, Node, OpType, freeze_array
from stack.compiler.options import CompileOptions
from stack.compiler.passes import register
from stack.compiler.shape_rules import reshape_target

#: Results larger than this stay on the device (folding must not bloat the const segment).
MAX_FOLDED_ELEMENTS = 1 << 22


def fold_constants(graph: Graph, options: CompileOptions) -> Graph:
    """Return ``graph`` with every foldable node replaced by constants."""
    constants = dict(graph.constants)
    nodes: list[Node] = []
    for node in graph.nodes:
        node = _resolve_reshape(node, graph, constants)
        present = [v for v in node.inputs if v]
        fn = evaluator_for(node.op)
        if fn is not None and present and all(v in constants for v in present):
            args = [constants[v] for v in node.inputs if v]
            results = fn(node, args)
            if results is not None and all(
                np.asarray(r).size <= MAX_FOLDED_ELEMENTS for r in results
            ):
                for name, value in zip(node.outputs, results, strict=False):
                    if name:
                        constants[name] = freeze_array(np.asarray(value))
                continue
        nodes.append(node)
    return graph.replace(nodes=tuple(nodes), constants=constants)


def _resolve_reshape(node: Node, graph: Graph, constants: dict[str, np.ndarray]) -> Node:
    if node.op is not OpType.RESHAPE or len(node.inputs) < 2 or node.inputs[1] not in constants:
        return node
    data = node.inputs[0]
    src = (
        constants[data].shape if data in constants else getattr(graph.type_of(data), "shape", None)
    )
    spec = tuple(int(v) for v in constants[node.inputs[1]].ravel())
    if src is None:
        return node
    resolved = reshape_target(node, tuple(src), spec)
    return Node(node.name, node.op, node.inputs[:1], node.outputs, node.attrs).with_attrs(
        shape=resolved, allowzero=None
    )


register("fold_constants", fold_constants)
