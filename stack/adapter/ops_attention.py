"""The importer of Attention (opset 23+), scaled dot-product attention with its KV cache; in a
module of its own, as the adapter's other ops of one kernel (RotaryEmbedding, the losses): no
family module holds an attention op.

The IR ``Attention`` takes ONNX's inputs in ONNX's order, Q, K and V (float16, float32 or
float64; 4-D, or 3-D split by ``q_num_heads`` and ``kv_num_heads``), then the optional
attn_mask (bool or Q's type), past_key, past_value and nonpad_kv_seqlen (opset 24+) as a
trailing run: a later one without an earlier is given a zero attn_mask [L, T], or an empty
past_key and past_value beside nonpad_kv_seqlen. Its attributes are resolved: the head counts
(a 4-D Q's and K's own, as ONNX's reference of opsets 23 and 24 reads them), is_causal,
qk_matmul_output_mode, softmax_precision (0 when absent), left_window_size and
right_window_size (opset 25+, -1 when absent), scale (1 / sqrt(D) when absent) and softcap; and
always four outputs, a fresh value nothing reads for each the node leaves unnamed. What ONNX
forbids is a ModelFormatError naming the node: an older opset, a missing or extra input or
output, operands of another type or shape, head counts that do not split them or do not
divide, a past_key without a past_value, nonpad_kv_seqlen beside a past, attributes out of
range. What the stack does not run is an UnsupportedOpError naming the node: a bfloat16
softmax_precision, a mask of another type than bool or Q's, a scale not above 0, and
qk_matmul_output_mode 0 with a softcap when qk_matmul_output is read (ONNX's text says the
logits before the softcap, its reference gives them after). Constant operands fold at import.
"""

from __future__ import annotations

import math

import numpy as np
import onnx

from stack.adapter.context import ImportContext, attributes, present_inputs
from stack.adapter.errors import ModelFormatError, UnsupportedOpError
from stack.adapter.registry import register
from stack.compiler import ElemType, OpType
from stack.compiler.attention import SOFTMAX_PRECISIONS, problem

_OP = "Attention"
_OUTPUTS = ("Y", "present_key", "present_value", "qk_matmul_output")


def _heads(ctx: ImportContext, ins: list[str], a: dict) -> tuple[int, int]:
    """(q_num_heads, kv_num_heads): a 4-D Q's and K's own, a 3-D one's attributes."""
    if len(ctx.type_of(ins[0]).shape) == 4:
        return ctx.type_of(ins[0]).shape[1], ctx.type_of(ins[1]).shape[1]
    return int(a.get("q_num_heads", 0)), int(a.get("kv_num_heads", 0))


@register(_OP)
def attention(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    """Y = softmax(softcap(Q K^T * scale) + bias) V per head, each key and value head serving
    q_num_heads / kv_num_heads query heads, with the KV cache concatenated (opset 23+): the IR
    ``Attention`` of Q's type and its four outputs."""
    ins, outs = present_inputs(proto, len(proto.input)), list(proto.output)

    def bad(why: str) -> ModelFormatError:
        return ModelFormatError(f"{_OP} {why}", op=_OP, node=name)

    def unsupported(why: str) -> UnsupportedOpError:
        return UnsupportedOpError(_OP, name, reason=why, layers=("adapter", "compiler", "kmd"))

    if (ctx.opset < 23 or not 3 <= len(ins) <= (7 if ctx.opset >= 24 else 6) or not all(ins[:3])
            or not 1 <= len(outs) <= 4 or not outs[0]):  # fmt: skip
        raise bad(f"(opset 23+, model opset {ctx.opset}) takes Q, K, V and the optional "
                  "attn_mask, past_key, past_value and nonpad_kv_seqlen (opset 24+), and Y and "
                  f"the optional present_key, present_value and qk_matmul_output, got "
                  f"{list(proto.input)} -> {list(proto.output)}")  # fmt: skip
    q = ctx.type_of(ins[0])
    if q.dtype not in (ElemType.F16, ElemType.F32, ElemType.F64):
        raise bad(f"takes a float16, float32 or float64 Q, got {q}")
    a = attributes(proto)
    windows = {n: int(a.get(n, -1)) for n in ("left_window_size", "right_window_size")}
    if ctx.opset < 25 and ({"left_window_size", "right_window_size"} & a.keys()):
        raise bad(f"has left_window_size and right_window_size from opset 25, model opset "
                  f"{ctx.opset}")  # fmt: skip
    if ctx.opset >= 25 and len(q.shape) == 4 and {"q_num_heads", "kv_num_heads"} & a.keys():
        raise bad("takes q_num_heads and kv_num_heads with 3-D operands only (opset 25+)")
    hq, hkv = _heads(ctx, ins, a)
    ints = {
        "is_causal": int(a.get("is_causal", 0)),
        "q_num_heads": hq,
        "kv_num_heads": hkv,
        "qk_matmul_output_mode": int(a.get("qk_matmul_output_mode", 0)),
        "softmax_precision": int(a.get("softmax_precision", 0)),
        **windows,
    }
    if ints["is_causal"] not in (0, 1) or ints["qk_matmul_output_mode"] not in (0, 1, 2, 3):
        raise bad(f"takes is_causal 0 or 1 and qk_matmul_output_mode 0 to 3, got {ints}")
    if min(windows.values()) < -1:
        raise bad(f"takes window sizes of -1 or more, got {windows}")
    if ints["softmax_precision"] == onnx.TensorProto.BFLOAT16:
        raise unsupported("a bfloat16 softmax_precision (no device type)")
    if ints["softmax_precision"] not in (0, *SOFTMAX_PRECISIONS):
        raise bad(f"takes softmax_precision 1, 10, 11 or 16, got {ints['softmax_precision']}")
    types = [ctx.type_of(v) if v else None for v in ins]
    mask = types[3] if len(types) > 3 else None
    if mask is not None and mask.dtype not in (q.dtype, ElemType.BOOL):
        raise unsupported(f"an attn_mask of {mask.dtype.value} (bool or Q's type only)")
    if (len(ins) > 4 and bool(ins[4])) != (len(ins) > 5 and bool(ins[5])):
        raise bad("takes past_key and past_value together")
    if len(ins) > 6 and ins[4]:
        raise bad("takes nonpad_kv_seqlen without past_key and past_value")
    scale = float(a["scale"]) if "scale" in a else None
    if scale is not None and not scale > 0:
        raise unsupported(f"a scale of {scale} (above 0 only)")
    softcap = float(a.get("softcap", 0.0))
    if ints["qk_matmul_output_mode"] == 0 and softcap > 0 and len(outs) > 3 and outs[3]:
        raise unsupported("qk_matmul_output_mode 0 with a softcap (ONNX's text and reference "
                          "disagree on it)")  # fmt: skip
    why = problem(types, hq, hkv)
    if why is not None:
        raise bad(why)
    k4 = ctx.type_of(ins[1]).shape
    inputs = list(ins)
    if len(ins) > 6:  # nonpad_kv_seqlen: an empty past before it
        v_head = ctx.type_of(ins[2]).shape[-1] // (hkv if len(k4) == 3 else 1)
        k_head = k4[-1] // (hkv if len(k4) == 3 else 1)
        for j, role, head in ((4, "past_key", k_head), (5, "past_value", v_head)):
            empty = np.zeros((q.shape[0], hkv, 0, head), q.dtype.numpy)
            inputs[j] = ctx.add_const(ctx.fresh(f"{name}.{role}"), empty)
    if len(inputs) > 3 and not inputs[3]:  # a later input without attn_mask: a zero one
        past = ctx.type_of(inputs[4]).shape[2]
        length, keys = (q.shape[2], k4[2]) if len(q.shape) == 4 else (q.shape[1], k4[1])
        zero = np.zeros((length, past + keys), q.dtype.numpy)
        inputs[3] = ctx.add_const(ctx.fresh(f"{name}.attn_mask"), zero)
    outs += [""] * (4 - len(outs))
    outs = [v or ctx.fresh(f"{name}.{_OUTPUTS[j]}") for j, v in enumerate(outs)]
    head = q.shape[-1] // (hq if len(q.shape) == 3 else 1)
    ctx.emit(name, OpType.ATTENTION, inputs, outs, **ints,
             scale=scale if scale is not None else 1.0 / math.sqrt(head),
             softcap=softcap)  # fmt: skip
