"""The work of the Execute, SubmitCommands and RecordCommands RPCs on a :class:`UmdSession`.

Plain functions the servicer runs on its worker threads (:mod:`stack.umd.service.servicer`):
writes, submissions (instruction blobs, or a recorded command buffer by handle), a bounded
inline wait and reads. Every check raises the UMD error the servicer maps to a status code.
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Sequence

from stack.kmd.kernels.ids import KernelId
from stack.umd.errors import InvalidRequestError, SharedMemoryError, UmdTimeoutError
from stack.umd.pipeline import Translated
from stack.umd.service import umd_pb2 as pb
from stack.umd.session import Ticket, UmdSession

MAX_CHUNK = 4 << 20  # the largest write or read one Execute carries
INLINE_WAIT_S = 0.002  # longest an Execute holds a worker thread waiting for its own work
_MAX_BLOBS = 1 << 16


def execute_inline(
    session: UmdSession, request: pb.ExecuteRequest
) -> tuple[list[int], list[bytes] | None]:
    """Execute on one worker-thread hop when its work is short: writes and submissions, then
    at most ``INLINE_WAIT_S`` for its waits, then its reads. A wait that takes longer leaves
    the reads ``None``: the caller waits on the event loop, so no thread is held for longer
    than that budget (three thread hops cost a small model more than its own run)."""
    values = write_and_submit(session, request)
    deadline = time.monotonic() + INLINE_WAIT_S
    for f in request.waits:
        ticket = session.ticket(f.stream, f.fence_value)
        left = deadline - time.monotonic()
        if left <= 0 or not _reached_within(session, ticket, left):
            return values, None
    return values, read_all(session, request)


def _reached_within(session: UmdSession, ticket: Ticket, timeout_s: float) -> bool:
    """Wait for the ticket at most ``timeout_s``; False when it is still running (a fence
    fault raises as :meth:`UmdSession.wait` does)."""
    try:
        session.wait(ticket, timeout_s)
    except UmdTimeoutError:
        return False
    return True


def read_all(session: UmdSession, request: pb.ExecuteRequest) -> list[bytes]:
    return [session.read_bytes(r.device_addr, r.nbytes) for r in request.reads]


def write_and_submit(session: UmdSession, request: pb.ExecuteRequest) -> list[int]:
    """Execute's first half: its writes, then its submissions (their fence values)."""
    for i, w in enumerate(request.writes):
        if len(w.payload) > MAX_CHUNK:
            raise InvalidRequestError(f"more than {MAX_CHUNK} bytes", field=f"writes[{i}]")
        if zlib.crc32(w.payload) != w.checksum:
            raise SharedMemoryError(f"writes[{i}]: checksum mismatch")
        session.write(w.device_addr, w.payload)
    return [submit(session, m, f"submits[{i}].") for i, m in enumerate(request.submits)]


def _blobs(blobs: Sequence[bytes], field: str) -> Translated:
    """The blobs of a request as one command buffer (the KMD decodes and checks each one)."""
    n = len(blobs)
    if not n:
        raise InvalidRequestError("a command buffer needs at least one blob", field=field)
    if n > _MAX_BLOBS:
        raise InvalidRequestError(f"more than {_MAX_BLOBS} blobs", field=field)
    return Translated(tuple(blobs), KernelId.GEMM, False)  # kernel id: unused


def submit(session: UmdSession, request: pb.SubmitRequest, prefix: str) -> int:
    """Submit a request's blobs, or run its recorded buffer, after its fences; the fence
    value. A handle the session does not own is refused by the KMD (DeviceRefusedError)."""
    waits = [session.ticket(w.stream, w.fence_value) for w in request.waits]
    if request.cmdbuf:
        if request.blobs:
            raise InvalidRequestError(
                "a submission carries blobs or names a cmdbuf, not both", field=f"{prefix}blobs"
            )
        return session.execute(request.stream, request.cmdbuf, waits).value
    return session.submit(request.stream, (_blobs(request.blobs, f"{prefix}blobs"),), waits).value


def record(session: UmdSession, request: pb.RecordRequest) -> int:
    """Record a request's blobs as a command buffer of the session (checked once, here)."""
    return session.record((_blobs(request.blobs, "blobs"),))
