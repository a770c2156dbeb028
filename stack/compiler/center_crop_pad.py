"""CenterCropPad: its shape and dtype rule (registered into :mod:`stack.compiler.shape_rules`'
registry on import); op_rules, where Pad's is, is at its 300 lines.

``shape`` is the resolved target, one size (at least 0) per axis of the input: the importer has
folded ONNX's constant ``shape`` input and ``axes`` into it, an axis not listed keeping its
size. The result is the input's dtype in that shape. Like Pad, the op is not folded: the device
crops or pads.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from stack.compiler.ir import Node, OpType, TensorType
from stack.compiler.shape_rules import _fail, _need, register


@register(OpType.CENTER_CROP_PAD)
def _center_crop_pad(
    node: Node, t: Sequence[TensorType | None], c: Mapping[str, np.ndarray]
) -> list:
    x = _need(node, t, 0)
    shape = tuple(int(v) for v in node.attr("shape", ()))
    if len(shape) != len(x.shape) or min(shape, default=0) < 0:
        raise _fail(node, f"shape {list(shape)} must be one size >= 0 per axis of {x}")
    return [TensorType(x.dtype, shape)]
