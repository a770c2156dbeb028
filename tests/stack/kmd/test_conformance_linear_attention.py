# ruff: noqa: E501 - the case tables read best one case per line
"""Conformance of LINEAR_ATTENTION through the KMD, on every available backend, against a loop
over tokens and heads written from ONNX's text in float64 (each query head h reads the state of
key and value head h // (Hq / Hkv); gated rules scale the state by exp(decay), delta ones
replace the value by beta (v - S^T k); o_t = scale q_t^T S_t), within float32's and float16's
rounding; and bit for bit ONNX's reference (``onnx.reference``) on NumPy, whose steps the kernel
takes: every update rule, multi-head, group-query and multi-query heads, per-head and per-key
decay, per-head and shared beta, with and without past_state (float32 beside float16
activations too), decode and prefill, the default and an explicit scale; a prefill then a decode
step carrying present_state; and the kernel's refusal of operands of another dtype or shape and
of immediates out of range."""

from __future__ import annotations

import math

import numpy as np
import onnx
import pytest
from onnx import helper
from onnx.reference import ReferenceEvaluator

from stack.kmd import KernelId
from stack.kmd.errors import FenceFailedError
from stack.kmd.kernels.linear_attention import DEFAULT_INTS, LinearUpdateRule

K = KernelId.LINEAR_ATTENTION
RNG = np.random.default_rng(68)
F, H = np.float32, np.float16
TOL = {np.dtype(F): 2e-5, np.dtype(H): 2e-2}
RULES = [r.name.lower() for r in LinearUpdateRule]


def operands(
    rule,
    b=2,
    t=3,
    hq=2,
    hkv=2,
    dk=4,
    dv=3,
    dtype=F,
    past=True,
    per_key=False,
    beta1=False,
    state_dtype=None,
):  # type: ignore[no-untyped-def]
    """query, key, value, past_state, decay and beta (None where the rule does not read one)."""
    q = RNG.standard_normal((b, t, hq * dk)).astype(dtype)
    k = (RNG.standard_normal((b, t, hkv * dk)) / math.sqrt(dk)).astype(dtype)
    v = RNG.standard_normal((b, t, hkv * dv)).astype(dtype)
    state = RNG.standard_normal((b, hkv, dk, dv)).astype(state_dtype or dtype) if past else None
    gated, delta = "gated" in rule, "delta" in rule
    decay = -RNG.random((b, t, hkv * (dk if per_key else 1))).astype(dtype) if gated else None
    beta = RNG.random((b, t, 1 if beta1 else hkv)).astype(dtype) if delta else None
    return q, k, v, state, decay, beta


def reference(rule, ins, hq, hkv, scale=0.0):  # type: ignore[no-untyped-def]
    """ONNX's reference implementation's output and present_state."""
    names = ["query", "key", "value", "past_state", "decay", "beta"]
    node = helper.make_node(
        "LinearAttention",
        [n if x is not None else "" for n, x in zip(names, ins, strict=True)],
        ["output", "present_state"],
        q_num_heads=hq,
        kv_num_heads=hkv,
        update_rule=rule,
        scale=scale,
    )
    feeds = {n: x for n, x in zip(names, ins, strict=True) if x is not None}
    graph = helper.make_graph(
        [node],
        "g",
        [
            helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(x.dtype), x.shape)
            for n, x in feeds.items()
        ],
        [
            helper.make_tensor_value_info(n, onnx.TensorProto.UNDEFINED, None)
            for n in ("output", "present_state")
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 27)])
    return ReferenceEvaluator(model).run(None, feeds)


def loop(rule, ins, hq, hkv, scale=0.0):  # type: ignore[no-untyped-def]
    """output [B, T, Hq * Dv] and present_state, token by token and head by head in float64."""
    q, k, v, past, decay, beta = (None if x is None else x.astype(np.float64) for x in ins)
    b_n, t_n, _ = q.shape
    dk, dv = q.shape[2] // hq, v.shape[2] // hkv
    scale = scale or 1 / math.sqrt(dk)
    state = past.copy() if past is not None else np.zeros((b_n, hkv, dk, dv))
    y = np.zeros((b_n, t_n, hq, dv))
    for b, t in np.ndindex(b_n, t_n):
        for h in range(hkv):
            s = state[b, h]
            kt, vt = k[b, t, h * dk : (h + 1) * dk], v[b, t, h * dv : (h + 1) * dv]
            if decay is not None:
                g = decay[b, t, h] if decay.shape[2] == hkv else decay[b, t, h * dk : (h + 1) * dk]
                s = s * np.exp(g).reshape(-1, 1)
            if beta is not None:
                vt = beta[b, t, h if beta.shape[2] == hkv else 0] * (vt - s.T @ kt)
            state[b, h] = s + np.outer(kt, vt)
        for h in range(hq):
            y[b, t, h] = scale * (q[b, t, h * dk : (h + 1) * dk] @ state[b, h // (hq // hkv)])
    return y.reshape(b_n, t_n, -1), state


def run(rig, rule, ins, hq, hkv, scale=None):  # type: ignore[no-untyped-def]
    """The kernel's output and present_state: the trailing run of the present inputs, a zero
    past_state or decay before a later one."""
    q, _, v, past, decay, beta = ins
    b, t, _ = q.shape
    dk, dv = q.shape[2] // hq, v.shape[2] // hkv
    s_dtype = past.dtype if past is not None else q.dtype
    if past is None and (decay is not None or beta is not None):
        past = np.zeros((b, hkv, dk, dv), q.dtype)
    if decay is None and beta is not None:
        decay = np.zeros((b, t, hkv), q.dtype)
    given = [x for x in (*ins[:3], past, decay, beta) if x is not None]
    outs = [((b, t, hq * dv), q.dtype), ((b, hkv, dk, dv), s_dtype)]
    floats = () if scale is None else (scale,)
    return rig.run_outputs(K, given, outs, (int(LinearUpdateRule[rule.upper()]), hq, hkv), floats)


HEADS = [(2, 2), (4, 2), (4, 1), (1, 1)]


@pytest.mark.parametrize("dtype", [F, H], ids=lambda d: d.__name__)
@pytest.mark.parametrize("past", [True, False], ids=["past", "no_past"])
@pytest.mark.parametrize(("hq", "hkv"), HEADS, ids=str)
@pytest.mark.parametrize("rule", RULES)
def test_linear_attention_matches_the_loop(backend_rig, rule, hq, hkv, past, dtype) -> None:  # type: ignore[no-untyped-def]
    ins = operands(rule, hq=hq, hkv=hkv, dtype=dtype, past=past)
    y, state = run(backend_rig, rule, ins, hq, hkv)
    want_y, want_state = loop(rule, ins, hq, hkv)
    assert y.dtype == dtype and state.dtype == dtype
    np.testing.assert_allclose(y, want_y, rtol=TOL[y.dtype], atol=TOL[y.dtype])
    np.testing.assert_allclose(state, want_state, rtol=TOL[y.dtype], atol=TOL[y.dtype])


@pytest.mark.parametrize(
    ("rule", "shape", "options"),
    [
        ("gated_delta", dict(hq=4, hkv=2), dict(per_key=True)),
        ("gated_delta", dict(hq=2, hkv=2), dict(beta1=True)),
        ("gated", dict(hq=2, hkv=2, t=1), dict(per_key=True, past=False)),
        ("delta", dict(hq=3, hkv=1, t=5), dict(beta1=True)),
        ("linear", dict(hq=2, hkv=2, t=1), dict(past=False)),
        ("gated_delta", dict(hq=2, hkv=1), dict(dtype=H, state_dtype=F)),
        ("linear", dict(hq=2, hkv=2), dict(dtype=F, state_dtype=H)),
    ],
    ids=["per_key_decay_gqa", "shared_beta", "decode_no_past", "delta_mqa_prefill", "linear_decode", "f32_state_f16", "f16_state_f32"],
)  # fmt: skip
@pytest.mark.parametrize("scale", [None, float(np.float32(0.3))])  # ONNX attributes are float32
def test_bit_for_bit_onnx_s_reference(rig, rule, shape, options, scale) -> None:  # type: ignore[no-untyped-def]
    """On NumPy the kernel's result is the reference's, bit for bit (ONNX's scale 0 is the
    default, as the immediate's)."""
    ins = operands(rule, **shape, **options)
    got = run(rig, rule, ins, shape["hq"], shape["hkv"], scale)
    want = reference(rule, ins, shape["hq"], shape["hkv"], scale or 0.0)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
        assert g.tobytes() == w.tobytes()


def test_a_prefill_then_a_decode_step_is_one_prefill(backend_rig) -> None:  # type: ignore[no-untyped-def]
    q, k, v, past, decay, beta = operands("gated_delta", t=4, hq=4, hkv=2)
    whole, whole_state = run(backend_rig, "gated_delta", (q, k, v, past, decay, beta), 4, 2)
    first, state = run(
        backend_rig,
        "gated_delta",
        (q[:, :3], k[:, :3], v[:, :3], past, decay[:, :3], beta[:, :3]),
        4,
        2,
    )
    step, step_state = run(
        backend_rig,
        "gated_delta",
        (q[:, 3:], k[:, 3:], v[:, 3:], state, decay[:, 3:], beta[:, 3:]),
        4,
        2,
    )
    np.testing.assert_allclose(np.concatenate([first, step], axis=1), whole, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(step_state, whole_state, rtol=1e-5, atol=1e-6)


def test_the_immediates_default_to_onnx_s_gated_delta() -> None:
    assert (int(LinearUpdateRule.GATED_DELTA), 0, 0) == DEFAULT_INTS
    assert [r.name.lower() for r in LinearUpdateRule] == ["linear", "gated", "delta", "gated_delta"]
    assert [int(r) for r in LinearUpdateRule] == [0, 1, 2, 3]


def _ins(t: int = 2, dtype=F) -> list:  # type: ignore[no-untyped-def]
    return [np.ones((1, t, 4), dtype), np.ones((1, t, 4), dtype), np.ones((1, t, 6), dtype)]


_OUTS = [((1, 2, 6), F), ((1, 2, 2, 3), F)]


@pytest.mark.parametrize(
    ("ins", "outs", "ints", "message"),
    [
        (_ins(dtype=np.float64), [((1, 2, 6), np.float64), ((1, 2, 2, 3), np.float64)], (0, 2, 2), r"query float64 is not float16 or float32"),
        ([*_ins(), np.ones((1, 2, 2, 3), np.float64)], [((1, 2, 6), F), ((1, 2, 2, 3), np.float64)], (0, 2, 2), r"past_state float64 is not float16 or float32"),
        (_ins(), _OUTS, (4, 2, 2), "update_rule 4 out of range"),
        (_ins(), _OUTS, (1, 2, 2), r"GATED takes 5..6 inputs"),
        (_ins(), _OUTS, (2, 2, 2), r"DELTA takes 6..6 inputs"),
        (_ins(), _OUTS, (0, 3, 2), r"query \(1, 2, 4\) is not \[B, T, 3 \* Dk\]"),
        (_ins(), _OUTS, (0, 2, 0), r"for 0 kv heads"),
        ([*_ins()[:2], np.ones((1, 2, 5), F)], _OUTS, (0, 2, 2), r"value \(1, 2, 5\)"),
        ([np.ones((1, 2, 4), F), np.ones((1, 3, 4), F), np.ones((1, 2, 6), F)], _OUTS, (0, 2, 2), r"key \(1, 3, 4\) is not \(1, 2, 4\)"),
        ([*_ins(), np.ones((1, 2, 3, 2), F)], _OUTS, (0, 2, 2), r"past_state \(1, 2, 3, 2\) is not \(1, 2, 2, 3\)"),
        ([*_ins(), np.ones((1, 2, 2, 3), F), np.ones((1, 2, 3), F)], _OUTS, (1, 2, 2), r"decay \(1, 2, 3\)"),
        ([*_ins(), np.ones((1, 2, 2, 3), F), np.ones((1, 2, 2), F), np.ones((1, 2, 4), F)], _OUTS, (3, 2, 2), r"beta \(1, 2, 4\)"),
        ([*_ins()[:2], np.ones((1, 2, 6), H)], _OUTS, (0, 2, 2), r"value float16 does not go with query float32"),
        (_ins(), [((1, 2, 6), H), ((1, 2, 2, 3), F)], (0, 2, 2), r"outputs float16\(1, 2, 6\)"),
        (_ins(), [((1, 2, 6), F), ((1, 2, 3, 3), F)], (0, 2, 2), r"\(1, 2, 3, 3\) are not"),
    ],
    ids=["float64", "float64 state", "rule 4", "gated without decay", "delta without beta", "heads do not split", "no kv heads", "value shape",
         "key shape", "past_state shape", "decay shape", "beta shape", "value dtype", "output dtype", "present_state shape"],
)  # fmt: skip
def test_operands_that_do_not_fit_are_a_fault(rig, ins, outs, ints, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(FenceFailedError, match=message):
        rig.run_outputs(K, ins, outs, ints)
