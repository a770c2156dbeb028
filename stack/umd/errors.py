"""The UMD's error tree: every failure a caller can see, rooted in :class:`stack.errors.UmdError`.

Each class names its gRPC status (``grpc_code``, a ``grpc.StatusCode`` name) so the service maps
errors to status codes in one place (:mod:`stack.umd.service.status`) without string matching.
Request errors carry ``field``: the dotted path of the offending request field
(``inputs[1].byte_size``, ``attrs.strides``, ``ops[3].op``).
"""

from __future__ import annotations

from typing import Any

from stack.errors import UmdError


class InvalidRequestError(UmdError):
    """The request is malformed or illegal; ``field`` names the offending field."""

    grpc_code = "INVALID_ARGUMENT"

    def __init__(self, message: str, *, field: str, **details: Any) -> None:
        super().__init__(message, field=field, **details)
        self.field = field


class UnknownOpError(InvalidRequestError):
    """No translator is registered for the op; the message lists the registered ones."""


class UnsupportedDtypeError(InvalidRequestError):
    """The kernel the op maps to does not take this dtype (and no conversion exists)."""


class ShapeError(InvalidRequestError):
    """Shapes are inconsistent with the op (inference disagrees with the given outputs)."""


class AddressError(InvalidRequestError):
    """A tensor's bytes are not inside one of the session's allocations."""


class NotFoundError(UmdError):
    """A session, stream or shared-memory region that does not exist (any more)."""

    grpc_code = "NOT_FOUND"


class SessionNotFoundError(NotFoundError):
    """No live session has this id (never created, destroyed, or expired)."""

    def __init__(self, session_id: str | int) -> None:
        super().__init__(f"no session {session_id}", session_id=str(session_id))
        self.session_id = session_id


class StreamNotFoundError(NotFoundError):
    """The stream id is not one of the session's streams."""


class ResourceExhaustedError(UmdError):
    """Too many sessions, too much memory, or the service is overloaded."""

    grpc_code = "RESOURCE_EXHAUSTED"


class DeviceFaultError(UmdError):
    """Submitted work failed on the device (the fence carries the fault)."""

    grpc_code = "INTERNAL"


class UmdTimeoutError(UmdError):
    """A wait on a ticket passed its timeout; the work may still finish later."""

    grpc_code = "DEADLINE_EXCEEDED"


class DeviceRefusedError(UmdError):
    """The KMD refused an ioctl (bad address, memory in use, ...); ``cause`` is its error."""

    grpc_code = "FAILED_PRECONDITION"


class SharedMemoryError(UmdError):
    """The shared-memory side channel failed: unknown region, bad size or checksum mismatch."""

    grpc_code = "DATA_LOSS"


class TransportError(UmdError):
    """The client could not reach the service (after its retries), or the session was lost."""

    grpc_code = "UNAVAILABLE"


class ClosedError(UmdError):
    """The Umd, session or client was used after ``close()``."""

    grpc_code = "FAILED_PRECONDITION"
