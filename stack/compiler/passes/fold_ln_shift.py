"""A LayerNormalization's shift folded into the Gemms that read it.

``(n * g + b) @ B + C = (n * g) @ B + (b @ B + C)``: when every reader of a LayerNormalization
over the last axis is a Gemm taking it as A (untransposed, alpha 1), directly or through
Reshape views that keep the last axis, with a constant B and a constant or absent C, the shift
``b`` becomes part of each Gemm's C (``b @ op(B)`` in float64, in B's dtype, beta 1) and the
LayerNormalization loses its optional bias. The LAYERNORM kernel then skips its add of a row
broadcast over every row (0.8 us of its 5 us on the transformer's [16, 64] rows, twice per
block); the Gemms add their C anyway. Runs after ``fuse`` (a MatMul + Add is a Gemm by then),
before ``expand_bias``; skipped when quantizing.
"""

from __future__ import annotations

import numpy as np

from stack.compiler.ir import Graph, Node, OpType, freeze_array
from stack.compiler.options import CompileOptions
from stack.compiler.passes import register


def _gemm_readers(graph: Graph, users: dict[str, list[Node]], value: str, n: int) -> list[Node]:
    """The Gemms reading ``value`` as A (through last-axis-keeping Reshapes) whose C can take
    the shift; empty when any reader is something else."""
    found: list[Node] = []
    for node in users.get(value, []):
        out = graph.type_of(node.outputs[0]) if node.outputs else None
        if node.op is OpType.RESHAPE and node.inputs[0] == value and out and out.shape[-1:] == (n,):
            more = _gemm_readers(graph, users, node.outputs[0], n)
            if not more or node.outputs[0] in graph.outputs:
                return []
            found += more
            continue
        b = graph.constants.get(node.input(1))
        c = node.input(2)
        if (
            node.op is not OpType.GEMM
            or node.inputs[0] != value
            or node.inputs[1] == value
            or node.attr("trans_a", 0)
            or float(node.attr("alpha", 1.0)) != 1.0
            or (c and (c not in graph.constants or float(node.attr("beta", 1.0)) != 1.0))
            or b is None
            or b.ndim != 2
            or b.shape[1 if node.attr("trans_b", 0) else 0] != n
        ):
            return []
        found.append(node)
    return found


def fold_ln_shift(graph: Graph, options: CompileOptions) -> Graph:
    """Return ``graph`` with every foldable LayerNormalization shift moved into its Gemms (see
    the module docstring)."""
    if options.quantize is not None:
        return graph
    users = graph.consumers()
    consts = dict(graph.constants)
    replaced: dict[str, Node] = {}
    for ln in graph.nodes:
        shift = graph.constants.get(ln.input(2)) if ln.op is OpType.LAYERNORM else None
        x = graph.type_of(ln.inputs[0])
        if shift is None or x is None or not x.shape or len(ln.outputs) != 1:
            continue
        if ln.outputs[0] in graph.outputs:
            continue
        n = x.shape[-1]
        if int(ln.attr("axis", -1)) % len(x.shape) != len(x.shape) - 1 or shift.size != n:
            continue
        gemms = _gemm_readers(graph, users, ln.outputs[0], n)
        if not gemms or any(g.name in replaced for g in gemms):
            continue
        for g in gemms:
            b = graph.constants[g.inputs[1]]
            row = shift.reshape(n).astype(np.float64) @ (b.T if g.attr("trans_b", 0) else b)
            c = graph.constants.get(g.input(2))
            total = row if c is None else c.astype(np.float64) + row
            name = f"{g.name}.ln_shift"
            consts[name] = freeze_array(total.astype(b.dtype))
            replaced[g.name] = Node(g.name, g.op, (*g.inputs[:2], name), g.outputs, g.attrs)
            replaced[g.name] = replaced[g.name].with_attrs(beta=1.0)
        replaced[ln.name] = Node(ln.name, ln.op, ln.inputs[:2], ln.outputs, ln.attrs)
    if not replaced:
        return graph
    nodes = tuple(replaced.get(node.name, node) for node in graph.nodes)
    return graph.replace(nodes=nodes, constants=consts)


register("fold_ln_shift", fold_ln_shift)
