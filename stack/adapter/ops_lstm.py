"""The importer of LSTM (opsets 7, 14 and 22; the importer takes no model below opset 7, so
LSTM-1's output_sequence never reaches it), the long short-term memory; in a module of its own,
as RNN's and GRU's, whose activations and resolution of their alpha and beta it shares.

The IR ``LSTM`` takes ONNX's inputs in ONNX's order: X [S, N, I] (``layout`` 1: [N, S, I];
float16, float32 or float64, ONNX's types with an IR type), W [D, 4H, I], R [D, 4H, H] and the
optional B [D, 8H], sequence_lens [N] (int32), initial_h and initial_c [D, N, H] (layout 1:
[N, D, H]) and P [D, 3H], all but sequence_lens of X's type; one left out before a given one
takes zero biases, full lengths, a zero state or zero peepholes, the kernel's optional inputs
being a trailing run. The attributes cross resolved: ``direction``, ``layout`` (0 below opset
14), ``input_forget`` (0, or 1 for any other value, as onnxruntime reads it: the forget gate
1 - the input gate), ``activations`` (ONNX's names, three per direction — f, g then h —, any
case, joined by commas; default Sigmoid,Tanh,Tanh), ``activation_alpha`` and
``activation_beta`` (one number per activation, 0 where it takes none) and ``clip`` when given.
It always has three outputs, Y, Y_h and Y_c: one the node leaves unnamed gets a fresh value,
which nothing reads.

What ONNX forbids is a ModelFormatError naming the node: a missing or extra input or output,
operands of another type or shape, a hidden_size other than W's, an unknown direction or
activation, a count of activations other than 3D, layout below opset 14. What the stack does
not run is an UnsupportedOpError naming the node: a clip not above 0, and an activation_alpha
or activation_beta that onnxruntime and ONNX's reference would read differently (as GRU's). A
bfloat16 X, which opset 22 allows, has no IR type and is refused at the graph input, an
UnsupportedTypeError naming the tensor. Constant operands fold at import.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx

from stack.adapter.context import ImportContext, attributes
from stack.adapter.errors import ModelFormatError
from stack.adapter.registry import register
from stack.compiler import ElemType, OpType
from stack.compiler.lstm import attribute_problem, default_activations, problem
from stack.compiler.rnn import ACTIVATIONS, activation_params

_OP = "LSTM"
_CANONICAL = {name.lower(): name for name in ACTIVATIONS}


@register(_OP)
def lstm(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    """H_t = o_t h(C_t), C_t = f_t C_(t-1) + i_t c_t in each direction (opset 7+): the IR
    ``LSTM`` of X's type, its attributes resolved."""
    ins, outs = list(proto.input), list(proto.output)
    while ins and not ins[-1]:
        ins.pop()

    def bad(why: str) -> ModelFormatError:
        return ModelFormatError(f"{_OP} {why}", op=_OP, node=name)

    if not 3 <= len(ins) <= 8 or not all(ins[:3]) or len(outs) > 3:
        raise bad(f"takes X, W, R and the optional B, sequence_lens, initial_h, initial_c and "
                  f"P, and the optional Y, Y_h and Y_c, got {ins} -> {outs}")  # fmt: skip
    a = attributes(proto)
    if ctx.opset < 14 and "layout" in a:
        raise bad(f"has no layout before opset 14 (model opset {ctx.opset})")
    x, w, r = (ctx.type_of(v) for v in ins[:3])
    if x.dtype not in (ElemType.F16, ElemType.F32, ElemType.F64):
        raise bad(f"takes a float16, float32 or float64 X, got {x}")
    layout, direction = a.get("layout", 0), a.get("direction", "forward")
    d = 2 if direction == "bidirectional" else 1
    names = [v.decode() if isinstance(v, bytes) else str(v) for v in a.get("activations", [])]
    acts = [_CANONICAL.get(v.lower(), v) for v in names] or default_activations(d).split(",")
    params = activation_params(acts, a.get("activation_alpha"), a.get("activation_beta"))
    alphas, betas = params or ((0.0,) * 3 * d, (0.0,) * 3 * d)
    attrs: dict[str, Any] = {"direction": direction, "layout": layout}
    attrs["input_forget"] = int(bool(a.get("input_forget", 0)))
    attrs |= {"activations": ",".join(acts), "activation_alpha": alphas, "activation_beta": betas}
    optional = [ctx.type_of(v) if v else None for v in ins[3:]]
    why = problem(x, w, r, optional, layout if layout in (0, 1) else 0)
    if why is None and a.get("hidden_size", w.shape[1] // 4) != w.shape[1] // 4:
        why = f"hidden_size {a['hidden_size']} is not W's {w.shape[1] // 4}"
    why = why or attribute_problem(attrs, w.shape[0])
    if why is not None:
        raise bad(why)
    if params is None:
        raise ctx.unsupported(proto, name, f"activation_alpha {a.get('activation_alpha')} and "
                              f"activation_beta {a.get('activation_beta')} for activations "
                              f"{acts}: supported when every activation takes them, one value "
                              "each, or none does", layers=("adapter",))  # fmt: skip
    if "clip" in a:
        attrs["clip"] = float(a["clip"])
        if not attrs["clip"] > 0:
            raise ctx.unsupported(proto, name, f"clip {a['clip']}: a clip above 0 is supported",
                                  layers=("adapter",))  # fmt: skip
    n, h, steps = x.shape[1 - layout], w.shape[1] // 4, x.shape[layout]
    state = (d, n, h) if layout == 0 else (n, d, h)
    fills = {
        "B": np.zeros((d, 8 * h), x.dtype.numpy),
        "sequence_lens": np.full(n, steps, np.int32),
        "initial_h": np.zeros(state, x.dtype.numpy),
        "initial_c": np.zeros(state, x.dtype.numpy),
        "P": np.zeros((d, 3 * h), x.dtype.numpy),
    }
    inputs = ins[:3]
    for value, (role, zero) in zip(ins[3:], fills.items(), strict=False):
        inputs.append(value or ctx.add_const(ctx.fresh(f"{name}.{role}"), zero))
    outs += [""] * (3 - len(outs))
    roles = ("Y", "Y_h", "Y_c")
    outputs = [v or ctx.fresh(f"{name}.{role}") for v, role in zip(outs, roles, strict=True)]
    ctx.emit(name, OpType.LSTM, inputs, outputs, **attrs)
