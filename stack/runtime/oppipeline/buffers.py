"""Reference-counted tensor buffers of one pipeline run, in the session's binned pool.

Each tensor gets one pool block, acquired with as many references as it has holders (one per
consuming stage, one more when the run returns it). A holder drops its reference when it is
done — a stage after its ticket completed, the run after reading an output — and the block goes
back to its bin when the last one is dropped: a branch's buffer outlives its first consumer
(no early free), a merge reads each of its inputs exactly once. Every acquire and release is
recorded as a :class:`BufferEvent`, so a run's buffer lifetimes can be read back.
"""

from __future__ import annotations

import enum
import threading
from collections.abc import Hashable
from dataclasses import dataclass

from stack.errors import StackError
from stack.umd import UmdSession


class BufferAction(enum.StrEnum):
    ACQUIRED = "acquired"
    DROPPED = "dropped"  # one holder done, others remain
    RELEASED = "released"


@dataclass(frozen=True, slots=True)
class BufferEvent:
    """``tensor``'s block was acquired, dropped by one holder or released while ``at`` (a stage
    name, ``(inputs)``, ``(outputs)`` or ``(abort)``) ran; ``refs`` is the count after it."""

    tensor: str
    action: BufferAction
    at: str
    refs: int


class BufferTable:
    """The live buffers of one run on one session; thread-safe (the stages of independent
    branches acquire and drop at once)."""

    def __init__(self, session: UmdSession) -> None:
        self._session = session
        self._va: dict[str, int] = {}
        self._refs: dict[str, int] = {}
        self.events: list[BufferEvent] = []
        self._lock = threading.Lock()

    def acquire(
        self, tensor: str, nbytes: int, *, refs: int, at: str, stage: Hashable, align: int
    ) -> int:
        """A block for ``tensor`` with ``refs`` holders, tagged ``stage`` in the pool."""
        va = self._session.acquire_block(nbytes, stage=stage, align=align)
        with self._lock:
            self._va[tensor], self._refs[tensor] = va, refs
            self.events.append(BufferEvent(tensor, BufferAction.ACQUIRED, at, refs))
        return va

    def va(self, tensor: str) -> int:
        with self._lock:
            return self._va[tensor]

    def drop(self, tensor: str, *, at: str) -> None:
        """One holder is done with ``tensor`` (its work completed); the last one releases it."""
        with self._lock:
            self._drop(tensor, at)

    def _drop(self, tensor: str, at: str) -> None:
        refs = self._refs[tensor] - 1
        self._refs[tensor] = refs
        if refs == 0:
            self._session.release_block(self._va.pop(tensor))
            del self._refs[tensor]
            self.events.append(BufferEvent(tensor, BufferAction.RELEASED, at, 0))
        else:
            self.events.append(BufferEvent(tensor, BufferAction.DROPPED, at, refs))

    @property
    def live(self) -> tuple[str, ...]:
        with self._lock:
            return tuple(self._va)

    def abort(self) -> None:
        """Release every buffer still held (a failed run, after its work stopped)."""
        with self._lock:
            self._abort()

    def _abort(self) -> None:
        for tensor in list(self._va):
            try:
                self._session.release_block(self._va.pop(tensor))
            except StackError:
                continue  # the session is closing: its context frees the block
            del self._refs[tensor]
            self.events.append(BufferEvent(tensor, BufferAction.RELEASED, "(abort)", 0))
