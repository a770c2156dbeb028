"""Compile options: which passes run and how the memory planner and scheduler behave."""

from __future__ import annotations

import enum
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


class Target(enum.StrEnum):
    """The kind of device the Executable is compiled for: it decides the activation layout of
    the convolution family (:mod:`stack.compiler.passes.layout`): NHWC regions on the CPU
    device, NCHW on a GPU."""

    CPU = "cpu"
    GPU = "gpu"

    @classmethod
    def for_backend(cls, backend: str) -> Target:
        """The target of a kernel backend, by the name the UMD reports (``UmdApi.backend``):
        ``numpy`` is the CPU device, every other backend (``cupy``) a GPU."""
        return cls.CPU if backend == "numpy" else cls.GPU


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
    ``verify_each``: run the verifier after every pass; ``target``: the device kind compiled
    for (the layout pass keeps convolution chains NHWC on :attr:`Target.CPU`); None: the CPU
    for :func:`~stack.compiler.driver.compile_graph`, the runtime's device for
    :class:`~stack.compiler.jit.CompiledModel`.
    """

    streams: int = 1
    alignment: int = 64
    passes: tuple[str, ...] = DEFAULT_PASSES
    quantize: QuantizeOptions | None = None
    verify_each: bool = True
    target: Target | None = None
    metadata: tuple[tuple[str, str], ...] = field(default=())
