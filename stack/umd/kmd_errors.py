"""Conversion of KMD errors into UMD errors, once, at the boundary where the UMD calls the KMD."""

from __future__ import annotations

from types import TracebackType

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


class kmd_call:
    """Context manager: run a KMD call, re-raising its KmdError as the matching UMD error.

    A plain class rather than a generator context manager: it sits on every hot-path call.
    """

    __slots__ = ("what",)

    def __init__(self, what: str) -> None:
        self.what = what

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if isinstance(exc, kerr.KmdError):
            raise convert(exc, self.what) from exc
