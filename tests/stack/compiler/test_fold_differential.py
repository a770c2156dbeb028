"""Differential test: every constant-folding evaluator against the device kernel.

For each op with an evaluator (:func:`stack.compiler.evaluate.evaluator_for`) and each device
dtype the op takes, random inputs go once through the folder (the evaluator, as constant
folding calls it) and once through the whole stack as run-time inputs (compiled, translated,
run by the KMD's NumPy kernels). The results must be identical, bit for bit, NaN included:
folding a node must never change a model's answer.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

from stack.compiler import CompiledModel, ElemType, Graph, Node, OpType, TensorType, evaluate
from stack.compiler.jit import shared_runtime

FLOATS = ("float32", "float16", "float64")
INTS = ("int8", "uint8", "int32", "int64")
ALL = (*FLOATS, *INTS, "bool")


@dataclass(frozen=True)
class Spec:
    """How to exercise one op: input shapes, attributes, the dtypes it takes on the device."""

    shapes: tuple[tuple[int, ...], ...]
    dtypes: tuple[str, ...]
    attrs: dict[str, Any] = field(default_factory=dict)
    #: input generator override: (rng, shape, dtype) -> array, per input position
    make: Callable[[np.random.Generator, tuple[int, ...], np.dtype, int], np.ndarray] | None = None


def values(rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype, i: int) -> Any:
    """Random values of ``dtype`` spanning negative and positive, with the dtype's extremes
    (integers) or NaN, infinities and signed zeros (floats) mixed in."""
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        arr = rng.integers(max(info.min, -1000), min(info.max, 1000), shape, endpoint=True)
        arr = arr.astype(dtype)
        flat = arr.reshape(-1)
        if flat.size >= 2:
            flat[0], flat[1] = info.min, info.max
        return arr
    arr = (rng.standard_normal(shape) * 4).astype(dtype)
    flat = arr.reshape(-1)
    specials = np.array([np.nan, np.inf, -np.inf, -0.0], dtype)
    flat[: min(flat.size, 4)] = specials[: min(flat.size, 4)]
    return arr


def nonzero_divisor(
    rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype, i: int
) -> Any:
    """Dividends as :func:`values`; integer divisors non-zero and of both signs (a zero integer
    divisor is undefined in ONNX), float divisors with zeros to pin inf/NaN handling."""
    arr = values(rng, shape, dtype, i)
    if i == 1 and dtype.kind in "iu":
        arr = np.where(arr == 0, np.asarray(3, dtype), arr).astype(dtype)
        if dtype.kind == "i":
            arr.reshape(-1)[0] = -1  # INT_MIN / -1 wraps identically in both
    elif i == 1 and dtype.kind == "f":
        arr.reshape(-1)[-1] = 0.0
    return arr


SPECS: dict[OpType, Spec] = {
    OpType.ADD: Spec(((3, 4), (4,)), FLOATS + INTS),
    OpType.SUB: Spec(((3, 4), (3, 1)), FLOATS + INTS),
    OpType.MUL: Spec(((2, 3, 4), (4,)), FLOATS + INTS),
    OpType.DIV: Spec(((3, 5), (3, 5)), FLOATS + INTS, make=nonzero_divisor),
    OpType.SUM: Spec(((3, 4), (4,), (3, 1)), FLOATS + INTS),
    OpType.RELU: Spec(((4, 5),), FLOATS + INTS),
    OpType.MATMUL: Spec(((2, 3, 4), (4, 5)), FLOATS),
    OpType.IDENTITY: Spec(((3, 4),), ALL),
    OpType.COPY: Spec(((3, 4),), ALL),
    OpType.RESHAPE: Spec(((3, 4),), ALL, {"shape": (2, 6)}),
    OpType.FLATTEN: Spec(((2, 3, 2),), ALL, {"axis": 2}),
    OpType.TRANSPOSE: Spec(((2, 3, 4),), ALL, {"perm": (1, 2, 0)}),
    OpType.CONCAT: Spec(((2, 3), (2, 1)), ALL, {"axis": 1}),
}

#: Evaluators with no device counterpart to compare against, and why.
FOLD_ONLY = {
    OpType.CONSTANT_OF_SHAPE: "its shape input must be a constant, so the node always folds",
}


def test_every_evaluator_has_a_differential_spec() -> None:
    registered = {op for op in OpType if evaluate.evaluator_for(op) is not None}
    assert registered == set(SPECS) | set(FOLD_ONLY)


CASES = [(op, dtype) for op, spec in SPECS.items() for dtype in spec.dtypes]


@pytest.mark.parametrize(("op", "dtype"), CASES, ids=[f"{o.value}-{d}" for o, d in CASES])
def test_folder_and_device_agree(op: OpType, dtype: str) -> None:
    spec = SPECS[op]
    rng = np.random.default_rng(zlib.crc32(f"{op.value}-{dtype}".encode()))
    np_dtype = np.dtype(dtype)
    make = spec.make or values
    arrays = [make(rng, shape, np_dtype, i) for i, shape in enumerate(spec.shapes)]
    names = [f"x{i}" for i in range(len(arrays))]
    node = Node.make("n", op, names, ["y"], **spec.attrs)
    with np.errstate(all="ignore"):
        (folded,) = evaluate.evaluator_for(op)(node, [a.copy() for a in arrays])  # type: ignore[misc]
    types = {n: TensorType(ElemType(dtype), a.shape) for n, a in zip(names, arrays, strict=True)}
    graph = Graph("diff", (node,), tuple(names), ("y",), types)
    model = CompiledModel(graph, runtime=shared_runtime())
    try:
        device = model.run(dict(zip(names, arrays, strict=True)))["y"]
    finally:
        model.close()
    assert device.dtype == folded.dtype and device.shape == folded.shape
    np.testing.assert_array_equal(device, folded)
