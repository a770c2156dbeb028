"""Compile options: which passes run and how the memory planner and scheduler behave."""

from __future__ import annotations

from dataclasses import dataclass, field

#: The default pass pipeline, in order (names registered in :mod:`stack.compiler.passes`).
DEFAULT_PASSES: tuple[str, ...] = (
    "infer_shapes",
    "fold_constants",
    "fold_batchnorm",
    "fuse",
    "lower",
    "dce",
    "layout",
    "infer_shapes",
)


@dataclass(frozen=True, slots=True)
class QuantizeOptions:
    """Post-training int8 quantization: calibration samples (input name -> array) per run."""

    calibration: tuple[tuple[tuple[str, object], ...], ...] = ()
    symmetric_weights: bool = True


@dataclass(frozen=True, slots=True)
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
