"""The session manager: live sessions by id, and the reaper that expires idle ones.

A session created with a keepalive timeout expires when nothing touched it (a call or a
KeepAlive) for that long; the reaper thread then closes it, which destroys its KMD context and
so frees everything it held. The reaper scans every ``timeout / 4`` (at least every 50 ms, at
most every 1 s) and starts with the first session that has a timeout.

A session for which ``busy(key)`` is true (the service sets it: a call of the session is in
flight) does not expire. A scan that wakes more than one interval late (the process was stalled,
so KeepAlives may sit unread in the transport) expires nobody: a busy server never expires a
client that kept its promise.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from stack.errors import UmdError
from stack.umd.errors import ResourceExhaustedError, SessionNotFoundError
from stack.umd.ids import SessionIdGenerator
from stack.umd.session import UmdSession

log = logging.getLogger(__name__)


class SessionManager:
    """Thread-safe registry of live sessions with KeepAlive expiry."""

    def __init__(
        self,
        factory: Callable[[int, float | None], UmdSession],
        *,
        max_sessions: int = 1024,
        ids: SessionIdGenerator | None = None,
    ) -> None:
        self._factory = factory
        self._ids = ids or SessionIdGenerator()
        self._sessions: dict[int, UmdSession] = {}
        self._lock = threading.Lock()
        self._max = max_sessions
        self._reaper: threading.Thread | None = None
        self._stop = threading.Event()
        self._interval = 1.0
        self._last_scan: float | None = None
        self.expired_count = 0
        self.busy: Callable[[int], bool] = lambda key: False

    def create(self, keepalive_timeout_s: float | None = None) -> UmdSession:
        with self._lock:
            if len(self._sessions) >= self._max:
                raise ResourceExhaustedError(f"{self._max} sessions already live")
            key = self._ids.next()
        session = self._factory(key, keepalive_timeout_s)
        with self._lock:
            self._sessions[key] = session
            if keepalive_timeout_s is not None:
                self._interval = min(self._interval, max(0.05, keepalive_timeout_s / 4))
                self._start_reaper()
        return session

    def get(self, key: int) -> UmdSession:
        session = self._sessions.get(key)
        if session is None or session.closed:
            raise SessionNotFoundError(key)
        return session

    def find(self, key: int) -> UmdSession | None:
        """The live session ``key``, or None (no error)."""
        session = self._sessions.get(key)
        return None if session is None or session.closed else session

    def destroy(self, key: int) -> None:
        with self._lock:
            session = self._sessions.pop(key, None)
        if session is None:
            raise SessionNotFoundError(key)
        session.close()

    def forget(self, key: int) -> None:
        """Drop a session that closed itself (no error if unknown)."""
        with self._lock:
            self._sessions.pop(key, None)

    def live(self) -> list[UmdSession]:
        with self._lock:
            return list(self._sessions.values())

    def reap(self, now: float | None = None) -> int:
        """Close every expired session now; returns how many."""
        now = time.monotonic() if now is None else now
        busy = self.busy
        with self._lock:
            dead = [k for k, s in self._sessions.items() if s.expired(now) and not busy(k)]
            victims = [self._sessions.pop(k) for k in dead]
        for s in victims:
            log.info(
                "session %s expired (no KeepAlive for %ss)", s.session_id, s.keepalive_timeout_s
            )
            try:
                s.close()
            except UmdError as exc:
                log.warning("closing expired session %s: %s", s.session_id, exc)
        self.expired_count += len(victims)
        return len(victims)

    def _start_reaper(self) -> None:
        if self._reaper is None:
            self._reaper = threading.Thread(
                target=self._run, name="umd-session-reaper", daemon=True
            )
            self._reaper.start()

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            now = time.monotonic()
            late = self._last_scan is not None and now - self._last_scan > 2 * self._interval
            self._last_scan = now
            if late:  # stalled: let the KeepAlives queued meanwhile arrive first
                for s in self.live():
                    s.touch()
                continue
            self.reap(now)

    def close(self) -> None:
        """Stop the reaper and close every session."""
        self._stop.set()
        if self._reaper is not None:
            self._reaper.join(timeout=5)
        with self._lock:
            victims, self._sessions = list(self._sessions.values()), {}
        for s in victims:
            try:
                s.close()
            except UmdError as exc:
                log.warning("closing session %s: %s", s.session_id, exc)
