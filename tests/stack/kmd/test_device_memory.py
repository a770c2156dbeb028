"""Memory ioctls: alloc/free/write/read/map, and every refusal leaving the state intact."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from stack.kmd import DType, KmdDevice
from stack.kmd.errors import (
    CrossContextAccessError,
    DoubleFreeError,
    InvalidAddressError,
    InvalidArgumentError,
    InvalidHandleError,
    MemoryInUseError,
    OutOfMemoryError,
)
from stack.kmd.memory import PAGE_SIZE


def test_alloc_write_read_round_trip(dev: KmdDevice) -> None:
    ctx = dev.create_context()
    data = np.arange(1000, dtype=np.float32)
    va = dev.alloc(ctx, data.nbytes)
    assert dev.read(ctx, va, 16) == bytes(16)  # zeroed
    dev.write(ctx, va, data)
    np.testing.assert_array_equal(dev.read_array(ctx, va, (1000,), DType.F32), data)
    dev.write(ctx, va, b"\x01\x02", offset=8)
    assert dev.read(ctx, va, 2, offset=8) == b"\x01\x02"
    assert dev.read(ctx, va + 8, 2) == b"\x01\x02"


@pytest.mark.parametrize("align", [1, 256, PAGE_SIZE, 1 << 20])
def test_alignment_and_distinct_ranges(dev: KmdDevice, align: int) -> None:
    ctx = dev.create_context()
    vas = [dev.alloc(ctx, 100, align=align) for _ in range(3)]
    assert all(va % align == 0 and va > 0 for va in vas)
    assert all(b - a >= 100 for a, b in itertools.pairwise(vas))


def test_map_is_a_zero_copy_host_view(dev: KmdDevice) -> None:
    ctx = dev.create_context()
    va = dev.alloc(ctx, 64)
    view = dev.map(ctx, va)
    view[:4] = [1, 2, 3, 4]
    assert dev.read(ctx, va, 4) == bytes([1, 2, 3, 4])
    hidden = dev.alloc(ctx, 64, host_visible=False)
    with pytest.raises(InvalidArgumentError):
        dev.map(ctx, hidden)


def test_free_and_double_free(dev: KmdDevice) -> None:
    ctx = dev.create_context()
    va = dev.alloc(ctx, 4096)
    dev.free(ctx, va)
    assert dev.stats().allocations == 0
    with pytest.raises(DoubleFreeError) as info:
        dev.free(ctx, va)
    assert info.value.address == va
    with pytest.raises(InvalidAddressError):  # freed addresses are never reused
        dev.read(ctx, va, 4)
    assert dev.stats().allocated_bytes == 0


def test_free_of_an_interior_address_is_refused(dev: KmdDevice) -> None:
    ctx = dev.create_context()
    va = dev.alloc(ctx, 4096)
    with pytest.raises(DoubleFreeError):
        dev.free(ctx, va + 16)
    dev.free(ctx, va)


def test_cross_context_access_is_refused_and_harmless(dev: KmdDevice) -> None:
    a, b = dev.create_context(), dev.create_context()
    va = dev.alloc(a, 64)
    dev.write(a, va, b"secret!!")
    with pytest.raises(CrossContextAccessError) as info:
        dev.read(b, va, 8)
    assert info.value.ctx == b and info.value.details["owner"] == a
    with pytest.raises(CrossContextAccessError):
        dev.write(b, va, b"overwrite")
    with pytest.raises(CrossContextAccessError):
        dev.free(b, va)
    with pytest.raises(CrossContextAccessError):
        dev.map(b, va)
    assert dev.read(a, va, 8) == b"secret!!"
    dev.free(a, va)


@pytest.mark.parametrize(("offset", "nbytes"), [(60, 8), (64, 1), (-1, 1), (1 << 40, 4)])
def test_out_of_range_access_is_refused(dev: KmdDevice, offset: int, nbytes: int) -> None:
    ctx = dev.create_context()
    va = dev.alloc(ctx, 64)
    with pytest.raises((InvalidAddressError, InvalidArgumentError)):
        dev.read(ctx, va + offset, nbytes)
    with pytest.raises((InvalidAddressError, InvalidArgumentError)):
        dev.write(ctx, va + offset, bytes(nbytes))
    assert dev.read(ctx, va, 64) == bytes(64)


def test_out_of_memory(dev: KmdDevice) -> None:
    small = KmdDevice("numpy", memory_limit=1 << 20)
    try:
        ctx = small.create_context()
        va = small.alloc(ctx, 600 << 10)
        with pytest.raises(OutOfMemoryError):
            small.alloc(ctx, 600 << 10)
        small.free(ctx, va)
        small.free(ctx, small.alloc(ctx, 600 << 10))
        assert small.stats().allocated_bytes == 0
    finally:
        small.close()


@pytest.mark.parametrize("align", [0, 3, 1 << 31])
def test_bad_alignment(dev: KmdDevice, align: int) -> None:
    ctx = dev.create_context()
    with pytest.raises(InvalidArgumentError) as info:
        dev.alloc(ctx, 64, align=align)
    assert info.value.field == "align"


def test_unknown_context(dev: KmdDevice) -> None:
    with pytest.raises(InvalidHandleError) as info:
        dev.alloc(12345, 64)
    assert (info.value.kind, info.value.handle) == ("context", 12345)


def test_free_in_flight_memory_is_refused_until_the_fence(dev: KmdDevice, rig) -> None:  # type: ignore[no-untyped-def]
    from stack.kmd import KernelId

    gate = dev.create_fence(rig.ctx)
    x = rig.put(np.ones(16, np.float32))
    y = rig.empty((16,))
    value = rig.submit([rig.blob(KernelId.RELU, [x, y])], wait=((gate, 1),))
    with pytest.raises(MemoryInUseError) as info:
        dev.free(rig.ctx, x.addr)
    assert (info.value.fence, info.value.value) == (rig.fence, value)
    assert dev.stats().allocations == 2  # nothing was freed
    dev.signal_fence(rig.ctx, gate, 1)
    dev.wait_fence(rig.ctx, rig.fence, value, timeout_s=10)
    dev.free(rig.ctx, x.addr)
    dev.free(rig.ctx, y.addr)
    assert dev.stats().allocations == 0


def test_destroy_context_frees_everything(dev: KmdDevice) -> None:
    ctx = dev.create_context()
    for _ in range(3):
        dev.alloc(ctx, 1 << 16)
    dev.create_queue(ctx)
    dev.create_fence(ctx)
    dev.destroy_context(ctx)
    s = dev.stats()
    assert (s.contexts, s.queues, s.fences, s.allocations, s.allocated_bytes) == (0, 0, 0, 0, 0)
    with pytest.raises(InvalidHandleError):
        dev.alloc(ctx, 64)
