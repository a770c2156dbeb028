"""Activation layouts in the IR: the ``layout`` attribute of the convolution family.

A node with ``layout="NHWC"`` (set by :mod:`stack.compiler.passes.layout`) reads and writes its
4-D activations as ``[N, H, W, C]``: their values' static types have NHWC shapes. For the ops in
:data:`ACTIVATION_INPUTS` the shape rules are the NCHW ones applied through a permutation
(:func:`infer_node`); layout-agnostic ops in an NHWC region (elementwise ones) need none.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from stack.compiler.ir import Node, OpType, TensorType
from stack.compiler.shape_rules import rule_for

NCHW = "NCHW"
NHWC = "NHWC"
#: NCHW -> NHWC and NHWC -> NCHW axis permutations (as Transpose ``perm``).
TO_NHWC = (0, 2, 3, 1)
TO_NCHW = (0, 3, 1, 2)

#: Ops that run NHWC on the CPU device -> the positions of their activation inputs (the
#: activation output is output 0).
ACTIVATION_INPUTS: dict[OpType, tuple[int, ...]] = {
    OpType.CONV: (0, 3),
    OpType.MAXPOOL: (0,),
    OpType.AVGPOOL: (0,),
    OpType.GLOBALAVGPOOL: (0,),
}


def permuted(t: TensorType, perm: tuple[int, ...]) -> TensorType:
    """``t`` with its shape permuted by ``perm``."""
    return TensorType(t.dtype, tuple(t.shape[p] for p in perm))


def infer_node(
    node: Node, in_types: Sequence[TensorType | None], constants: Mapping[str, np.ndarray]
) -> list[TensorType]:
    """The output types of ``node``, honouring an NHWC ``layout`` attribute."""
    rule = rule_for(node.op)
    acts = ACTIVATION_INPUTS.get(node.op)
    if acts is None or node.attr("layout") != NHWC:
        return list(rule(node, list(in_types), constants))
    nchw = [
        permuted(t, TO_NCHW) if i in acts and t is not None and len(t.shape) == 4 else t
        for i, t in enumerate(in_types)
    ]
    outs = list(rule(node, nchw, constants))
    return [permuted(outs[0], TO_NHWC), *outs[1:]]
