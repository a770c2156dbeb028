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
from tests.stack.compiler.fold_inputs import (
    classes,
    finite,
    in_range,
    kv_lengths,
    lengths_within,
    nonzero_divisor,
    positions,
    rnn_lengths,
    shift_amounts,
    small_exponent,
    unpool_places,
    values,
    write_starts,
)

FLOATS = ("float32", "float16", "float64")
INTS = ("int8", "uint8", "int32", "int64")
ALL = (*FLOATS, *INTS, "bool")


@dataclass(frozen=True)
class Spec:
    """How to exercise one op: input shapes, attributes, the dtypes it takes on the device."""

    op: OpType
    shapes: tuple[tuple[int, ...], ...]
    dtypes: tuple[str, ...]
    attrs: dict[str, Any] = field(default_factory=dict)
    #: input generator override: (rng, shape, dtype, position) -> array
    make: Callable[[np.random.Generator, tuple[int, ...], np.dtype, int], np.ndarray] | None = None
    #: per-input dtype overrides (None: the case's dtype)
    input_dtypes: tuple[str | None, ...] = ()
    #: how many outputs the op has (every one compared)
    n_out: int = 1


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
    **{  # NaN, infinities and signed zeros among the gates and values; alpha 1, fractional, < 0
        f"SwiGLU.{tag}": Spec(OpType.SWIGLU, (shape, shape), FLOATS, {"alpha": alpha})
        for tag, shape, alpha in (
            ("default", (3, 4), 1.0),
            ("alpha", (2, 3, 8), 1.702),
            ("negative", (5,), -0.5),
            ("empty", (0, 3), 1.0),
        )
    },
    **{  # NaN, infinities and signed zeros among the operands; bias and past_state or not
        f"CausalConvWithState.{tag}.{act}": Spec(
            OpType.CAUSAL_CONV_WITH_STATE,
            ((2, 3, 5), (3, 1, k), (3,), (2, 3, k - 1))[:n_in],
            FLOATS,
            {"activation": act},
            n_out=2,
        )
        for tag, n_in, k in (("plain", 2, 4), ("bias", 3, 3), ("bias_past", 4, 4), ("k1", 4, 1))
        for act in ("none", "silu")
    },
    **{  # NaN, infinities and signed zeros among the operands; real and complex, every mode
        f"DFT.{tag}": Spec(
            OpType.DFT,
            (shape,),
            FLOATS,
            {"axis": axis, "inverse": inverse, "onesided": onesided, "dft_length": length},
        )
        for tag, shape, axis, inverse, onesided, length in (
            ("forward", (2, 5, 1), 1, 0, 0, 5),
            ("inverse", (3, 4, 2), 0, 1, 0, 6),
            ("rfft", (2, 3, 7, 1), 2, 0, 1, 7),
            ("irfft", (2, 4, 2), 1, 1, 1, 6),
            ("shorter", (2, 6, 2), 1, 0, 0, 4),
        )
    },
    **{  # NaN, infinities and signed zeros among the operands; real and complex, windowed or not
        f"STFT.{tag}": Spec(
            OpType.STFT,
            shapes,
            FLOATS,
            {"frame_step": step, "frame_length": length, "onesided": onesided},
        )
        for tag, shapes, step, length, onesided in (
            ("real", ((2, 9, 1),), 2, 4, 0),
            ("onesided_window", ((2, 9, 1), (5,)), 3, 5, 1),
            ("complex_window", ((3, 8, 2), (4,)), 4, 4, 0),
            ("complex_onesided", ((1, 7, 2),), 1, 7, 1),
        )
    },
    **{  # NaN, infinities and signed zeros among Q, K, V and a float mask; every output
        f"Attention.{tag}": Spec(
            OpType.ATTENTION,
            shapes,
            FLOATS,
            {
                "is_causal": causal,
                "q_num_heads": hq,
                "kv_num_heads": hkv,
                "qk_matmul_output_mode": mode,
                "softmax_precision": 0,
                "left_window_size": left,
                "right_window_size": -1,
                "scale": 0.35,
                "softcap": softcap,
            },
            make=kv_lengths(5),
            input_dtypes=kinds,
            n_out=4,
        )
        for tag, shapes, kinds, causal, hq, hkv, mode, left, softcap in (
            ("mha", ((2, 3, 4, 8), (2, 3, 6, 8), (2, 3, 6, 8)), (), 0, 3, 3, 0, -1, 0.0),
            (
                "gqa_past_causal",
                ((2, 4, 3, 4), (2, 2, 5, 4), (2, 2, 5, 6), (3, 8), (2, 2, 3, 4), (2, 2, 3, 6)),
                (),
                1,
                4,
                2,
                2,
                -1,
                2.0,
            ),
            (
                "3d_bool_window",
                ((2, 3, 12), (2, 5, 12), (2, 5, 6), (2, 1, 3, 5)),
                (None, None, None, "bool"),
                0,
                3,
                3,
                3,
                1,
                0.0,
            ),
            (
                "nonpad",
                (
                    (2, 2, 3, 4),
                    (2, 2, 5, 4),
                    (2, 2, 5, 4),
                    (3, 5),
                    (2, 2, 0, 4),
                    (2, 2, 0, 4),
                    (2,),
                ),
                (None,) * 6 + ("int64",),
                1,
                2,
                2,
                1,
                -1,
                1.5,
            ),
        )
    },
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
    **{  # 4-D and 3-D X, halves and interleaved, whole and partial heads, with and without ids
        f"RotaryEmbedding.{tag}": Spec(
            OpType.ROTARY_EMBEDDING,
            shapes,
            FLOATS,
            {"interleaved": il, "num_heads": heads, "rotary_embedding_dim": rot},
            make=positions(6),
            input_dtypes=(None, None, None, "int64"),
        )
        for tag, shapes, il, heads, rot in (
            ("4d", ((2, 3, 4, 8), (2, 4, 4), (2, 4, 4)), 0, 0, 0),
            ("4d.ids.interleaved.partial", ((2, 3, 4, 8), (6, 2), (6, 2), (2, 4)), 1, 0, 4),
            ("3d.ids", ((2, 4, 12), (6, 3), (6, 3), (2, 4)), 0, 2, 0),
            ("3d.interleaved.partial", ((2, 4, 12), (2, 4, 1), (2, 4, 1)), 1, 3, 2),
        )
    },
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
    **{  # NaN, infinities and signed zeros among every operand; both outputs, each rule
        f"LinearAttention.{rule}": Spec(
            OpType.LINEAR_ATTENTION,
            (
                (b, t, hq * 4),
                (b, t, hkv * 4),
                (b, t, hkv * 3),
                (b, hkv, 4, 3),
                (b, t, g),
                (b, t, 1),
            )[:n_in],
            ("float32", "float16"),
            {"update_rule": rule, "q_num_heads": hq, "kv_num_heads": hkv, "scale": scale},
            n_out=2,
        )
        for rule, b, t, hq, hkv, g, n_in, scale in (
            ("linear", 2, 3, 2, 2, 2, 3, 0.0),
            ("gated", 2, 3, 4, 2, 8, 5, 0.5),  # past_state, a decay per key
            ("delta", 1, 4, 3, 1, 1, 6, 0.0),  # a decay the rule does not read, one shared beta
            ("gated_delta", 2, 2, 2, 2, 2, 6, -1.25),
        )
    },
    **{  # each direction, both layouts, each operand run, activations with alpha and beta, clip
        f"RNN.{tag}": Spec(
            OpType.RNN,
            (x, (d, 3, 4), (d, 3, 3), (d, 6), (3,), h0)[:n_in],
            FLOATS,
            {
                "direction": direction,
                "layout": layout,
                "activations": acts,
                "activation_alpha": (0.5,) * d,
                "activation_beta": (0.25,) * d,
                **extra,
            },
            make=rnn_lengths(5),
            input_dtypes=(None, None, None, None, "int32"),
            n_out=2,
        )
        for tag, direction, layout, d, n_in, acts, extra in (
            ("forward", "forward", 0, 1, 3, "Tanh", {}),
            ("reverse.lens", "reverse", 0, 1, 5, "Relu", {"clip": 1.5}),
            ("bidirectional.h0", "bidirectional", 0, 2, 6, "Sigmoid,Softplus", {}),
            ("layout1.h0", "bidirectional", 1, 2, 6, "Affine,HardSigmoid", {}),
            ("layout1.bias", "forward", 1, 1, 4, "ScaledTanh", {"clip": 0.5}),
            ("elu.lens", "reverse", 1, 1, 5, "Elu", {}),
            ("leaky", "forward", 0, 1, 6, "LeakyRelu", {}),
            ("thresholded", "bidirectional", 0, 2, 5, "ThresholdedRelu,Softsign", {}),
        )
        for x, h0 in [((5, 3, 4), (d, 3, 3)) if layout == 0 else ((3, 5, 4), (3, d, 3))]
    },
    **{  # RNN's operand runs with W [D, 3H, I], linear_before_reset, two activations per direction
        f"GRU.{tag}": Spec(
            OpType.GRU,
            (x, (d, 9, 4), (d, 9, 3), (d, 18), (3,), h0)[:n_in],
            FLOATS,
            {
                "direction": direction,
                "layout": layout,
                "linear_before_reset": linear,
                "activations": acts,
                "activation_alpha": (0.5,) * 2 * d,
                "activation_beta": (0.25,) * 2 * d,
                **extra,
            },
            make=rnn_lengths(5),
            input_dtypes=(None, None, None, None, "int32"),
            n_out=2,
        )
        for tag, direction, layout, linear, d, n_in, acts, extra in (
            ("forward", "forward", 0, 0, 1, 3, "Sigmoid,Tanh", {}),
            ("reverse.lens", "reverse", 0, 1, 1, 5, "Sigmoid,Relu", {"clip": 1.5}),
            ("bidirectional.h0", "bidirectional", 0, 0, 2, 6, "Sigmoid,Tanh,Softsign,Softplus", {}),
            (
                "layout1.h0",
                "bidirectional",
                1,
                1,
                2,
                6,
                "HardSigmoid,Affine,HardSigmoid,ScaledTanh",
                {},
            ),
            ("layout1.bias", "forward", 1, 0, 1, 4, "HardSigmoid,ScaledTanh", {"clip": 0.5}),
        )
        for x, h0 in [((5, 3, 4), (d, 3, 3)) if layout == 0 else ((3, 5, 4), (3, d, 3))]
    },
    **{  # GRU's operand runs with W [D, 4H, I], initial_c, P, input_forget, three activations
        f"LSTM.{tag}": Spec(
            OpType.LSTM,
            (x, (d, 12, 4), (d, 12, 3), (d, 24), (3,), h0, h0, (d, 9))[:n_in],
            FLOATS,
            {
                "direction": direction,
                "layout": layout,
                "input_forget": coupled,
                "activations": acts,
                "activation_alpha": (0.5,) * 3 * d,
                "activation_beta": (0.25,) * 3 * d,
                **extra,
            },
            make=rnn_lengths(5),
            input_dtypes=(None, None, None, None, "int32"),
            n_out=3,
        )
        for tag, direction, layout, coupled, d, n_in, acts, extra in (
            ("forward", "forward", 0, 0, 1, 3, "Sigmoid,Tanh,Tanh", {}),
            ("reverse.lens", "reverse", 0, 1, 1, 5, "Sigmoid,Relu,Tanh", {"clip": 1.5}),
            (
                "bidirectional.peepholes",
                "bidirectional",
                0,
                0,
                2,
                8,
                "Sigmoid,Tanh,Softsign,Softplus,Tanh,Tanh",
                {},
            ),
            (
                "layout1.c0",
                "bidirectional",
                1,
                1,
                2,
                7,
                "HardSigmoid,Affine,ScaledTanh,HardSigmoid,ScaledTanh,Affine",
                {},
            ),
            (
                "layout1.peepholes",
                "forward",
                1,
                0,
                1,
                8,
                "HardSigmoid,ScaledTanh,Affine",
                {"clip": 0.5},
            ),
        )
        for x, h0 in [((5, 3, 4), (d, 3, 3)) if layout == 0 else ((3, 5, 4), (3, d, 3))]
    },
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
