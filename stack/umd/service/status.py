"""UMD errors → gRPC status codes (server side) and back (client side), in one place."""

from __future__ import annotations

from typing import NoReturn

import grpc

from stack.errors import UmdError
from stack.umd import errors as uerr
from stack.umd.service.convert import proto_field

_BY_CODE: dict[grpc.StatusCode, type[UmdError]] = {
    grpc.StatusCode.INVALID_ARGUMENT: uerr.InvalidRequestError,
    grpc.StatusCode.NOT_FOUND: uerr.NotFoundError,
    grpc.StatusCode.RESOURCE_EXHAUSTED: uerr.ResourceExhaustedError,
    grpc.StatusCode.INTERNAL: uerr.DeviceFaultError,
    grpc.StatusCode.DEADLINE_EXCEEDED: uerr.UmdTimeoutError,
    grpc.StatusCode.FAILED_PRECONDITION: uerr.DeviceRefusedError,
    grpc.StatusCode.DATA_LOSS: uerr.SharedMemoryError,
    grpc.StatusCode.UNAVAILABLE: uerr.TransportError,
}


def code_of(exc: UmdError) -> grpc.StatusCode:
    """The status code of a UMD error (its class's ``grpc_code``; INTERNAL if it has none)."""
    name = getattr(exc, "grpc_code", "INTERNAL")
    return getattr(grpc.StatusCode, name)


def message_of(exc: UmdError) -> str:
    """Status details: ``field=<proto field>: message`` for request errors, ``fault_kind=<kind>:
    message`` for device faults (the client parses both back), else the message."""
    field = getattr(exc, "field", None)
    if isinstance(exc, uerr.InvalidRequestError) and field:
        return f"field={proto_field(field)}: {exc.message}"
    kind = exc.details.get("fault_kind")
    if isinstance(exc, uerr.DeviceFaultError) and kind:
        return f"fault_kind={kind}: {exc.message}"
    return exc.message


def abort(context: grpc.ServicerContext, exc: UmdError) -> NoReturn:
    context.abort(code_of(exc), message_of(exc))
    raise AssertionError("unreachable: context.abort raises")  # pragma: no cover


def error_from_rpc(err: grpc.RpcError, method: str) -> UmdError:
    """The UMD error a client raises for a failed call (``field`` parsed back when present)."""
    code = err.code() if hasattr(err, "code") else grpc.StatusCode.UNKNOWN
    details = (err.details() if hasattr(err, "details") else None) or str(code)
    cls = _BY_CODE.get(code)
    msg = f"{method}: {details}"
    if cls is uerr.InvalidRequestError:
        field = details[6:].split(":", 1)[0] if details.startswith("field=") else "request"
        return uerr.InvalidRequestError(msg, field=field, code=code.name)
    if cls is uerr.DeviceFaultError and details.startswith("fault_kind="):
        kind = details[len("fault_kind=") :].split(":", 1)[0]
        return uerr.DeviceFaultError(msg, fault_kind=kind, code=code.name)
    if cls is None:
        return uerr.TransportError(msg, code=code.name)
    return cls(msg, code=code.name)
