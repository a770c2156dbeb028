"""The simple recurrent network: RNN (ONNX RNN, opsets 7, 14 and 22); its translator's parse and
infer (:class:`RecurrentTranslator`) and attribute checks serve GRU's and LSTM's too.

Attributes: ``direction`` (forward, reverse or bidirectional; default forward), ``layout`` (0 or
1; default 0), ``activations`` (ONNX's activation names, one per direction, joined by commas:
Tanh, Relu, Sigmoid, Affine, LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, Elu,
Softsign, Softplus; default Tanh each), ``activation_alpha`` and ``activation_beta`` (one number
per direction, each direction's activation's own; default 0 each) and ``clip`` (a number > 0;
absent: no clip); another value an InvalidRequestError on that attribute.

Inputs in ONNX's order: X [S, N, I] (layout 1: [N, S, I]) F32, F16 or F64 (else an
UnsupportedDtypeError on inputs[0].dtype; another rank a ShapeError on inputs[0].shape), W
[D, H, I] (D 2 for bidirectional, else 1), R [D, H, H], then the optional B [D, 2H],
sequence_lens [N] I32 and initial_h [D, N, H] (layout 1: [N, D, H]) — a trailing run: the
compiler fills the ones before a given one —, all but sequence_lens of X's dtype (else an
UnsupportedDtypeError on inputs[j].dtype) and shape (else a ShapeError on inputs[j].shape). Two
outputs of X's dtype (else an UnsupportedDtypeError on outputs[j].dtype), both always written:
Y [S, D, N, H] (layout 1: [N, S, D, H]) and Y_h of initial_h's shape. Y, the one 4-D operand, is
written in its logical order, an NHWC one transposed after the kernel; the others are taken as
stored.
"""

from __future__ import annotations

from typing import ClassVar

from stack.kmd.dtypes import DType
from stack.kmd.kernels.ids import KernelId
from stack.kmd.kernels.rnn import RnnActivation, RnnDirection
from stack.kmd.kernels.rnn import shapes as kernel_shapes
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

#: RNN's direction names (ONNX's) -> the kernel's immediate.
DIRECTIONS = {d.name.lower(): d for d in RnnDirection}

#: RNN's activation names (ONNX's) -> the kernel's immediate.
ACTIVATIONS = {
    "Tanh": RnnActivation.TANH, "Relu": RnnActivation.RELU, "Sigmoid": RnnActivation.SIGMOID,
    "Affine": RnnActivation.AFFINE, "LeakyRelu": RnnActivation.LEAKY_RELU,
    "ThresholdedRelu": RnnActivation.THRESHOLDED_RELU, "ScaledTanh": RnnActivation.SCALED_TANH,
    "HardSigmoid": RnnActivation.HARD_SIGMOID, "Elu": RnnActivation.ELU,
    "Softsign": RnnActivation.SOFTSIGN, "Softplus": RnnActivation.SOFTPLUS,
}  # fmt: skip


#: A shape.
Shape = tuple[int, ...]


def _invalid(op: str, name: str, why: str) -> InvalidRequestError:
    return InvalidRequestError(f"{op} {name} {why}", field=f"attrs.{name}")


def _numbers(
    op: str, attrs: dict[str, AttrValue], name: str, k: int, per: int
) -> tuple[float, ...]:
    value = attrs.get(name, (0.0,) * k)
    if (not isinstance(value, tuple) or len(value) != k
            or not all(isinstance(v, int | float) for v in value)):  # fmt: skip
        each = "one per direction" if per == 1 else "one per activation"
        raise _invalid(op, name, f"must be {k} numbers, {each}, got {value!r}")
    return tuple(float(v) for v in value)


def recurrent_immediates(
    op: str, req: OpRequest, defaults: tuple[str, ...], flag: str | None
) -> tuple[dict[str, int | float], int]:
    """A recurrent op's kernel immediates from the request's attributes, checked, and D:
    ``defaults`` its activations per direction when it names none, ``flag`` its 0-or-1
    attribute (None: none)."""
    attrs = req.attr_map()
    direction = attrs.get("direction", "forward")
    if direction not in DIRECTIONS:
        raise _invalid(
            op, "direction", f"must be one of {', '.join(DIRECTIONS)}, got {direction!r}"
        )
    d = 2 if direction == "bidirectional" else 1
    k = len(defaults) * d
    layout = attr_int(attrs, "layout", 0)
    if layout not in (0, 1):
        raise _invalid(op, "layout", f"must be 0 or 1, got {layout}")
    imm: dict[str, int | float] = {"direction": int(DIRECTIONS[str(direction)]), "layout": layout}
    if flag is not None:
        imm[flag] = attr_int(attrs, flag, 0)
        if imm[flag] not in (0, 1):
            raise _invalid(op, flag, f"must be 0 or 1, got {imm[flag]}")
    acts = attrs.get("activations", ",".join(list(defaults) * d))
    names = acts.split(",") if isinstance(acts, str) else []
    if len(names) != k or any(n not in ACTIVATIONS for n in names):
        raise _invalid(op, "activations", f"must be {k} of {', '.join(ACTIVATIONS)}, got {acts!r}")
    clip = attr_float(attrs, "clip", 0.0)
    if "clip" in attrs and not clip > 0:
        raise _invalid(op, "clip", f"must be > 0, got {clip}")
    alphas = _numbers(op, attrs, "activation_alpha", k, len(defaults))
    betas = _numbers(op, attrs, "activation_beta", k, len(defaults))
    imm["clip"] = clip
    for j in range(k):
        imm |= {f"activation_{j}": int(ACTIVATIONS[names[j]]), f"alpha_{j}": alphas[j],
                f"beta_{j}": betas[j]}  # fmt: skip
    return imm, d


def immediates(req: OpRequest) -> tuple[dict[str, int | float], int]:
    """The kernel's immediates from the request's attributes, checked, and D."""
    return recurrent_immediates("RNN", req, ("Tanh",), None)


class RecurrentTranslator(OpTranslator):
    """A recurrent op → its recurrence kernel on X, W, R and its optional inputs (``names``
    after X), Y (in its logical order) and its states, with the direction, layout, clip, the
    activations and the op's ``flag`` as its immediates."""

    name: ClassVar[str]
    kernel: ClassVar[KernelId]
    names: ClassVar[tuple[str, ...]]
    outputs: ClassVar[tuple[str, ...]]
    gates: ClassVar[int]
    defaults: ClassVar[tuple[str, ...]]
    flag: ClassVar[str | None] = None

    def shapes(self, x: Shape, w: Shape, layout: int) -> dict[str, Shape]:
        """Every operand's shape for X and W of these shapes and ``layout`` (the kernel's)."""
        raise NotImplementedError

    def parse(self, req: OpRequest, templates: TemplateRegistry) -> Semantic:
        n_out = len(self.outputs)
        need_counts(req, (3, len(self.names) + 1), n_out)
        check_dtype(templates, self.kernel, req.inputs[0].dtype, "inputs[0].dtype")
        same_dtype(req, tuple(i for i in range(len(req.inputs)) if i != 4))
        same_dtype(req, tuple(range(n_out)), "outputs")
        if len(req.inputs) > 4 and req.inputs[4].dtype is not DType.I32:
            raise UnsupportedDtypeError(f"{self.name} sequence_lens must be I32, got "
                                        f"{req.inputs[4].dtype.name}",
                                        field="inputs[4].dtype")  # fmt: skip
        imm, _ = recurrent_immediates(self.name, req, self.defaults, self.flag)
        b = Builder(req)
        ins = tuple(b.input(i) for i in range(len(req.inputs)))
        outs = (b.output(0, Layout.NCHW), *(b.output(j) for j in range(1, n_out)))
        return b.build(KernelCall(self.kernel, (*ins, *outs), len(ins), imm))

    def infer(self, call: KernelCall) -> tuple[tuple[int, ...], ...]:
        x, w, g = call.ins[0].shape, call.ins[1].shape, self.gates
        if len(x) != 3:
            raise ShapeError(f"{self.name} takes X [S, N, I] or [N, S, I], got {x}",
                             field="inputs[0].shape")  # fmt: skip
        d = 2 if call.i("direction") == RnnDirection.BIDIRECTIONAL else 1
        if len(w) != 3 or w[0] != d or w[1] % g or w[2] != x[2]:
            rows = "H" if g == 1 else f"{g}H"
            raise ShapeError(f"{self.name} takes W [{d}, {rows}, {x[2]}] for X {x}, got {w}",
                             field="inputs[1].shape")  # fmt: skip
        want = self.shapes(x, w, call.i("layout"))
        for j, (name, op) in enumerate(zip(self.names, call.ins[1:], strict=False), start=1):
            if op.shape != want[name]:
                raise ShapeError(f"{self.name} {name} must be {want[name]} for X {x} and W {w}, "
                                 f"got {op.shape}", field=f"inputs[{j}].shape")  # fmt: skip
        return tuple(want[o] for o in self.outputs)


class RNNTranslator(RecurrentTranslator):
    """RNN → the recurrence kernel on X, W, R and the optional B, sequence_lens and initial_h,
    Y (in its logical order) and Y_h, with the direction, layout, clip and activations as its
    immediates."""

    family = "rnn"
    ops = frozenset({OpKind.RNN})
    name, kernel, gates, defaults = "RNN", KernelId.RNN, 1, ("Tanh",)
    names = ("W", "R", "B", "sequence_lens", "initial_h")
    outputs = ("Y", "Y_h")

    def shapes(self, x: Shape, w: Shape, layout: int) -> dict[str, Shape]:
        return kernel_shapes(x, w, layout)
