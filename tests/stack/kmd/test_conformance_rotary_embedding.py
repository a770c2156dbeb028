# ruff: noqa: E501 - the case tables read best one case per line
"""Conformance of ROTARY_EMBEDDING through the KMD, on every available backend, against a
straightforward loop over the batch, sequence places, heads and angle indices (the rotation of
each pair in float64 on the very values the kernel reads, rounded once to the dtype, so the
kernel must match it bit for bit): 4-D [B, H, S, D] and 3-D [B, S, H * D] X, halves and
interleaved pairs, the whole head or only its first R channels, with and without position_ids,
float32, float16 and float64; the channels past R copied exactly, NaN and infinity, empty
batches and sequences; and the kernel's refusal of a position id out of range and of operands
that do not fit."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from stack.kmd import KernelId
from stack.kmd.errors import FenceFailedError

K = KernelId.ROTARY_EMBEDDING
RNG = np.random.default_rng(59)
DTYPES = [np.float32, np.float16, np.float64]


def reference(
    x: np.ndarray,
    cos: np.ndarray,
    sin: np.ndarray,
    pos: np.ndarray | None,
    interleaved: int,
    num_heads: int,
    rot: int,
) -> np.ndarray:
    """Y place by place: each pair of the first R channels of each head rotated, the rest
    copied; X's own layout, read through explicit indices."""
    y = x.copy()
    if x.ndim == 4:
        b_n, h_n, s_n, d = x.shape
    else:
        b_n, s_n, hidden = x.shape
        h_n, d = num_heads, hidden // num_heads
    rot = rot or d
    half = rot // 2

    def at(b: int, s: int, h: int, c: int) -> tuple[int, ...]:
        return (b, h, s, c) if x.ndim == 4 else (b, s, h * d + c)

    for b in range(b_n):
        for s in range(s_n):
            for k in range(half):
                row = (int(pos[b, s]), k) if pos is not None else (b, s, k)
                c, sn = float(cos[row]), float(sin[row])
                for h in range(h_n):
                    i1, i2 = (2 * k, 2 * k + 1) if interleaved else (k, half + k)
                    x1, x2 = float(x[at(b, s, h, i1)]), float(x[at(b, s, h, i2)])
                    y[at(b, s, h, i1)] = c * x1 - sn * x2
                    y[at(b, s, h, i2)] = sn * x1 + c * x2
    return y


def operands(
    shape: tuple[int, ...], num_heads: int, rot: int, positions: int | None, dtype: Any
) -> list[np.ndarray]:
    """X of ``shape``, caches of random angles ([positions, R/2] and ids, or [B, S, R/2])."""
    b, s = (shape[0], shape[2]) if len(shape) == 4 else shape[:2]
    d = shape[3] if len(shape) == 4 else shape[2] // num_heads
    half = (rot or d) // 2
    x = RNG.standard_normal(shape).astype(dtype)
    rows = (positions, half) if positions is not None else (b, s, half)
    theta = RNG.uniform(-np.pi, np.pi, rows)
    ins = [x, np.cos(theta).astype(dtype), np.sin(theta).astype(dtype)]
    if positions is not None:
        ins.append(RNG.integers(0, positions, (b, s)).astype(np.int64))
    return ins


def run(rig, ins, interleaved, num_heads, rot):  # type: ignore[no-untyped-def]
    return rig.run(K, ins, ins[0].shape, ins[0].dtype, ints=(interleaved, num_heads, rot))


CASES = [
    ((2, 3, 5, 8), 0, 0),
    ((1, 2, 4, 6), 0, 4),
    ((2, 1, 3, 10), 0, 2),
    ((2, 5, 12), 3, 0),
    ((1, 4, 16), 2, 6),
    ((3, 2, 4), 1, 0),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("positions", [None, 7], ids=["no ids", "ids"])
@pytest.mark.parametrize("interleaved", [0, 1], ids=["halves", "interleaved"])
@pytest.mark.parametrize(("shape", "num_heads", "rot"), CASES, ids=str)
def test_rotary_embedding_matches_the_loop_bit_for_bit(  # type: ignore[no-untyped-def]
    backend_rig, shape, num_heads, rot, interleaved, positions, dtype
) -> None:
    ins = operands(shape, num_heads, rot, positions, dtype)
    got = run(backend_rig, ins, interleaved, num_heads, rot)
    want = reference(*ins[:3], ins[3] if len(ins) > 3 else None, interleaved, num_heads, rot)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_a_4d_x_ignores_num_heads(backend_rig) -> None:  # type: ignore[no-untyped-def]
    ins = operands((1, 2, 3, 4), 0, 0, None, np.float32)
    np.testing.assert_array_equal(run(backend_rig, ins, 0, 5, 0), run(backend_rig, ins, 0, 0, 0))


def test_the_channels_past_the_rotary_dim_are_copied(backend_rig) -> None:  # type: ignore[no-untyped-def]
    ins = operands((2, 2, 3, 8), 0, 2, 4, np.float16)
    ins[0][..., 2:] = np.array([np.nan, np.inf, -np.inf, -0.0, 65504, 1e-7], np.float16)
    y = run(backend_rig, ins, 1, 0, 2)
    assert y[..., 2:].tobytes() == ins[0][..., 2:].tobytes()


def test_zero_angles_are_the_identity_and_a_quarter_turn_swaps(backend_rig) -> None:  # type: ignore[no-untyped-def]
    x = RNG.standard_normal((1, 1, 2, 4)).astype(np.float32)
    ones, zeros = np.ones((1, 2, 2), np.float32), np.zeros((1, 2, 2), np.float32)
    np.testing.assert_array_equal(run(backend_rig, [x, ones, zeros], 0, 0, 0), x)
    turned = run(backend_rig, [x, zeros, ones], 0, 0, 0)
    np.testing.assert_array_equal(turned, np.concatenate([-x[..., 2:], x[..., :2]], axis=-1))


def test_nan_and_infinity_propagate_through_their_pair(backend_rig) -> None:  # type: ignore[no-untyped-def]
    x = np.array([[[[1.0, np.nan, 2.0, 3.0], [np.inf, 1.0, 0.0, 1.0]]]], np.float32)
    cos, sin = np.full((1, 2, 2), 0.5, np.float32), np.full((1, 2, 2), 0.5, np.float32)
    y = run(backend_rig, [x, cos, sin], 1, 0, 0)
    np.testing.assert_array_equal(y, reference(x, cos, sin, None, 1, 0, 0))
    assert np.isnan(y[0, 0, 0, :2]).all() and np.isfinite(y[0, 0, 0, 2:]).all()


@pytest.mark.parametrize("shape", [(0, 2, 3, 4), (2, 2, 0, 4), (0, 3, 8), (2, 0, 8)], ids=str)
def test_empty_batches_and_sequences_write_nothing(backend_rig, shape) -> None:  # type: ignore[no-untyped-def]
    ins = operands(shape, 2, 0, 5, np.float32)
    assert run(backend_rig, ins, 0, 2, 0).shape == shape


@pytest.mark.parametrize("bad", [-1, 5, 100], ids=str)
def test_a_position_id_out_of_range_is_a_fault(rig, bad: int) -> None:  # type: ignore[no-untyped-def]
    ins = operands((1, 1, 3, 4), 0, 0, 5, np.float32)
    ins[3][0, 1] = bad
    with pytest.raises(FenceFailedError, match="position id out of"):
        run(rig, ins, 0, 0, 0)


F = np.float32


@pytest.mark.parametrize(
    ("ins", "ints", "message"),
    [
        ([np.ones((2, 4), F), np.ones((2, 2), F), np.ones((2, 2), F)], (0, 1, 0), "3-D or 4-D"),
        ([np.ones((1, 2, 4), np.int32), np.ones((1, 2, 2), np.int32), np.ones((1, 2, 2), np.int32)], (0, 1, 0), "float"),
        ([np.ones((1, 2, 6), F), np.ones((1, 2, 3), F), np.ones((1, 2, 3), F)], (0, 4, 0), "num_heads 4"),
        ([np.ones((1, 2, 6), F), np.ones((1, 2, 3), F), np.ones((1, 2, 3), F)], (0, 0, 0), "num_heads 0"),
        ([np.ones((1, 1, 2, 6), F), np.ones((1, 2, 3), F), np.ones((1, 2, 3), F)], (0, 0, 3), "odd"),
        ([np.ones((1, 1, 2, 4), F), np.ones((1, 2, 3), F), np.ones((1, 2, 3), F)], (0, 0, 6), "past head size"),
        ([np.ones((1, 1, 2, 4), F), np.ones((1, 2, 2), F), np.ones((1, 2, 2), F)], (2, 0, 0), "interleaved 2"),
        ([np.ones((1, 1, 2, 4), F), np.ones((1, 2, 2), np.float64), np.ones((1, 2, 2), F)], (0, 0, 0), "cos_cache is float64"),
        ([np.ones((1, 1, 2, 4), F), np.ones((1, 2, 2), F), np.ones((1, 3, 2), F)], (0, 0, 0), r"sin_cache \(1, 3, 2\)"),
        ([np.ones((1, 1, 2, 4), F), np.ones((5, 2), F), np.ones((5, 2), F), np.zeros((2, 1), np.int64)], (0, 0, 0), "position_ids int64"),
        ([np.ones((1, 1, 2, 4), F), np.ones((5, 2), F), np.ones((5, 2), F), np.zeros((1, 2), F)], (0, 0, 0), "position_ids float32"),
        ([np.ones((1, 1, 2, 4), F), np.ones((5, 1), F), np.ones((5, 2), F), np.zeros((1, 2), np.int64)], (0, 0, 0), r"cos_cache \(5, 1\)"),
    ],
    ids=["rank 2", "int X", "heads do not divide", "3-D without heads", "odd dim",
         "dim past head", "interleaved 2", "cos dtype", "sin shape", "ids shape", "ids dtype",
         "cache width"],
)  # fmt: skip
def test_operands_that_do_not_fit_are_a_fault(rig, ins, ints, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(FenceFailedError, match=message):
        rig.run(K, ins, ins[0].shape, ins[0].dtype, ints=ints)


def test_an_output_of_another_dtype_is_a_fault(rig) -> None:  # type: ignore[no-untyped-def]
    ins = operands((1, 1, 2, 4), 0, 0, None, np.float32)
    with pytest.raises(FenceFailedError, match="Y float16"):
        rig.run(K, ins, (1, 1, 2, 4), np.float16)
