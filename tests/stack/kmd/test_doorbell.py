"""The doorbell and the work-conserving wait: work progresses with or without a waiter."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from stack.kmd import DType, FaultKind, KernelId, KmdDevice
from stack.kmd.errors import FenceFailedError, MemoryInUseError
from stack.kmd.queue import HOT_S


def _spin_until(cond, limit_s: float = 60.0) -> bool:  # type: ignore[no-untyped-def]
    end = time.monotonic() + limit_s
    while not cond():
        if time.monotonic() > end:
            return False
        time.sleep(0.001)
    return True


def test_worker_runs_work_nobody_waits_for(rig) -> None:  # type: ignore[no-untyped-def]
    acc = rig.put(np.zeros(8, np.float32))
    one = rig.put(np.ones(8, np.float32))
    blob = rig.blob(KernelId.ADD, [acc, one, acc])
    v = rig.submit([blob])  # a cold queue: the doorbell wakes the worker
    assert _spin_until(lambda: rig.dev.fence_value(rig.ctx, rig.fence) >= v)
    v = rig.submit([blob])  # now hot: the polling worker finds it without a doorbell
    assert _spin_until(lambda: rig.dev.fence_value(rig.ctx, rig.fence) >= v)
    time.sleep(HOT_S * 2)  # cold again: the doorbell must wake it
    v = rig.submit([blob])
    assert _spin_until(lambda: rig.dev.fence_value(rig.ctx, rig.fence) >= v)
    np.testing.assert_array_equal(rig.dev.read_array(rig.ctx, acc.addr, (8,), DType.F32), 3.0)


def test_callback_fires_without_a_waiter(rig) -> None:  # type: ignore[no-untyped-def]
    done = threading.Event()
    rig.submit([])
    rig.dev.wait_fence(rig.ctx, rig.fence, rig.value, timeout_s=10)  # queue is hot
    rig.dev.on_fence(rig.ctx, rig.fence, rig.value + 1, lambda r, f: done.set())
    rig.submit([])
    assert done.wait(10)


def test_waiter_helps_the_queue_it_depends_on(rig) -> None:  # type: ignore[no-untyped-def]
    dev, ctx = rig.dev, rig.ctx
    q2, f2 = dev.create_queue(ctx), dev.create_fence(ctx)
    x = rig.put(np.full(8, -2.0, np.float32))
    y, z = rig.empty((8,)), rig.empty((8,))
    one = rig.put(np.ones(8, np.float32))
    for i in range(1, 51):  # queue 1 produces, queue 2 consumes it, the host waits on queue 2
        v = rig.submit([rig.blob(KernelId.ADD, [x, one, y])])
        dev.submit(
            ctx, q2, [rig.blob(KernelId.RELU, [y, z])], signal=(f2, i), wait=((rig.fence, v),)
        )
        dev.wait_fence(ctx, f2, i, timeout_s=10)
        assert dev.fence_value(ctx, rig.fence) >= v
    np.testing.assert_array_equal(dev.read_array(ctx, z.addr, (8,), DType.F32), 0.0)


def test_dependency_fault_reaches_the_helping_waiter(rig) -> None:  # type: ignore[no-untyped-def]
    dev, ctx = rig.dev, rig.ctx
    q2, f2 = dev.create_queue(ctx), dev.create_fence(ctx)
    dev.inject_fault(ctx, rig.queue, FaultKind.ECC)
    v = rig.submit([])
    dev.submit(ctx, q2, [], signal=(f2, 1), wait=((rig.fence, v),))
    with pytest.raises(FenceFailedError) as info:
        dev.wait_fence(ctx, f2, 1, timeout_s=10)
    assert info.value.fault.kind is FaultKind.DEPENDENCY
    dev.reset_queue(ctx, rig.queue)
    fresh = dev.create_fence(ctx)  # a failed fence stays failed: continue on a new one
    dev.submit(ctx, rig.queue, [], signal=(fresh, 1))
    dev.wait_fence(ctx, fresh, 1, timeout_s=10)  # recovered


def test_in_flight_memory_stays_refused_on_a_hot_queue(dev: KmdDevice, rig) -> None:  # type: ignore[no-untyped-def]
    gate = dev.create_fence(rig.ctx)
    x = rig.put(np.ones(8, np.float32))
    rig.submit([rig.blob(KernelId.RELU, [x, x])])
    dev.wait_fence(rig.ctx, rig.fence, rig.value, timeout_s=10)  # hot now
    v = rig.submit([rig.blob(KernelId.RELU, [x, x])], wait=((gate, 1),))
    with pytest.raises(MemoryInUseError):
        dev.free(rig.ctx, x.addr)
    dev.signal_fence(rig.ctx, gate, 1)
    dev.wait_fence(rig.ctx, rig.fence, v, timeout_s=10)
    dev.free(rig.ctx, x.addr)
