"""Calibration for post-training quantization: activation ranges from sample runs.

The float graph is compiled with the values to observe added as model outputs and run on the
stack itself (compile -> runtime -> UMD -> KMD), so the ranges are those the device computes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from stack.compiler.errors import QuantizeError
from stack.compiler.ir import Graph
from stack.compiler.options import DEFAULT_PASSES, CompileOptions


def observe_ranges(
    graph: Graph, values: Iterable[str], samples: Sequence[Mapping[str, np.ndarray]]
) -> dict[str, tuple[float, float]]:
    """``{value: (min, max)}`` over every sample, for each value in ``values``."""
    from stack.compiler.jit import CompiledModel

    if not samples:
        raise QuantizeError("post-training quantization needs at least one calibration sample")
    wanted = [v for v in dict.fromkeys(values) if v not in graph.constants]
    extra = tuple(v for v in wanted if v not in graph.outputs and v not in graph.inputs)
    probe = graph.replace(outputs=(*graph.outputs, *extra))
    ranges: dict[str, tuple[float, float]] = {}
    options = CompileOptions(passes=tuple(p for p in DEFAULT_PASSES if p != "fuse"))
    with CompiledModel(probe, options) as model:
        for sample in samples:
            out = model.run(sample)
            for v in wanted:
                arr = out[v] if v in out else np.asarray(sample[v])
                lo, hi = float(arr.min()), float(arr.max())
                old = ranges.get(v, (lo, hi))
                ranges[v] = (min(lo, old[0]), max(hi, old[1]))
    return ranges


def uint8_params(lo: float, hi: float) -> tuple[np.float32, np.uint8]:
    """Asymmetric uint8 scale and zero point covering ``[lo, hi]`` (and 0)."""
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    scale = (hi - lo) / 255.0 or 1.0
    zero = int(np.clip(round(-lo / scale), 0, 255))
    return np.float32(scale), np.uint8(zero)


def int8_weights(w: np.ndarray, axis: int) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric per-channel int8 weights along ``axis``: (quantised, scales)."""
    moved = np.moveaxis(w.astype(np.float64), axis, 0)
    peak = np.abs(moved.reshape(moved.shape[0], -1)).max(axis=1)
    scale = np.where(peak > 0, peak / 127.0, 1.0)
    shape = [1] * w.ndim
    shape[axis] = -1
    q = np.clip(np.round(w / scale.reshape(shape)), -127, 127).astype(np.int8)
    return q, scale.astype(np.float32)
