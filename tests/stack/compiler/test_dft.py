# ruff: noqa: E501 - the case tables read best one case per line
"""The IR DFT below the importer: its shape and dtype rule (output of input's type, the axis
dft_length or dft_length // 2 + 1 points long and the pair axis 2, or 1 for IRFFT; an input or
attributes that do not fit a typed error naming the node), its constant-folding evaluator
(NumPy's FFT in ONNX's reference's precision, rounded once), its lowering onto Executable op 63
with its four attributes, its arity, and the op it compiles to."""

from __future__ import annotations

import numpy as np
import pytest

from stack.compiler import (
    ElemType,
    Graph,
    Node,
    OpType,
    ShapeInferenceError,
    TensorType,
    VerifyError,
    compile_graph,
    evaluate,
    rule_for,
    verify,
)
from stack.compiler.lowering import lower_node
from stack.compiler.verify import ARITY
from stack.runtime import ExecDType, ExecOp

F32, F16, F64, I32 = ElemType.F32, ElemType.F16, ElemType.F64, ElemType.I32
RULE = rule_for(OpType.DFT)


def node(axis: int = 1, inverse: int = 0, onesided: int = 0, length: int = 6) -> Node:
    return Node.make("d", OpType.DFT, ["x"], ["y"], axis=axis, inverse=inverse,
                     onesided=onesided, dft_length=length)  # fmt: skip


def tt(dtype: ElemType, *shape: int) -> TensorType:
    return TensorType(dtype, shape)


@pytest.mark.parametrize("dtype", [F32, F16, F64], ids=lambda e: e.value)
@pytest.mark.parametrize(
    ("x", "attrs", "y"),
    [
        ((2, 6, 1), (1, 0, 0, 6), (2, 6, 2)),
        ((2, 6, 2), (1, 1, 0, 6), (2, 6, 2)),
        ((2, 6, 1), (1, 0, 1, 6), (2, 4, 2)),
        ((2, 6, 1), (1, 0, 1, 7), (2, 4, 2)),
        ((2, 4, 2), (1, 1, 1, 6), (2, 6, 1)),
        ((2, 4, 2), (1, 1, 1, 7), (2, 7, 1)),
        ((5, 3, 4, 2), (0, 0, 0, 3), (3, 3, 4, 2)),
        ((5, 3, 4, 2), (2, 0, 0, 9), (5, 3, 9, 2)),
        ((0, 3, 1), (1, 0, 0, 3), (0, 3, 2)),
    ],
    ids=["forward", "inverse", "rfft even", "rfft odd", "irfft even", "irfft odd", "axis 0 shorter", "axis 2 longer", "empty"],
)  # fmt: skip
def test_the_rule_gives_the_transform_s_shape(dtype, x, attrs, y) -> None:  # type: ignore[no-untyped-def]
    assert RULE(node(*attrs), [tt(dtype, *x)], {}) == [tt(dtype, *y)]


@pytest.mark.parametrize(
    ("x", "attrs", "message"),
    [
        (tt(I32, 2, 6, 1), (1, 0, 0, 6), r"takes a float input \[\.\.\., 1 or 2\] \(real or complex\), got int32\[2, 6, 1\]"),
        (tt(F32, 6), (0, 0, 0, 6), r"got float32\[6\]"),
        (tt(F32, 2, 6, 3), (1, 0, 0, 6), r"got float32\[2, 6, 3\]"),
        (tt(F32, 2, 6, 1), (2, 0, 0, 6), r"takes an axis in \[0, 1\] \(not the last\) for input float32\[2, 6, 1\], got 2"),
        (tt(F32, 2, 6, 1), (-1, 0, 0, 6), r"got -1"),
        (tt(F32, 2, 6, 1), (1, 2, 0, 6), "takes inverse and onesided of 0 or 1, got 2 and 0"),
        (tt(F32, 2, 6, 1), (1, 0, 5, 6), "got 0 and 5"),
        (tt(F32, 2, 6, 1), (1, 0, 0, 0), r"takes a dft_length of at least 1 for input float32\[2, 6, 1\] on axis 1, got 0"),
        (tt(F32, 2, 6, 2), (1, 0, 1, 6), r"takes a real input \[\.\.\., 1\] for RFFT \(onesided 1, inverse 0\), got float32\[2, 6, 2\]"),
        (tt(F32, 2, 4, 1), (1, 1, 1, 6), r"takes a complex input \[\.\.\., 2\] for IRFFT \(onesided 1, inverse 1\), got float32\[2, 4, 1\]"),
    ],
    ids=["int input", "rank 1", "pair of 3", "axis of the pair", "negative axis", "inverse 2", "onesided 5", "length 0", "complex rfft", "real irfft"],
)  # fmt: skip
def test_a_bad_node_is_a_shape_inference_error_naming_it(x, attrs, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ShapeInferenceError, match=message) as err:
        RULE(node(*attrs), [x], {})
    assert err.value.node == "d" and err.value.op == "DFT"


def test_a_missing_input_is_a_shape_inference_error() -> None:
    with pytest.raises(ShapeInferenceError, match="input 0 is required"):
        RULE(node(), [None], {})


def _fold(n: Node, x: np.ndarray) -> np.ndarray:
    fn = evaluate.evaluator_for(OpType.DFT)
    assert fn is not None
    result = fn(n, [x])
    assert result is not None and len(result) == 1
    return result[0]


def test_folding_transforms_an_impulse_and_a_constant() -> None:
    impulse = np.zeros((1, 4, 1), np.float32)
    impulse[0, 0, 0] = 1.0
    np.testing.assert_array_equal(_fold(node(length=4), impulse)[0], [[1, 0]] * 4)
    ones = np.ones((1, 4, 2), np.float64)  # 1 + 1i everywhere
    np.testing.assert_array_equal(_fold(node(length=4), ones)[0], [[4, 4], [0, 0], [0, 0], [0, 0]])
    np.testing.assert_array_equal(
        _fold(node(inverse=1, length=4), ones)[0], [[1, 1], [0, 0], [0, 0], [0, 0]]
    )
    np.testing.assert_array_equal(
        _fold(node(onesided=1, length=6), impulse)[0], [[1, 0]] * 4
    )  # zero-padded


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64], ids=lambda d: d.__name__)
@pytest.mark.parametrize(
    ("inverse", "onesided"),
    [(0, 0), (1, 0), (0, 1), (1, 1)],
    ids=["forward", "inverse", "rfft", "irfft"],
)
def test_folding_is_numpy_s_fft_in_the_reference_s_precision(dtype, inverse, onesided) -> None:  # type: ignore[no-untyped-def]
    x = (
        np.random.default_rng(63)
        .standard_normal((3, 5, 1 if onesided and not inverse else 2))
        .astype(dtype)
    )
    real = np.float64 if dtype == np.float64 else np.float32
    z = (
        x[..., 0].astype(real)
        if x.shape[-1] == 1
        else (x[..., 0] + 1j * x[..., 1]).astype(np.result_type(real, np.complex64))
    )
    if inverse and onesided:
        want = np.fft.irfft(z, n=7, axis=1)[..., None]
    else:
        f = (np.fft.ifft if inverse else np.fft.fft)(z, n=7, axis=1)[:, : 4 if onesided else 7]
        want = np.stack([f.real, f.imag], axis=-1)
    got = _fold(node(1, inverse, onesided, 7), x)
    assert got.dtype == dtype and got.tobytes() == want.astype(dtype).tobytes()


def test_dft_lowers_to_op_63_with_its_attributes() -> None:
    op, attrs = lower_node(node(0, 1, 1, 8))
    assert op is ExecOp.DFT == 63
    assert dict(attrs) == {"axis": 0, "inverse": 1, "onesided": 1, "dft_length": 8}
    arity = ARITY[OpType.DFT]
    assert (arity.min_in, arity.max_in, arity.min_out, arity.max_out) == (1, 1, 1, 1)


def _graph(n: Node, x: TensorType = tt(F32, 2, 6, 1), y: TensorType = tt(F32, 2, 4, 2)) -> Graph:
    return Graph(
        "g", (n,), tuple(i for i in n.inputs if i), ("y",), {"x": x, "l": tt(I32), "y": y}, {}
    )


def test_a_second_input_breaks_the_arity() -> None:
    n = Node.make("d", OpType.DFT, ["x", "l"], ["y"], axis=1, dft_length=6)
    with pytest.raises(VerifyError, match=r"2 inputs, expected 1\.\.1") as err:
        verify(_graph(n))
    assert err.value.details["check"] == "arity" and err.value.node == "d"


def test_the_graph_compiles_to_one_dft_op() -> None:
    exe = compile_graph(_graph(node(1, 0, 1, 6))).executable
    assert [op.op for op in exe.ops] == [ExecOp.DFT]
    assert dict(exe.ops[0].attrs) == {"axis": 1, "inverse": 0, "onesided": 1, "dft_length": 6}
    assert exe.tensor("x").shape == (2, 6, 1) and exe.tensor("y").shape == (2, 4, 2)
    assert exe.tensor("y").dtype is ExecDType.F32
