"""Linear attention with its recurrent state (ONNX LinearAttention, opset 27) for any ``xp``:
LINEAR_ATTENTION.

query is [B, T, Hq * Dk], key [B, T, Hkv * Dk] and value [B, T, Hkv * Dv], float16 or float32
of one dtype, split into heads by the int immediates ``q_num_heads`` and ``kv_num_heads`` (Hkv
dividing Hq: each key and value head, and its state, serves Hq / Hkv query heads in turn). The
optional inputs form a trailing run in ONNX's order: past_state [B, Hkv, Dk, Dv] (float16 or
float32, its own dtype), decay [B, T, Hkv] or [B, T, Hkv * Dk] (the log-space gate) and beta
[B, T, Hkv] or [B, T, 1] (the update rate), both of query's dtype. The int immediate
``update_rule`` (:class:`LinearUpdateRule`) picks the recurrence; a gated rule needs decay, a
delta one beta, and a rule that does not read an input ignores it (the compiler's filler). Two
outputs, both always written: output [B, T, Hq * Dv] of query's dtype and present_state
[B, Hkv, Dk, Dv] of past_state's dtype (query's without one).

The computation is ONNX's reference step by step in float32: the state (past_state, else zeros)
per token t is multiplied by exp(decay_t) (gated rules), the value replaced by
beta_t * (v_t - S^T k_t) (delta rules), the outer product k_t v_t^T added, and o_t = scale *
q_t^T S read through each query head's key and value head; ``scale`` 0 means 1 / sqrt(Dk).
Operands of another dtype or shape, or immediates out of range, are a kernel fault (a
ValueError).
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from stack.kmd.kernels.ids import KernelId


class LinearUpdateRule(enum.IntEnum):
    """LINEAR_ATTENTION's ``update_rule`` (its first int immediate), ONNX's names in ONNX's
    order. Values are ABI."""

    LINEAR = 0
    GATED = 1
    DELTA = 2
    GATED_DELTA = 3


#: The int immediates' defaults: update_rule (ONNX's gated_delta), q_num_heads, kv_num_heads.
DEFAULT_INTS = (int(LinearUpdateRule.GATED_DELTA), 0, 0)

_OPERANDS = ("query", "key", "value", "past_state", "decay", "beta")


class OperandError(ValueError):
    """An operand of LINEAR_ATTENTION that does not fit: ``index`` is its place among the
    inputs (ONNX's order)."""

    def __init__(self, index: int, why: str) -> None:
        super().__init__(f"LinearAttention {_OPERANDS[index]} {why}")
        self.index = index


def shapes(
    dims: Sequence[tuple[int, ...]], hq: int, hkv: int
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(output, present_state) shapes for the inputs' shapes ``dims`` (query, key, value and the
    present optional ones) and the head counts; an OperandError names the input that does not
    fit."""
    q, k, v = dims[:3]
    if len(q) != 3 or hq < 1 or hkv < 1 or hq % hkv or q[2] % hq:
        raise OperandError(0, f"{q} is not [B, T, {hq} * Dk] for {hkv} kv heads dividing {hq}")
    b, t, dk = q[0], q[1], q[2] // hq
    if k != (b, t, hkv * dk):
        raise OperandError(1, f"{k} is not {(b, t, hkv * dk)}")
    if len(v) != 3 or v[:2] != (b, t) or v[2] % hkv:
        raise OperandError(2, f"{v} is not [{b}, {t}, {hkv} * Dv]")
    state = (b, hkv, dk, v[2] // hkv)
    if len(dims) > 3 and dims[3] != state:
        raise OperandError(3, f"{dims[3]} is not {state}")
    if len(dims) > 4 and dims[4] not in ((b, t, hkv), (b, t, hkv * dk)):
        raise OperandError(4, f"{dims[4]} is not {(b, t, hkv)} or {(b, t, hkv * dk)}")
    if len(dims) > 5 and dims[5] not in ((b, t, hkv), (b, t, 1)):
        raise OperandError(5, f"{dims[5]} is not {(b, t, hkv)} or {(b, t, 1)}")
    return (b, t, hq * state[3]), state


def _heads(xp: Any, x: Any, n: int) -> Any:
    """[B, T, n * D] as float32 [B, n, T, D]."""
    b, t, hidden = x.shape
    return x.reshape(b, t, n, hidden // n).transpose(0, 2, 1, 3).astype(np.float32)


def _check(ins: list[Any], outs: list[Any], ints: tuple[int, ...]) -> LinearUpdateRule:
    if ints[0] not in set(LinearUpdateRule):
        raise ValueError(f"LinearAttention update_rule {ints[0]} out of range")
    rule = LinearUpdateRule(ints[0])
    gated = rule in (LinearUpdateRule.GATED, LinearUpdateRule.GATED_DELTA)
    need = 6 if rule >= LinearUpdateRule.DELTA else 5 if gated else 3
    if not need <= len(ins) <= 6 or len(outs) != 2:
        raise ValueError(f"LinearAttention {rule.name} takes {need}..6 inputs and 2 outputs, "
                         f"got {len(ins)} and {len(outs)}")  # fmt: skip
    out, state = shapes([tuple(x.shape) for x in ins], ints[1], ints[2])
    q = ins[0]
    s_dtype = ins[3].dtype if len(ins) > 3 else q.dtype
    for j, dt in ((0, q.dtype), (3, s_dtype)):
        if dt not in (np.float16, np.float32):
            raise OperandError(j, f"{dt} is not float16 or float32")
    for j, x in enumerate(ins):
        if x.dtype != (s_dtype if j == 3 else q.dtype):
            raise OperandError(j, f"{x.dtype} does not go with query {q.dtype}")
    want = (q.dtype, out, s_dtype, state)
    if (outs[0].dtype, outs[0].shape, outs[1].dtype, outs[1].shape) != want:
        raise ValueError(f"LinearAttention outputs {outs[0].dtype}{outs[0].shape}, "
                         f"{outs[1].dtype}{outs[1].shape} are not {q.dtype}{out}, "
                         f"{s_dtype}{state}")  # fmt: skip
    return rule


def linear_attention(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """output and present_state of query, key, value and the optional past_state, decay and
    beta; ints: update_rule, q_num_heads, kv_num_heads; floats: scale (0: 1 / sqrt(Dk)).
    Operands or immediates that do not fit: ValueError."""
    ints = (*ints, *DEFAULT_INTS[len(ints) :])
    rule = _check(ins, outs, ints)
    hq, hkv = ints[1], ints[2]
    q4, k4, v4 = _heads(xp, ins[0], hq), _heads(xp, ins[1], hkv), _heads(xp, ins[2], hkv)
    b, _, t, dk = q4.shape
    dv = v4.shape[3]
    state = ins[3].astype(np.float32) if len(ins) > 3 else xp.zeros((b, hkv, dk, dv), np.float32)
    gated = rule in (LinearUpdateRule.GATED, LinearUpdateRule.GATED_DELTA)
    decay = (
        ins[4].reshape(b, t, hkv, -1).transpose(0, 2, 1, 3).astype(np.float32) if gated else None
    )
    delta = rule in (LinearUpdateRule.DELTA, LinearUpdateRule.GATED_DELTA)
    beta = ins[5].reshape(b, t, -1, 1).transpose(0, 2, 1, 3).astype(np.float32) if delta else None
    scale = float(fl[0]) if fl and fl[0] != 0.0 else 1.0 / math.sqrt(dk)
    group = hq // hkv
    y = xp.zeros((b, hq, t, dv), np.float32)
    with np.errstate(all="ignore"):  # IEEE results (overflow, inf - inf) are the answer
        for i in range(t):
            k_t, v_t = k4[:, :, i, :], v4[:, :, i, :]
            if decay is not None:
                state = state * xp.exp(decay[:, :, i, :])[..., None]
            if beta is not None:
                v_t = beta[:, :, i, :] * (v_t - xp.einsum("bhdm,bhd->bhm", state, k_t))
            state = state + k_t[..., :, None] * v_t[..., None, :]
            read = state if group == 1 else xp.repeat(state, group, axis=1)
            prod = xp.einsum("bhd,bhdm->bhm", q4[:, :, i, :], read)
            y[:, :, i, :] = scale * prod.astype(np.float64)  # rounded once, as ONNX's reference
    xp.copyto(outs[0], y.transpose(0, 2, 1, 3).reshape(outs[0].shape), casting="unsafe")
    xp.copyto(outs[1], state, casting="unsafe")


TABLE = {KernelId.LINEAR_ATTENTION: linear_attention}
