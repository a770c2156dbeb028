"""Device memory: a virtual address space, its page table, and the allocations behind it.

One address space per device, shared by all contexts so that a context touching another's
address is *told so* (CrossContextAccessError) rather than seeing an unmapped hole. Virtual
addresses are handed out page-aligned from a bump pointer and never reused, so a stale or
freed address is always detected. The page table maps each page to the one allocation that
covers it; the allocation owns its backing storage (a NumPy or CuPy byte array).

Not thread-safe by itself: the device serialises calls under its lock.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from stack.kmd.errors import (
    CrossContextAccessError,
    DoubleFreeError,
    InvalidAddressError,
    MemoryInUseError,
    OutOfMemoryError,
)

PAGE_SHIFT = 16
PAGE_SIZE = 1 << PAGE_SHIFT  # 64 KiB pages keep the table small for large tensors
VA_BASE = 0x1_0000_0000  # nothing is ever mapped below 4 GiB: small integers are never addresses


@dataclass(slots=True, eq=False)
class Allocation:
    """One live allocation: its range, owner, backing storage and in-flight references."""

    va: int
    nbytes: int
    ctx: int
    host_visible: bool
    storage: Any  # backend byte array of nbytes
    inflight: int = 0  # unfinished commands referencing this allocation
    pending: dict[int, int] = field(default_factory=dict)  # fence -> highest value to wait for
    users: set[int] = field(default_factory=set)  # command buffers recorded against it
    #: Writes into it so far: host writes and executed launches with an output in it (what a
    #: prepared launch that keeps a copy of an input checks, see stack.kmd.command.Launch).
    writes: int = 0
    #: Mapped into the host (MAP): its host writes are no longer seen by the KMD.
    mapped: bool = False

    @property
    def end(self) -> int:
        """One past the last byte."""
        return self.va + self.nbytes


class AddressSpace:
    """VA allocator + page table + per-context bookkeeping."""

    def __init__(self, limit_bytes: int) -> None:
        self.limit_bytes = limit_bytes
        self.used_bytes = 0
        self.peak_bytes = 0
        self._next_va = VA_BASE
        self._pages: dict[int, Allocation] = {}
        self._by_base: dict[int, Allocation] = {}

    def __len__(self) -> int:
        return len(self._by_base)

    def map(
        self, ctx: int, nbytes: int, align: int, host_visible: bool, storage: Any
    ) -> Allocation:
        """Reserve a VA range for ``storage`` and enter it in the page table."""
        va = -(-self._next_va // max(align, PAGE_SIZE)) * max(align, PAGE_SIZE)
        span = max(nbytes, 1)
        self._next_va = -(-(va + span) // PAGE_SIZE) * PAGE_SIZE
        alloc = Allocation(va, nbytes, ctx, host_visible, storage)
        for page in range(va >> PAGE_SHIFT, (va + span - 1 >> PAGE_SHIFT) + 1):
            self._pages[page] = alloc
        self._by_base[va] = alloc
        self.used_bytes += nbytes
        self.peak_bytes = max(self.peak_bytes, self.used_bytes)
        return alloc

    def reserve(self, nbytes: int) -> None:
        """Refuse (OutOfMemoryError) when ``nbytes`` more would exceed the budget."""
        if self.used_bytes + nbytes > self.limit_bytes:
            raise OutOfMemoryError(
                f"cannot allocate {nbytes} bytes: {self.used_bytes} of {self.limit_bytes} in use",
                requested=nbytes,
                used=self.used_bytes,
                limit=self.limit_bytes,
            )

    def lookup(self, ctx: int, va: int, nbytes: int) -> Allocation:
        """The allocation of ``ctx`` that wholly contains ``[va, va + nbytes)``."""
        alloc = self._pages.get(va >> PAGE_SHIFT) if va >= 0 else None
        if alloc is None or not alloc.va <= va or va + nbytes > alloc.end:
            raise InvalidAddressError(
                f"range 0x{va:x}+{nbytes} is not inside one live allocation",
                ctx=ctx,
                address=va,
                nbytes=nbytes,
            )
        if alloc.ctx != ctx:
            raise CrossContextAccessError(
                f"range 0x{va:x}+{nbytes} belongs to context {alloc.ctx}, not {ctx}",
                ctx=ctx,
                address=va,
                nbytes=nbytes,
                owner=alloc.ctx,
            )
        return alloc

    def unmap(self, ctx: int, va: int) -> Allocation:
        """Remove the allocation based at ``va`` (refused while in flight or not owned)."""
        alloc = self._by_base.get(va)
        if alloc is None:
            inside = self._pages.get(va >> PAGE_SHIFT) if va >= 0 else None
            if inside is not None and inside.ctx != ctx:
                raise CrossContextAccessError(
                    f"0x{va:x} belongs to context {inside.ctx}", ctx=ctx, address=va
                )
            raise DoubleFreeError(
                f"0x{va:x} is not the base of a live allocation (double free or bad address)",
                ctx=ctx,
                address=va,
            )
        if alloc.ctx != ctx:
            raise CrossContextAccessError(
                f"0x{va:x} belongs to context {alloc.ctx}, not {ctx}", ctx=ctx, address=va
            )
        if alloc.inflight:
            fence, value = max(alloc.pending.items(), key=lambda kv: kv[1])
            raise MemoryInUseError(
                f"0x{va:x} is referenced by {alloc.inflight} unfinished command(s); "
                f"wait on fence {fence} reaching {value} before freeing",
                ctx=ctx,
                address=va,
                fence=fence,
                value=value,
            )
        return self._drop(alloc)

    def is_live(self, alloc: Allocation) -> bool:
        """Whether ``alloc`` is still mapped (not freed)."""
        return self._by_base.get(alloc.va) is alloc

    def owned_by(self, ctx: int) -> list[Allocation]:
        """Every live allocation of ``ctx``."""
        return [a for a in self._by_base.values() if a.ctx == ctx]

    def force_unmap(self, alloc: Allocation) -> None:
        """Remove ``alloc`` regardless of references (context teardown after its queues stop)."""
        self._drop(alloc)

    def _drop(self, alloc: Allocation) -> Allocation:
        for page in range(
            alloc.va >> PAGE_SHIFT, (alloc.va + max(alloc.nbytes, 1) - 1 >> PAGE_SHIFT) + 1
        ):
            del self._pages[page]
        del self._by_base[alloc.va]
        self.used_bytes -= alloc.nbytes
        return alloc
