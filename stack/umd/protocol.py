"""The UMD protocol the runtime targets: what the in-process UMD and the gRPC client both offer.

:class:`UmdApi` opens sessions; :class:`SessionApi` is one session's memory, streams,
translation, submission and waits. :class:`~stack.umd.driver.Umd` /
:class:`~stack.umd.session.UmdSession` implement it in process;
:class:`~stack.umd.service.remote.RemoteUmd` / :class:`~stack.umd.service.remote.RemoteSession`
implement it over ``contracts/umd.proto``. The contract of each method is the in-process one
(see :class:`~stack.umd.session.UmdSession`); over gRPC every failure is also a
:class:`~stack.errors.UmdError` — a lost connection or a restarted server is a
:class:`~stack.umd.errors.TransportError` or :class:`~stack.umd.errors.SessionNotFoundError`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from stack.kmd.dtypes import DType
from stack.umd.ops import OpRequest
from stack.umd.pipeline import Translated
from stack.umd.session import Ticket


class SessionApi(Protocol):
    """One UMD session (thread-safe; :meth:`close` frees everything it holds)."""

    def alloc(self, nbytes: int, align: int = 64) -> int: ...

    def write(self, addr: int, array: np.ndarray | bytes, offset: int = 0) -> None: ...

    def read(self, addr: int, shape: tuple[int, ...], dtype: DType) -> np.ndarray: ...

    def create_stream(self) -> int: ...

    def translate(self, req: OpRequest) -> Translated: ...

    def translate_batch(self, reqs: Sequence[OpRequest]) -> list[Translated]: ...

    def submit(
        self, stream: int, ops: Sequence[Translated], wait: Sequence[Ticket] = ()
    ) -> Ticket: ...

    def record(self, ops: Sequence[Translated]) -> int | None:
        """A reusable command buffer of ``ops`` (None: this UMD records none; submit instead)."""
        ...

    def execute(
        self,
        stream: int,
        cmdbuf: int,
        wait: Sequence[Ticket] = (),
        *,
        rebind: Sequence[tuple[int, int]] = (),
        inline: bool = False,
    ) -> Ticket: ...

    def release(self, cmdbuf: int) -> None: ...

    def map(self, addr: int, shape: tuple[int, ...], dtype: DType) -> np.ndarray | None:
        """A host view aliasing device memory (None: no host mapping; use write/read)."""
        ...

    def wait(self, ticket: Ticket, timeout_s: float | None = None) -> None: ...

    def done(self, ticket: Ticket) -> bool:
        """True when the ticket is known complete without blocking (False: call wait)."""
        ...

    def reset_stream(self, stream: int) -> None: ...

    def close(self) -> None: ...


@runtime_checkable
class UmdApi(Protocol):
    """A UMD: opens sessions on one device; :meth:`close` closes them all."""

    @property
    def backend(self) -> str: ...

    def create_session(self) -> SessionApi: ...

    def close(self) -> None: ...
