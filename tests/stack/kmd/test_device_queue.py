"""Queues, fences and submission: ordering, dependencies, callbacks, timeouts, refusals."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from stack.kmd import DType, Ioctl, KernelId, KmdDevice
from stack.kmd import blob as B
from stack.kmd import ioctl as io
from stack.kmd.errors import (
    BlobFormatError,
    CrossContextAccessError,
    DeviceClosedError,
    FenceFailedError,
    FenceTimeoutError,
    InvalidAddressError,
    InvalidArgumentError,
    InvalidHandleError,
    KernelArgumentError,
)
from stack.kmd.faults import FaultKind


def test_submit_runs_in_order_and_signals(rig) -> None:  # type: ignore[no-untyped-def]
    x = rig.put(np.array([-1.0, 2.0, -3.0], np.float32))
    y = rig.empty((3,))
    z = rig.empty((3,))
    v = rig.submit([rig.blob(KernelId.RELU, [x, y]), rig.blob(KernelId.ADD, [y, y, z])])
    rig.dev.wait_fence(rig.ctx, rig.fence, v, timeout_s=10)
    assert rig.dev.fence_value(rig.ctx, rig.fence) == v
    np.testing.assert_array_equal(rig.dev.read_array(rig.ctx, z.addr, (3,), DType.F32), [0, 4, 0])


def test_many_submissions_complete_in_order(rig) -> None:  # type: ignore[no-untyped-def]
    acc = rig.put(np.zeros(4, np.float32))
    one = rig.put(np.ones(4, np.float32))
    blob = rig.blob(KernelId.ADD, [acc, one, acc])
    for _ in range(200):
        v = rig.submit([blob])
    rig.dev.wait_fence(rig.ctx, rig.fence, v, timeout_s=10)
    np.testing.assert_array_equal(rig.dev.read_array(rig.ctx, acc.addr, (4,), DType.F32), 200.0)
    s = rig.dev.stats()
    assert (s.submitted, s.completed, s.faults) == (200, 200, 0)


def test_cross_queue_wait(rig) -> None:  # type: ignore[no-untyped-def]
    dev, ctx = rig.dev, rig.ctx
    q2, f2 = dev.create_queue(ctx), dev.create_fence(ctx)
    gate = dev.create_fence(ctx)
    x = rig.put(np.full(8, 3.0, np.float32))
    y = rig.empty((8,))
    z = rig.empty((8,))
    dev.submit(ctx, q2, [rig.blob(KernelId.MUL, [x, x, y])], signal=(f2, 1), wait=[(gate, 1)])
    v = rig.submit([rig.blob(KernelId.ADD, [y, x, z])], wait=((f2, 1),))
    with pytest.raises(FenceTimeoutError):
        dev.wait_fence(ctx, rig.fence, v, timeout_s=0.05)
    dev.signal_fence(ctx, gate, 1)
    dev.wait_fence(ctx, rig.fence, v, timeout_s=10)
    np.testing.assert_array_equal(dev.read_array(ctx, z.addr, (8,), DType.F32), 12.0)


def test_on_fence_callbacks(rig) -> None:  # type: ignore[no-untyped-def]
    dev, ctx = rig.dev, rig.ctx
    gate = dev.create_fence(ctx)
    got: list[tuple[int, object]] = []
    done = threading.Event()

    def cb(reached: int, fault: object) -> None:
        got.append((reached, fault))
        done.set()

    v = rig.submit([], wait=((gate, 1),))
    dev.on_fence(ctx, rig.fence, v, cb)
    assert got == []
    dev.signal_fence(ctx, gate, 1)
    assert done.wait(10)
    assert got == [(v, None)]
    dev.on_fence(ctx, rig.fence, v, cb)  # already reached: called at once
    assert got[-1] == (v, None) and len(got) == 2


def test_wait_timeout_is_typed_and_harmless(rig) -> None:  # type: ignore[no-untyped-def]
    dev, ctx = rig.dev, rig.ctx
    gate = dev.create_fence(ctx)
    v = rig.submit([], wait=((gate, 5),))
    t0 = time.monotonic()
    with pytest.raises(FenceTimeoutError) as info:
        dev.wait_fence(ctx, rig.fence, v, timeout_s=0.1)
    assert time.monotonic() - t0 < 60  # it returned: a timed-out wait does not hang
    assert (info.value.fence, info.value.value, info.value.reached) == (rig.fence, v, 0)
    dev.signal_fence(ctx, gate, 5)
    dev.wait_fence(ctx, rig.fence, v, timeout_s=10)  # the fence still works


def test_signal_values_must_grow(rig) -> None:  # type: ignore[no-untyped-def]
    rig.submit([])
    with pytest.raises(InvalidArgumentError) as info:
        rig.dev.submit(rig.ctx, rig.queue, [], signal=(rig.fence, 1))
    assert info.value.field == "signal"
    with pytest.raises(InvalidArgumentError):
        rig.dev.submit(rig.ctx, rig.queue, [], signal=(rig.fence, 0))


def test_corrupt_blob_refused_before_anything_runs(rig) -> None:  # type: ignore[no-untyped-def]
    x = rig.put(np.ones(4, np.float32))
    y = rig.empty((4,))
    good = rig.blob(KernelId.RELU, [x, y])
    bad = bytearray(good)
    bad[0] ^= 0xFF
    with pytest.raises(BlobFormatError) as info:
        rig.dev.submit(rig.ctx, rig.queue, [good, bytes(bad)], signal=(rig.fence, 1))
    assert (info.value.field, info.value.offset) == ("magic", 0)
    assert rig.dev.stats().submitted == 0
    rig.dev.free(rig.ctx, x.addr)  # nothing holds a reference


def test_abi_mismatch_refused(rig) -> None:  # type: ignore[no-untyped-def]
    x = rig.put(np.ones(4, np.float32))
    with pytest.raises(KernelArgumentError) as info:
        rig.dev.submit(rig.ctx, rig.queue, [rig.blob(KernelId.ADD, [x, x])], signal=(rig.fence, 1))
    assert info.value.kernel == "ADD"
    with pytest.raises(KernelArgumentError):
        blob = rig.blob(KernelId.RELU, [x, x], ints=(1, 2))
        rig.dev.submit(rig.ctx, rig.queue, [blob], signal=(rig.fence, 1))


def test_out_of_range_address_in_blob_refused(rig) -> None:  # type: ignore[no-untyped-def]
    x = rig.put(np.ones(4, np.float32))
    past = B.TensorParam(x.addr + 8, 16, DType.F32, (4,))  # runs 8 bytes past the end
    with pytest.raises(InvalidAddressError):
        rig.dev.submit(
            rig.ctx, rig.queue, [rig.blob(KernelId.RELU, [x, past])], signal=(rig.fence, 1)
        )
    assert rig.dev.stats().submitted == 0
    rig.dev.free(rig.ctx, x.addr)


def test_cross_context_blob_and_handles_refused(rig) -> None:  # type: ignore[no-untyped-def]
    dev = rig.dev
    other = dev.create_context()
    foreign = dev.alloc(other, 16)
    x = rig.put(np.ones(4, np.float32))
    stolen = B.TensorParam(foreign, 16, DType.F32, (4,))
    with pytest.raises(CrossContextAccessError):
        dev.submit(
            rig.ctx, rig.queue, [rig.blob(KernelId.RELU, [x, stolen])], signal=(rig.fence, 1)
        )
    with pytest.raises(InvalidHandleError) as info:
        dev.submit(other, rig.queue, [], signal=(rig.fence, 1))
    assert info.value.kind == "queue"
    with pytest.raises(InvalidHandleError):
        dev.wait_fence(other, rig.fence, 1, timeout_s=0)
    other_fence = dev.create_fence(other)
    with pytest.raises(InvalidHandleError):
        dev.submit(rig.ctx, rig.queue, [], signal=(rig.fence, 1), wait=[(other_fence, 1)])
    assert dev.read(other, foreign, 16) == bytes(16)


def test_submit_to_failed_fence_refused(rig) -> None:  # type: ignore[no-untyped-def]
    dev = rig.dev
    dev.inject_fault(rig.ctx, rig.queue, FaultKind.ECC)
    v = rig.submit([])
    with pytest.raises(FenceFailedError):
        dev.wait_fence(rig.ctx, rig.fence, v, timeout_s=10)
    dev.reset_queue(rig.ctx, rig.queue)
    with pytest.raises(FenceFailedError):
        rig.submit([])
    fresh = dev.create_fence(rig.ctx)
    dev.submit(rig.ctx, rig.queue, [], signal=(fresh, 1))
    dev.wait_fence(rig.ctx, fresh, 1, timeout_s=10)


def test_ioctl_entry_validates_command_and_record(dev: KmdDevice) -> None:
    with pytest.raises(InvalidArgumentError) as info:
        dev.ioctl(Ioctl.ALLOC, io.FreeArgs(1, 2))
    assert info.value.field == "args"
    with pytest.raises(InvalidArgumentError) as info:
        dev.ioctl(0x1234, io.StatsArgs())  # type: ignore[arg-type]
    assert info.value.field == "cmd"
    with pytest.raises(InvalidArgumentError) as info:
        dev.ioctl(Ioctl.ALLOC, io.AllocArgs(1, -5))
    assert info.value.field == "nbytes"
    ctx = dev.ioctl(Ioctl.CREATE_CONTEXT, io.CreateContextArgs())
    va = dev.ioctl(Ioctl.ALLOC, io.AllocArgs(ctx, 64))
    dev.ioctl(Ioctl.FREE, io.FreeArgs(ctx, va))
    assert dev.ioctl(Ioctl.STATS, io.StatsArgs()).allocations == 0


def test_ioctl_numbers_encode_direction_size_and_nr() -> None:
    assert len({i.nr for i in Ioctl}) == len(Ioctl)
    for i in Ioctl:
        assert (i.value >> 8) & 0xFF == ord("R")
        assert i.value >> 30 in (1, 2, 3) and i.size > 0


def test_destroy_queue_fails_pending_work(rig) -> None:  # type: ignore[no-untyped-def]
    dev = rig.dev
    gate = dev.create_fence(rig.ctx)
    v = rig.submit([], wait=((gate, 1),))
    dev.destroy_queue(rig.ctx, rig.queue)
    with pytest.raises(FenceFailedError) as info:
        dev.wait_fence(rig.ctx, rig.fence, v, timeout_s=10)
    assert info.value.fault.kind is FaultKind.RESET
    with pytest.raises(InvalidHandleError):
        dev.submit(rig.ctx, rig.queue, [], signal=(rig.fence, v + 1))


def test_closed_device_refuses(dev: KmdDevice) -> None:
    dev.create_context()
    dev.close()
    with pytest.raises(DeviceClosedError):
        dev.create_context()
    dev.close()  # idempotent


def test_resubmitting_a_blob_revalidates_its_addresses(rig) -> None:  # type: ignore[no-untyped-def]
    x = rig.put(np.array([-2.0, 2.0], np.float32))
    y = rig.empty((2,))
    blob = rig.blob(KernelId.RELU, [x, y])
    for _ in range(3):  # cached plan and views
        v = rig.submit([blob])
    rig.dev.wait_fence(rig.ctx, rig.fence, v, timeout_s=10)
    rig.dev.free(rig.ctx, y.addr)
    with pytest.raises(InvalidAddressError):
        rig.dev.submit(rig.ctx, rig.queue, [blob], signal=(rig.fence, v + 1))
    other = rig.dev.create_context()
    with pytest.raises(CrossContextAccessError):
        q = rig.dev.create_queue(other)
        f = rig.dev.create_fence(other)
        rig.dev.submit(other, q, [rig.blob(KernelId.RELU, [x, x])], signal=(f, 1))


def test_destroy_fence_refused_while_work_will_signal_it(rig) -> None:  # type: ignore[no-untyped-def]
    dev = rig.dev
    gate = dev.create_fence(rig.ctx)
    v = rig.submit([], wait=((gate, 1),))
    with pytest.raises(InvalidArgumentError) as info:
        dev.destroy_fence(rig.ctx, rig.fence)
    assert info.value.field == "fence"
    dev.signal_fence(rig.ctx, gate, 1)
    dev.wait_fence(rig.ctx, rig.fence, v, timeout_s=10)
    dev.destroy_fence(rig.ctx, rig.fence)
    dev.destroy_fence(rig.ctx, gate)
    assert dev.stats().fences == 0
    with pytest.raises(InvalidHandleError):
        dev.fence_value(rig.ctx, rig.fence)


def test_host_signal_must_exceed_scheduled_values(rig) -> None:  # type: ignore[no-untyped-def]
    dev = rig.dev
    gate = dev.create_fence(rig.ctx)
    rig.submit([], wait=((gate, 1),))
    with pytest.raises(InvalidArgumentError) as info:
        dev.signal_fence(rig.ctx, rig.fence, 1)  # the queue will signal 1
    assert info.value.field == "value"
    dev.signal_fence(rig.ctx, gate, 3)
    assert dev.fence_value(rig.ctx, gate) == 3
    with pytest.raises(InvalidArgumentError):
        dev.signal_fence(rig.ctx, gate, 2)  # timelines never go back
    assert dev.fence_value(rig.ctx, gate) == 3


def test_waiting_thread_runs_ready_work_itself(rig) -> None:  # type: ignore[no-untyped-def]
    acc = rig.put(np.zeros(8, np.float32))
    one = rig.put(np.ones(8, np.float32))
    blob = rig.blob(KernelId.ADD, [acc, one, acc])
    seen: list[tuple[int, object, int]] = []
    for _ in range(100):  # the callback is registered first: it runs on the completing thread
        rig.dev.on_fence(
            rig.ctx,
            rig.fence,
            rig.value + 1,
            lambda r, f: seen.append((r, f, threading.get_ident())),
        )
        v = rig.submit([blob])
        rig.dev.wait_fence(rig.ctx, rig.fence, v, timeout_s=10)
    np.testing.assert_array_equal(rig.dev.read_array(rig.ctx, acc.addr, (8,), DType.F32), 100.0)
    assert [r for r, _, _ in seen] == list(range(1, 101))  # each callback once, in order
    assert all(f is None for _, f, _ in seen)
    # work-conserving waits: the waiting (main) thread completed some commands itself
    assert threading.get_ident() in {t for _, _, t in seen}
    s = rig.dev.stats()
    assert (s.submitted, s.completed) == (100, 100)
