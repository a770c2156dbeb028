"""The long short-term memory: LSTM (ONNX LSTM, opsets 7, 14 and 22).

Attributes: ``direction`` (forward, reverse or bidirectional; default forward), ``layout`` (0 or
1; default 0), ``input_forget`` (0 or 1; default 0), ``activations`` (ONNX's activation names,
RNN's, three per direction — f, g then h — joined by commas; default Sigmoid,Tanh,Tanh each),
``activation_alpha`` and ``activation_beta`` (one number per activation; default 0 each) and
``clip`` (a number > 0; absent: no clip); another value an InvalidRequestError on that attribute.

Inputs in ONNX's order: X [S, N, I] (layout 1: [N, S, I]) F32, F16 or F64 (else an
UnsupportedDtypeError on inputs[0].dtype; another rank a ShapeError on inputs[0].shape), W
[D, 4H, I] (D 2 for bidirectional, else 1), R [D, 4H, H], then the optional B [D, 8H],
sequence_lens [N] I32, initial_h and initial_c [D, N, H] (layout 1: [N, D, H]) and P [D, 3H] — a
trailing run: the compiler fills the ones before a given one —, all but sequence_lens of X's
dtype (else an UnsupportedDtypeError on inputs[j].dtype) and shape (else a ShapeError on
inputs[j].shape). Three outputs of X's dtype (else an UnsupportedDtypeError on
outputs[j].dtype), all always written: Y [S, D, N, H] (layout 1: [N, S, D, H]), Y_h and Y_c of
initial_h's shape. Y, the one 4-D operand, is written in its logical order, an NHWC one
transposed after the kernel; the others are taken as stored.
"""

from __future__ import annotations

from stack.kmd.dtypes import DType
from stack.kmd.kernels.ids import KernelId
from stack.kmd.kernels.lstm import shapes
from stack.kmd.kernels.rnn import RnnDirection
from stack.umd.errors import InvalidRequestError, ShapeError, UnsupportedDtypeError
from stack.umd.ops import AttrValue, Layout, OpKind, OpRequest
from stack.umd.plan import KernelCall, Semantic
from stack.umd.registry import OpTranslator
from stack.umd.templates import TemplateRegistry
from stack.umd.translators._common import (
    Builder,
    attr_float,
    attr_int,
    check_dtype,
    need_counts,
    same_dtype,
)
from stack.umd.translators.rnn import ACTIVATIONS, DIRECTIONS

_KERNEL = KernelId.LSTM
_NAMES = ("W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P")


def _invalid(name: str, why: str) -> InvalidRequestError:
    return InvalidRequestError(f"LSTM {name} {why}", field=f"attrs.{name}")


def _per_activation(attrs: dict[str, AttrValue], name: str, k: int) -> tuple[float, ...]:
    value = attrs.get(name, (0.0,) * k)
    if (not isinstance(value, tuple) or len(value) != k
            or not all(isinstance(v, int | float) for v in value)):  # fmt: skip
        raise _invalid(name, f"must be {k} numbers, one per activation, got {value!r}")
    return tuple(float(v) for v in value)


def immediates(req: OpRequest) -> dict[str, int | float]:
    """The kernel's immediates from the request's attributes, checked."""
    attrs = req.attr_map()
    direction = attrs.get("direction", "forward")
    if direction not in DIRECTIONS:
        raise _invalid("direction", f"must be one of {', '.join(DIRECTIONS)}, got {direction!r}")
    k = 6 if direction == "bidirectional" else 3
    layout = attr_int(attrs, "layout", 0)
    if layout not in (0, 1):
        raise _invalid("layout", f"must be 0 or 1, got {layout}")
    coupled = attr_int(attrs, "input_forget", 0)
    if coupled not in (0, 1):
        raise _invalid("input_forget", f"must be 0 or 1, got {coupled}")
    acts = attrs.get("activations", ",".join(["Sigmoid", "Tanh", "Tanh"] * (k // 3)))
    names = acts.split(",") if isinstance(acts, str) else []
    if len(names) != k or any(n not in ACTIVATIONS for n in names):
        raise _invalid("activations", f"must be {k} of {', '.join(ACTIVATIONS)}, got {acts!r}")
    clip = attr_float(attrs, "clip", 0.0)
    if "clip" in attrs and not clip > 0:
        raise _invalid("clip", f"must be > 0, got {clip}")
    alphas = _per_activation(attrs, "activation_alpha", k)
    betas = _per_activation(attrs, "activation_beta", k)
    imm: dict[str, int | float] = {"direction": int(DIRECTIONS[str(direction)]), "layout": layout,
                                   "input_forget": coupled, "clip": clip}  # fmt: skip
    for j in range(k):
        imm |= {f"activation_{j}": int(ACTIVATIONS[names[j]]), f"alpha_{j}": alphas[j],
                f"beta_{j}": betas[j]}  # fmt: skip
    return imm


class LSTMTranslator(OpTranslator):
    """LSTM → the recurrence kernel on X, W, R and the optional B, sequence_lens, initial_h,
    initial_c and P, Y (in its logical order), Y_h and Y_c, with the direction, layout,
    input_forget, clip and activations as its immediates."""

    family = "lstm"
    ops = frozenset({OpKind.LSTM})

    def parse(self, req: OpRequest, templates: TemplateRegistry) -> Semantic:
        need_counts(req, (3, 8), 3)
        check_dtype(templates, _KERNEL, req.inputs[0].dtype, "inputs[0].dtype")
        same_dtype(req, tuple(i for i in range(len(req.inputs)) if i != 4))
        same_dtype(req, (0, 1, 2), "outputs")
        if len(req.inputs) > 4 and req.inputs[4].dtype is not DType.I32:
            raise UnsupportedDtypeError(f"LSTM sequence_lens must be I32, got "
                                        f"{req.inputs[4].dtype.name}",
                                        field="inputs[4].dtype")  # fmt: skip
        imm = immediates(req)
        b = Builder(req)
        ins = tuple(b.input(i) for i in range(len(req.inputs)))
        outs = (b.output(0, Layout.NCHW), b.output(1), b.output(2))
        return b.build(KernelCall(_KERNEL, (*ins, *outs), len(ins), imm))

    def infer(self, call: KernelCall) -> tuple[tuple[int, ...], ...]:
        x, w = call.ins[0].shape, call.ins[1].shape
        if len(x) != 3:
            raise ShapeError(f"LSTM takes X [S, N, I] or [N, S, I], got {x}",
                             field="inputs[0].shape")  # fmt: skip
        d = 2 if call.i("direction") == RnnDirection.BIDIRECTIONAL else 1
        if len(w) != 3 or w[0] != d or w[1] % 4 or w[2] != x[2]:
            raise ShapeError(f"LSTM takes W [{d}, 4H, {x[2]}] for X {x}, got {w}",
                             field="inputs[1].shape")  # fmt: skip
        want = shapes(x, w, call.i("layout"))
        for j, (name, op) in enumerate(zip(_NAMES, call.ins[1:], strict=False), start=1):
            if op.shape != want[name]:
                raise ShapeError(f"LSTM {name} must be {want[name]} for X {x} and W {w}, got "
                                 f"{op.shape}", field=f"inputs[{j}].shape")  # fmt: skip
        return (want["Y"], want["Y_h"], want["Y_c"])
