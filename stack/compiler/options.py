"""Compile options: which passes run and how the memory planner and scheduler behave."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

#: The default pass pipeline, in order (names registered in :mod:`stack.compiler.passes`).
DEFAULT_PASSES: tuple[str, ...] = (
    "infer_shapes",
    "fold_constants",
    "fold_batchnorm",
    "lower",
    "fuse",
    "fold_ln_shift",
    "winograd",
    "expand_bias",
    "dce",
    "layout",
    "infer_shapes",
)


@dataclass(frozen=True, slots=True, eq=False)
class QuantizeOptions:
    """Post-training int8 quantization.

    ``calibration``: sample inputs (``{input name: array}`` per sample) run through the float
    model to find each quantised activation's range; ``ops``: the IR op types to quantise.
    """

    calibration: tuple[Mapping[str, np.ndarray], ...] = ()
    ops: tuple[str, ...] = ("Conv", "Gemm", "MatMul")


@dataclass(frozen=True, slots=True, eq=False)
class CompileOptions:
    """How to compile a graph.

    ``streams``: stream lanes ops are spread over (one arena per lane); ``alignment``: byte
    alignment of every planned tensor (a power of two >= 32, the pipeline-schema rule);
    ``passes``: the pipeline; ``quantize``: run the int8 pass after the float pipeline;
    ``verify_each``: run the verifier after every pass.
    """

    streams: int = 1
    alignment: int = 64
    passes: tuple[str, ...] = DEFAULT_PASSES
    quantize: QuantizeOptions | None = None
    verify_each: bool = True
    metadata: tuple[tuple[str, str], ...] = field(default=())
