"""Conversion of KMD errors into UMD errors, once, at the boundary where the UMD calls the KMD."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from stack.errors import UmdError
from stack.kmd import errors as kerr
from stack.umd.errors import (
    AddressError,
    ClosedError,
    DeviceFaultError,
    DeviceRefusedError,
    InvalidRequestError,
    ResourceExhaustedError,
    UmdTimeoutError,
)


def convert(exc: kerr.KmdError, what: str) -> UmdError:
    """The UMD error for a KMD error raised by ``what`` (an ioctl name)."""
    msg = f"{what}: {exc.message}"
    cause = exc.to_dict()
    if isinstance(exc, kerr.AccessViolationError):
        return AddressError(msg, field="addr", cause=cause)
    if isinstance(exc, kerr.InvalidArgumentError):
        return InvalidRequestError(msg, field=exc.field or what, cause=cause)
    if isinstance(exc, kerr.OutOfMemoryError):
        return ResourceExhaustedError(msg, cause=cause)
    if isinstance(exc, kerr.FenceTimeoutError):
        return UmdTimeoutError(msg, cause=cause)
    if isinstance(exc, kerr.FenceFailedError | kerr.QueueFaultedError):
        fault = exc.fault
        err = DeviceFaultError(msg, fault_kind=fault.kind.name, cause=cause)
        err.fault = fault  # type: ignore[attr-defined]
        return err
    if isinstance(exc, kerr.DeviceClosedError):
        return ClosedError(msg, cause=cause)
    return DeviceRefusedError(msg, cause=cause)


@contextmanager
def kmd_call(what: str) -> Iterator[None]:
    """Run a KMD call, re-raising its KmdError as the matching UMD error."""
    try:
        yield
    except kerr.KmdError as exc:
        raise convert(exc, what) from exc
