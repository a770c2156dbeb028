"""Fault injection and recovery: the fence fails, nothing hangs, reset recovers, nothing leaks."""

from __future__ import annotations

import numpy as np
import pytest

from stack.kmd import DType, KernelId, KmdDevice
from stack.kmd.errors import (
    FenceFailedError,
    FenceTimeoutError,
    InvalidArgumentError,
    QueueFaultedError,
)
from stack.kmd.faults import FaultKind


def _relu_work(rig):  # type: ignore[no-untyped-def]
    x = rig.put(np.array([-1.0, 1.0], np.float32))
    y = rig.empty((2,))
    return x, y, rig.blob(KernelId.RELU, [x, y])


def _assert_recovers(rig, x, y, blob) -> None:  # type: ignore[no-untyped-def]
    """After reset: the queue runs work again (on a fresh fence) and everything frees."""
    dev = rig.dev
    dev.reset_queue(rig.ctx, rig.queue)
    rig.fence, rig.value = dev.create_fence(rig.ctx), 0
    v = rig.submit([blob])
    dev.wait_fence(rig.ctx, rig.fence, v, timeout_s=10)
    np.testing.assert_array_equal(dev.read_array(rig.ctx, y.addr, (2,), DType.F32), [0, 1])
    dev.free(rig.ctx, x.addr)
    dev.free(rig.ctx, y.addr)
    assert dev.stats().allocations == 0 and dev.stats().allocated_bytes == 0


@pytest.mark.parametrize("kind", [FaultKind.ECC, FaultKind.BAD_ADDRESS])
def test_injected_fault_fails_the_fence(rig, kind: FaultKind) -> None:  # type: ignore[no-untyped-def]
    x, y, blob = _relu_work(rig)
    rig.dev.inject_fault(rig.ctx, rig.queue, kind)
    v = rig.submit([blob])
    with pytest.raises(FenceFailedError) as info:
        rig.dev.wait_fence(rig.ctx, rig.fence, v, timeout_s=10)
    fault = info.value.fault
    assert (fault.kind, fault.queue, fault.fence, fault.value) == (kind, rig.queue, rig.fence, v)
    assert fault.kernel == "RELU"
    if kind is FaultKind.BAD_ADDRESS:
        assert fault.address is not None and fault.address >= y.addr
    with pytest.raises(QueueFaultedError) as qinfo:
        rig.submit([blob])
    assert qinfo.value.fault.kind is kind
    _assert_recovers(rig, x, y, blob)


def test_hang_times_out_then_reset_recovers(rig) -> None:  # type: ignore[no-untyped-def]
    x, y, blob = _relu_work(rig)
    rig.dev.inject_fault(rig.ctx, rig.queue, FaultKind.HANG)
    v = rig.submit([blob])
    with pytest.raises(FenceTimeoutError):
        rig.dev.wait_fence(rig.ctx, rig.fence, v, timeout_s=0.5)  # the worker is now in the hang
    rig.dev.reset_queue(rig.ctx, rig.queue)
    with pytest.raises(FenceFailedError) as info:
        rig.dev.wait_fence(rig.ctx, rig.fence, v, timeout_s=10)
    assert info.value.fault.kind is FaultKind.HANG
    _assert_recovers(rig, x, y, blob)


def test_fault_after_n_commands_and_pending_work_is_dropped(rig) -> None:  # type: ignore[no-untyped-def]
    dev = rig.dev
    x, y, blob = _relu_work(rig)
    dev.inject_fault(rig.ctx, rig.queue, FaultKind.ECC, after=2)
    gate = dev.create_fence(rig.ctx)
    values = [rig.submit([blob], wait=((gate, 1),))] + [rig.submit([blob]) for _ in range(4)]
    dev.signal_fence(rig.ctx, gate, 1)
    dev.wait_fence(rig.ctx, rig.fence, values[1], timeout_s=10)  # the first two completed
    with pytest.raises(FenceFailedError) as info:
        dev.wait_fence(rig.ctx, rig.fence, values[2], timeout_s=10)
    assert info.value.fault.value == values[2]
    assert dev.fence_value(rig.ctx, rig.fence) == values[1]
    s = dev.stats()
    assert (s.completed, s.faults) == (2, 1)
    _assert_recovers(rig, x, y, blob)


def test_kernel_error_becomes_a_fault(rig) -> None:  # type: ignore[no-untyped-def]
    a = rig.put(np.ones((2, 3), np.float32))
    b = rig.put(np.ones((4, 5), np.float32))
    y = rig.empty((2, 5))
    v = rig.submit([rig.blob(KernelId.GEMM, [a, b, y])])
    with pytest.raises(FenceFailedError) as info:
        rig.dev.wait_fence(rig.ctx, rig.fence, v, timeout_s=10)
    assert info.value.fault.kind is FaultKind.KERNEL and info.value.fault.kernel == "GEMM"
    rig.dev.reset_queue(rig.ctx, rig.queue)
    for p in (a, b, y):
        rig.dev.free(rig.ctx, p.addr)
    assert rig.dev.stats().allocations == 0


def test_failure_propagates_across_queue_waits(rig) -> None:  # type: ignore[no-untyped-def]
    dev, ctx = rig.dev, rig.ctx
    q2, f2 = dev.create_queue(ctx), dev.create_fence(ctx)
    dev.inject_fault(ctx, q2, FaultKind.ECC)
    dev.submit(ctx, q2, [], signal=(f2, 1))
    v = rig.submit([], wait=((f2, 1),))
    with pytest.raises(FenceFailedError) as info:
        dev.wait_fence(ctx, rig.fence, v, timeout_s=10)
    assert info.value.fault.kind is FaultKind.DEPENDENCY


def test_callbacks_see_the_fault(rig) -> None:  # type: ignore[no-untyped-def]
    seen: list[object] = []
    rig.dev.inject_fault(rig.ctx, rig.queue, FaultKind.ECC)
    v = rig.submit([])
    with pytest.raises(FenceFailedError):
        rig.dev.wait_fence(rig.ctx, rig.fence, v, timeout_s=10)
    rig.dev.on_fence(rig.ctx, rig.fence, v, lambda reached, fault: seen.append(fault))
    assert seen and seen[0].kind is FaultKind.ECC  # type: ignore[attr-defined]


def test_only_injectable_kinds(rig) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InvalidArgumentError) as info:
        rig.dev.inject_fault(rig.ctx, rig.queue, FaultKind.RESET)
    assert info.value.field == "kind"


def test_context_teardown_after_hang_leaks_nothing() -> None:
    dev = KmdDevice("numpy")
    try:
        ctx = dev.create_context()
        q, f = dev.create_queue(ctx), dev.create_fence(ctx)
        va = dev.alloc(ctx, 1 << 20)
        dev.inject_fault(ctx, q, FaultKind.HANG)
        dev.submit(ctx, q, [], signal=(f, 1))
        dev.destroy_context(ctx)
        s = dev.stats()
        assert (s.contexts, s.queues, s.fences, s.allocations, s.allocated_bytes) == (0,) * 5
        assert va > 0
    finally:
        dev.close()


def test_reset_context_recovers_every_queue(rig) -> None:  # type: ignore[no-untyped-def]
    dev, ctx = rig.dev, rig.ctx
    q2, f2 = dev.create_queue(ctx), dev.create_fence(ctx)
    dev.inject_fault(ctx, rig.queue, FaultKind.HANG)
    dev.inject_fault(ctx, q2, FaultKind.ECC)
    v = rig.submit([])
    dev.submit(ctx, q2, [], signal=(f2, 1))
    with pytest.raises(FenceFailedError):
        dev.wait_fence(ctx, f2, 1, timeout_s=10)
    dev.reset_context(ctx)
    with pytest.raises(FenceFailedError) as info:
        dev.wait_fence(ctx, rig.fence, v, timeout_s=10)
    # HANG if the worker had started the command, RESET if the reset dropped it first
    assert info.value.fault.kind in (FaultKind.HANG, FaultKind.RESET)
    for q in (rig.queue, q2):
        fresh = dev.create_fence(ctx)
        dev.submit(ctx, q, [], signal=(fresh, 1))
        dev.wait_fence(ctx, fresh, 1, timeout_s=10)
