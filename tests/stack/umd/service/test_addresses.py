from __future__ import annotations

import pytest

from stack.umd.service.addresses import AddressMap


def test_identity_until_something_moves() -> None:
    m = AddressMap()
    a = m.add(0x10000, 256, 64)
    assert a == 0x10000 and not m.moved and m.resolve(a + 8) == a + 8


def test_rebind_remaps_inside_the_allocation_only() -> None:
    m = AddressMap()
    a = m.add(0x10000, 256, 64)
    b = m.add(0x20000, 64, 64)
    m.rebind(m.in_order()[0], 0x90000)
    assert m.moved
    assert m.resolve(a) == 0x90000 and m.resolve(a + 255) == 0x90000 + 255
    assert m.resolve(b) == 0x20000
    assert m.resolve(0x5) == 0x5  # not a handle: passed through


def test_a_colliding_new_allocation_gets_a_fresh_handle() -> None:
    """After a restart the device may reuse an address that is still another handle."""
    m = AddressMap()
    old = m.add(0x10000, 4096, 64)
    m.rebind(m.in_order()[0], 0x50000)  # old now lives elsewhere
    new = m.add(0x10000, 128, 256)  # the new server gave out the old address again
    assert new != old and new % 0x10000 == 0 and new >= old + 4096
    assert m.resolve(new) == 0x10000 and m.resolve(old) == 0x50000
    assert [e.handle for e in m.in_order()] == [old, new]


def test_remove() -> None:
    m = AddressMap()
    a = m.add(0x10000, 16, 64)
    assert m.remove(a).nbytes == 16
    with pytest.raises(KeyError):
        m.remove(a)
    assert m.entry(a) is None
