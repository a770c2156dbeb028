"""ReverseSequence through the whole stack against onnxruntime, and its bad input as typed
errors naming the node.

Both axis orders (time 0 / batch 1, the default, and time 1 / batch 0), ranks 2 to 4, lengths
from 0 to the whole time axis, seven element types; constant lengths (the node still runs on
the device) and constant inputs (it folds); models of opsets 10 (where ONNX adds the op), 13,
21 and 28 import, opset 9 is refused."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest

from stack.adapter import import_model
from stack.adapter.errors import ModelFormatError
from tests.stack.adapter.both import both, node_model

DTYPES = [np.dtype(t) for t in (np.float32, np.float16, np.float64, np.int8, np.uint8,
          np.int32, np.int64, np.bool_)]  # fmt: skip
RNG = np.random.default_rng(44)


def rev_model(
    x: np.ndarray, lens: np.ndarray, opset: int = 21, consts: tuple[str, ...] = (), **attrs: Any
) -> onnx.ModelProto:
    """One ReverseSequence node ``x``, ``l`` → ``y``; the inputs in ``consts`` initializers."""
    return node_model("ReverseSequence", {"x": x, "l": lens}, opset, consts, **attrs)


def _lengths(steps: int, batch: int) -> np.ndarray:
    lens = RNG.integers(0, steps + 1, batch).astype(np.int64)
    lens[0] = steps
    if batch > 1:
        lens[-1] = 0
    return lens


SHAPES = [(5, 4), (6, 3, 2), (3, 4, 2, 5), (1, 7)]
AXES = [{}, {"time_axis": 1, "batch_axis": 0}, {"time_axis": 0, "batch_axis": 1}]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("axes", AXES, ids=["default", "time1batch0", "time0batch1"])
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_reverse_sequence_matches_onnxruntime(
    shape: tuple[int, ...], axes: dict[str, int], dtype: np.dtype
) -> None:
    time_axis, batch_axis = axes.get("time_axis", 0), axes.get("batch_axis", 1)
    x = (RNG.standard_normal(shape) * 40).astype(dtype)
    lens = _lengths(shape[time_axis], shape[batch_axis])
    ref, got = both(rev_model(x, lens, **axes), {"x": x, "l": lens})
    assert got.dtype == ref.dtype and got.shape == ref.shape == shape
    np.testing.assert_array_equal(got, ref)


def test_constant_lengths_and_a_constant_input_fold_as_onnxruntime() -> None:
    x = RNG.standard_normal((4, 3, 2)).astype(np.float32)
    lens = np.array([4, 1, 2], np.int64)
    ref, got = both(rev_model(x, lens, consts=("l",)), {"x": x})
    np.testing.assert_array_equal(got, ref)
    folded = import_model(rev_model(x, lens, consts=("x", "l")))
    assert not folded.nodes
    ref, got = both(rev_model(x, lens, consts=("x", "l"), batch_axis=1), {})
    np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("opset", [10, 13, 21, 28])
def test_every_opset_of_reverse_sequence_imports(opset: int) -> None:
    x = np.arange(16, dtype=np.float32).reshape(4, 4).T.copy()  # ONNX's first example
    lens = np.array([4, 3, 2, 1], np.int64)
    ref, got = both(rev_model(x, lens, opset), {"x": x, "l": lens})
    np.testing.assert_array_equal(got, [[3, 6, 9, 12], [2, 5, 8, 13], [1, 4, 10, 14],
                                        [0, 7, 11, 15]])  # fmt: skip
    np.testing.assert_array_equal(got, ref)


_X, _L = np.zeros((4, 3), np.float32), np.array([1, 2, 3], np.int64)
_ONE_INPUT = rev_model(_X, _L)
_ONE_INPUT.graph.node[0].input.pop()
BAD: dict[str, onnx.ModelProto] = {
    "opset 9": rev_model(_X, _L, opset=9),
    "one input": _ONE_INPUT,
    "one axis for both": rev_model(_X, _L, time_axis=1, batch_axis=1),
    "axis 2": rev_model(np.zeros((4, 3, 2), np.float32), _L, time_axis=2),
    "rank 1": rev_model(np.zeros(4, np.float32), np.array([4], np.int64), batch_axis=0),
    "int32 lengths": rev_model(_X, _L.astype(np.int32)),
    "lengths of another batch": rev_model(_X, np.array([1, 2, 3, 4], np.int64)),
    "constant length past T": rev_model(_X, np.array([1, 5, 0], np.int64), consts=("l",)),
    "constant negative length": rev_model(_X, np.array([-1, 0, 0], np.int64), consts=("l",)),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_reverse_sequence_is_a_model_format_error_naming_the_node(case: str) -> None:
    with pytest.raises(ModelFormatError) as err:
        import_model(BAD[case])
    assert type(err.value) is ModelFormatError
    assert err.value.node == "n0", err.value
    assert err.value.op == "ReverseSequence", err.value
