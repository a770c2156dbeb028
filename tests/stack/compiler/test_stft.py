# ruff: noqa: E501 - the case tables read best one case per line
"""The IR STFT below the importer: its shape and dtype rule (output of signal's type,
[B, frames, frame_length // 2 + 1 or frame_length, 2]; operands or attributes that do not fit a
typed error naming the node), its constant-folding evaluator (each windowed frame's DFT as
NumPy's FFT in ONNX's reference's precision, rounded once), its lowering onto Executable op 64
with its three attributes, its arity, and the op it compiles to."""

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
RULE = rule_for(OpType.STFT)


def node(step: int = 2, length: int = 4, onesided: int = 1, window: bool = False) -> Node:
    return Node.make("s", OpType.STFT, ["x", "w"] if window else ["x"], ["y"],
                     frame_step=step, frame_length=length, onesided=onesided)  # fmt: skip


def tt(dtype: ElemType, *shape: int) -> TensorType:
    return TensorType(dtype, shape)


@pytest.mark.parametrize("dtype", [F32, F16, F64], ids=lambda e: e.value)
@pytest.mark.parametrize(
    ("x", "attrs", "y"),
    [
        ((2, 10, 1), (2, 4, 1), (2, 4, 3, 2)),
        ((2, 10, 1), (2, 4, 0), (2, 4, 4, 2)),
        ((3, 10, 2), (3, 5, 1), (3, 2, 3, 2)),
        ((1, 10, 2), (1, 10, 0), (1, 1, 10, 2)),
        ((1, 10, 1), (20, 3, 1), (1, 1, 2, 2)),
        ((0, 8, 1), (2, 4, 0), (0, 3, 4, 2)),
    ],
    ids=["onesided", "full", "complex onesided", "one frame", "step past the signal", "empty batch"],
)  # fmt: skip
def test_the_rule_gives_the_transform_s_shape(dtype, x, attrs, y) -> None:  # type: ignore[no-untyped-def]
    assert RULE(node(*attrs), [tt(dtype, *x)], {}) == [tt(dtype, *y)]
    window = tt(dtype, attrs[1])
    assert RULE(node(*attrs, window=True), [tt(dtype, *x), window], {}) == [tt(dtype, *y)]


@pytest.mark.parametrize(
    ("x", "w", "attrs", "message"),
    [
        (tt(I32, 2, 8, 1), None, (2, 4, 1), r"takes a float signal \[B, N, 1 or 2\] \(real or complex\), got int32\[2, 8, 1\]"),
        (tt(F32, 8, 1), None, (2, 4, 1), r"got float32\[8, 1\]"),
        (tt(F32, 2, 8, 3), None, (2, 4, 1), r"got float32\[2, 8, 3\]"),
        (tt(F32, 2, 8, 1), None, (0, 4, 1), "takes a frame_step of at least 1, got 0"),
        (tt(F32, 2, 8, 1), None, (2, 0, 1), r"takes a frame_length from 1 to the signal's 8 for float32\[2, 8, 1\], got 0"),
        (tt(F32, 2, 8, 1), None, (2, 9, 1), "got 9"),
        (tt(F32, 2, 8, 1), None, (2, 4, 2), "takes onesided of 0 or 1, got 2"),
        (tt(F32, 2, 8, 1), tt(F32, 5), (2, 4, 1), r"takes a window float32\[4\] \(frame_length's\), got float32\[5\]"),
        (tt(F32, 2, 8, 1), tt(F64, 4), (2, 4, 1), r"got float64\[4\]"),
    ],
    ids=["int signal", "rank 2", "pair of 3", "step 0", "length 0", "length past the signal", "onesided 2", "window length", "window dtype"],
)  # fmt: skip
def test_a_bad_node_is_a_shape_inference_error_naming_it(x, w, attrs, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ShapeInferenceError, match=message) as err:
        RULE(node(*attrs, window=w is not None), [x] if w is None else [x, w], {})
    assert err.value.node == "s" and err.value.op == "STFT"


def test_a_missing_signal_is_a_shape_inference_error() -> None:
    with pytest.raises(ShapeInferenceError, match="input 0 is required"):
        RULE(node(), [None], {})


def _fold(n: Node, *a: np.ndarray) -> np.ndarray:
    fn = evaluate.evaluator_for(OpType.STFT)
    assert fn is not None
    result = fn(n, list(a))
    assert result is not None and len(result) == 1
    return result[0]


def test_folding_transforms_each_frame() -> None:
    """Constant frames give their sum at point 0 only; a window scales them; frames step."""
    x = np.repeat(np.arange(1, 6, dtype=np.float32), 2)[None, :, None]  # 1 1 2 2 3 3 4 4 5 5
    y = _fold(node(2, 2, 1), x)
    np.testing.assert_array_equal(y[0, :, :, 0], [[2, 0], [4, 0], [6, 0], [8, 0], [10, 0]])
    assert not y[..., 1].any()
    w = np.array([0.5, 0.5], np.float32)
    np.testing.assert_array_equal(
        _fold(node(2, 2, 0, window=True), x, w)[0, :, 0, 0], [1, 2, 3, 4, 5]
    )


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64], ids=lambda d: d.__name__)
@pytest.mark.parametrize("onesided", [0, 1])
@pytest.mark.parametrize("pair", [1, 2], ids=["real", "complex"])
def test_folding_is_numpy_s_fft_of_the_windowed_frames(dtype, onesided, pair) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(64)
    x = rng.standard_normal((2, 11, pair)).astype(dtype)
    w = rng.random(5).astype(dtype)
    real = np.float64 if dtype == np.float64 else np.float32
    frames = np.stack([x[:, f * 3 : f * 3 + 5] * w[:, None] for f in range(3)], axis=1)
    z = frames[..., 0].astype(real)
    if pair == 2:
        z = z + 1j * frames[..., 1].astype(real)
    f = np.fft.fft(z, n=5, axis=2)[:, :, : 3 if onesided else 5]
    want = np.stack([f.real, f.imag], axis=-1).astype(dtype)
    got = _fold(node(3, 5, onesided, window=True), x, w)
    assert got.dtype == dtype and got.tobytes() == want.tobytes()


def test_stft_lowers_to_op_64_with_its_attributes() -> None:
    op, attrs = lower_node(node(3, 8, 0))
    assert op is ExecOp.STFT == 64
    assert dict(attrs) == {"frame_step": 3, "frame_length": 8, "onesided": 0}
    arity = ARITY[OpType.STFT]
    assert (arity.min_in, arity.max_in, arity.min_out, arity.max_out) == (1, 2, 1, 1)


def _graph(n: Node, y: TensorType = tt(F32, 2, 4, 3, 2)) -> Graph:
    types = {"x": tt(F32, 2, 10, 1), "w": tt(F32, 4), "l": tt(I32), "y": y}
    return Graph("g", (n,), tuple(i for i in n.inputs if i), ("y",), types, {})


def test_a_third_input_breaks_the_arity() -> None:
    n = Node.make("s", OpType.STFT, ["x", "w", "l"], ["y"], frame_step=2, frame_length=4)
    with pytest.raises(VerifyError, match=r"3 inputs, expected 1\.\.2") as err:
        verify(_graph(n))
    assert err.value.details["check"] == "arity" and err.value.node == "s"


@pytest.mark.parametrize("window", [False, True])
def test_the_graph_compiles_to_one_stft_op(window: bool) -> None:
    exe = compile_graph(_graph(node(2, 4, 1, window=window))).executable
    assert [op.op for op in exe.ops] == [ExecOp.STFT]
    assert dict(exe.ops[0].attrs) == {"frame_step": 2, "frame_length": 4, "onesided": 1}
    assert len(exe.ops[0].inputs) == 1 + window
    assert exe.tensor("x").shape == (2, 10, 1) and exe.tensor("y").shape == (2, 4, 3, 2)
    assert exe.tensor("y").dtype is ExecDType.F32
