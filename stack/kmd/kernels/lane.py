"""Execution lanes: where one queue's launches run and how their completion is awaited.

Each KMD queue gets a lane from its backend when it is created. A command's launches run inside
``with lane:`` and the queue then calls :meth:`Lane.complete` before it signals the command's
fence. The host lane (NumPy) runs kernels synchronously on the executing thread, so entering
does nothing and completion is immediate. A GPU lane (:mod:`stack.kmd.kernels.cupy_backend`)
makes its own stream current, so every queue has its own stream and the streams of different
queues overlap; completion records an event on that stream and waits for that event alone —
never a device-wide synchronisation.

:meth:`Lane.lost` tells whether an exception raised by a launch is a *sticky* device error
(the device context is unusable: CUDA's illegal address, launch failure, ECC ...): the queue
then fails the command with ``FaultKind.DEVICE_LOST`` and the driver refuses new work until a
reset, which calls :meth:`Lane.recover` — it returns when the device works again, or raises
``DeviceLostError`` when it does not (the device must be reopened).
"""

from __future__ import annotations

from types import TracebackType


class Lane:
    """The host lane: synchronous kernels, nothing to await, no sticky errors."""

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        return None

    def complete(self) -> None:
        """Return once every launch made in this lane has finished."""

    def lost(self, exc: BaseException) -> bool:
        """Whether ``exc``, raised by a launch, left the device unusable (sticky)."""
        return False

    def recover(self) -> None:
        """Called by a reset after a DEVICE_LOST fault: return when the device works again,
        else raise DeviceLostError."""


HOST = Lane()
