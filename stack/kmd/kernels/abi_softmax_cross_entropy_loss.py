"""SOFTMAX_CROSS_ENTROPY_LOSS's ABI, registered into :data:`stack.kmd.kernels.abi.ABIS` when
that module is imported (abi.py is near its 300 lines); the conventions are
:mod:`stack.kmd.kernels.abi`'s.

ONNX's inputs in ONNX's order and names (scores, labels, then the optional weights) and both of
its outputs, output then log_prob, always written (a request that does not want log_prob gives
it a scratch tensor); NEGATIVE_LOG_LIKELIHOOD_LOSS's three int immediates, no grid axis (the
log-softmax and the reduction run whole)."""

from __future__ import annotations

from stack.kmd.kernels.abi import Imm, KernelAbi, register
from stack.kmd.kernels.ids import KernelId

register(
    KernelAbi(
        KernelId.SOFTMAX_CROSS_ENTROPY_LOSS, ("scores", "labels"), ("output", "log_prob"),
        optional=("weights",),
        ints=(
            Imm("reduction", 2, "LossReduction: 0 none, 1 sum, 2 mean"),
            Imm("has_ignore_index", 0, "1: places whose label is ignore_index lose 0, weigh 0"),
            Imm("ignore_index", 0),
        ),
        doc="ONNX SoftmaxCrossEntropyLoss: scores[N,C,d1..dk] float, labels[N,d1..dk] I32/I64, "
        "weights[C] -> log_prob = log_softmax(scores, axis 1) (float64, stable, rounded once) "
        "and output = NEGATIVE_LOG_LIKELIHOOD_LOSS(log_prob, labels, weights) per place (none), "
        "its sum or its weighted mean (0-d).",
    )
)  # fmt: skip
