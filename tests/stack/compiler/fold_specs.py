"""The per-op cases of the fold differential test: Spec and the multi-case op families.

``test_fold_differential.py`` assembles these with its one-case ops into ``SPECS``; each
family table here is keyed by the test id it gives (``RNN.forward``, ``DFT.rfft``, ...).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from stack.compiler import OpType
from tests.stack.compiler.fold_inputs import kv_lengths, positions, rnn_lengths

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


#: NaN, infinities and signed zeros among the gates and values; alpha 1, fractional, < 0
SWIGLU: dict[str, Spec] = {
    f"SwiGLU.{tag}": Spec(OpType.SWIGLU, (shape, shape), FLOATS, {"alpha": alpha})
    for tag, shape, alpha in (
        ("default", (3, 4), 1.0),
        ("alpha", (2, 3, 8), 1.702),
        ("negative", (5,), -0.5),
        ("empty", (0, 3), 1.0),
    )
}


#: NaN, infinities and signed zeros among the operands; bias and past_state or not
CAUSAL_CONV_WITH_STATE: dict[str, Spec] = {
    f"CausalConvWithState.{tag}.{act}": Spec(
        OpType.CAUSAL_CONV_WITH_STATE,
        ((2, 3, 5), (3, 1, k), (3,), (2, 3, k - 1))[:n_in],
        FLOATS,
        {"activation": act},
        n_out=2,
    )
    for tag, n_in, k in (("plain", 2, 4), ("bias", 3, 3), ("bias_past", 4, 4), ("k1", 4, 1))
    for act in ("none", "silu")
}


#: NaN, infinities and signed zeros among the operands; real and complex, every mode
DFT: dict[str, Spec] = {
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
}


#: NaN, infinities and signed zeros among the operands; real and complex, windowed or not
STFT: dict[str, Spec] = {
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
}


#: NaN, infinities and signed zeros among Q, K, V and a float mask; every output
ATTENTION: dict[str, Spec] = {
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
}


#: 4-D and 3-D X, halves and interleaved, whole and partial heads, with and without ids
ROTARY_EMBEDDING: dict[str, Spec] = {
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
}


#: NaN, infinities and signed zeros among every operand; both outputs, each rule
LINEAR_ATTENTION: dict[str, Spec] = {
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
}


#: each direction, both layouts, each operand run, activations with alpha and beta, clip
RNN: dict[str, Spec] = {
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
}


#: RNN's operand runs with W [D, 3H, I], linear_before_reset, two activations per direction
GRU: dict[str, Spec] = {
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
}


#: GRU's operand runs with W [D, 4H, I], initial_c, P, input_forget, three activations
LSTM: dict[str, Spec] = {
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
}
