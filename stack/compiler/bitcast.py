"""BitCast: its shape and dtype rule (registered into :mod:`stack.compiler.shape_rules`'
registry on import) and its constant-folding evaluator (registered by
:mod:`stack.compiler.evaluate_ops`); op_rules and evaluate_ops are at their 300 lines.

``to`` is the element type the input's bits are read as; it must have the input's width (the
importer has checked ONNX's rule, this verifies the IR's). The result is ``to`` in the input's
shape. Folding reads the constant's bytes as ``to``, as the device kernel does (host and device
store elements little-endian, the order ONNX's BitCast reads them in).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from stack.compiler.ir import ElemType, Node, OpType, TensorType
from stack.compiler.shape_rules import _fail, _need, register


@register(OpType.BITCAST)
def _bitcast(node: Node, t: Sequence[TensorType | None], c: Mapping[str, np.ndarray]) -> list:
    x = _need(node, t, 0)
    to = ElemType(node.attr("to"))
    if to.itemsize != x.dtype.itemsize:
        raise _fail(
            node,
            f"BitCast reads {x.dtype.value} ({8 * x.dtype.itemsize} bits) as {to.value} "
            f"({8 * to.itemsize} bits): the widths must match",
        )
    return [TensorType(to, x.shape)]


def evaluate(node: Node, a: Sequence[np.ndarray]) -> list[np.ndarray]:
    """The constant's bytes, as the device stores them, read as ``to`` in its shape."""
    return [np.ascontiguousarray(a[0]).view(ElemType(node.attr("to")).numpy)]
