"""TensorScatter through the whole stack against onnxruntime, and its bad input as typed
errors naming the node.

The sequence axis 1 to rank-1 (and the default -2), linear and circular writes (circular ones
wrapping past the end), write_indices given or absent, an update as long as the cache, seven
element types; constant write indices (the node still runs on the device) and constant inputs
(it folds); opset 24 imports, opset 23 is refused."""

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
RNG = np.random.default_rng(47)


def ts_model(
    past: np.ndarray,
    upd: np.ndarray,
    start: np.ndarray | None = None,
    opset: int = 24,
    consts: tuple[str, ...] = (),
    **attrs: Any,
) -> onnx.ModelProto:
    """One TensorScatter node ``p``, ``u`` (, ``w``) → ``y``; the inputs in ``consts``
    initializers."""
    arrays = {"p": past, "u": upd} if start is None else {"p": past, "u": upd, "w": start}
    return node_model("TensorScatter", arrays, opset, consts, **attrs)


def _case(shape: tuple[int, ...], axis: int, steps: int, mode: str, dtype: Any) -> tuple:
    past = (RNG.standard_normal(shape) * 40).astype(dtype)
    ushape = tuple(steps if d == axis % len(shape) else n for d, n in enumerate(shape))
    upd = (RNG.standard_normal(ushape) * 40).astype(dtype)
    cache = shape[axis]
    hi = cache if mode == "circular" else cache - steps + 1
    start = RNG.integers(0, hi, shape[0]).astype(np.int64)
    start[0] = hi - 1
    return past, upd, start


CASES = [((2, 5, 3), 1, 2), ((3, 2, 6, 4), 2, 3), ((2, 3, 4, 2), 3, 1), ((2, 7), 1, 7),
         ((2, 4, 8, 2), -2, 1)]  # fmt: skip


@pytest.mark.parametrize(("shape", "axis", "steps"), CASES, ids=str)
@pytest.mark.parametrize("mode", ["linear", "circular"])
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_tensor_scatter_matches_onnxruntime(shape, axis, steps, mode, dtype) -> None:  # type: ignore[no-untyped-def]
    past, upd, start = _case(shape, axis, steps, mode, dtype)
    model = ts_model(past, upd, start, axis=axis, mode=mode)
    ref, got = both(model, {"p": past, "u": upd, "w": start})
    assert got.dtype == ref.dtype and got.shape == ref.shape == shape
    np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("mode", ["linear", "circular"])
def test_without_write_indices_and_with_the_default_axis(mode: str) -> None:
    past = RNG.standard_normal((2, 3, 6, 4)).astype(np.float32)
    upd = RNG.standard_normal((2, 3, 2, 4)).astype(np.float32)
    ref, got = both(ts_model(past, upd, mode=mode), {"p": past, "u": upd})
    np.testing.assert_array_equal(got, ref)
    np.testing.assert_array_equal(got[:, :, :2], upd)


def test_constant_indices_and_constant_inputs_fold_as_onnxruntime() -> None:
    past = RNG.standard_normal((3, 5, 2)).astype(np.float32)
    upd = RNG.standard_normal((3, 2, 2)).astype(np.float32)
    start = np.array([4, 0, 2], np.int64)
    feeds = {"p": past, "u": upd}
    ref, got = both(ts_model(past, upd, start, consts=("w",), axis=1, mode="circular"), feeds)
    np.testing.assert_array_equal(got, ref)
    folded = import_model(ts_model(past, upd, start, consts=("p", "u", "w"), mode="circular"))
    assert not folded.nodes
    ref, got = both(ts_model(past, upd, start, consts=("p", "u", "w"), mode="circular"), {})
    np.testing.assert_array_equal(got, ref)


_P, _U, _W = np.zeros((2, 4, 3), np.float32), np.zeros((2, 1, 3), np.float32), np.zeros(2, np.int64)
_ONE_INPUT = ts_model(_P, _U)
_ONE_INPUT.graph.node[0].input.pop()
BAD: dict[str, onnx.ModelProto] = {
    "opset 23": ts_model(_P, _U, opset=23),
    "one input": _ONE_INPUT,
    "mode ring": ts_model(_P, _U, mode="ring"),
    "batch axis": ts_model(_P, _U, axis=0),
    "axis 3": ts_model(_P, _U, axis=3),
    "update longer than the cache": ts_model(_P, np.zeros((2, 5, 3), np.float32)),
    "update of another width": ts_model(_P, np.zeros((2, 1, 2), np.float32), axis=1),
    "update of another dtype": ts_model(_P, np.zeros((2, 1, 3), np.float64), axis=1),
    "update of another rank": ts_model(_P, np.zeros((2, 1), np.float32), axis=1),
    "int32 write_indices": ts_model(_P, _U, _W.astype(np.int32), axis=1),
    "write_indices of another batch": ts_model(_P, _U, np.zeros(3, np.int64), axis=1),
    "constant linear write past the end": ts_model(
        _P, _U, np.array([0, 4], np.int64), consts=("w",), axis=1
    ),
    "constant negative linear write": ts_model(
        _P, _U, np.array([-1, 0], np.int64), consts=("w",), axis=1
    ),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_tensor_scatter_is_a_model_format_error_naming_the_node(case: str) -> None:
    with pytest.raises(ModelFormatError) as err:
        import_model(BAD[case])
    assert type(err.value) is ModelFormatError
    assert err.value.node == "n0", err.value
    assert err.value.op == "TensorScatter", err.value
