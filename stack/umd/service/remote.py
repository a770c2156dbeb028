"""The UMD protocol (:mod:`stack.umd.protocol`) over gRPC: a runtime drives a remote UMD service.

:class:`RemoteUmd` opens one :class:`RemoteSession` per model, each on its own
:class:`~stack.umd.service.client.UmdClient` (one channel, one server session). Memory and data
go through AllocMemory / StreamTensorData / ReadTensorData (shared memory at or above the
client's ``shm_threshold``), translations are ``translate_only`` batches whose blobs come back,
and a run submits them with SubmitCommands to the session's streams (cross-stream waits as
fence references) and waits with WaitFence — the same calls, in the same order, as in process.

Errors are UMD errors: a request the server refuses raises what the in-process UMD raises; a
server that went away is a TransportError (after the client's retry window); a server that
restarted no longer knows the session: SessionNotFoundError. Sessions are *not* recovered
transparently here (the blobs hold device addresses of the old session): the caller loads the
model again, in a new session. Thread-safe as the client is.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from stack.kmd.dtypes import DType
from stack.kmd.kernels.ids import KernelId
from stack.umd.commands import flatten
from stack.umd.errors import ClosedError, InvalidRequestError
from stack.umd.ops import OpRequest
from stack.umd.pipeline import Translated
from stack.umd.service import umd_pb2 as pb
from stack.umd.service.client import RemoteTranslated, RetryPolicy, UmdClient
from stack.umd.session import Ticket

#: How long a runtime's client retries UNAVAILABLE before a TransportError.
DEFAULT_POLICY = RetryPolicy(timeout_s=30.0, retry_window_s=5.0)


def _translated(r: RemoteTranslated) -> Translated:
    return Translated(r.blobs, KernelId(r.kernel_id), r.cache_hit)


class RemoteSession:
    """One session of a remote UMD, with the in-process session's methods and contracts."""

    def __init__(self, client: UmdClient) -> None:
        self.client = client
        self.closed = False
        client.session()  # create it now: errors surface at load, not at first use

    def alloc(self, nbytes: int, align: int = 64) -> int:
        return self.client.alloc(nbytes, align)

    def write(self, addr: int, array: np.ndarray | bytes, offset: int = 0) -> None:
        self.client.write(addr + offset, array)

    def read(self, addr: int, shape: tuple[int, ...], dtype: DType) -> np.ndarray:
        return self.client.read_array(addr, shape, dtype)

    def create_stream(self) -> int:
        r = self.client._call("CreateStream", lambda s: pb.StreamRequest(session_id=s))
        return int(r.stream)

    def translate(self, req: OpRequest) -> Translated:
        return _translated(self.client.translate(req, submit=False))

    def translate_batch(self, reqs: Sequence[OpRequest]) -> list[Translated]:
        return [_translated(r) for r in self.client.translate_batch(reqs, submit=False)]

    def submit(self, stream: int, ops: Sequence[Translated], wait: Sequence[Ticket] = ()) -> Ticket:
        """SubmitCommands: the ops' blobs as one command buffer after ``wait`` (async)."""
        blobs, _ = flatten(ops)
        rid = next(self.client._ids)  # one id space per session: the replay window is shared
        waits = [pb.FenceRef(stream=t.stream, fence_value=t.value) for t in wait]

        def make(s: int) -> pb.SubmitRequest:
            return pb.SubmitRequest(
                session_id=s, request_id=rid, stream=stream, blobs=blobs, waits=waits
            )

        r = self.client._call("SubmitCommands", make)
        return Ticket(stream, 0, int(r.fence_value))

    def record(self, ops: Sequence[Translated]) -> int | None:
        """None: the service keeps no command buffers for its clients (submit each run)."""
        return None

    def execute(
        self,
        stream: int,
        cmdbuf: int,
        wait: Sequence[Ticket] = (),
        *,
        rebind: Sequence[tuple[int, int]] = (),
        inline: bool = False,
    ) -> Ticket:
        raise InvalidRequestError("a remote session records no command buffers", field="cmdbuf")

    def release(self, cmdbuf: int) -> None:
        raise InvalidRequestError("a remote session records no command buffers", field="cmdbuf")

    def map(self, addr: int, shape: tuple[int, ...], dtype: DType) -> np.ndarray | None:
        """None: remote memory has no host mapping here (write/read go through the service)."""
        return None

    def wait(self, ticket: Ticket, timeout_s: float | None = None) -> None:
        self.client.wait_fence(ticket.value, 3600.0 if timeout_s is None else timeout_s,
                               stream=ticket.stream)  # fmt: skip

    def reset_stream(self, stream: int) -> None:
        self.client._call("ResetStream", lambda s: pb.StreamRequest(session_id=s, stream=stream))

    def close(self) -> None:
        """Destroy the server session (best effort) and close the channel (idempotent)."""
        if not self.closed:
            self.closed = True
            self.client.close()


class RemoteUmd:
    """The UMD service at ``target`` (``host:port``) as a :class:`~stack.umd.protocol.UmdApi`.

    ``policy``: per-call deadline and UNAVAILABLE retry window of every session's client.
    """

    def __init__(self, target: str, *, policy: RetryPolicy | None = None) -> None:
        self.target = target
        self.policy = policy or DEFAULT_POLICY
        self._backend = ""
        self.closed = False
        self._sessions: list[RemoteSession] = []

    @property
    def backend(self) -> str:
        """The server's kernel backend (known once a session was opened)."""
        return self._backend or "remote"

    def create_session(self) -> RemoteSession:
        if self.closed:
            raise ClosedError("the RemoteUmd is closed")
        client = UmdClient(self.target, policy=self.policy, recover=False, journal=False)
        try:
            session = RemoteSession(client)
        except BaseException:
            client.close()
            raise
        self._backend = client.backend
        self._sessions = [s for s in self._sessions if not s.closed] + [session]
        return session

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        for s in self._sessions:
            s.close()
        self._sessions = []
