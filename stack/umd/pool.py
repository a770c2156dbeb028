"""A session's memory pool: the device allocations it owns, and range checks against them.

The pool allocates through the KMD (one ``alloc`` ioctl per allocation) and remembers each
``(va, nbytes)`` so that stage 1 of the pipeline can check, in O(log n), that a tensor's bytes
lie inside one allocation, and so that closing or expiring the session frees all of them.
"""

from __future__ import annotations

import bisect
import threading

from stack.kmd.device import KmdDevice
from stack.umd.errors import AddressError, InvalidRequestError


class MemoryPool:
    """Allocations of one session on one KMD context; thread-safe.

    Lifetime: an allocation lives until :meth:`free` or :meth:`release_all`. The KMD refuses to
    free memory an unfinished command still references; callers wait on the ticket first.
    """

    def __init__(self, device: KmdDevice, ctx: int) -> None:
        self._device = device
        self._ctx = ctx
        self._bases: list[int] = []
        self._sizes: dict[int, int] = {}
        self._lock = threading.Lock()

    def alloc(self, nbytes: int, align: int = 64) -> int:
        if nbytes <= 0:
            raise InvalidRequestError(f"cannot allocate {nbytes} bytes", field="nbytes")
        if align <= 0 or align & (align - 1):
            raise InvalidRequestError(f"alignment {align} is not a power of two", field="align")
        va = self._device.alloc(self._ctx, nbytes, align=max(align, 1))
        with self._lock:
            bisect.insort(self._bases, va)
            self._sizes[va] = nbytes
        return va

    def free(self, va: int) -> None:
        with self._lock:
            if va not in self._sizes:
                raise AddressError(f"0x{va:x} is not an allocation of this session", field="addr")
        self._device.free(self._ctx, va)
        with self._lock:
            del self._sizes[va]
            self._bases.remove(va)

    def contains(self, addr: int, nbytes: int) -> bool:
        """True when ``[addr, addr + nbytes)`` lies inside a single allocation."""
        bases = self._bases
        i = bisect.bisect_right(bases, addr) - 1
        if i < 0:
            return False
        base = bases[i]
        size = self._sizes.get(base)
        return size is not None and addr + nbytes <= base + size

    def base_of(self, addr: int, nbytes: int) -> int | None:
        """The base of the allocation holding ``[addr, addr + nbytes)``, or None."""
        i = bisect.bisect_right(self._bases, addr) - 1
        if i < 0:
            return None
        base = self._bases[i]
        size = self._sizes.get(base)
        return base if size is not None and addr + nbytes <= base + size else None

    def first_outside(self, addrs: tuple[int, ...], sizes: tuple[int, ...]) -> int:
        """Index of the first range ``[addrs[i], +sizes[i])`` not inside one allocation, or -1."""
        bases, table, find = self._bases, self._sizes, bisect.bisect_right
        for i, addr in enumerate(addrs):
            j = find(bases, addr) - 1
            if j < 0:
                return i
            base = bases[j]
            size = table.get(base)
            if size is None or addr + sizes[i] > base + size:
                return i
        return -1

    def size_of(self, va: int) -> int:
        return self._sizes[va]

    @property
    def live(self) -> int:
        return len(self._sizes)

    @property
    def live_bytes(self) -> int:
        return sum(self._sizes.values())

    def release_all(self) -> None:
        """Free every allocation (the context is being torn down; the queues are drained)."""
        with self._lock:
            bases, self._bases, self._sizes = self._bases, [], {}
        for va in bases:
            self._device.free(self._ctx, va)
