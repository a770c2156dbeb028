"""The importer of BitCast (opset 26+), the reinterpretation of a tensor's bits as another
element type of the same width; in a module of its own beside Cast's in
:mod:`stack.adapter.ops_pointwise`, whose value conversion it is not.

``to`` becomes the IR ``BitCast``'s element type. What ONNX forbids is a ModelFormatError naming
the node (an older opset, a missing or unknown ``to``, a width other than the input's, a missing
or extra input or output); an element type the IR cannot carry (strings, bfloat16, float8,
complex, 4-bit and 2-bit types) an UnsupportedTypeError naming the node. A BitCast to the
input's own type is the input.
"""

from __future__ import annotations

import onnx

from stack.adapter.context import ImportContext, attributes, elem_type
from stack.adapter.errors import ModelFormatError
from stack.adapter.registry import register
from stack.compiler import ElemType, OpType

#: ONNX's TensorProto data type numbers (``to`` must be one).
_ONNX_TYPES = frozenset(onnx.TensorProto.DataType.values())


def _target(proto: onnx.NodeProto, name: str) -> ElemType:
    """The IR element type ``to`` names: ModelFormatError when missing or not an ONNX type,
    UnsupportedTypeError (from ``elem_type``) when the IR has none."""
    to = attributes(proto).get("to")
    if not isinstance(to, int) or to not in _ONNX_TYPES or to == onnx.TensorProto.UNDEFINED:
        raise ModelFormatError(
            f"BitCast's to {to!r} is not an ONNX element type", op="BitCast", node=name
        )
    return elem_type(to, name)


@register("BitCast")
def bitcast(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    """Y = X's bits read as ``to`` (opset 26+): the IR ``BitCast``, of X's shape."""
    ins, outs = list(proto.input), list(proto.output)
    if ctx.opset < 26 or len(ins) != 1 or not ins[0] or len(outs) != 1:
        raise ModelFormatError(
            f"BitCast (opset 26+, model opset {ctx.opset}) takes one input and one output, "
            f"got {ins} -> {outs}",
            op="BitCast",
            node=name,
        )
    to = _target(proto, name)
    src = ctx.type_of(ins[0]).dtype
    if to.itemsize != src.itemsize:
        raise ModelFormatError(
            f"BitCast reads {src.value} ({8 * src.itemsize} bits) as {to.value} "
            f"({8 * to.itemsize} bits): the widths must match",
            op="BitCast",
            node=name,
        )
    if to == src:
        ctx.alias(name, ins[0], outs[0])
        return
    ctx.emit(name, OpType.BITCAST, ins, outs, to=to.value)
