"""NEGATIVE_LOG_LIKELIHOOD_LOSS's ABI, registered into :data:`stack.kmd.kernels.abi.ABIS` when
that module is imported (abi.py is near its 300 lines); the conventions are
:mod:`stack.kmd.kernels.abi`'s.

ONNX's inputs in ONNX's order and names (input, target, then the optional weight) and one output,
loss, whose shape the kernel checks against the reduction; three int immediates, no grid axis
(the gather and the reduction run whole)."""

from __future__ import annotations

from stack.kmd.kernels.abi import Imm, KernelAbi, register
from stack.kmd.kernels.ids import KernelId

register(
    KernelAbi(
        KernelId.NEGATIVE_LOG_LIKELIHOOD_LOSS, ("input", "target"), ("loss",),
        optional=("weight",),
        ints=(
            Imm("reduction", 2, "LossReduction: 0 none, 1 sum, 2 mean"),
            Imm("has_ignore_index", 0, "1: places whose target is ignore_index lose 0, weigh 0"),
            Imm("ignore_index", 0),
        ),
        doc="ONNX NegativeLogLikelihoodLoss: input[N,C,d1..dk] float, target[N,d1..dk] I32/I64, "
        "weight[C] -> loss = -input[n, target, d1..dk] * weight[target] per place (none, of "
        "target's shape), its sum or its weighted mean (0-d); float64 arithmetic, rounded once.",
    )
)  # fmt: skip
