"""Checking model inputs against the Executable's signature before any device work."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from stack.runtime.errors import ModelInputError
from stack.runtime.executable import Executable, TensorInfo


def check_inputs(
    exe: Executable, inputs: Mapping[str, np.ndarray]
) -> list[tuple[TensorInfo, np.ndarray]]:
    """Pair each model input with its array (C-contiguous), in signature order.

    Raises ModelInputError naming the input when one is unknown, missing, not an array, or
    of the wrong shape or dtype (no implicit casts: a silent cast could change results).
    """
    expected = {t.name: t for t in exe.input_tensors}
    unknown = sorted(set(inputs) - set(expected))
    if unknown:
        raise ModelInputError(
            f"unknown input {unknown[0]!r}; the model takes: {', '.join(expected) or 'none'}",
            input=unknown[0],
            known=list(expected),
        )
    pairs = []
    for name, info in expected.items():
        if name not in inputs:
            raise ModelInputError(f"missing input {name!r}", input=name, known=list(expected))
        array = inputs[name]
        if not isinstance(array, np.ndarray):
            raise ModelInputError(f"input {name!r} is not a numpy array", input=name)
        if tuple(array.shape) != info.shape:
            raise ModelInputError(
                f"input {name!r} has shape {tuple(array.shape)}, the model expects {info.shape}",
                input=name,
                expected=list(info.shape),
                got=list(array.shape),
            )
        if array.dtype != info.dtype.numpy:
            raise ModelInputError(
                f"input {name!r} has dtype {array.dtype}, the model expects {info.dtype.numpy}",
                input=name,
                expected=str(info.dtype.numpy),
                got=str(array.dtype),
            )
        pairs.append((info, np.ascontiguousarray(array)))
    return pairs
