"""The importer of LinearAttention (opset 27+), linear attention with its recurrent state; in a
module of its own, as Attention's and the adapter's other ops of one kernel: no family module
holds it.

The IR ``LinearAttention`` takes ONNX's inputs in ONNX's order, query, key and value (float16
or float32, 3-D, split by ``q_num_heads`` and ``kv_num_heads``), then the optional past_state
(float16 or float32, its own type), decay and beta as a trailing run: a later one without an
earlier is given a zero past_state [B, Hkv, Dk, Dv] of query's type (the state ONNX starts
from), or a zero decay [B, T, Hkv] beside the delta rule's beta (which that rule does not read).
Its attributes are resolved: update_rule (gated_delta when absent), the head counts and scale
(ONNX's, 0 meaning 1 / sqrt(Dk)); chunk_size, a tuning hint that does not change the result, is
not carried. Two outputs, both named, as ONNX's. What ONNX forbids is a ModelFormatError naming
the node: an older opset, a missing or extra input or output (present_state is no optional
output), an unknown update_rule, a decay or beta the rule does not take or a missing one it
needs, operands of another type or shape, head counts missing, not positive or not dividing (a
bfloat16 operand, which ONNX allows, has no IR type and is refused at the graph input, an
UnsupportedTypeError naming the tensor). Constant operands fold at import.
"""

from __future__ import annotations

import numpy as np
import onnx

from stack.adapter.context import ImportContext, attributes, present_inputs
from stack.adapter.errors import ModelFormatError
from stack.adapter.registry import register
from stack.compiler import OpType
from stack.compiler.linear_attention import UPDATE_RULES, problem, reads

_OP = "LinearAttention"


@register(_OP)
def linear_attention(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    """o_t = scale * q_t^T S_t per token, S_t the recurrent state after update_rule's step,
    each key and value head serving q_num_heads / kv_num_heads query heads (opset 27+): the IR
    ``LinearAttention`` of query's type and its two outputs."""
    ins, outs = present_inputs(proto, len(proto.input)), list(proto.output)

    def bad(why: str) -> ModelFormatError:
        return ModelFormatError(f"{_OP} {why}", op=_OP, node=name)

    if (ctx.opset < 27 or not 3 <= len(ins) <= 6 or not all(ins[:3]) or len(outs) != 2
            or not all(outs)):  # fmt: skip
        raise bad(f"(opset 27+, model opset {ctx.opset}) takes query, key, value and the "
                  "optional past_state, decay and beta, and output and present_state, got "
                  f"{list(proto.input)} -> {list(proto.output)}")  # fmt: skip
    a = attributes(proto)
    rule = a.get("update_rule", "gated_delta")
    if rule not in UPDATE_RULES:
        raise bad(f"takes update_rule {', '.join(UPDATE_RULES)}, got {rule!r}")
    if "q_num_heads" not in a or "kv_num_heads" not in a:
        raise bad("needs q_num_heads and kv_num_heads")
    hq, hkv = int(a["q_num_heads"]), int(a["kv_num_heads"])
    decay, beta = reads(rule)
    given = [len(ins) > j and bool(ins[j]) for j in (4, 5)]
    if given != [decay, beta]:
        raise bad(f"with update_rule {rule!r} takes {'a' if decay else 'no'} decay and "
                  f"{'a' if beta else 'no'} beta, got {list(proto.input)}")  # fmt: skip
    types = [ctx.type_of(v) if v else None for v in ins]
    why = problem(types, hq, hkv)
    if why is not None:
        raise bad(why)
    q, v = types[0], types[2]
    assert q is not None and v is not None
    (b, t, hidden), dv = q.shape, v.shape[2] // hkv
    inputs = list(ins)
    if len(inputs) > 3 and not inputs[3]:  # a later input without past_state: ONNX's zeros
        zero = np.zeros((b, hkv, hidden // hq, dv), q.dtype.numpy)
        inputs[3] = ctx.add_const(ctx.fresh(f"{name}.past_state"), zero)
    if len(inputs) > 4 and not inputs[4]:  # beta without decay: a zero one, not read
        inputs[4] = ctx.add_const(ctx.fresh(f"{name}.decay"), np.zeros((b, t, hkv), q.dtype.numpy))
    ctx.emit(name, OpType.LINEAR_ATTENTION, inputs, outs, update_rule=rule, q_num_heads=hq,
             kv_num_heads=hkv, scale=float(a.get("scale", 0.0)))  # fmt: skip
