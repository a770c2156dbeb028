# ruff: noqa: E501 - the case tables read best one case per line
"""Conformance of ATTENTION through the KMD, on every available backend, against a loop over the
query rows written from ONNX's text (float64: each query head h reads key and value head
h // (Hq / Hkv), the logits scaled and softcapped, the bias of the mask, the causal frontier,
the window and the padded keys added, a softmax over the attended keys, a row with none zero),
within float32's, float16's and float64's rounding of the kernel's steps; and bit for bit ONNX's
reference (``onnx.reference``), whose steps the kernel takes: 3-D and 4-D operands, multi-head,
group-query and multi-query heads, bool and additive masks of rank 1 to 4 (and shorter than
the keys), is_causal with and without a past, the windows, nonpad_kv_seqlen, scale, softcap,
every qk_matmul_output_mode, softmax_precision; present_key and present_value the
concatenated cache bit for bit; a fully masked row zero; and the kernel's refusal of operands
of another dtype or shape and of immediates out of range."""

from __future__ import annotations

import math

import numpy as np
import pytest
from onnx.reference.ops.op_attention import _compute_attention

from stack.kmd import KernelId
from stack.kmd.errors import FenceFailedError
from stack.kmd.kernels.attention import DEFAULT_INTS, SoftmaxPrecision

K = KernelId.ATTENTION
RNG = np.random.default_rng(65)
DTYPES = [np.float32, np.float16, np.float64]
TOL = {np.dtype(np.float32): 2e-5, np.dtype(np.float16): 2e-2, np.dtype(np.float64): 1e-12}
F = np.float32


def _heads(t: np.ndarray, n: int) -> np.ndarray:
    return t if t.ndim == 4 else t.reshape(*t.shape[:2], n, -1).transpose(0, 2, 1, 3)


def loop(q, k, v, mask=None, pk=None, pv=None, nonpad=None, causal=0, hq=0, hkv=0, scale=None,
         softcap=0.0, left=-1, right=-1):  # type: ignore[no-untyped-def]  # fmt: skip
    """Y [B, Hq, L, Dv] and the probabilities [B, Hq, L, T], row by row in float64."""
    q4, k4, v4 = _heads(q, hq), _heads(k, hkv), _heads(v, hkv)
    if pk is not None:
        k4, v4 = np.concatenate([pk, k4], axis=2), np.concatenate([pv, v4], axis=2)
    b_n, h_n, length, d = q4.shape
    total, group = k4.shape[2], h_n // k4.shape[1]
    scale = 1 / math.sqrt(d) if scale is None else scale
    y = np.zeros((b_n, h_n, length, v4.shape[3]))
    probs = np.zeros((b_n, h_n, length, total))
    for b, h, i in np.ndindex(b_n, h_n, length):
        offset = (
            int(nonpad[b]) - length
            if nonpad is not None
            else total - k.shape[-2 if k.ndim == 4 else 1]
        )
        row = np.zeros(total)
        for j in range(total):
            x = (
                float(
                    np.dot(q4[b, h, i].astype(np.float64), k4[b, h // group, j].astype(np.float64))
                )
                * scale
            )
            if softcap > 0:
                x = softcap * math.tanh(x / softcap)
            bias = 0.0
            if mask is not None:
                m = np.broadcast_to(mask, (*mask.shape[:-1], mask.shape[-1]))
                m = m.reshape((1,) * (4 - m.ndim) + m.shape)
                cell = m[min(b, m.shape[0] - 1), min(h, m.shape[1] - 1), min(i, m.shape[2] - 1)]
                if j >= cell.shape[0]:
                    bias = -math.inf
                elif mask.dtype == np.bool_:
                    bias = 0.0 if cell[j] else -math.inf
                else:
                    bias = float(cell[j])
            allowed = (not causal or j <= i + offset) and (left < 0 or i + offset - j <= left)
            allowed = allowed and (right < 0 or j - (i + offset) <= right)
            allowed = allowed and (nonpad is None or j < nonpad[b])
            row[j] = x + bias if allowed else -math.inf
        if np.isneginf(row).all():
            continue
        e = np.exp(row - row.max())
        probs[b, h, i] = e / e.sum()
        y[b, h, i] = probs[b, h, i] @ v4[b, h // group].astype(np.float64)
    return y, probs


def run(rig, q, k, v, mask=None, pk=None, pv=None, nonpad=None, ints=(), floats=()):  # type: ignore[no-untyped-def]
    """The kernel's four outputs (a later optional input takes a zero mask or an empty past)."""
    hq, hkv = (q.shape[1], k.shape[1]) if q.ndim == 4 else (ints[1], ints[2])
    q4, k4, v4 = _heads(q, hq), _heads(k, hkv), _heads(v, hkv)
    if nonpad is not None and pk is None:
        pk, pv = (
            np.zeros((*k4.shape[:2], 0, k4.shape[3]), q.dtype),
            np.zeros((*v4.shape[:2], 0, v4.shape[3]), q.dtype),
        )
    total = k4.shape[2] + (pk.shape[2] if pk is not None else 0)
    if mask is None and pk is not None:
        mask = np.zeros((q4.shape[2], total), q.dtype)
    ins = [q, k, v] + [t for t in (mask, pk, pv, nonpad) if t is not None]
    y = (*q.shape[:2], hq * v4.shape[3]) if q.ndim == 3 else (*q4.shape[:3], v4.shape[3])
    outs = [
        y,
        (*k4.shape[:2], total, k4.shape[3]),
        (*v4.shape[:2], total, v4.shape[3]),
        (*q4.shape[:3], total),
    ]
    return rig.run_outputs(K, ins, [(s, q.dtype) for s in outs], ints, floats)


def reference(q, k, v, mask=None, pk=None, pv=None, nonpad=None, ints=(), floats=()):  # type: ignore[no-untyped-def]
    causal, hq, hkv, mode, precision, left, right = (*ints, *DEFAULT_INTS[len(ints) :])
    scale, softcap = (*floats, 0.0, 0.0)[:2]
    return _compute_attention(q, k, v, attn_mask=mask, past_key=pk, past_value=pv, nonpad_kv_seqlen=nonpad,
                              scale=scale or None, is_causal=causal, q_num_heads=hq or None,
                              kv_num_heads=hkv or None, softmax_precision=precision or None,
                              softcap=softcap, qk_matmul_output_mode=mode, left_window_size=left,
                              right_window_size=right, _validate_attention25=False)  # fmt: skip


def operands(q_shape, k_shape, v_shape, dtype=F):  # type: ignore[no-untyped-def]
    return tuple(RNG.standard_normal(s).astype(dtype) for s in (q_shape, k_shape, v_shape))


#: (Q, K, V shapes, q_num_heads, kv_num_heads): multi-head, group-query, multi-query, a
#: larger value head, 3-D multi-head and group-query, one query (decode).
GEOMETRIES = [
    ((2, 3, 4, 8), (2, 3, 6, 8), (2, 3, 6, 8), 0, 0),
    ((2, 6, 4, 8), (2, 2, 6, 8), (2, 2, 6, 8), 0, 0),
    ((1, 4, 3, 4), (1, 1, 5, 4), (1, 1, 5, 4), 0, 0),
    ((2, 2, 4, 8), (2, 2, 6, 8), (2, 2, 6, 10), 0, 0),
    ((2, 4, 24), (2, 6, 24), (2, 6, 24), 3, 3),
    ((2, 4, 72), (2, 6, 24), (2, 6, 30), 9, 3),
    ((3, 2, 1, 8), (3, 2, 7, 8), (3, 2, 7, 8), 0, 0),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("causal", [0, 1], ids=["full", "causal"])
@pytest.mark.parametrize(("qs", "ks", "vs", "hq", "hkv"), GEOMETRIES, ids=str)
def test_attention_matches_the_loop(backend_rig, qs, ks, vs, hq, hkv, causal, dtype) -> None:  # type: ignore[no-untyped-def]
    q, k, v = operands(qs, ks, vs, dtype)
    y, pk, pv, probs = run(backend_rig, q, k, v, ints=(causal, hq, hkv, 3))
    want_y, want_p = loop(q, k, v, causal=causal, hq=hq, hkv=hkv)
    got_y = y if y.ndim == 4 else _heads(y, hq)
    np.testing.assert_allclose(got_y, want_y, rtol=TOL[y.dtype], atol=TOL[y.dtype])
    np.testing.assert_allclose(probs, want_p, rtol=TOL[y.dtype], atol=TOL[y.dtype])
    assert pk.tobytes() == np.ascontiguousarray(_heads(k, hkv)).tobytes()
    assert pv.tobytes() == np.ascontiguousarray(_heads(v, hkv)).tobytes()


MASKS = {
    "float_2d": lambda dt, t: RNG.standard_normal((4, t)).astype(dt),
    "float_4d": lambda dt, t: RNG.standard_normal((2, 3, 4, t)).astype(dt),
    "float_3d_heads": lambda dt, t: RNG.standard_normal((3, 4, t)).astype(dt),
    "float_short": lambda dt, t: RNG.standard_normal((2, 1, 4, t - 2)).astype(dt),
    "bool_2d": lambda dt, t: RNG.random((4, t)) > 0.3,
    "bool_1d": lambda dt, t: RNG.random(t) > 0.3,
    "bool_4d_short": lambda dt, t: RNG.random((2, 3, 4, t - 1)) > 0.3,
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=lambda d: d.__name__)
@pytest.mark.parametrize("causal", [0, 1], ids=["full", "causal"])
@pytest.mark.parametrize("past", [0, 5], ids=["no_past", "past"])
@pytest.mark.parametrize("which", list(MASKS))
def test_masks_and_the_cache_match_the_loop(backend_rig, which, past, causal, dtype) -> None:  # type: ignore[no-untyped-def]
    q, k, v = operands((2, 3, 4, 8), (2, 3, 6, 8), (2, 3, 6, 8), dtype)
    pk, pv = operands((2, 3, past, 8), (2, 3, past, 8), (1,), dtype)[:2] if past else (None, None)
    mask = MASKS[which](dtype, 6 + past)
    y, present_k, _, probs = run(backend_rig, q, k, v, mask, pk, pv, ints=(causal, 0, 0, 3))
    want_y, want_p = loop(q, k, v, mask, pk, pv, causal=causal)
    np.testing.assert_allclose(y, want_y, rtol=TOL[y.dtype], atol=TOL[y.dtype])
    np.testing.assert_allclose(probs, want_p, rtol=TOL[y.dtype], atol=TOL[y.dtype])
    if past:
        assert present_k.tobytes() == np.concatenate([pk, k], axis=2).tobytes()


@pytest.mark.parametrize(
    ("left", "right", "causal", "nonpad"),
    [(2, -1, 1, None), (1, 2, 0, None), (-1, 0, 0, None), (0, 0, 0, None), (-1, -1, 1, (3, 8)),
     (2, -1, 1, (5, 8)), (-1, -1, 1, (2, 1)), (1, 1, 0, (8, 4))],
    ids=["left_causal", "bidirectional", "right_0", "diagonal", "nonpad_causal",
         "nonpad_window", "nonpad_shorter_than_queries", "nonpad_window_full"],
)  # fmt: skip
def test_windows_and_nonpad_match_the_loop(backend_rig, left, right, causal, nonpad) -> None:  # type: ignore[no-untyped-def]
    q, k, v = operands((2, 3, 4, 8), (2, 3, 8, 8), (2, 3, 8, 8))
    lens = None if nonpad is None else np.array(nonpad, np.int64)
    y, _, _, probs = run(backend_rig, q, k, v, nonpad=lens, ints=(causal, 0, 0, 3, 0, left, right))
    want_y, want_p = loop(q, k, v, nonpad=lens, causal=causal, left=left, right=right)
    np.testing.assert_allclose(y, want_y, rtol=2e-5, atol=2e-5)
    np.testing.assert_allclose(probs, want_p, rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize(
    ("ints", "floats", "mask"),
    [((0, 0, 0, 0), (), None), ((0, 0, 0, 1), (0.0, 2.0), "float"), ((1, 0, 0, 2), (0.01,), "float"),
     ((0, 0, 0, 2), (0.0, 0.5), "bool"), ((1, 0, 0, 3), (0.3, 3.0), "bool"), ((0, 0, 0, 3, 11), (), "float"),
     ((1, 0, 0, 3, 10), (), None), ((1, 0, 0, 2, 0, 2, -1), (0.0, 2.0), "float")],
    ids=["raw", "softcap_mode1", "scaled_mode2", "softcap_bool_mode2", "scaled_softcap_mode3",
         "softmax_double", "softmax_half", "window_softcap_mode2"],
)  # fmt: skip
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
def test_bit_for_bit_onnx_s_reference(backend_rig, ints, floats, mask, dtype) -> None:  # type: ignore[no-untyped-def]
    q, k, v = operands((2, 4, 3, 8), (2, 2, 6, 8), (2, 2, 6, 6), dtype)
    m = {
        None: None,
        "float": RNG.standard_normal((3, 6)).astype(dtype),
        "bool": RNG.random((2, 1, 3, 6)) > 0.3,
    }[mask]
    got = run(backend_rig, q, k, v, m, ints=ints, floats=floats)
    want = reference(q, k, v, m, ints=ints, floats=floats)
    if backend_rig.dev.backend == "numpy":
        assert all(g.tobytes() == w.tobytes() for g, w in zip(got, want, strict=True))
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=TOL[g.dtype] * 10, atol=TOL[g.dtype] * 10)


def test_a_fully_masked_row_is_zero(backend_rig) -> None:  # type: ignore[no-untyped-def]
    q, k, v = operands((1, 2, 2, 8), (1, 2, 2, 8), (1, 2, 2, 8))
    mask = np.array([[False, False], [True, False]])
    y, _, _, probs = run(backend_rig, q, k, v, mask, ints=(0, 0, 0, 3))
    assert not y[:, :, 0].any() and not probs[:, :, 0].any()
    np.testing.assert_allclose(y[:, :, 1], v[:, :, 0], rtol=1e-6)
    q[0, 0, 0, 0] = np.nan
    y, *_ = run(backend_rig, q, k, v, mask, ints=(1, 0, 0, 0))
    assert not y[:, :, 0].any()  # the masked row stays zero, its NaN logits unread


def test_the_scale_defaults_to_one_over_the_root_of_the_head_size(backend_rig) -> None:  # type: ignore[no-untyped-def]
    q, k, v = operands((1, 2, 3, 16), (1, 2, 4, 16), (1, 2, 4, 16))
    got, want = run(backend_rig, q, k, v), run(backend_rig, q, k, v, floats=(0.25,))
    assert all(g.tobytes() == w.tobytes() for g, w in zip(got, want, strict=True))


def test_softmax_precision_values_are_onnx_s_codes() -> None:
    assert {p.name: int(p) for p in SoftmaxPrecision} == {
        "SAME": 0,
        "FLOAT": 1,
        "FLOAT16": 10,
        "DOUBLE": 11,
    }


Q4, K4 = np.ones((1, 2, 3, 4), F), np.ones((1, 2, 5, 4), F)


def _outs(y=(1, 2, 3, 4), t=5, dtype=F) -> list:  # type: ignore[no-untyped-def]
    return [(y, dtype), ((1, 2, t, 4), dtype), ((1, 2, t, 4), dtype), ((1, 2, 3, t), dtype)]


@pytest.mark.parametrize(
    ("ins", "outs", "ints", "floats", "message"),
    [
        ([Q4.astype(np.int32), K4.astype(np.int32), K4.astype(np.int32)], _outs(dtype=np.int32), (), (), r"Q int32\(1, 2, 3, 4\) is not a float"),
        ([np.ones((2, 3), F), K4, K4], _outs(), (), (), r"Q float32\(2, 3\)"),
        ([Q4, K4.astype(np.float64), K4], _outs(), (), (), r"K float64\(1, 2, 5, 4\) does not go with Q"),
        ([Q4, np.ones((1, 3, 5, 4), F), np.ones((1, 3, 5, 4), F)], _outs(), (), (), r"do not serve Q"),
        ([Q4, np.ones((1, 2, 5, 3), F), K4], _outs(), (), (), r"do not serve Q"),
        ([np.ones((1, 3, 8), F), np.ones((1, 5, 8), F), np.ones((1, 5, 8), F)], _outs(y=(1, 3, 8)), (0, 3, 2), (), r"heads 3 / 2 do not split"),
        ([Q4, K4, K4], _outs(y=(1, 2, 3, 5)), (), (), r"Y float32\(1, 2, 3, 5\) is not float32\(1, 2, 3, 4\)"),
        ([Q4, K4, K4], _outs(t=6), (), (), r"present_key float32\(1, 2, 6, 4\)"),
        ([Q4, K4, K4, np.ones((3, 6), F)], _outs(), (), (), r"attn_mask float32\(3, 6\) is not bool or float32 of at most 5 keys"),
        ([Q4, K4, K4, np.ones((), F)], _outs(), (), (), r"attn_mask float32\(\)"),
        ([Q4, K4, K4, np.ones((3, 5), np.int32)], _outs(), (), (), r"attn_mask int32"),
        ([Q4, K4, K4, np.ones((3, 5), F), np.ones((1, 2, 1, 4), F), np.ones((1, 2, 2, 4), F)], _outs(t=6), (), (), r"past_value float32\(1, 2, 2, 4\)"),
        ([Q4, K4, K4, np.ones((3, 5), F), np.ones((1, 2, 0, 4), F), np.ones((1, 2, 0, 4), F), np.ones(2, np.int64)], _outs(), (), (), r"nonpad_kv_seqlen int64\(2,\) is not an integer \[1\]"),
        ([Q4, K4, K4, np.ones((3, 6), F), np.ones((1, 2, 1, 4), F), np.ones((1, 2, 1, 4), F), np.ones(1, np.int64)], _outs(t=6), (), (), r"without a past"),
        ([Q4, K4, K4], _outs(), (2,), (), r"immediates \(2, "),
        ([Q4, K4, K4], _outs(), (0, 0, 0, 4), (), r"immediates"),
        ([Q4, K4, K4], _outs(), (0, 0, 0, 0, 16), (), r"immediates"),
        ([Q4, K4, K4], _outs(), (0, 0, 0, 0, 0, -2), (), r"window \(-2, -1\)"),
        ([Q4, K4, K4], _outs(), (), (-1.0,), r"scale -1.0 out of range"),
    ],
    ids=["int Q", "rank 2 Q", "K dtype", "heads not dividing", "head sizes", "3-D heads",
         "Y shape", "present_key shape", "mask too long", "0-d mask", "mask dtype", "past_value shape",
         "nonpad shape", "nonpad with a past", "is_causal 2", "mode 4", "precision bfloat16",
         "window -2", "negative scale"],
)  # fmt: skip
def test_operands_that_do_not_fit_are_a_fault(rig, ins, outs, ints, floats, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(FenceFailedError, match=message):
        rig.run_outputs(K, ins, outs, ints, floats)
