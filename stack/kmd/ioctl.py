"""The ioctl vocabulary: command numbers and one typed argument record per command.

Numbers follow the Linux ``_IOC`` encoding (direction << 30 | size << 16 | type << 8 | nr) with
type ``'R'`` and the size of the C argument struct declared in
``stack/kmd/include/refstack_kmd.h``; the header and this enum must agree (a test checks).
Validation of the records lives in :mod:`stack.kmd.validate`, dispatch in
:class:`stack.kmd.device.KmdDevice`.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass

from stack.kmd.dtypes import DType
from stack.kmd.faults import FaultKind, FaultRecord

IOC_TYPE = ord("R")
IOC_WRITE, IOC_READ = 1, 2


def ioc(direction: int, nr: int, size: int) -> int:
    """The Linux ``_IOC`` number for a refstack ioctl."""
    return (direction << 30) | (size << 16) | (IOC_TYPE << 8) | nr


_W, _R, _WR = IOC_WRITE, IOC_READ, IOC_WRITE | IOC_READ


class Ioctl(enum.IntEnum):
    """Every command of the KMD entry point (value = _IOC number; size = C struct bytes)."""

    CREATE_CONTEXT = ioc(_R, 1, 8)
    DESTROY_CONTEXT = ioc(_W, 2, 8)
    ALLOC = ioc(_WR, 3, 32)
    FREE = ioc(_W, 4, 16)
    WRITE = ioc(_W, 5, 40)
    READ = ioc(_WR, 6, 40)
    MAP = ioc(_WR, 7, 24)
    CREATE_QUEUE = ioc(_WR, 8, 8)
    DESTROY_QUEUE = ioc(_W, 9, 8)
    CREATE_FENCE = ioc(_WR, 10, 16)
    DESTROY_FENCE = ioc(_W, 11, 8)
    SUBMIT = ioc(_W, 12, 48)
    FENCE_VALUE = ioc(_WR, 13, 16)
    WAIT_FENCE = ioc(_W, 14, 24)
    ON_FENCE = ioc(_W, 15, 32)
    INJECT_FAULT = ioc(_W, 16, 16)
    RESET_QUEUE = ioc(_W, 17, 8)
    STATS = ioc(_R, 18, 72)
    SIGNAL_FENCE = ioc(_W, 19, 16)
    RESET_CONTEXT = ioc(_W, 20, 8)
    CREATE_CMDBUF = ioc(_WR, 21, 24)
    EXECUTE_CMDBUF = ioc(_W, 22, 56)
    DESTROY_CMDBUF = ioc(_W, 23, 8)

    @property
    def nr(self) -> int:
        """The command number (low byte)."""
        return self.value & 0xFF

    @property
    def size(self) -> int:
        """Size of the C argument struct."""
        return (self.value >> 16) & 0x3FFF


@dataclass(frozen=True, slots=True)
class CreateContextArgs:
    pass


@dataclass(frozen=True, slots=True)
class ContextArgs:
    """Args of DESTROY_CONTEXT and RESET_CONTEXT."""

    ctx: int


@dataclass(frozen=True, slots=True)
class AllocArgs:
    ctx: int
    nbytes: int
    align: int = 256
    host_visible: bool = True


@dataclass(frozen=True, slots=True)
class FreeArgs:
    ctx: int
    va: int


@dataclass(frozen=True, slots=True)
class WriteArgs:
    ctx: int
    va: int
    data: memoryview
    offset: int = 0


@dataclass(frozen=True, slots=True)
class ReadArgs:
    """Bytes when ``shape`` is None, else a host array of ``shape`` and ``dtype`` (a copy)."""

    ctx: int
    va: int
    nbytes: int
    offset: int = 0
    shape: tuple[int, ...] | None = None
    dtype: DType | None = None


@dataclass(frozen=True, slots=True)
class MapArgs:
    ctx: int
    va: int


@dataclass(frozen=True, slots=True)
class QueueArgs:
    """Args of DESTROY_QUEUE and RESET_QUEUE."""

    ctx: int
    queue: int


@dataclass(frozen=True, slots=True)
class CreateQueueArgs:
    ctx: int


@dataclass(frozen=True, slots=True)
class CreateFenceArgs:
    ctx: int
    initial: int = 0


@dataclass(frozen=True, slots=True)
class FenceArgs:
    """Args of DESTROY_FENCE and FENCE_VALUE."""

    ctx: int
    fence: int


@dataclass(frozen=True, slots=True)
class SubmitArgs:
    ctx: int
    queue: int
    blobs: tuple[bytes, ...]
    signal: tuple[int, int]
    wait: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True, slots=True)
class CreateCmdbufArgs:
    """Record ``blobs`` as a reusable command buffer of ``ctx`` (returns its handle)."""

    ctx: int
    blobs: tuple[bytes, ...]


@dataclass(frozen=True, slots=True)
class ExecuteCmdbufArgs:
    """Queue one execution of a command buffer (waits, then signal, as SUBMIT).

    ``rebind``: (old base, new base) allocation pairs re-pointed before this execution and for
    every later one; ``inline``: run on the calling thread when the queue is idle.
    """

    ctx: int
    queue: int
    cmdbuf: int
    signal: tuple[int, int]
    wait: tuple[tuple[int, int], ...] = ()
    rebind: tuple[tuple[int, int], ...] = ()
    inline: bool = False


@dataclass(frozen=True, slots=True)
class CmdbufArgs:
    """Args of DESTROY_CMDBUF."""

    ctx: int
    cmdbuf: int


@dataclass(frozen=True, slots=True)
class SignalFenceArgs:
    ctx: int
    fence: int
    value: int


@dataclass(frozen=True, slots=True)
class WaitFenceArgs:
    ctx: int
    fence: int
    value: int
    timeout_s: float | None = None


@dataclass(frozen=True, slots=True)
class OnFenceArgs:
    ctx: int
    fence: int
    value: int
    callback: Callable[[int, FaultRecord | None], None]


@dataclass(frozen=True, slots=True)
class InjectFaultArgs:
    ctx: int
    queue: int
    kind: FaultKind
    after: int = 0


@dataclass(frozen=True, slots=True)
class StatsArgs:
    pass


@dataclass(frozen=True, slots=True)
class KmdStats:
    """Live counters of one device (what leak checks compare against zero)."""

    backend: str
    contexts: int
    queues: int
    fences: int
    allocations: int
    allocated_bytes: int
    peak_bytes: int
    submitted: int
    completed: int
    faults: int


#: The argument record each ioctl takes.
ARGS: dict[Ioctl, type] = {
    Ioctl.CREATE_CONTEXT: CreateContextArgs,
    Ioctl.DESTROY_CONTEXT: ContextArgs,
    Ioctl.ALLOC: AllocArgs,
    Ioctl.FREE: FreeArgs,
    Ioctl.WRITE: WriteArgs,
    Ioctl.READ: ReadArgs,
    Ioctl.MAP: MapArgs,
    Ioctl.CREATE_QUEUE: CreateQueueArgs,
    Ioctl.DESTROY_QUEUE: QueueArgs,
    Ioctl.CREATE_FENCE: CreateFenceArgs,
    Ioctl.DESTROY_FENCE: FenceArgs,
    Ioctl.SUBMIT: SubmitArgs,
    Ioctl.FENCE_VALUE: FenceArgs,
    Ioctl.WAIT_FENCE: WaitFenceArgs,
    Ioctl.ON_FENCE: OnFenceArgs,
    Ioctl.INJECT_FAULT: InjectFaultArgs,
    Ioctl.RESET_QUEUE: QueueArgs,
    Ioctl.STATS: StatsArgs,
    Ioctl.SIGNAL_FENCE: SignalFenceArgs,
    Ioctl.RESET_CONTEXT: ContextArgs,
    Ioctl.CREATE_CMDBUF: CreateCmdbufArgs,
    Ioctl.EXECUTE_CMDBUF: ExecuteCmdbufArgs,
    Ioctl.DESTROY_CMDBUF: CmdbufArgs,
}
