"""The softmax cross-entropy loss: SOFTMAX_CROSS_ENTROPY_LOSS (ONNX SoftmaxCrossEntropyLoss;
``reduction``: none, sum, mean, default mean; ``ignore_index``: an int, absent when no label is
ignored; both read as NEGATIVE_LOG_LIKELIHOOD_LOSS's are).

Inputs in ONNX's order: scores [N, C, d1..dk] F32, F16 or F64 (else an UnsupportedDtypeError on
inputs[0].dtype; a rank below 2 a ShapeError on inputs[0].shape), labels [N, d1..dk] I32 or I64
(else an UnsupportedDtypeError on inputs[1].dtype, another shape a ShapeError on
inputs[1].shape) and the optional weights [C] of scores' dtype (else an UnsupportedDtypeError
or a ShapeError on inputs[2]). Two outputs, both of scores' dtype (else an
UnsupportedDtypeError on outputs[j].dtype): output, labels' shape for none and a scalar () for
sum and mean, and log_prob, scores' shape (else a ShapeError on outputs[j].shape); the kernel
always writes both. The class axis is axis 1, so a 4-D scores stored NHWC is transposed into
NCHW first and a 4-D log_prob asked NHWC is transposed back, as BATCHNORM's; the others are
taken as stored.
"""

from __future__ import annotations

from stack.kmd.dtypes import DType
from stack.kmd.kernels.ids import KernelId
from stack.kmd.kernels.negative_log_likelihood_loss import LossReduction
from stack.umd.errors import ShapeError, UnsupportedDtypeError
from stack.umd.ops import Layout, OpKind, OpRequest
from stack.umd.plan import KernelCall, Semantic
from stack.umd.registry import OpTranslator
from stack.umd.templates import TemplateRegistry
from stack.umd.translators._common import Builder, check_dtype, need_counts, same_dtype
from stack.umd.translators.negative_log_likelihood_loss import loss_immediates

_KERNEL = KernelId.SOFTMAX_CROSS_ENTROPY_LOSS


class SoftmaxCrossEntropyLossTranslator(OpTranslator):
    """SOFTMAX_CROSS_ENTROPY_LOSS → the loss kernel on scores (NCHW when 4-D), labels, the
    optional weights, output and log_prob (NCHW when 4-D)."""

    family = "softmax_cross_entropy_loss"
    ops = frozenset({OpKind.SOFTMAX_CROSS_ENTROPY_LOSS})

    def parse(self, req: OpRequest, templates: TemplateRegistry) -> Semantic:
        need_counts(req, (2, 3), 2)
        check_dtype(templates, _KERNEL, req.inputs[0].dtype, "inputs[0].dtype")
        if req.inputs[1].dtype not in (DType.I32, DType.I64):
            raise UnsupportedDtypeError(
                f"labels must be I32 or I64, got {req.inputs[1].dtype.name}",
                field="inputs[1].dtype",
            )
        same_dtype(req, (0, 2))
        same_dtype(req, (0, 1), "outputs")
        ints = loss_immediates(req)
        b = Builder(req)
        nchw = Layout.NCHW if len(req.inputs[0].shape) == 4 else Layout.ANY
        x = b.input(0, nchw)
        rest = tuple(b.input(i) for i in range(1, len(req.inputs)))
        outs = (b.output(0), b.output(1, nchw))
        return b.build(KernelCall(_KERNEL, (x, *rest, *outs), 1 + len(rest), ints))

    def infer(self, call: KernelCall) -> tuple[tuple[int, ...], ...]:
        x, labels = call.ins[0].shape, call.ins[1].shape
        if len(x) < 2:
            raise ShapeError(f"SOFTMAX_CROSS_ENTROPY_LOSS takes scores [N, C, d1..dk], got {x}",
                             field="inputs[0].shape")  # fmt: skip
        if labels != (x[0], *x[2:]):
            raise ShapeError(f"labels must be {(x[0], *x[2:])} for scores {x}, got {labels}",
                             field="inputs[1].shape")  # fmt: skip
        if len(call.ins) > 2 and call.ins[2].shape != (x[1],):
            raise ShapeError(f"weights must be {(x[1],)}, got {call.ins[2].shape}",
                             field="inputs[2].shape")  # fmt: skip
        return (labels if call.i("reduction") == LossReduction.NONE else (), x)
