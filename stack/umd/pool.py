"""A session's memory pool: the device allocations it owns, size bins, and range checks.

The pool allocates through the KMD (one ``alloc`` ioctl per allocation) and remembers each
``(va, nbytes)`` so that stage 1 of the pipeline can check, in O(log n), that a tensor's bytes
lie inside one allocation, and so that closing or expiring the session frees all of them.

On top of that sits a size-binned cache (seed 004 §3.2) for work that allocates and releases
the same sizes over and over — the stages of an operator pipeline: :meth:`MemoryPool.acquire`
rounds a request up to a power-of-two bin (64 B … 16 MiB) and reuses a block released to that
bin before asking the KMD; blocks are tagged with a stage and released together by
:meth:`MemoryPool.release_stage`. Statistics (:class:`PoolStats`) and the 1.5 × peak warning
are in :mod:`stack.umd.pool_stats`.
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Hashable

from stack.kmd.device import KmdDevice
from stack.umd.errors import AddressError, InvalidRequestError
from stack.umd.pool_stats import PoolStats, Usage

#: Smallest and largest bin (bytes); bins are the powers of two in between.
MIN_BIN = 64
MAX_BIN = 16 << 20


def bin_size(nbytes: int) -> int | None:
    """The bin a request of ``nbytes`` goes to (a power of two ≥ 64), or None above 16 MiB."""
    if nbytes > MAX_BIN:
        return None
    return max(MIN_BIN, 1 << (nbytes - 1).bit_length())


class MemoryPool:
    """Allocations of one session on one KMD context; thread-safe.

    Lifetime: an allocation lives until :meth:`free` or :meth:`release_all`. The KMD refuses to
    free memory an unfinished command still references; callers wait on the ticket first.

    Binned blocks (:meth:`acquire`) live until :meth:`release` / :meth:`release_stage`, which
    return them to their bin rather than to the KMD. Synchronisation is the caller's: release a
    block only after the tickets of the work that uses it completed (the KMD cannot refuse, the
    memory is not freed). A released block is no longer an allocation of the session for range
    checks (requests naming it are refused) until it is handed out again; its contents are then
    whatever its previous user left. :meth:`trim` returns the cached blocks to the KMD.
    """

    def __init__(self, device: KmdDevice, ctx: int) -> None:
        self._device = device
        self._ctx = ctx
        self._bases: list[int] = []
        self._sizes: dict[int, int] = {}
        self._lock = threading.Lock()
        self._free_bins: dict[int, list[int]] = {}  # bin size -> cached block VAs
        self._blocks: dict[int, tuple[int, int, Hashable]] = {}  # va -> (block, request, stage)
        self.usage = Usage()

    # -- plain allocations ---------------------------------------------------------------
    def alloc(self, nbytes: int, align: int = 64) -> int:
        _check_request(nbytes, align)
        va = self._device.alloc(self._ctx, nbytes, align=max(align, 1))
        with self._lock:
            self._track(va, nbytes)
            self.usage.taken(nbytes, nbytes, fresh=nbytes, binned=False)
        return va

    def free(self, va: int) -> None:
        with self._lock:
            if va not in self._sizes:
                raise AddressError(f"0x{va:x} is not an allocation of this session", field="addr")
        self._device.free(self._ctx, va)
        with self._lock:
            size = self._sizes.pop(va)
            self._bases.remove(va)
            block = self._blocks.pop(va, None)
            request = block[1] if block else size
            self.usage.given_back(size, request, dropped=size)

    # -- binned blocks -------------------------------------------------------------------
    def acquire(self, nbytes: int, *, stage: Hashable = None, align: int = 64) -> int:
        """A block of at least ``nbytes`` (sync), from its bin when one is cached; tagged with
        ``stage`` for :meth:`release_stage`. Requests above 16 MiB get an exact allocation that
        goes back to the KMD on release. Errors: InvalidRequestError(field=nbytes|align), the
        KMD's out-of-memory (ResourceExhaustedError through the session)."""
        _check_request(nbytes, align)
        size = bin_size(nbytes)
        if size is not None:
            with self._lock:
                cached = self._free_bins.get(size, [])
                for i, va in enumerate(cached):
                    if va % align == 0:
                        del cached[i]
                        self._track(va, size)
                        self._blocks[va] = (size, nbytes, stage)
                        self.usage.taken(size, nbytes, fresh=0)
                        return va
        block = size if size is not None else nbytes
        va = self._device.alloc(self._ctx, block, align=align)
        with self._lock:
            self._track(va, block)
            self._blocks[va] = (block, nbytes, stage)
            self.usage.taken(block, nbytes, fresh=block)
        return va

    def release(self, va: int) -> None:
        """Return one block from :meth:`acquire` to its bin (sync; see the class contract)."""
        with self._lock:
            entry = self._blocks.pop(va, None)
            if entry is None:
                raise AddressError(f"0x{va:x} is not a block of this session's pool", field="addr")
            block, request, _ = entry
            self._untrack(va)
            if bin_size(block) == block:
                self._free_bins.setdefault(block, []).append(va)
                self.usage.given_back(block, request, dropped=0)
                return
        self._device.free(self._ctx, va)  # an oversize block: back to the KMD
        with self._lock:
            self.usage.given_back(block, request, dropped=block)

    def release_stage(self, stage: Hashable) -> int:
        """Release every block still held by ``stage`` (sync); returns how many."""
        with self._lock:
            held = [va for va, (_, _, s) in self._blocks.items() if s == stage]
        for va in held:
            self.release(va)
        return len(held)

    def trim(self) -> int:
        """Free every cached block to the KMD (sync); returns the bytes freed."""
        with self._lock:
            cached = [(size, va) for size, vas in self._free_bins.items() for va in vas]
            self._free_bins = {}
        for size, va in cached:
            self._device.free(self._ctx, va)
            with self._lock:
                self.usage.dropped(size)
        return sum(size for size, _ in cached)

    def stats(self) -> PoolStats:
        with self._lock:
            return self.usage.snapshot(len(self._blocks), self._cached_count())

    def begin_window(self) -> None:
        """Start a measurement window (one pipeline run): the peak counts from here."""
        with self._lock:
            self.usage.begin_window()

    def end_window(self) -> bool:
        """Close the window; True when this ends the 3rd window in a row whose allocated bytes
        stayed above 1.5 × its peak (then a warning is logged and counted once per streak)."""
        with self._lock:
            return self.usage.end_window()

    # -- range checks --------------------------------------------------------------------
    def contains(self, addr: int, nbytes: int) -> bool:
        """True when ``[addr, addr + nbytes)`` lies inside a single allocation."""
        return self.base_of(addr, nbytes) is not None

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
        """Free every allocation and cached block (the context is being torn down)."""
        with self._lock:
            bases, self._bases, self._sizes = self._bases, [], {}
            cached = [va for vas in self._free_bins.values() for va in vas]
            self._free_bins, self._blocks = {}, {}
            self.usage = Usage()
        for va in bases + cached:
            self._device.free(self._ctx, va)

    # -- internals (under the lock) ------------------------------------------------------
    def _track(self, va: int, nbytes: int) -> None:
        bisect.insort(self._bases, va)
        self._sizes[va] = nbytes

    def _untrack(self, va: int) -> None:
        del self._sizes[va]
        self._bases.remove(va)

    def _cached_count(self) -> int:
        return sum(len(v) for v in self._free_bins.values())


def _check_request(nbytes: int, align: int) -> None:
    if nbytes <= 0:
        raise InvalidRequestError(f"cannot allocate {nbytes} bytes", field="nbytes")
    if align <= 0 or align & (align - 1):
        raise InvalidRequestError(f"alignment {align} is not a power of two", field="align")
