"""The importer of RotaryEmbedding (opset 23+), the rotary position embedding of attention
heads; in a module of its own, as the adapter's other ops of one kernel (BitCast,
CenterCropPad, DeformConv, the losses): no family module holds an attention op.

The IR ``RotaryEmbedding`` takes ONNX's inputs as they are: X [B, H, S, D] or [B, S, H * D]
(float16 or float32, ONNX's types with an IR type), cos_cache and sin_cache of X's type
([P, R / 2] with the optional int64 position_ids [B, S], [B, S, R / 2] without); its three int
attributes (``interleaved``, ``num_heads``, ``rotary_embedding_dim``, each default 0) cross
always, by name. What ONNX forbids is a ModelFormatError naming the node: an older opset, a
missing or extra input or output, a float64 X or operands of another type or shape, a 3-D X
without a num_heads dividing its hidden size, an odd rotary_embedding_dim or one past the head
size, a constant position_ids holding a row past the caches (a bfloat16 X, which ONNX allows,
has no IR type and is refused at the graph input, an UnsupportedTypeError naming the tensor).
Constant operands fold at import; a run-time position id out of range is the kernel's fault,
an ExecutionFaultError naming the node.
"""

from __future__ import annotations

import onnx

from stack.adapter.context import ImportContext, attributes, present_inputs
from stack.adapter.errors import ModelFormatError
from stack.adapter.registry import register
from stack.compiler import ElemType, OpType
from stack.compiler.rotary_embedding import ROTARY_EMBEDDING_ATTRS, problem

_OP = "RotaryEmbedding"


@register(_OP)
def rotary_embedding(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    """Y = X with the first rotary_embedding_dim channels of each head rotated pair by pair by
    the cached angles of its place (opset 23+): the IR ``RotaryEmbedding`` of X's type and
    shape."""
    ins, outs = present_inputs(proto, len(proto.input)), list(proto.output)

    def bad(why: str) -> ModelFormatError:
        return ModelFormatError(f"{_OP} {why}", op=_OP, node=name)

    if ctx.opset < 23 or not 3 <= len(ins) <= 4 or not all(ins) or len(outs) != 1 or not outs[0]:
        raise bad(f"(opset 23+, model opset {ctx.opset}) takes X, cos_cache, sin_cache and an "
                  f"optional position_ids, and one output Y, got {list(proto.input)} -> "
                  f"{list(proto.output)}")  # fmt: skip
    x = ctx.type_of(ins[0])
    if x.dtype not in (ElemType.F16, ElemType.F32):
        raise bad(f"takes a float16 or float32 X, got {x}")
    a = attributes(proto)
    ints = {n: int(a.get(n, 0)) for n in ROTARY_EMBEDDING_ATTRS}
    ids = ctx.type_of(ins[3]) if len(ins) > 3 else None
    why = problem(x, ctx.type_of(ins[1]), ctx.type_of(ins[2]), ids, *ints.values())
    if why is not None:
        raise bad(why)
    rows = min(ctx.type_of(ins[1]).shape[0], ctx.type_of(ins[2]).shape[0]) if ids is not None else 0
    pos = ctx.const(ins[3]) if ids is not None else None
    if pos is not None and pos.size and (pos.min() < 0 or pos.max() >= rows):
        bad_id = int(pos[(pos < 0) | (pos >= rows)].flat[0])
        raise bad(f"constant position_ids hold {bad_id}, not a row of the caches [0, {rows})")
    ctx.emit(name, OpType.ROTARY_EMBEDDING, ins, outs, **ints)
