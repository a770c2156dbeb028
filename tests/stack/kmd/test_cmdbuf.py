"""Reusable command buffers: record once and execute many times, rebind an input between
executions, per-allocation invalidation, re-execution after a fault and a reset, inline runs."""

from __future__ import annotations

import numpy as np
import pytest

from stack.kmd import FaultKind, KernelId, KmdDevice
from stack.kmd import blob as B
from stack.kmd.errors import (
    CommandBufferInvalidError,
    FenceFailedError,
    InvalidArgumentError,
    InvalidHandleError,
)

from .conftest import Rig


def _relu_buffer(rig: Rig, x: B.TensorParam, y: B.TensorParam) -> int:
    return rig.dev.create_cmdbuf(rig.ctx, [rig.blob(KernelId.RELU, [x, y])])


def _execute(rig: Rig, cmdbuf: int, **kwargs) -> int:  # type: ignore[no-untyped-def]
    rig.value += 1
    rig.dev.execute_cmdbuf(rig.ctx, rig.queue, cmdbuf, signal=(rig.fence, rig.value), **kwargs)
    return rig.value


def _result(rig: Rig, value: int, y: B.TensorParam) -> np.ndarray:
    rig.dev.wait_fence(rig.ctx, rig.fence, value, timeout_s=30)
    return rig.dev.read_array(rig.ctx, y.addr, y.shape, y.dtype)


def test_record_once_execute_many(rig: Rig) -> None:
    x, y = rig.empty((8,)), rig.empty((8,))
    buf = _relu_buffer(rig, x, y)
    before = rig.dev.stats()
    for i in range(5):
        data = np.arange(8, dtype=np.float32) - i
        rig.dev.write(rig.ctx, x.addr, data)
        np.testing.assert_array_equal(_result(rig, _execute(rig, buf), y), np.maximum(data, 0))
    after = rig.dev.stats()
    assert (after.submitted - before.submitted, after.completed - before.completed) == (5, 5)


def test_an_input_rebound_between_executions(rig: Rig) -> None:
    a, b, y = rig.put(np.full(4, -1.0, np.float32)), rig.put(np.full(4, 3.0, np.float32)), None
    y = rig.empty((4,))
    buf = _relu_buffer(rig, a, y)
    np.testing.assert_array_equal(_result(rig, _execute(rig, buf), y), np.zeros(4))
    value = _execute(rig, buf, rebind=[(a.addr, b.addr)])
    np.testing.assert_array_equal(_result(rig, value, y), np.full(4, 3.0))
    rig.dev.free(rig.ctx, a.addr)  # no longer referenced: the rebind stuck
    np.testing.assert_array_equal(_result(rig, _execute(rig, buf), y), np.full(4, 3.0))


def test_a_rebind_of_an_unreferenced_allocation_is_refused(rig: Rig) -> None:
    x, y, other = rig.empty((4,)), rig.empty((4,)), rig.empty((4,))
    buf = _relu_buffer(rig, x, y)
    with pytest.raises(InvalidArgumentError) as info:
        _execute(rig, buf, rebind=[(other.addr, x.addr)])
    assert info.value.field == "rebind"
    rig.value -= 1  # the refused execution scheduled nothing
    np.testing.assert_array_equal(_result(rig, _execute(rig, buf), y), np.zeros(4))


def test_a_freed_allocation_invalidates_only_the_buffers_that_referenced_it(
    dev: KmdDevice,
) -> None:
    mine, theirs = Rig(dev), Rig(dev)
    x1, y1, x2, y2 = (mine.put(np.full(4, 2.0, np.float32)) for _ in range(4))
    stale = _relu_buffer(mine, x1, y1)
    fine = _relu_buffer(mine, x2, y2)
    tx, ty = theirs.put(np.full(4, 5.0, np.float32)), theirs.empty((4,))
    other_ctx = _relu_buffer(theirs, tx, ty)
    dev.free(mine.ctx, x1.addr)
    with pytest.raises(CommandBufferInvalidError) as info:
        _execute(mine, stale)
    assert (info.value.cmdbuf, info.value.address) == (stale, x1.addr)
    mine.value -= 1
    np.testing.assert_array_equal(_result(mine, _execute(mine, fine), y2), np.full(4, 2.0))
    np.testing.assert_array_equal(_result(theirs, _execute(theirs, other_ctx), ty), np.full(4, 5.0))
    fresh = mine.put(np.full(4, 7.0, np.float32))
    value = _execute(mine, stale, rebind=[(x1.addr, fresh.addr)])
    np.testing.assert_array_equal(_result(mine, value, y1), np.full(4, 7.0))


def test_a_fault_during_execution_leaves_the_buffer_executable_after_reset(rig: Rig) -> None:
    x, y = rig.put(np.full(4, -2.0, np.float32)), rig.empty((4,))
    buf = _relu_buffer(rig, x, y)
    rig.dev.inject_fault(rig.ctx, rig.queue, FaultKind.ECC)
    value = _execute(rig, buf)
    with pytest.raises(FenceFailedError) as info:
        rig.dev.wait_fence(rig.ctx, rig.fence, value, timeout_s=30)
    assert info.value.fault.kind is FaultKind.ECC
    rig.dev.reset_queue(rig.ctx, rig.queue)
    rig.fence, rig.value = rig.dev.create_fence(rig.ctx), 0
    rig.dev.write(rig.ctx, x.addr, np.full(4, 4.0, np.float32))
    np.testing.assert_array_equal(_result(rig, _execute(rig, buf), y), np.full(4, 4.0))


def test_inline_execution_on_an_idle_queue_is_complete_on_return(rig: Rig) -> None:
    x, y = rig.put(np.full(4, 1.5, np.float32)), rig.empty((4,))
    buf = _relu_buffer(rig, x, y)
    value = _execute(rig, buf, inline=True)
    assert rig.dev.fence_value(rig.ctx, rig.fence) == value
    np.testing.assert_array_equal(
        rig.dev.read_array(rig.ctx, y.addr, y.shape, y.dtype), np.full(4, 1.5)
    )


def test_execute_reports_whether_it_ran_inline_and_signalled(rig: Rig) -> None:
    x, y = rig.put(np.full(4, -1.0, np.float32)), rig.empty((4,))
    buf = _relu_buffer(rig, x, y)
    rig.value += 1
    assert rig.dev.execute_cmdbuf(
        rig.ctx, rig.queue, buf, signal=(rig.fence, rig.value), inline=True
    ) is True  # fmt: skip
    rig.value += 1
    queued = rig.dev.execute_cmdbuf(rig.ctx, rig.queue, buf, signal=(rig.fence, rig.value))
    assert queued is False
    rig.dev.wait_fence(rig.ctx, rig.fence, rig.value, timeout_s=30)
    rig.dev.inject_fault(rig.ctx, rig.queue, FaultKind.ECC)  # an injection: never inline
    rig.value += 1
    assert rig.dev.execute_cmdbuf(
        rig.ctx, rig.queue, buf, signal=(rig.fence, rig.value), inline=True
    ) is False  # fmt: skip
    with pytest.raises(FenceFailedError):
        rig.dev.wait_fence(rig.ctx, rig.fence, rig.value, timeout_s=30)


def test_destroyed_and_foreign_buffers_are_invalid_handles(dev: KmdDevice) -> None:
    mine, theirs = Rig(dev), Rig(dev)
    buf = _relu_buffer(mine, mine.empty((4,)), mine.empty((4,)))
    with pytest.raises(InvalidHandleError):
        _execute(theirs, buf)
    dev.destroy_cmdbuf(mine.ctx, buf)
    with pytest.raises(InvalidHandleError):
        _execute(mine, buf)


def test_destroying_the_context_frees_memory_its_buffers_referenced(dev: KmdDevice) -> None:
    rig = Rig(dev)
    _relu_buffer(rig, rig.empty((4,)), rig.empty((4,)))
    dev.destroy_context(rig.ctx)
    assert dev.stats().allocations == 0


@pytest.mark.parametrize(
    ("field", "changes"),
    [
        ("ctx", {"ctx": -1}),
        ("queue", {"queue": True}),
        ("cmdbuf", {"cmdbuf": 1 << 64}),
        ("signal", {"signal": (1, 0)}),
        ("signal", {"signal": [1, 2]}),
        ("signal.fence", {"signal": (1.0, 2)}),
        ("wait", {"wait": [(1, 1)]}),
        ("wait[0]", {"wait": ((1,),)}),
        ("rebind", {"rebind": [(1, 2)]}),
        ("inline", {"inline": 1}),
    ],
)
def test_every_execute_field_is_checked_on_the_run_path(
    field: str, changes: dict[str, object]
) -> None:
    """EXECUTE_CMDBUF's one-expression check lets only the plain form through; anything else
    gets the field checks, which name the field."""
    from stack.kmd.ioctl import ExecuteCmdbufArgs, Ioctl
    from stack.kmd.validate import validate

    plain = {"ctx": 1, "queue": 2, "cmdbuf": 3, "signal": (4, 5), "inline": True}
    assert validate(Ioctl.EXECUTE_CMDBUF, ExecuteCmdbufArgs(**plain)) is Ioctl.EXECUTE_CMDBUF
    waits = ExecuteCmdbufArgs(**plain, wait=((4, 1),), rebind=((8, 16),))
    assert validate(Ioctl.EXECUTE_CMDBUF, waits) is Ioctl.EXECUTE_CMDBUF
    with pytest.raises(InvalidArgumentError) as info:
        validate(Ioctl.EXECUTE_CMDBUF, ExecuteCmdbufArgs(**{**plain, **changes}))
    assert info.value.field == field


def _conv_buffer(rig: Rig, blobs: list[bytes]) -> tuple[int, bool]:
    """A command buffer of ``blobs`` and whether its last launch (a CONV2D) was prepared."""
    buf = rig.dev.create_cmdbuf(rig.ctx, blobs)
    launch = rig.dev._driver._cmdbufs[buf].launches[-1]  # type: ignore[union-attr]
    return buf, launch.prepared


def test_weights_a_prepared_conv_copied_are_reread_after_a_write(rig: Rig) -> None:
    """A prepared CONV2D may copy W and B at record time (oneDNN packs W): once the host
    writes W's allocation, or a launch writes into it, the launch runs the kernel instead, so
    every execution sees the weights as they are then."""
    rng = np.random.default_rng(5)
    x_data = rng.standard_normal((1, 4, 6, 6)).astype(np.float32)
    w_data = rng.standard_normal((8, 4, 3, 3)).astype(np.float32)
    x, w, b, y = (
        rig.put(x_data),
        rig.put(w_data),
        rig.put(np.zeros(8, np.float32)),
        rig.empty((1, 8, 4, 4)),
    )
    buf, prepared = _conv_buffer(rig, [rig.blob(KernelId.CONV2D, [x, w, b, y])])
    assert prepared

    def want(weights: np.ndarray) -> np.ndarray:
        cols = np.lib.stride_tricks.sliding_window_view(x_data[0], (3, 3), axis=(1, 2))
        return np.einsum("chwij,mcij->mhw", cols, weights)[None]

    np.testing.assert_allclose(_result(rig, _execute(rig, buf), y), want(w_data), rtol=1e-5,
                               atol=1e-5)  # fmt: skip
    rig.dev.write(rig.ctx, w.addr, -w_data)  # the host writes W
    np.testing.assert_allclose(_result(rig, _execute(rig, buf), y), want(-w_data), rtol=1e-5,
                               atol=1e-5)  # fmt: skip
    # W computed by a launch of the same buffer (a ReLU of a source tensor) before the conv
    source = rig.put(w_data)
    relu = rig.blob(KernelId.RELU, [source, w])
    buf, prepared = _conv_buffer(rig, [relu, rig.blob(KernelId.CONV2D, [x, w, b, y])])
    got = _result(rig, _execute(rig, buf), y)
    np.testing.assert_allclose(got, want(np.maximum(w_data, 0)), rtol=1e-5, atol=1e-5)
    rig.dev.write(rig.ctx, source.addr, w_data * 2)
    got = _result(rig, _execute(rig, buf), y)
    np.testing.assert_allclose(got, want(np.maximum(w_data * 2, 0)), rtol=1e-5, atol=1e-5)


def test_weights_in_a_mapped_allocation_are_never_kept(rig: Rig) -> None:
    """The host writes a mapped allocation without the KMD seeing it: a CONV2D whose W lies in
    one is not prepared with a copy of W, and mapping W after recording ends the copy's use."""
    rng = np.random.default_rng(6)
    x = rig.put(rng.standard_normal((1, 2, 5, 5)).astype(np.float32))
    w_data = rng.standard_normal((3, 2, 3, 3)).astype(np.float32)
    w, b, y = rig.put(w_data), rig.put(np.ones(3, np.float32)), rig.empty((1, 3, 3, 3))
    blob = rig.blob(KernelId.CONV2D, [x, w, b, y])
    buf, prepared = _conv_buffer(rig, [blob])
    assert prepared
    first = _result(rig, _execute(rig, buf), y)
    host = rig.dev.map(rig.ctx, w.addr)
    host.view(np.float32)[: w_data.size] = -w_data.ravel()  # written unseen by the KMD
    second = _result(rig, _execute(rig, buf), y)
    np.testing.assert_allclose(second - 1, -(first - 1), rtol=1e-5, atol=1e-5)
    again, prepared = _conv_buffer(rig, [blob])  # recorded after the mapping
    assert not prepared
    host.view(np.float32)[: w_data.size] = w_data.ravel()
    np.testing.assert_allclose(_result(rig, _execute(rig, again), y), first, rtol=1e-5, atol=1e-5)
