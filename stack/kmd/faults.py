"""Fault kinds and the record a failed fence carries (sticky failure value)."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class FaultKind(enum.IntEnum):
    """Why a command failed. ECC, HANG and BAD_ADDRESS can be injected; the rest arise."""

    ECC = 1  # uncorrectable memory error reported while the command ran
    HANG = 2  # the command never completes; only a fence-wait timeout and reset_queue end it
    BAD_ADDRESS = 3  # the engine touched an address outside the context's allocations
    KERNEL = 4  # the kernel itself raised (shape or value the validation could not foresee)
    DEPENDENCY = 5  # a fence this command waited on failed first
    RESET = 6  # the command was dropped by reset_queue / destroy_queue before it ran
    DEVICE_LOST = 7  # a sticky device error: nothing runs until a reset recovers the device


#: Fault kinds that ``KmdDevice.inject_fault`` accepts.
INJECTABLE = frozenset({FaultKind.ECC, FaultKind.HANG, FaultKind.BAD_ADDRESS})


@dataclass(frozen=True, slots=True)
class FaultRecord:
    """What went wrong, where: carried by a failed fence and by FenceFailedError."""

    kind: FaultKind
    ctx: int
    queue: int
    fence: int
    value: int  # the fence value the failed command was to signal
    message: str
    address: int | None = None
    kernel: str | None = None

    def to_dict(self) -> dict[str, object]:
        """JSON-ready form (used in error records)."""
        return {
            "kind": self.kind.name,
            "ctx": self.ctx,
            "queue": self.queue,
            "fence": self.fence,
            "value": self.value,
            "message": self.message,
            "address": self.address,
            "kernel": self.kernel,
        }
