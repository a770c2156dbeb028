"""Session ids that never repeat, not even across restarts of the service (seed 000 §4.1).

A plain counter restarts at 1 with the process, and a client still holding id 1 of the previous
run would then talk to a stranger's session. An id here is ``start_ms << 20 | seq``: the
generator's start time in milliseconds (44 bits, good until the year 2527) and a 20-bit sequence.
When the sequence runs out the generator moves its base to a later millisecond, so ids stay
strictly increasing within a process and a later process (started at a later millisecond than
the previous one's last base) begins above every id the previous one issued.
"""

from __future__ import annotations

import threading
import time

SEQ_BITS = 20
_SEQ_MAX = (1 << SEQ_BITS) - 1


class SessionIdGenerator:
    """Thread-safe source of unique, strictly increasing 64-bit session ids."""

    def __init__(self, start_ms: int | None = None) -> None:
        self._base = int(time.time() * 1000) if start_ms is None else start_ms
        self._seq = 0
        self._lock = threading.Lock()

    def next(self) -> int:
        with self._lock:
            self._seq += 1
            if self._seq > _SEQ_MAX:
                self._base = max(self._base + 1, int(time.time() * 1000))
                self._seq = 1
            return (self._base << SEQ_BITS) | self._seq


def format_session_id(value: int) -> str:
    """The in-process string form of a session id (16 hex digits)."""
    return f"{value:016x}"


def parse_session_id(text: str) -> int:
    """Inverse of :func:`format_session_id`; ``ValueError`` on anything else."""
    if len(text) != 16:
        raise ValueError(f"session id {text!r} is not 16 hex digits")
    return int(text, 16)
