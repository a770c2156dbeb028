"""KmdDevice: the ioctl entry point of the KMD shim, and its typed wrappers.

``ioctl(cmd, args)`` is the single entry: :func:`stack.kmd.validate.validate` checks the
command and its argument record, then the dispatch table calls the handler of
:class:`stack.kmd.driver.Driver`. Every typed method below issues exactly one ioctl.

Thread-safe. Synchronous refusals (typed KmdError subclasses) leave the state unchanged;
failures of submitted work arrive asynchronously, through the fence.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from stack.kmd import ioctl as io
from stack.kmd.driver import Driver
from stack.kmd.dtypes import DType
from stack.kmd.errors import DeviceClosedError, InvalidArgumentError
from stack.kmd.faults import FaultKind, FaultRecord
from stack.kmd.ioctl import Ioctl, KmdStats
from stack.kmd.kernels import parallel
from stack.kmd.kernels.registry import select_backend
from stack.kmd.opmod.binding import OperatorBinding
from stack.kmd.opmod.capabilities import DeviceCapabilities, capabilities_of
from stack.kmd.opmod.module import ModuleRegistry, registry
from stack.kmd.validate import validate


class KmdDevice:
    """One simulated device: its contexts, memory, queues and fences, and a kernel backend."""

    def __init__(
        self,
        backend: str | None = None,
        *,
        memory_limit: int | None = None,
        threads: int | None = None,
        modules: ModuleRegistry | None = None,
    ) -> None:
        """Open the device. ``backend``: "numpy" | "cupy" | None = auto ($REFSTACK_BACKEND,
        else CuPy when a GPU is usable, else NumPy). ``threads``: compute threads a launch may
        be split over (None: $REFSTACK_THREADS, default 1). ``modules``: the operator modules
        whose best supported implementation of each kernel the device runs (None: the
        process-wide registry of installed modules). BackendUnavailableError /
        UnknownKernelError when the named backend cannot run."""
        impl = select_backend(backend)
        self.backend: str = impl.name
        self.threads: int = threads if threads is not None else parallel.threads_from_env()
        if self.threads < 1:
            raise InvalidArgumentError(f"threads must be >= 1, got {threads}", field="threads")
        limit = memory_limit or impl.memory_limit()
        self.operators = OperatorBinding(
            modules if modules is not None else registry(), capabilities_of(impl.name, limit)
        )
        self._driver: Driver | None = Driver(impl, limit, self.threads, self.operators.kernel)
        d = self._driver
        self._dispatch: dict[Ioctl, Callable[[Any], Any]] = {
            Ioctl.CREATE_CONTEXT: d.create_context,
            Ioctl.DESTROY_CONTEXT: d.destroy_context,
            Ioctl.ALLOC: d.alloc,
            Ioctl.FREE: d.free,
            Ioctl.WRITE: d.write,
            Ioctl.READ: d.read,
            Ioctl.MAP: d.map,
            Ioctl.CREATE_QUEUE: d.create_queue,
            Ioctl.DESTROY_QUEUE: d.destroy_queue,
            Ioctl.CREATE_FENCE: d.create_fence,
            Ioctl.DESTROY_FENCE: d.destroy_fence,
            Ioctl.SUBMIT: d.submit,
            Ioctl.FENCE_VALUE: d.fence_value,
            Ioctl.WAIT_FENCE: d.wait_fence,
            Ioctl.ON_FENCE: d.on_fence,
            Ioctl.INJECT_FAULT: d.inject_fault,
            Ioctl.RESET_QUEUE: d.reset_queue,
            Ioctl.STATS: d.stats,
            Ioctl.SIGNAL_FENCE: d.signal_fence,
            Ioctl.RESET_CONTEXT: d.reset_context,
            Ioctl.CREATE_CMDBUF: d.create_cmdbuf,
            Ioctl.EXECUTE_CMDBUF: d.execute_cmdbuf,
            Ioctl.DESTROY_CMDBUF: d.destroy_cmdbuf,
        }

    def ioctl(self, cmd: Ioctl, args: Any) -> Any:
        """Validate ``args`` for ``cmd`` and dispatch it. Sync; raises the handler's KmdError."""
        if self._driver is None:
            raise DeviceClosedError("the device is closed", op=getattr(cmd, "name", str(cmd)))
        return self._dispatch[validate(cmd, args)](args)

    # ---------------------------------------------------------------- contexts
    def create_context(self) -> int:
        """A new context handle. It owns the allocations, queues and fences made under it."""
        result: int = self.ioctl(Ioctl.CREATE_CONTEXT, io.CreateContextArgs())
        return result

    def destroy_context(self, ctx: int) -> None:
        """Stop the context's queues (the running command finishes; pending ones are dropped,
        their fences fail with RESET), then free every allocation and fence it owns."""
        self.ioctl(Ioctl.DESTROY_CONTEXT, io.ContextArgs(ctx))

    # ---------------------------------------------------------------- memory
    def alloc(self, ctx: int, nbytes: int, align: int = 256, host_visible: bool = True) -> int:
        """Allocate zeroed device memory; returns its VA (aligned to ``align``). Sync.
        OutOfMemoryError over budget; InvalidArgumentError for a bad size or alignment."""
        result: int = self.ioctl(Ioctl.ALLOC, io.AllocArgs(ctx, nbytes, align, host_visible))
        return result

    def free(self, ctx: int, va: int) -> None:
        """Free the allocation based at ``va`` at once. The caller must first wait on the fence of
        every command that references it: otherwise MemoryInUseError (naming that fence and
        value) and nothing is freed. DoubleFreeError / CrossContextAccessError otherwise."""
        self.ioctl(Ioctl.FREE, io.FreeArgs(ctx, va))

    def write(
        self, ctx: int, va: int, data: bytes | memoryview | np.ndarray, offset: int = 0
    ) -> None:
        """Copy host bytes to ``va + offset``. Sync; not ordered with queued work (wait first)."""
        if isinstance(data, np.ndarray):
            if not data.flags.c_contiguous:
                data = np.ascontiguousarray(data)
            view = data.reshape(-1).view(np.uint8).data
        else:
            view = memoryview(data).cast("B")
        self.ioctl(Ioctl.WRITE, io.WriteArgs(ctx, va, view, offset))

    def read(self, ctx: int, va: int, nbytes: int, offset: int = 0) -> bytes:
        """Copy ``nbytes`` at ``va + offset`` to the host. Sync; wait on the producer first."""
        result: bytes = self.ioctl(Ioctl.READ, io.ReadArgs(ctx, va, nbytes, offset))
        return result

    def read_array(self, ctx: int, va: int, shape: tuple[int, ...], dtype: DType) -> np.ndarray:
        """A host copy of the tensor at ``va``. Sync; wait on the producer first."""
        nbytes = math.prod(shape) * dtype.itemsize
        args = io.ReadArgs(ctx, va, nbytes, 0, tuple(shape), dtype)
        result: np.ndarray = self.ioctl(Ioctl.READ, args)
        return result

    def map(self, ctx: int, va: int) -> np.ndarray:
        """A host view (uint8, zero-copy) of a host-visible allocation; valid until it is freed.
        NumPy backend only (BackendUnavailableError on device memory)."""
        result: np.ndarray = self.ioctl(Ioctl.MAP, io.MapArgs(ctx, va))
        return result

    # ---------------------------------------------------------------- queues and fences
    def create_queue(self, ctx: int) -> int:
        """A new command queue (ring buffer + doorbell + worker) owned by ``ctx``."""
        result: int = self.ioctl(Ioctl.CREATE_QUEUE, io.CreateQueueArgs(ctx))
        return result

    def destroy_queue(self, ctx: int, queue: int) -> None:
        """Reset the queue (pending work dropped, fences failed with RESET) and stop it."""
        self.ioctl(Ioctl.DESTROY_QUEUE, io.QueueArgs(ctx, queue))

    def create_fence(self, ctx: int, initial: int = 0) -> int:
        """A timeline fence (monotonic u64) starting at ``initial``."""
        result: int = self.ioctl(Ioctl.CREATE_FENCE, io.CreateFenceArgs(ctx, initial))
        return result

    def destroy_fence(self, ctx: int, fence: int) -> None:
        """Forget a fence with no work left to signal it."""
        self.ioctl(Ioctl.DESTROY_FENCE, io.FenceArgs(ctx, fence))

    def submit(
        self,
        ctx: int,
        queue: int,
        blobs: Sequence[bytes],
        *,
        signal: tuple[int, int],
        wait: Sequence[tuple[int, int]] = (),
    ) -> None:
        """Queue ``blobs`` as one command. Async: every blob (format, kernel ABI) and every address
        (inside one of ``ctx``'s allocations) is checked before anything is queued, refusals are
        raised here; then the doorbell rings and the call returns. The queue waits for each
        ``wait`` (fence, value), runs the blobs in order, then sets fence := value, or marks it
        failed (sticky) on a fault. Referenced memory cannot be freed until then."""
        sig: Any = signal if type(signal) is tuple else tuple(signal)  # checked by validate()
        waits: Any = tuple(w if type(w) is tuple else tuple(w) for w in wait) if wait else ()
        args = io.SubmitArgs(
            ctx, queue, blobs if type(blobs) is tuple else tuple(blobs), sig, waits
        )
        self.ioctl(Ioctl.SUBMIT, args)

    # ---------------------------------------------------------------- command buffers
    def create_cmdbuf(self, ctx: int, blobs: Sequence[bytes]) -> int:
        """Record ``blobs`` as a reusable command buffer of ``ctx``; returns its handle. Sync:
        every blob and address is checked and bound here, once (the errors of submit). The
        buffer lives until destroy_cmdbuf or the context's destruction."""
        result: int = self.ioctl(Ioctl.CREATE_CMDBUF, io.CreateCmdbufArgs(ctx, tuple(blobs)))
        return result

    def execute_cmdbuf(
        self,
        ctx: int,
        queue: int,
        cmdbuf: int,
        *,
        signal: tuple[int, int],
        wait: Sequence[tuple[int, int]] = (),
        rebind: Sequence[tuple[int, int]] = (),
        inline: bool = False,
    ) -> bool:
        """Queue one execution of ``cmdbuf`` — as submit of its blobs, with nothing re-checked.
        Async (inline: run on this thread before returning when the queue is idle and nothing
        is awaited; True then when it ran and signalled, so the fence need not be asked).
        ``rebind`` (old base, new base) re-points allocations first, for this and later
        executions. CommandBufferInvalidError when it references a freed allocation that
        is not rebound; execution faults arrive through the fence, the buffer stays usable."""
        sig: Any = signal if type(signal) is tuple else tuple(signal)
        waits: Any = tuple(w if type(w) is tuple else tuple(w) for w in wait) if wait else ()
        moves: Any = tuple(tuple(r) for r in rebind) if rebind else ()
        ran: bool = self.ioctl(
            Ioctl.EXECUTE_CMDBUF,
            io.ExecuteCmdbufArgs(ctx, queue, cmdbuf, sig, waits, moves, inline),
        )
        return ran

    def destroy_cmdbuf(self, ctx: int, cmdbuf: int) -> None:
        """Forget a command buffer (executions already queued still run)."""
        self.ioctl(Ioctl.DESTROY_CMDBUF, io.CmdbufArgs(ctx, cmdbuf))

    def fence_value(self, ctx: int, fence: int) -> int:
        """The fence's current value (non-blocking)."""
        result: int = self.ioctl(Ioctl.FENCE_VALUE, io.FenceArgs(ctx, fence))
        return result

    def signal_fence(self, ctx: int, fence: int, value: int) -> None:
        """Host-side signal: set the fence to ``value`` (must exceed every scheduled value)."""
        self.ioctl(Ioctl.SIGNAL_FENCE, io.SignalFenceArgs(ctx, fence, value))

    def wait_fence(self, ctx: int, fence: int, value: int, timeout_s: float | None = None) -> None:
        """Block until the fence reaches ``value``. FenceTimeoutError after ``timeout_s`` (None:
        no limit); FenceFailedError (carrying the FaultRecord) when the fence has failed."""
        self.ioctl(Ioctl.WAIT_FENCE, io.WaitFenceArgs(ctx, fence, value, timeout_s))

    def on_fence(
        self, ctx: int, fence: int, value: int, callback: Callable[[int, FaultRecord | None], None]
    ) -> None:
        """Completion interrupt: ``callback(reached, fault)`` once the fence reaches ``value`` or
        fails; at once (in this thread) if it already has, else on the queue's worker thread."""
        self.ioctl(Ioctl.ON_FENCE, io.OnFenceArgs(ctx, fence, value, callback))

    # ---------------------------------------------------------------- faults
    def inject_fault(self, ctx: int, queue: int, kind: FaultKind, *, after: int = 0) -> None:
        """Make the command that runs after ``after`` more successful ones fail with ``kind``
        (ECC, BAD_ADDRESS: fence fails; HANG: it never completes until reset_queue)."""
        self.ioctl(Ioctl.INJECT_FAULT, io.InjectFaultArgs(ctx, queue, kind, after))

    def reset_queue(self, ctx: int, queue: int) -> None:
        """Drop pending work (their fences fail with RESET), end a hang, clear the fault state:
        the queue takes submissions again. Sync. Failed fences stay failed (use new ones)."""
        self.ioctl(Ioctl.RESET_QUEUE, io.QueueArgs(ctx, queue))

    def reset_context(self, ctx: int) -> None:
        """reset_queue on every queue of ``ctx`` (memory and fences are kept). Sync."""
        self.ioctl(Ioctl.RESET_CONTEXT, io.ContextArgs(ctx))

    def capabilities(self) -> DeviceCapabilities:
        """What this device reports: its hardware features and limits (declared for NumPy,
        read from the GPU's attributes for CuPy). Sync; valid after close."""
        return self.operators.caps

    def stats(self) -> KmdStats:
        """Live counters: contexts, queues, fences, allocations, bytes, commands, faults."""
        result: KmdStats = self.ioctl(Ioctl.STATS, io.StatsArgs())
        return result

    def intra_op(self) -> tuple[int, int]:
        """Intra-op counters since open, read locally like ``threads`` (no ioctl): grid tiles
        run, and passes that ran over more than one thread (:mod:`stack.kmd.kernels.parallel`).
        DeviceClosedError after close()."""
        if self._driver is None:
            raise DeviceClosedError("the device is closed", op="intra_op")
        pool = self._driver.pool
        return pool.tiles, pool.splits

    def close(self) -> None:
        """Destroy every context (as destroy_context) and refuse further ioctls. Idempotent."""
        if self._driver is None:
            return
        for ctx in self._driver.context_ids():
            self.destroy_context(ctx)
        self._driver.pool.close()
        self._driver = None

    def __enter__(self) -> KmdDevice:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
