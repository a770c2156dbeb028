"""Errors of the KMD shim: every refusal and every failure has its own type with fields.

Refusals (bad argument, bad handle, bad address, memory still in use, corrupt blob) are
raised synchronously by the ioctl that was refused, and leave the driver's state unchanged.
Failures of submitted work arrive later, through the fence: ``wait_fence`` raises
:class:`FenceFailedError` carrying the :class:`~stack.kmd.faults.FaultRecord`.
"""

from __future__ import annotations

from typing import Any

from stack.errors import KmdError
from stack.kmd.faults import FaultRecord

__all__ = [
    "AccessViolationError",
    "BackendUnavailableError",
    "BlobFormatError",
    "CommandBufferInvalidError",
    "CrossContextAccessError",
    "DeviceClosedError",
    "DeviceLostError",
    "DoubleFreeError",
    "FenceFailedError",
    "FenceTimeoutError",
    "InvalidAddressError",
    "InvalidArgumentError",
    "InvalidHandleError",
    "KernelArgumentError",
    "KmdError",
    "MemoryInUseError",
    "OutOfMemoryError",
    "QueueFaultedError",
    "QueueFullError",
    "UnknownKernelError",
    "UnsupportedDTypeError",
]


class InvalidArgumentError(KmdError):
    """An ioctl argument is malformed (wrong type, negative size, bad alignment ...)."""

    def __init__(self, message: str, *, field: str | None = None, **details: Any) -> None:
        super().__init__(message, field=field, **details)
        self.field = field


class UnsupportedDTypeError(InvalidArgumentError):
    """A dtype the KMD has no DType for."""


class InvalidHandleError(KmdError):
    """A context, queue or fence handle that does not exist (or belongs to another context)."""

    def __init__(self, message: str, *, kind: str, handle: int, **details: Any) -> None:
        super().__init__(message, kind=kind, handle=handle, **details)
        self.kind = kind
        self.handle = handle


class AccessViolationError(KmdError):
    """An address range the calling context may not touch."""

    def __init__(self, message: str, *, ctx: int, address: int, nbytes: int = 0, **details: Any):
        super().__init__(message, ctx=ctx, address=address, nbytes=nbytes, **details)
        self.ctx = ctx
        self.address = address
        self.nbytes = nbytes


class InvalidAddressError(AccessViolationError):
    """The range is not (entirely) inside one live allocation: unmapped or out of range."""


class CrossContextAccessError(AccessViolationError):
    """The range belongs to another context's allocation."""


class OutOfMemoryError(KmdError):
    """The device memory budget cannot hold the requested allocation."""


class DoubleFreeError(KmdError):
    """``free`` of an address that is no longer (or never was) an allocation's base."""

    def __init__(self, message: str, *, ctx: int, address: int) -> None:
        super().__init__(message, ctx=ctx, address=address)
        self.ctx = ctx
        self.address = address


class MemoryInUseError(KmdError):
    """``free`` refused: a submitted, unfinished command still references the allocation.

    The caller must wait on ``fence`` reaching ``value`` first (seed 003 §3.3: the UMD
    guarantees completion before release; the KMD then reclaims at once).
    """

    def __init__(self, message: str, *, ctx: int, address: int, fence: int, value: int) -> None:
        super().__init__(message, ctx=ctx, address=address, fence=fence, value=value)
        self.ctx = ctx
        self.address = address
        self.fence = fence
        self.value = value


class QueueFaultedError(KmdError):
    """Submission refused: the queue stopped on a fault and needs ``reset_queue``."""

    def __init__(self, message: str, *, queue: int, fault: FaultRecord) -> None:
        super().__init__(message, queue=queue, fault=fault.to_dict())
        self.queue = queue
        self.fault = fault


class QueueFullError(KmdError):
    """The ring buffer stayed full for longer than the submit timeout."""


class FenceTimeoutError(KmdError):
    """``wait_fence`` reached its timeout before the fence reached the target."""

    def __init__(self, message: str, *, fence: int, value: int, reached: int) -> None:
        super().__init__(message, fence=fence, value=value, reached=reached)
        self.fence = fence
        self.value = value
        self.reached = reached


class FenceFailedError(KmdError):
    """The fence carries a (sticky) failure: the work it tracked faulted."""

    def __init__(self, message: str, *, fence: int, value: int, fault: FaultRecord) -> None:
        super().__init__(message, fence=fence, value=value, fault=fault.to_dict())
        self.fence = fence
        self.value = value
        self.fault = fault


class BlobFormatError(KmdError):
    """An instruction blob that cannot be encoded or decoded; names the offset and field."""

    def __init__(self, message: str, *, offset: int, field: str) -> None:
        super().__init__(
            f"{message} (field {field!r} at offset {offset})", offset=offset, field=field
        )
        self.offset = offset
        self.field = field


class UnknownKernelError(KmdError):
    """A kernel id (or backend) the registry does not know; lists the known ones."""

    def __init__(self, message: str, *, name: str, known: tuple[str, ...]) -> None:
        super().__init__(f"{message}; known: {', '.join(known)}", name=name, known=list(known))
        self.name = name
        self.known = known


class KernelArgumentError(KmdError):
    """A decoded blob does not match its kernel's ABI (param count, dtypes, shapes)."""

    def __init__(self, message: str, *, kernel: str, **details: Any) -> None:
        super().__init__(message, op=kernel, **details)
        self.kernel = kernel


class BackendUnavailableError(KmdError):
    """The requested kernel backend cannot run here (e.g. CuPy without a device)."""


class DeviceClosedError(KmdError):
    """An ioctl on a device after ``close()``."""


class CommandBufferInvalidError(KmdError):
    """EXECUTE_CMDBUF refused: the command buffer references an allocation freed since it was
    recorded (``address``). Rebind that allocation or record the buffer again."""

    def __init__(self, message: str, *, ctx: int, cmdbuf: int, address: int) -> None:
        super().__init__(message, ctx=ctx, cmdbuf=cmdbuf, address=address)
        self.ctx = ctx
        self.cmdbuf = cmdbuf
        self.address = address


class DeviceLostError(KmdError):
    """The device hit a sticky error (FaultKind.DEVICE_LOST): work is refused until a reset
    recovers it; raised by that reset when the device stays unusable (reopen it)."""
