"""The negative log-likelihood loss: NEGATIVE_LOG_LIKELIHOOD_LOSS (ONNX
NegativeLogLikelihoodLoss; ``reduction``: none, sum, mean, default mean; ``ignore_index``: an
int, absent when no target is ignored).

Inputs in ONNX's order: input [N, C, d1..dk] F32, F16 or F64 (else an UnsupportedDtypeError on
inputs[0].dtype; a rank below 2 a ShapeError on inputs[0].shape), target [N, d1..dk] I32 or I64
(else an UnsupportedDtypeError on inputs[1].dtype, another shape a ShapeError on
inputs[1].shape) and the optional weight [C] of input's dtype (else an UnsupportedDtypeError or
a ShapeError on inputs[2]). loss is of input's dtype (else an UnsupportedDtypeError on
outputs[0].dtype): target's shape for none, a scalar () for sum and mean. The class axis is
axis 1, so a 4-D input stored NHWC is transposed into NCHW first, as BATCHNORM's; the others
are taken as stored.
"""

from __future__ import annotations

from stack.kmd.dtypes import DType
from stack.kmd.kernels.ids import KernelId
from stack.kmd.kernels.negative_log_likelihood_loss import LossReduction
from stack.umd.errors import InvalidRequestError, ShapeError, UnsupportedDtypeError
from stack.umd.ops import Layout, OpKind, OpRequest
from stack.umd.plan import KernelCall, Semantic
from stack.umd.registry import OpTranslator
from stack.umd.templates import TemplateRegistry
from stack.umd.translators._common import Builder, attr_int, check_dtype, need_counts, same_dtype

_KERNEL = KernelId.NEGATIVE_LOG_LIKELIHOOD_LOSS
REDUCTIONS = {r.name.lower(): r for r in LossReduction}


def loss_immediates(req: OpRequest) -> dict[str, int]:
    """reduction (by name, default mean; another an InvalidRequestError on attrs.reduction) and,
    when the request names an ignore_index, has_ignore_index 1 and its value."""
    attrs = req.attr_map()
    reduction = attrs.get("reduction", "mean")
    if not isinstance(reduction, str) or reduction not in REDUCTIONS:
        known = ", ".join(REDUCTIONS)
        raise InvalidRequestError(f"unknown reduction {reduction!r}; known: {known}",
                                  field="attrs.reduction")  # fmt: skip
    ints = {"reduction": int(REDUCTIONS[reduction])}
    if "ignore_index" in attrs:
        ints |= {"has_ignore_index": 1, "ignore_index": attr_int(attrs, "ignore_index", 0)}
    return ints


class NegativeLogLikelihoodLossTranslator(OpTranslator):
    """NEGATIVE_LOG_LIKELIHOOD_LOSS → the loss kernel on input (NCHW when 4-D), target, the
    optional weight and loss."""

    family = "negative_log_likelihood_loss"
    ops = frozenset({OpKind.NEGATIVE_LOG_LIKELIHOOD_LOSS})

    def parse(self, req: OpRequest, templates: TemplateRegistry) -> Semantic:
        need_counts(req, (2, 3))
        check_dtype(templates, _KERNEL, req.inputs[0].dtype, "inputs[0].dtype")
        if req.inputs[1].dtype not in (DType.I32, DType.I64):
            raise UnsupportedDtypeError(
                f"target must be I32 or I64, got {req.inputs[1].dtype.name}",
                field="inputs[1].dtype",
            )
        same_dtype(req, (0, 2))
        same_dtype(req, (0,), "outputs")
        ints = loss_immediates(req)
        b = Builder(req)
        x = b.input(0, Layout.NCHW if len(req.inputs[0].shape) == 4 else Layout.ANY)
        rest = tuple(b.input(i) for i in range(1, len(req.inputs)))
        return b.build(KernelCall(_KERNEL, (x, *rest, b.output(0)), 1 + len(rest), ints))

    def infer(self, call: KernelCall) -> tuple[tuple[int, ...], ...]:
        x, target = call.ins[0].shape, call.ins[1].shape
        if len(x) < 2:
            raise ShapeError(f"NEGATIVE_LOG_LIKELIHOOD_LOSS takes input [N, C, d1..dk], got {x}",
                             field="inputs[0].shape")  # fmt: skip
        if target != (x[0], *x[2:]):
            raise ShapeError(f"target must be {(x[0], *x[2:])} for input {x}, got {target}",
                             field="inputs[1].shape")  # fmt: skip
        if len(call.ins) > 2 and call.ins[2].shape != (x[1],):
            raise ShapeError(f"weight must be {(x[1],)}, got {call.ins[2].shape}",
                             field="inputs[2].shape")  # fmt: skip
        return (target if call.i("reduction") == LossReduction.NONE else (),)
