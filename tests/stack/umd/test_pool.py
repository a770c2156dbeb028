"""The session memory pool: size bins, reuse, per-stage release, statistics, the 1.5x warning."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from stack.umd import DType, OpKind, OpRequest, TensorDesc, UmdSession
from stack.umd.errors import AddressError, InvalidRequestError
from stack.umd.pool import MAX_BIN, bin_size
from stack.umd.pool_stats import WARN_AFTER


def test_bins_are_powers_of_two_from_64_bytes_to_16_mib() -> None:
    assert [bin_size(n) for n in (1, 64, 65, 130, 4096, 4097)] == [64, 64, 128, 256, 4096, 8192]
    assert bin_size(MAX_BIN) == 16 << 20
    assert bin_size(MAX_BIN + 1) is None


def test_released_block_is_reused_from_its_bin(session: UmdSession) -> None:
    a = session.acquire_block(130, stage="s1")
    session.release_block(a)
    b = session.acquire_block(200, stage="s2")  # same 256-byte bin
    c = session.acquire_block(300, stage="s2")  # 512-byte bin: a new block
    assert b == a and c != a
    st = session.pool_stats()
    assert (st.hits, st.misses) == (1, 2)
    assert (st.in_use_bytes, st.requested_bytes, st.allocated_bytes) == (768, 500, 768)
    assert st.fragmentation == round(268 / 768, 6)


def test_release_stage_returns_only_that_stages_blocks(session: UmdSession) -> None:
    held = [session.acquire_block(1000, stage="conv") for _ in range(3)]
    keep = session.acquire_block(1000, stage="relu")
    assert session.release_stage("conv") == 3
    st = session.pool_stats()
    assert (st.blocks_in_use, st.cached_blocks) == (1, 3)
    assert (st.in_use_bytes, st.cached_bytes, st.allocated_bytes) == (1024, 3072, 4096)
    assert session.release_stage("conv") == 0
    session.release_block(keep)
    assert sorted(session.acquire_block(1024) for _ in range(3)) == sorted(held)


def test_a_released_block_is_refused_as_an_operand(session: UmdSession) -> None:
    x = session.acquire_block(16, stage=0)
    y = session.acquire_block(16, stage=0)
    req = OpRequest.make(
        OpKind.RELU, [TensorDesc(x, (4,), DType.F32)], [TensorDesc(y, (4,), DType.F32)]
    )
    session.translate(req)
    session.release_block(x)
    with pytest.raises(AddressError):
        session.translate(req)
    with pytest.raises(AddressError):
        session.release_block(x)  # not a held block any more


def test_blocks_compute_like_allocations(session: UmdSession) -> None:
    x = np.arange(-3, 5, dtype=np.float32)
    a, b = session.acquire_block(x.nbytes), session.acquire_block(x.nbytes)
    session.write(a, x)
    req = OpRequest.make(
        OpKind.RELU, [TensorDesc(a, (8,), DType.F32)], [TensorDesc(b, (8,), DType.F32)]
    )
    session.wait(session.submit(session.create_stream(), [session.translate(req)]), 30)
    np.testing.assert_array_equal(session.read(b, (8,), DType.F32), np.maximum(x, 0))


def test_oversize_blocks_go_back_to_the_kmd(session: UmdSession) -> None:
    big = session.acquire_block(MAX_BIN + 1)
    assert session.pool_stats().allocated_bytes == MAX_BIN + 1
    session.release_block(big)
    st = session.pool_stats()
    assert (st.allocated_bytes, st.cached_blocks, session.device.stats().allocations) == (0, 0, 0)


def test_trim_frees_cached_blocks(session: UmdSession) -> None:
    for n in (100, 5000):
        session.release_block(session.acquire_block(n))
    assert session.trim_pool() == 128 + 8192
    assert session.pool_stats().allocated_bytes == 0


def test_plain_allocations_count_but_are_not_bin_hits(session: UmdSession) -> None:
    va = session.alloc(100)
    st = session.pool_stats()
    assert (st.allocated_bytes, st.in_use_bytes, st.hits, st.misses) == (100, 100, 0, 0)
    session.free(va)
    assert session.pool_stats().allocated_bytes == 0


def test_bad_requests_are_typed(session: UmdSession) -> None:
    with pytest.raises(InvalidRequestError) as e:
        session.acquire_block(0)
    assert e.value.field == "nbytes"
    with pytest.raises(InvalidRequestError) as e:
        session.acquire_block(64, align=48)
    assert e.value.field == "align"


def _run_window(session: UmdSession, sizes: list[int], leak: bool = False) -> bool:
    session.pool.begin_window()
    vas = [session.acquire_block(n, stage="w") for n in sizes]
    if leak:
        vas[0:1] = []
    for va in vas:
        session.release_block(va)
    return session.pool.end_window()


def test_steady_runs_never_warn(session: UmdSession, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="stack.umd.pool"):
        results = [_run_window(session, [4096, 4096]) for _ in range(6)]
    st = session.pool_stats()
    assert results == [False] * 6
    assert (st.peak_bytes, st.allocated_bytes, st.warnings, st.over_peak_windows) == (
        8192,
        8192,
        0,
        0,
    )
    assert caplog.records == []


def test_a_leak_warns_once_when_allocated_stays_above_1_5_peak(
    session: UmdSession, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="stack.umd.pool"):
        results = [_run_window(session, [4096, 4096], leak=True) for _ in range(6)]
    # window k ends holding k leaked blocks + 1 cached: 4096*(k+1) > 1.5*8192 from k = 3 on
    assert results == [False, False, False, False, True, False]
    st = session.pool_stats()
    assert (st.warnings, st.over_peak_windows, st.in_use_bytes) == (1, 4, 6 * 4096)
    assert len(caplog.records) == 1
    assert "above 1.5 x the run's peak of 8192 bytes" in caplog.records[0].getMessage()
    assert WARN_AFTER == 3


def test_bins_the_work_no_longer_uses_warn_until_trimmed(session: UmdSession) -> None:
    _run_window(session, [1 << 20])  # 1 MiB cached, never asked for again
    flags = [_run_window(session, [256 << 10]) for _ in range(WARN_AFTER)]
    assert flags == [False, False, True]
    session.trim_pool()
    assert _run_window(session, [256 << 10]) is False
    assert session.pool_stats().over_peak_windows == 0
