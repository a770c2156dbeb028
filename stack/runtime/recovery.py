"""Fault recovery policy: what the runtime does when a run fails on the device.

A device fault (``DeviceFaultError``: ECC, bad address, ... carried by a failed fence) or a
wait that passes its timeout (``UmdTimeoutError``, e.g. a hung queue) makes the whole run
invalid: its outputs are never returned. The runtime then resets every stream the run used
(``UmdSession.reset_stream``: drop pending work, clear the sticky fault) and, while retries
remain, runs the whole inference again — idempotent, because inputs are rewritten and the
constants are never written by any op. When retries are exhausted it raises
:class:`~stack.runtime.errors.ExecutionFaultError` naming the stream, the fault and the ops of
the failing command buffer.
"""

from __future__ import annotations

from dataclasses import dataclass

from stack.umd import DeviceFaultError, UmdTimeoutError

#: The UMD errors that mean "this run failed on the device" (as opposed to a refused request).
DEVICE_FAULTS: tuple[type[Exception], ...] = (DeviceFaultError, UmdTimeoutError)


@dataclass(frozen=True, slots=True)
class RecoveryPolicy:
    """How to react to a device fault during ``LoadedModel.run``.

    ``max_retries``: extra attempts of the whole inference after the first one faulted
    (0 = fail on the first fault). ``reset_on_fault``: reset the run's streams after a fault.
    Without a reset a faulted stream stays failed (fences are sticky), so retries are not
    attempted and the model refuses later runs with ExecutionFaultError until it is reloaded.
    """

    max_retries: int = 2
    reset_on_fault: bool = True

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise ValueError("max_retries must be >= 0")

    @property
    def attempts(self) -> int:
        """How many times a run may be tried in all."""
        return 1 + self.max_retries if self.reset_on_fault else 1


#: The policy used when none is given: two retries with a stream reset before each.
DEFAULT_POLICY = RecoveryPolicy()
