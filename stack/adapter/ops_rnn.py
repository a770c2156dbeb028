"""The importer of RNN (opsets 7, 14 and 22; the importer takes no model below opset 7, so
RNN-1's output_sequence never reaches it), the simple recurrent network; in a module of its
own, as CausalConvWithState's, with the importer GRU's and LSTM's share (import_recurrent).

The IR ``RNN`` takes ONNX's inputs in ONNX's order: X [S, N, I] (``layout`` 1: [N, S, I]; float16,
float32 or float64, ONNX's types with an IR type), W [D, H, I], R [D, H, H] and the optional B
[D, 2H], sequence_lens [N] (int32) and initial_h [D, N, H] (layout 1: [N, D, H]), all but
sequence_lens of X's type; one left out before a given one takes zero biases, full lengths or a
zero state, the kernel's optional inputs being a trailing run. The attributes cross resolved:
``direction``, ``layout`` (0 below opset 14), ``activations`` (ONNX's names, one per direction,
any case, joined by commas; default Tanh), ``activation_alpha`` and ``activation_beta`` (one
number per direction, 0 where its activation takes none) and ``clip`` when given. It always has
two outputs, Y and Y_h: one the node leaves unnamed gets a fresh value, which nothing reads.

What ONNX forbids is a ModelFormatError naming the node: a missing or extra input or output,
operands of another type or shape, a hidden_size other than W's, an unknown direction or
activation, a count of activations other than D, layout below opset 14. What the stack does
not run is an UnsupportedOpError naming the node: a clip not above 0, and an activation_alpha
or activation_beta that onnxruntime (which deals the values out in order to the activations
that take one) and ONNX's reference (one value per direction) would read differently: the
stack takes one when every activation takes it and it holds one value per activation, and
leaves out one that no activation takes. A bfloat16 X, which opset 22 allows, has no IR type
and is refused at the graph input, an UnsupportedTypeError naming the tensor. Constant operands
fold at import.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import onnx

from stack.adapter.context import ImportContext, attributes
from stack.adapter.errors import ModelFormatError
from stack.adapter.registry import register
from stack.compiler import ElemType, OpType, TensorType
from stack.compiler.rnn import (
    ACTIVATIONS,
    RNN,
    Recurrent,
    activation_params,
    attribute_problem,
    problem,
)

_CANONICAL = {name.lower(): name for name in ACTIVATIONS}

#: An op's check of its operands (X, W, R, the optional ones and the layout).
Problem = Callable[[TensorType, TensorType, TensorType, Sequence[TensorType | None], int], Any]
#: An op's check of its resolved attributes for D directions.
AttributeProblem = Callable[[Mapping[str, object], int], Any]


def _listed(names: Sequence[str]) -> str:
    return f"{', '.join(names[:-1])} and {names[-1]}"


def import_recurrent(
    ctx: ImportContext,
    proto: onnx.NodeProto,
    name: str,
    spec: Recurrent,
    checks: tuple[Problem, AttributeProblem],
) -> None:
    """Import a node of the recurrent op ``spec`` (RNN, GRU or LSTM), its operands and
    attributes checked by ``checks`` (its module's problem and attribute_problem): the IR op
    of X's type, its attributes resolved, the optional inputs it leaves out before a given one
    filled with zeros (full lengths for sequence_lens) and a fresh value for each output it
    leaves unnamed."""
    op, g, roles = spec.op, spec.gates, ("Y", "Y_h", "Y_c")[: 1 + spec.states]
    ins, outs = list(proto.input), list(proto.output)
    while ins and not ins[-1]:
        ins.pop()

    def bad(why: str) -> ModelFormatError:
        return ModelFormatError(f"{op} {why}", op=op, node=name)

    if not 3 <= len(ins) <= 3 + len(spec.optional) or not all(ins[:3]) or len(outs) > len(roles):
        raise bad(f"takes X, W, R and the optional {_listed(spec.optional)}, and the "
                  f"optional {_listed(roles)}, got {ins} -> {outs}")  # fmt: skip
    a = attributes(proto)
    if ctx.opset < 14 and "layout" in a:
        raise bad(f"has no layout before opset 14 (model opset {ctx.opset})")
    x, w, r = (ctx.type_of(v) for v in ins[:3])
    if x.dtype not in (ElemType.F16, ElemType.F32, ElemType.F64):
        raise bad(f"takes a float16, float32 or float64 X, got {x}")
    layout, direction = a.get("layout", 0), a.get("direction", "forward")
    d = 2 if direction == "bidirectional" else 1
    names = [v.decode() if isinstance(v, bytes) else str(v) for v in a.get("activations", [])]
    acts = [_CANONICAL.get(v.lower(), v) for v in names] or spec.default_activations(d).split(",")
    params = activation_params(acts, a.get("activation_alpha"), a.get("activation_beta"))
    k = len(spec.defaults) * d
    alphas, betas = params or ((0.0,) * k, (0.0,) * k)
    attrs: dict[str, Any] = {"direction": direction, "layout": layout}
    if spec.flag is not None:
        attrs[spec.flag] = int(bool(a.get(spec.flag, 0)))
    attrs |= {"activations": ",".join(acts), "activation_alpha": alphas, "activation_beta": betas}
    optional = [ctx.type_of(v) if v else None for v in ins[3:]]
    why = checks[0](x, w, r, optional, layout if layout in (0, 1) else 0)
    if why is None and a.get("hidden_size", w.shape[1] // g) != w.shape[1] // g:
        why = f"hidden_size {a['hidden_size']} is not W's {w.shape[1] // g}"
    why = why or checks[1](attrs, w.shape[0])
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
    n, h, steps = x.shape[1 - layout], w.shape[1] // g, x.shape[layout]
    state = np.zeros((d, n, h) if layout == 0 else (n, d, h), x.dtype.numpy)
    zeros = {
        "B": np.zeros((d, 2 * g * h), x.dtype.numpy),
        "sequence_lens": np.full(n, steps, np.int32),
        "initial_h": state,
        "initial_c": state,
        "P": np.zeros((d, 3 * h), x.dtype.numpy),
    }
    inputs = ins[:3]
    for value, role in zip(ins[3:], spec.optional, strict=False):
        inputs.append(value or ctx.add_const(ctx.fresh(f"{name}.{role}"), zeros[role]))
    outs += [""] * (len(roles) - len(outs))
    outputs = [v or ctx.fresh(f"{name}.{role}") for v, role in zip(outs, roles, strict=True)]
    ctx.emit(name, OpType(op), inputs, outputs, **attrs)


@register("RNN")
def rnn(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    """H_t = act(clip(X_t W^T + H_(t-1) R^T + Wb + Rb)) in each direction (opset 7+): the IR
    ``RNN`` of X's type, its attributes resolved."""
    import_recurrent(ctx, proto, name, RNN, (problem, attribute_problem))
