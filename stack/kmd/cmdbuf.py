"""Reusable command buffers: launches recorded, validated and bound once, executed many times.

The model is IREE's reusable command buffer (or a CUDA graph): CREATE_CMDBUF decodes every
blob, checks it against its kernel ABI and resolves every tensor address to a view of the
context's memory — once; an untiled launch whose kernel has a preparer is made into one
closure then (:mod:`stack.kmd.kernels.prepared_np`). EXECUTE_CMDBUF then queues the recorded
launches with its own waits and signal, like a SUBMIT that has nothing left to check. The KMD
owns the buffer and the addresses in it: an execution may *rebind* an allocation (old base →
new base) and the KMD patches every tensor of the buffer inside the old allocation to the same
offset in the new one, checks the patched blobs as at record time, and keeps the result for
later executions.

Invalidation is per allocation: each allocation lists the buffers recorded against it
(``Allocation.users``); freeing it marks exactly those buffers stale, and executing a stale
buffer is refused (CommandBufferInvalidError naming the freed address) until an execution
rebinds that allocation. Other buffers, and other contexts, are untouched. A fault while a
buffer executes fails that execution's fence only: the buffer itself is unchanged, so after
the queue is reset it executes again.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from stack.kmd import blob as blobfmt
from stack.kmd.command import Launch
from stack.kmd.errors import InvalidArgumentError
from stack.kmd.memory import AddressSpace, Allocation
from stack.kmd.submit import Planner


@dataclass(slots=True, eq=False)
class CommandBuffer:
    """One recorded buffer of a context: its blobs, bound launches and referenced allocations.

    ``extents`` keeps (base, nbytes) of every allocation it referenced when bound, so a rebind
    still knows an allocation's range after it was freed; ``stale`` is the base of a freed one.
    """

    handle: int
    ctx: int
    blobs: tuple[bytes, ...]
    launches: list[Launch]
    allocs: list[Allocation]
    extents: dict[int, int] = field(default_factory=dict)
    stale: int | None = None


def record(
    handle: int, ctx: int, blobs: tuple[bytes, ...], planner: Planner, space: AddressSpace
) -> CommandBuffer:
    """Bind ``blobs`` in ``ctx`` (BlobFormatError, KernelArgumentError, AccessViolationError)
    and register the buffer on every allocation it references."""
    launches, allocs = planner.bind_all(blobs, ctx, space, prepare=True)
    buf = CommandBuffer(handle, ctx, blobs, launches, allocs, {a.va: a.nbytes for a in allocs})
    for alloc in allocs:
        alloc.users.add(handle)
    return buf


def forget(buf: CommandBuffer) -> None:
    """Unregister ``buf`` from the allocations it references (destroy)."""
    for alloc in buf.allocs:
        alloc.users.discard(buf.handle)


def rebind(
    buf: CommandBuffer,
    pairs: tuple[tuple[int, int], ...],
    planner: Planner,
    space: AddressSpace,
) -> None:
    """Re-point ``buf``: every tensor inside allocation ``old`` moves to the same offset in the
    live allocation based at ``new``. The patched blobs are bound like new ones before anything
    changes; a refusal (InvalidArgumentError for an ``old`` the buffer never referenced,
    AccessViolationError when a tensor does not fit in ``new``) leaves the buffer as it was."""
    moves: dict[int, tuple[int, int]] = {}
    for old, new in pairs:
        size = buf.extents.get(old)
        if size is None:
            raise InvalidArgumentError(
                f"command buffer {buf.handle} references no allocation based at 0x{old:x}",
                field="rebind",
            )
        moves[old] = (size, new)
    blobs = tuple(_patch(data, moves) for data in buf.blobs)
    launches, allocs = planner.bind_all(blobs, buf.ctx, space, prepare=True)
    forget(buf)
    buf.blobs, buf.launches, buf.allocs = blobs, launches, allocs
    buf.extents = {a.va: a.nbytes for a in allocs}
    buf.stale = None
    for alloc in allocs:
        alloc.users.add(buf.handle)


def _patch(data: bytes, moves: dict[int, tuple[int, int]]) -> bytes:
    decoded = blobfmt.decode(data)
    params = []
    changed = False
    for p in decoded.params:
        for old, (size, new) in moves.items():
            if old <= p.addr < old + size:
                p = dataclasses.replace(p, addr=new + (p.addr - old))
                changed = True
                break
        params.append(p)
    if not changed:
        return data
    return blobfmt.encode(dataclasses.replace(decoded, params=tuple(params)))
