"""Client-side address map: the addresses a caller holds stay valid across server restarts.

A caller keeps the address ``UmdClient.alloc`` returned (its *handle*). Normally the handle is
the device address. After a restart the client re-allocates in the new session and the device
may hand out different addresses; the map then translates handle → current address. A new
allocation whose device range overlaps a handle already in use gets a fresh handle above all
others, so a handle never means two allocations.
"""

from __future__ import annotations

import bisect
import threading
from dataclasses import dataclass

_PAGE = 1 << 16


@dataclass(slots=True)
class Entry:
    """One allocation: the caller's handle, its size and alignment, its current device address."""

    handle: int
    nbytes: int
    align: int
    current: int


class AddressMap:
    """Handles of one client's allocations, in allocation order and sorted by handle."""

    def __init__(self) -> None:
        self._order: list[Entry] = []
        self._handles: list[int] = []
        self._by_handle: list[Entry] = []
        self.moved = False
        self._lock = threading.Lock()

    def add(self, va: int, nbytes: int, align: int) -> int:
        """Record a new allocation at device address ``va``; returns its handle."""
        with self._lock:
            handle = va if self._free_range(va, nbytes) else self._fresh(align)
            e = Entry(handle, nbytes, align, va)
            i = bisect.bisect_right(self._handles, handle)
            self._handles.insert(i, handle)
            self._by_handle.insert(i, e)
            self._order.append(e)
            self.moved = self.moved or handle != va
            return handle

    def remove(self, handle: int) -> Entry:
        with self._lock:
            i = bisect.bisect_left(self._handles, handle)
            if i == len(self._handles) or self._handles[i] != handle:
                raise KeyError(handle)
            e = self._by_handle.pop(i)
            del self._handles[i]
            self._order.remove(e)
            return e

    def entry(self, addr: int) -> Entry | None:
        """The allocation whose handle range holds ``addr``."""
        i = bisect.bisect_right(self._handles, addr) - 1
        if i >= 0:
            e = self._by_handle[i]
            if addr < e.handle + max(e.nbytes, 1):
                return e
        return None

    def resolve(self, addr: int) -> int:
        """The current device address of ``addr`` (a handle or an address inside one)."""
        if not self.moved:
            return addr
        e = self.entry(addr)
        return addr if e is None else e.current + (addr - e.handle)

    def in_order(self) -> list[Entry]:
        """Every live allocation, oldest first (the order to re-allocate them in)."""
        return list(self._order)

    def rebind(self, e: Entry, va: int) -> None:
        """The allocation now lives at ``va`` (after re-allocation in a new session)."""
        e.current = va
        self.moved = self.moved or va != e.handle

    def _free_range(self, start: int, nbytes: int) -> bool:
        i = bisect.bisect_right(self._handles, start + max(nbytes, 1) - 1) - 1
        if i < 0:
            return True
        e = self._by_handle[i]
        return e.handle + max(e.nbytes, 1) <= start

    def _fresh(self, align: int) -> int:
        top = max((e.handle + max(e.nbytes, 1) for e in self._order), default=0)
        step = max(align, _PAGE)
        return -(-(top + _PAGE) // step) * step
