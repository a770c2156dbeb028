"""Admission control of the service: how many calls each client and session may have in flight.

The gRPC server runs work on a fixed pool of ``max_workers`` threads; a wait for a fence holds
none (it is a future the completion interrupt resolves, :mod:`stack.umd.service.calls`).
Admission keeps the server fair and bounded all the same:

- at most ``max_inflight`` calls in the server, ``per_client`` per client (a gRPC peer, i.e. one
  connection) and ``per_session`` per session;
- calls that wait by design (``WaitFence``, a translation with ``wait``) take a *wait slot*:
  at most ``max_waits`` in the server and ``waits_per_client`` per client (each pending wait
  keeps a completion callback registered with the KMD); a wait lasts at most ``max_wait_s``
  whatever ``timeout_ms`` says;
- a wait ends early when its caller goes away (cancellation, deadline, disconnect) or when the
  server shuts down.

Refusals are :class:`~stack.umd.errors.ResourceExhaustedError` (RESOURCE_EXHAUSTED) naming the
limit; nothing queues. Thread-safe.
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass
from typing import TypeVar

from stack.umd.errors import ResourceExhaustedError

K = TypeVar("K", str, int)


@dataclass(frozen=True, slots=True)
class Limits:
    """The bounds admission enforces (see the module docstring)."""

    max_inflight: int = 256
    per_client: int = 8
    per_session: int = 8
    max_waits: int = 64
    waits_per_client: int = 4
    max_wait_s: float = 10.0


@dataclass(frozen=True, slots=True)
class Admitted:
    """One admitted call: what it counted against, released exactly once by :meth:`leave`."""

    client: str
    session: int
    waits: bool


class Admission:
    """Counts calls in flight by server, client, session and wait slot."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.inflight = 0
        self.waiting = 0
        self.refused = 0
        self._clients: Counter[str] = Counter()
        self._sessions: Counter[int] = Counter()
        self._client_waits: Counter[str] = Counter()
        self._cond = threading.Condition()

    def enter(self, client: str, session: int, waits: bool) -> Admitted:
        """Admit a call or raise ResourceExhaustedError (the call was not counted)."""
        lim = self.limits
        with self._cond:
            refusal = None
            if self.inflight >= lim.max_inflight:
                refusal = f"{lim.max_inflight} calls in flight in the server"
            elif self._clients[client] >= lim.per_client:
                refusal = f"{lim.per_client} calls in flight from this client"
            elif session and self._sessions[session] >= lim.per_session:
                refusal = f"{lim.per_session} calls in flight in this session"
            elif waits and self.waiting >= lim.max_waits:
                refusal = f"{lim.max_waits} waits in flight in the server"
            elif waits and self._client_waits[client] >= lim.waits_per_client:
                refusal = f"{lim.waits_per_client} waits in flight from this client"
            if refusal is not None:
                self.refused += 1
                raise ResourceExhaustedError(f"too many calls: {refusal}; retry later")
            self.inflight += 1
            self._clients[client] += 1
            if session:
                self._sessions[session] += 1
            if waits:
                self.waiting += 1
                self._client_waits[client] += 1
        return Admitted(client, session, waits)

    def leave(self, ticket: Admitted) -> None:
        with self._cond:
            self.inflight -= 1
            _drop(self._clients, ticket.client)
            if ticket.session:
                _drop(self._sessions, ticket.session)
            if ticket.waits:
                self.waiting -= 1
                _drop(self._client_waits, ticket.client)
            if self.inflight == 0:
                self._cond.notify_all()

    def busy(self, session: int) -> bool:
        """True while a call of ``session`` is in flight (such a session never expires)."""
        return self._sessions.get(session, 0) > 0

    def wait_idle(self, timeout_s: float) -> bool:
        """Block until no call is in flight (True) or the timeout passes (False)."""
        with self._cond:
            return self._cond.wait_for(lambda: self.inflight == 0, timeout_s)


def _drop(counter: Counter[K], key: K) -> None:
    counter[key] -= 1
    if counter[key] <= 0:
        del counter[key]
