"""LayerNormalization's optional ``Mean`` and ``InvStdDev`` outputs, from kernels that exist.

The LAYERNORM kernel yields only ``Y``. With ``X`` viewed as ``[M, N]`` (``N`` = elements
normalised over):

* ``Mean = X2 @ ones[N, 1] / N`` (a GEMM with ``alpha = 1/N``);
* ``InvStdDev`` uses the kernel itself on rows ``r = [a*d, -a*d, 1, -1]`` with ``d = X2 - Mean``:
  ``r`` has mean 0 and variance ``(a²·N·var + 1)/(N + 1)``, so a LAYERNORM with epsilon
  ``eps' = k·eps - 1/(N+1)`` (``k = a²N/(N+1)``) maps the ``1`` column to
  ``1/sqrt(k·(var + eps))``; a GEMM with a one-hot column scaled by ``sqrt(k)`` picks it out.
  ``a`` is chosen so that ``eps' = 1/(N+1) > 0``.
"""

from __future__ import annotations

import math

import numpy as np

from stack.compiler.errors import IRError
from stack.compiler.ir import ElemType, Graph, Node, OpType, TensorType, freeze_array
from stack.compiler.shape_rules import norm_axis


def lower_layernorm_stats(
    node: Node, graph: Graph, types: dict[str, TensorType], consts: dict[str, np.ndarray]
) -> list[Node]:
    """Nodes computing ``node``'s Y, Mean and InvStdDev with kernel-backed ops."""
    x_type = graph.type_of(node.inputs[0])
    eps = float(node.attr("epsilon", 1e-5))
    if x_type is None or x_type.dtype is not ElemType.F32 or eps <= 0:
        raise IRError(
            "LayerNormalization statistics outputs need float32 input and epsilon > 0",
            op=node.op.value,
            node=node.name,
        )
    axis = norm_axis(node, int(node.attr("axis", -1)), len(x_type.shape))
    m = math.prod(x_type.shape[:axis])
    n = math.prod(x_type.shape[axis:])
    k = 2.0 / ((n + 1) * eps)
    a = math.sqrt(k * (n + 1) / n)
    p = node.name
    f32 = ElemType.F32

    def const(name: str, value: np.ndarray) -> str:
        consts[f"{p}.{name}"] = freeze_array(value.astype(np.float32))
        return f"{p}.{name}"

    def typed(name: str, shape: tuple[int, ...]) -> str:
        types[f"{p}.{name}"] = TensorType(f32, shape)
        return f"{p}.{name}"

    y_node = Node(node.name, OpType.LAYERNORM, node.inputs, node.outputs[:1], node.attrs)
    x2, mean2 = typed("x2d", (m, n)), typed("mean2d", (m, 1))
    d, pos, neg = typed("centred", (m, n)), typed("pos", (m, n)), typed("neg", (m, n))
    row, z, inv2 = (
        typed("rows", (m, 2 * n + 2)),
        typed("normed", (m, 2 * n + 2)),
        typed("inv2d", (m, 1)),
    )
    ones_col = const("ones_col", np.ones((m, 1)))
    onehot = np.zeros((2 * n + 2, 1))
    onehot[2 * n, 0] = math.sqrt(k)
    nodes = [
        y_node,
        Node.make(f"{p}.view", OpType.RESHAPE, [node.inputs[0]], [x2], shape=(m, n)),
        Node.make(
            f"{p}.mean", OpType.GEMM, [x2, const("avg", np.ones((n, 1)))], [mean2], alpha=1.0 / n
        ),
        Node.make(f"{p}.centre", OpType.SUB, [x2, mean2], [d]),
        Node.make(f"{p}.scale_pos", OpType.MUL, [d, const("a", np.array(a))], [pos]),
        Node.make(f"{p}.scale_neg", OpType.MUL, [d, const("minus_a", np.array(-a))], [neg]),
        Node.make(
            f"{p}.rows",
            OpType.CONCAT,
            [pos, neg, ones_col, const("minus_ones_col", -np.ones((m, 1)))],
            [row],
            axis=1,
        ),
        Node.make(
            f"{p}.stats_norm",
            OpType.LAYERNORM,
            [row, const("ones_row", np.ones(2 * n + 2))],
            [z],
            axis=1,
            epsilon=k * eps - 1.0 / (n + 1),
        ),
        Node.make(f"{p}.pick", OpType.GEMM, [z, const("onehot", onehot)], [inv2]),
    ]
    stats_shape = (*x_type.shape[:axis], *(1 for _ in x_type.shape[axis:]))
    for value, src in zip(node.outputs[1:], (mean2, inv2), strict=False):
        if value:
            nodes.append(
                Node.make(f"{p}.{value}.view", OpType.RESHAPE, [src], [value], shape=stats_shape)
            )
    return nodes
