"""Scale folding (part of ``fuse``): a constant scalar multiplying a MatMul's result is folded into
the weights of the Gemm that produces one of the MatMul's operands.

Pattern: ``Mul(MatMul(p, q), s)`` (either operand order of the Mul) with ``s`` a one-element
float constant, where ``p`` (or else ``q``) is a Gemm's output seen through Reshape, Flatten,
Identity and Transpose nodes, with constant B (and constant C, if any). Every value on that
path, the MatMul's result included, has one reader and is not a graph output; a Gemm with a
fused ReLU takes only a positive ``s``. All of these are linear in the Gemm's output, so
``s * MatMul(p, q)`` equals the MatMul of the Gemm with ``s * B`` and ``s * C`` (new constants;
dce drops the old ones when nothing else reads them), and the Mul disappears: the MatMul writes
the Mul's output. In a transformer block this is the attention scores' ``1/sqrt(d_head)``,
folded into the query projection: one kernel launch less per block. A power-of-two ``s`` (as
``1/sqrt(16)``) changes no bit of the result; another changes it by float rounding only.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from stack.compiler.ir import Graph, Node, OpType, freeze_array
from stack.compiler.passes._match import sole_consumer

#: Ops the path from the Gemm to the MatMul may go through (linear: they commute with a scale).
THROUGH = frozenset({OpType.RESHAPE, OpType.FLATTEN, OpType.IDENTITY, OpType.TRANSPOSE})


def fold_scale(graph: Graph, mul: Node, users: Mapping[str, list[Node]]) -> Graph | None:
    """``graph`` with the scale of ``mul`` folded as the module docstring says, or None."""
    if mul.op is not OpType.MUL or len(mul.inputs) != 2 or len(mul.outputs) != 1:
        return None
    producers = graph.producers()
    for side in (0, 1):
        value, scale = mul.inputs[side], graph.constants.get(mul.inputs[1 - side])
        matmul = producers.get(value)
        if (
            scale is None
            or scale.size != 1
            or scale.dtype.kind != "f"
            or matmul is None
            or matmul.op is not OpType.MATMUL
            or sole_consumer(graph, users, value) is not mul
        ):
            continue
        s = scale.reshape(()).item()
        for operand in matmul.inputs:
            gemm = _gemm_through_views(graph, users, producers, operand)
            if gemm is None or (gemm.attr("relu", 0) and not s > 0):
                continue
            return _fold(graph, mul, matmul, gemm, scale.reshape(()))
    return None


def _gemm_through_views(
    graph: Graph, users: Mapping[str, list[Node]], producers: Mapping[str, Node], value: str
) -> Node | None:
    """The Gemm whose output reaches ``value`` through :data:`THROUGH` nodes only, each value on
    the way read once; None otherwise (or when its B, or its C, is not a constant)."""
    while True:
        if sole_consumer(graph, users, value) is None:
            return None
        node = producers.get(value)
        if node is None:
            return None
        if node.op is OpType.GEMM:
            break
        if node.op not in THROUGH or not node.inputs:
            return None
        value = node.inputs[0]
    b = graph.constants.get(node.input(1))
    c = node.input(2)
    if b is None or b.dtype.kind != "f" or (c and c not in graph.constants):
        return None
    return node


def _fold(graph: Graph, mul: Node, matmul: Node, gemm: Node, scale: np.ndarray) -> Graph:
    consts = dict(graph.constants)
    inputs = list(gemm.inputs)
    for i in (1, 2):
        name = gemm.input(i)
        if name:
            array = consts[name]
            scaled = f"{gemm.name}.scaled{i}"
            consts[scaled] = freeze_array((array * scale.astype(array.dtype)).astype(array.dtype))
            inputs[i] = scaled
    folded = Node(gemm.name, gemm.op, tuple(inputs), gemm.outputs, gemm.attrs)
    writes = Node(matmul.name, matmul.op, matmul.inputs, mul.outputs, matmul.attrs)
    nodes = tuple(
        folded if n is gemm else writes if n is matmul else n for n in graph.nodes if n is not mul
    )
    return graph.replace(nodes=nodes, constants=consts)
