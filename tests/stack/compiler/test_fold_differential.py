"""Differential test: every constant-folding evaluator against the device kernel.

For each op with an evaluator (:func:`stack.compiler.evaluate.evaluator_for`) and each device
dtype the op takes, random inputs go once through the folder (the evaluator, as constant
folding calls it) and once through the whole stack as run-time inputs (compiled, translated,
run by the KMD's NumPy kernels). The results must be identical, bit for bit, NaN included:
folding a node must never change a model's answer.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from stack.compiler import CompiledModel, ElemType, Graph, Node, OpType, TensorType, evaluate
from stack.compiler.jit import shared_runtime
from tests.stack.compiler.fold_inputs import (
    classes,
    finite,
    in_range,
    lengths_within,
    nonzero_divisor,
    shift_amounts,
    small_exponent,
    unpool_places,
    values,
    write_starts,
)
from tests.stack.compiler.fold_specs import (
    ALL,
    ATTENTION,
    CAUSAL_CONV_WITH_STATE,
    DFT,
    FLOATS,
    GRU,
    INTS,
    LINEAR_ATTENTION,
    LSTM,
    RNN,
    ROTARY_EMBEDDING,
    STFT,
    SWIGLU,
    Spec,
)

SIGNED = ("int8", "int32", "int64")
NUMERIC = FLOATS + INTS
UNARY_DTYPES = {
    "Neg": FLOATS + SIGNED, "Abs": NUMERIC, "Sign": NUMERIC, "Sqrt": FLOATS,
    "Reciprocal": FLOATS, "Ceil": FLOATS, "Floor": FLOATS, "Round": FLOATS, "Not": ("bool",),
    "BitwiseNot": INTS, "IsNaN": FLOATS,
}  # fmt: skip
BINARY_DTYPES = {
    "Pow": NUMERIC, "Mod": NUMERIC, "Min": NUMERIC, "Max": NUMERIC, "Equal": NUMERIC,
    "Less": NUMERIC, "LessOrEqual": NUMERIC, "Greater": NUMERIC, "GreaterOrEqual": NUMERIC,
    "And": ("bool",), "Or": ("bool",), "Xor": ("bool",), "BitwiseAnd": INTS, "BitwiseOr": INTS,
    "BitwiseXor": INTS, "BitShiftLeft": ("uint8",), "BitShiftRight": ("uint8",),
    "PRelu": FLOATS,
}  # fmt: skip
BINARY_MAKE = {"Pow": small_exponent, "Mod": nonzero_divisor, "BitShiftLeft": shift_amounts,
               "BitShiftRight": shift_amounts}  # fmt: skip

#: The (from, to) pairs of device types of one width.
BITCASTS = (
    ("float32", "int32"), ("int32", "float32"), ("float64", "int64"), ("int64", "float64"),
    ("int8", "uint8"), ("uint8", "int8"), ("bool", "uint8"), ("bool", "int8"), ("uint8", "bool"),
    ("int8", "bool"),
)  # fmt: skip

SPECS: dict[str, Spec] = {
    "Add": Spec(OpType.ADD, ((3, 4), (4,)), FLOATS + INTS),
    "Sub": Spec(OpType.SUB, ((3, 4), (3, 1)), FLOATS + INTS),
    "Mul": Spec(OpType.MUL, ((2, 3, 4), (4,)), FLOATS + INTS),
    "Div": Spec(OpType.DIV, ((3, 5), (3, 5)), FLOATS + INTS, make=nonzero_divisor),
    **SWIGLU,
    **CAUSAL_CONV_WITH_STATE,
    **DFT,
    **STFT,
    **ATTENTION,
    "Sum": Spec(OpType.SUM, ((3, 4), (4,), (3, 1)), FLOATS + INTS),
    "Relu": Spec(OpType.RELU, ((4, 5),), FLOATS + INTS),
    "MatMul": Spec(OpType.MATMUL, ((2, 3, 4), (4, 5)), FLOATS),
    "Det": Spec(OpType.DET, ((3, 4, 4),), FLOATS),  # the first matrix holds NaN and infinities
    "Det.2d": Spec(OpType.DET, ((5, 5),), FLOATS, make=finite),
    "Det.empty": Spec(OpType.DET, ((2, 0, 0),), FLOATS),
    **{  # products, a diagonal, a sum, ellipsis broadcasting, implicit outputs, three operands
        f"Einsum.{tag}": Spec(OpType.EINSUM, shapes, (*FLOATS, "int32", "int64"), {"equation": eq})
        for tag, eq, shapes in (
            ("matmul", "ij,jk->ik", ((3, 4), (4, 5))),
            ("batched", "bij,bjk->bik", ((2, 3, 4), (2, 4, 5))),
            ("diagonal", "ii->i", ((4, 4),)),
            ("trace", "ii", ((4, 4),)),
            ("sum", "ij->j", ((3, 5),)),
            ("ellipsis", "...ij,...jk", ((2, 1, 3, 4), (5, 4, 2))),
            ("three", "ij,jk,kl", ((2, 3), (3, 4), (4, 2))),
        )
    },
    "Identity": Spec(OpType.IDENTITY, ((3, 4),), ALL),
    "Copy": Spec(OpType.COPY, ((3, 4),), ALL),
    "Reshape": Spec(OpType.RESHAPE, ((3, 4),), ALL, {"shape": (2, 6)}),
    "Flatten": Spec(OpType.FLATTEN, ((2, 3, 2),), ALL, {"axis": 2}),
    "Transpose": Spec(OpType.TRANSPOSE, ((2, 3, 4),), ALL, {"perm": (1, 2, 0)}),
    "Concat": Spec(OpType.CONCAT, ((2, 3), (2, 1)), ALL, {"axis": 1}),
    **{
        f"Unary.{fn}": Spec(OpType.UNARY, ((3, 5),), dtypes, {"fn": fn})
        for fn, dtypes in UNARY_DTYPES.items()
    },
    **{
        f"Binary.{fn}": Spec(
            OpType.BINARY, ((3, 4), (4,)), dtypes, {"fn": fn}, make=BINARY_MAKE.get(fn)
        )
        for fn, dtypes in BINARY_DTYPES.items()
    },
    "Binary.Mod.fmod": Spec(
        OpType.BINARY, ((3, 4), (4,)), NUMERIC, {"fn": "Mod", "i0": 1}, make=nonzero_divisor
    ),
    "Where": Spec(OpType.WHERE, ((3, 1), (3, 4), (4,)), ALL, input_dtypes=("bool", None, None)),
    **{
        f"Cast.{to}": Spec(OpType.CAST, ((3, 4),), ALL, {"to": to})
        for to in ("float32", "float16", "int32", "int64", "uint8", "bool")
    },
    **{
        f"BitCast.{src}.{to}": Spec(OpType.BITCAST, ((3, 4),), (src,), {"to": to})
        for src, to in BITCASTS
    },
    **{
        f"Reduce.{fn}": Spec(
            OpType.REDUCE, ((2, 3, 4),), NUMERIC, {"fn": fn, "axes": (0, 2), "keepdims": keep}
        )
        for fn, keep in (("ReduceSum", 1), ("ReduceProd", 0), ("ReduceMax", 0), ("ReduceMin", 1))
    },
    "ArgReduce.ArgMax": Spec(
        OpType.ARG_REDUCE, ((3, 4),), NUMERIC, {"fn": "ArgMax", "axis": 1, "keepdims": 0}
    ),
    "ArgReduce.ArgMin.last": Spec(
        OpType.ARG_REDUCE,
        ((3, 4),),
        NUMERIC,
        {"fn": "ArgMin", "axis": 0, "keepdims": 1, "select_last_index": 1},
    ),
    "Gather": Spec(OpType.GATHER, ((5, 3), (2, 2)), ALL, {"axis": 0}, make=in_range(5)),
    "GatherElements": Spec(
        OpType.GATHER_ELEMENTS, ((4, 3), (2, 3)), ALL, {"axis": 0}, make=in_range(4)
    ),
    **{  # every reduction; weighted or not; ignore_index a class, past the classes or none
        f"NegativeLogLikelihoodLoss.{r}.{tag}": Spec(
            OpType.NEGATIVE_LOG_LIKELIHOOD_LOSS,
            ((3, 5, 2, 2), (3, 2, 2), (5,))[:n_in],
            FLOATS,
            {"reduction": r, **({} if ii is None else {"ignore_index": ii})},
            make=classes(5, ii),
            input_dtypes=(None, tdtype, None),
        )
        for r in ("none", "sum", "mean")
        for tag, n_in, ii, tdtype in (
            ("weight", 3, None, "int64"),
            ("ii", 2, 1, "int32"),
            ("weight_ii", 3, 7, "int64"),
        )
    },
    "NegativeLogLikelihoodLoss.k0": Spec(
        OpType.NEGATIVE_LOG_LIKELIHOOD_LOSS,
        ((4, 3), (4,)),
        FLOATS,
        make=classes(3),
        input_dtypes=(None, "int64"),
    ),
    **{  # every reduction; weighted or not; ignore_index a class or none; output and log_prob
        f"SoftmaxCrossEntropyLoss.{r}.{tag}": Spec(
            OpType.SOFTMAX_CROSS_ENTROPY_LOSS,
            ((3, 5, 2, 2), (3, 2, 2), (5,))[:n_in],
            FLOATS,
            {"reduction": r, **({} if ii is None else {"ignore_index": ii})},
            make=classes(5, ii),
            input_dtypes=(None, tdtype, None),
            n_out=2,
        )
        for r in ("none", "sum", "mean")
        for tag, n_in, ii, tdtype in (("weight", 3, None, "int64"), ("ii", 2, 1, "int32"))
    },
    "SoftmaxCrossEntropyLoss.k0": Spec(
        OpType.SOFTMAX_CROSS_ENTROPY_LOSS,
        ((4, 3), (4,)),
        FLOATS,
        make=classes(3),
        input_dtypes=(None, "int64"),
        n_out=2,
    ),
    **ROTARY_EMBEDDING,
    "GatherND": Spec(
        OpType.GATHER_ND, ((2, 4, 3), (2, 5, 1)), ALL, {"batch_dims": 1}, make=in_range(4)
    ),
    **{  # five updates to four rows: a place is always updated more than once
        f"ScatterND.{r}": Spec(
            OpType.SCATTER_ND, ((4, 3), (5, 1), (5, 3)), ALL, {"reduction": r}, make=in_range(4)
        )
        for r in ("none", "add", "mul", "max", "min")
    },
    **{  # indices 5 long on an axis of 3 (negative ones too): places repeat on every row
        f"ScatterElements.{r}": Spec(
            OpType.SCATTER_ELEMENTS,
            ((3, 4), (5, 4), (5, 4)),
            ALL,
            {"axis": 0, "reduction": r},
            make=in_range(3),
        )
        for r in ("none", "add", "mul", "max", "min")
    },
    **{  # lengths from 0 to the whole time axis, on either axis order
        f"ReverseSequence.time{t}": Spec(
            OpType.REVERSE_SEQUENCE,
            ((5, 3, 2), (3,)) if t == 0 else ((3, 5, 2), (3,)),
            ALL,
            {"time_axis": t, "batch_axis": 1 - t},
            make=lengths_within(5),
            input_dtypes=(None, "int64"),
        )
        for t in (0, 1)
    },
    **LINEAR_ATTENTION,
    **RNN,
    **GRU,
    **LSTM,
    **{  # two steps into a cache of 5 from 0 to its end (linear) or past it (circular: wraps)
        f"TensorScatter.{mode}": Spec(
            OpType.TENSOR_SCATTER,
            ((3, 2, 5, 4), (3, 2, 2, 4), (3,)),
            ALL,
            {"axis": 2, "mode": mode},
            make=write_starts(3 if mode == "linear" else 6),
            input_dtypes=(None, None, "int64"),
        )
        for mode in ("linear", "circular")
    },
    "TensorScatter.from0": Spec(OpType.TENSOR_SCATTER, ((2, 6), (2, 6)), ALL, {"axis": 1}),
    "MaxUnpool": Spec(
        OpType.MAXUNPOOL,
        ((2, 3, 2, 3), (2, 3, 2, 3)),
        FLOATS,
        {"kernel_shape": (2, 2), "strides": (2, 2), "output_shape": (2, 3, 5, 6)},
        make=unpool_places(2 * 3 * 5 * 6),
        input_dtypes=(None, "int64"),
    ),
    "MaxUnpool.pads": Spec(
        OpType.MAXUNPOOL,
        ((2, 2, 4), (2, 2, 4)),
        FLOATS,
        {"kernel_shape": (3,), "strides": (2,), "pads": (1, 0)},
        make=unpool_places(2 * 2 * 8),
        input_dtypes=(None, "int64"),
    ),
    "Slice": Spec(
        OpType.SLICE, ((5, 4),), ALL, {"starts": (4, 1), "ends": (-6, 4), "steps": (-2, 2)}
    ),
    "Expand": Spec(OpType.EXPAND, ((3, 1),), ALL, {"shape": (2, 3, 4)}),
    "Tile": Spec(OpType.TILE, ((2, 3),), ALL, {"repeats": (2, 1)}),
    "CumSum": Spec(OpType.CUMSUM, ((3, 4),), NUMERIC, {"axis": 1, "exclusive": 1, "reverse": 1}),
    "CumProd": Spec(OpType.CUMSUM, ((3, 4),), NUMERIC, {"axis": 0, "prod": 1}),
}

#: Evaluators with no device counterpart to compare against, and why.
FOLD_ONLY = {
    OpType.CONSTANT_OF_SHAPE: "its shape input must be a constant, so the node always folds",
    OpType.RANGE: "its output length depends on its input values: folded only",
    OpType.NONZERO: "its output length depends on its input values: folded only",
}


def test_every_evaluator_has_a_differential_spec() -> None:
    from stack.compiler import evaluate_ops

    registered = {op for op in OpType if evaluate.evaluator_for(op) is not None}
    assert registered == {s.op for s in SPECS.values()} | set(FOLD_ONLY)
    assert set(evaluate_ops._UNARY) == set(UNARY_DTYPES)
    assert set(evaluate_ops._BINARY) == set(BINARY_DTYPES)


def test_scatter_nd_folding_declines_indices_out_of_range() -> None:
    """The device kernel reports them (a fault naming the op), not the folder."""
    node = Node.make("n", OpType.SCATTER_ND, ["d", "i", "u"], ["y"], reduction="add")
    fold = evaluate.evaluator_for(OpType.SCATTER_ND)
    assert fold is not None
    data, updates = np.zeros((3, 2), np.float32), np.ones((1, 2), np.float32)
    for bad in (3, -4):
        assert fold(node, [data, np.array([[bad]], np.int64), updates]) is None
    (ok,) = fold(node, [data, np.array([[-3]], np.int64), updates]) or [None]
    np.testing.assert_array_equal(ok, [[1, 1], [0, 0], [0, 0]])


def test_max_unpool_folding_declines_indices_out_of_range() -> None:
    """The device kernel reports them (a fault naming the op), not the folder."""
    node = Node.make("n", OpType.MAXUNPOOL, ["x", "i"], ["y"], kernel_shape=(2,), strides=(2,))
    fold = evaluate.evaluator_for(OpType.MAXUNPOOL)
    assert fold is not None
    x = np.array([[[1.0, 2.0]]], np.float32)
    for bad in (4, -1):
        assert fold(node, [x, np.array([[[0, bad]]], np.int64)]) is None
    (ok,) = fold(node, [x, np.array([[[3, 3]]], np.int64)]) or [None]
    np.testing.assert_array_equal(ok, [[[0, 0, 0, 2]]])


def test_reverse_sequence_folding_declines_lengths_outside_the_time_axis() -> None:
    """The device kernel reports them (a fault naming the op), not the folder."""
    node = Node.make("n", OpType.REVERSE_SEQUENCE, ["x", "l"], ["y"], time_axis=1, batch_axis=0)
    fold = evaluate.evaluator_for(OpType.REVERSE_SEQUENCE)
    assert fold is not None
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    for bad in (4, -1):
        assert fold(node, [x, np.array([1, bad], np.int64)]) is None
    (ok,) = fold(node, [x, np.array([3, 2], np.int64)]) or [None]
    np.testing.assert_array_equal(ok, [[2, 1, 0], [4, 3, 5]])


def test_tensor_scatter_folding_declines_linear_writes_outside_the_cache() -> None:
    """The device kernel reports them (a fault naming the op), not the folder."""
    node = Node.make("n", OpType.TENSOR_SCATTER, ["p", "u", "w"], ["y"], axis=1, mode="linear")
    fold = evaluate.evaluator_for(OpType.TENSOR_SCATTER)
    assert fold is not None
    past, upd = np.zeros((2, 3), np.float32), np.ones((2, 2), np.float32)
    for bad in (2, -1):
        assert fold(node, [past, upd, np.array([0, bad], np.int64)]) is None
    (ok,) = fold(node, [past, upd, np.array([1, 0], np.int64)]) or [None]
    np.testing.assert_array_equal(ok, [[0, 1, 1], [1, 1, 0]])


CASES = [(label, dtype) for label, spec in SPECS.items() for dtype in spec.dtypes]


@pytest.mark.parametrize(("label", "dtype"), CASES, ids=[f"{c}-{d}" for c, d in CASES])
def test_folder_and_device_agree(label: str, dtype: str) -> None:
    spec = SPECS[label]
    op = spec.op
    rng = np.random.default_rng(zlib.crc32(f"{label}-{dtype}".encode()))
    make = spec.make or values
    kinds = [
        np.dtype((spec.input_dtypes[i] if i < len(spec.input_dtypes) else None) or dtype)
        for i in range(len(spec.shapes))
    ]
    arrays = [make(rng, shape, kinds[i], i) for i, shape in enumerate(spec.shapes)]
    names = [f"x{i}" for i in range(len(arrays))]
    outs = ["y", *(f"y{j}" for j in range(1, spec.n_out))]
    node = Node.make("n", op, names, outs, **spec.attrs)
    with np.errstate(all="ignore"):
        result = evaluate.evaluator_for(op)(node, [a.copy() for a in arrays])  # type: ignore[misc]
    assert result is not None, f"the evaluator declined {label}"
    assert len(result) == len(outs)
    types = {
        n: TensorType(ElemType.from_numpy(a.dtype), a.shape)
        for n, a in zip(names, arrays, strict=True)
    }
    graph = Graph("diff", (node,), tuple(names), tuple(outs), types)
    model = CompiledModel(graph, runtime=shared_runtime())
    try:
        ran = model.run(dict(zip(names, arrays, strict=True)))
    finally:
        model.close()
    for name, folded in zip(outs, result, strict=True):
        device = ran[name]
        assert device.dtype == folded.dtype and device.shape == folded.shape
        np.testing.assert_array_equal(device, folded)
