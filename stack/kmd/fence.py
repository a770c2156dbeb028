"""Timeline fences: a monotonic uint64 counter, done when >= target, with a sticky failure.

Thread-safe. Queue workers signal; any thread waits or registers a completion callback (the
"interrupt" delivered to the layer above). Once failed, a fence stays failed: every wait on it
raises FenceFailedError carrying the first fault, and every callback is called with the fault.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from stack.kmd.errors import FenceFailedError, FenceTimeoutError, InvalidArgumentError
from stack.kmd.faults import FaultRecord

FenceCallback = Callable[[int, FaultRecord | None], None]
U64_MAX = (1 << 64) - 1
log = logging.getLogger(__name__)


class TimelineFence:
    """One timeline semaphore owned by a context."""

    __slots__ = (
        "_callbacks", "_cv", "_sleepers", "ctx", "failure", "fid", "scheduled", "signaler", "value"
    )  # fmt: skip

    def __init__(self, fid: int, ctx: int, initial: int = 0) -> None:
        self.fid = fid
        self.ctx = ctx
        self.value = initial
        self.scheduled = initial  # highest value a submitted command will signal
        self.failure: FaultRecord | None = None
        self.signaler: Any = None  # the CommandQueue of the latest submit that signals this fence
        self._cv = threading.Condition(threading.Lock())
        self._sleepers = 0  # threads in _cv.wait: only then does a change need a notify
        self._callbacks: list[tuple[int, FenceCallback]] = []

    def signal(self, value: int) -> None:
        """Advance to ``value`` (never backwards) and fire the callbacks it satisfies."""
        with self._cv:
            if value > self.value:
                self.value = value
            if self._sleepers:
                self._cv.notify_all()
            if not self._callbacks:
                return
            due = [cb for cb in self._callbacks if cb[0] <= self.value]
            if due:
                self._callbacks = [cb for cb in self._callbacks if cb[0] > self.value]
            reached = self.value
        for _, cb in due:
            _fire(cb, reached, None)

    def fail(self, fault: FaultRecord) -> None:
        """Mark failed (the first failure sticks) and fire every pending callback with it."""
        with self._cv:
            if self.failure is None:
                self.failure = fault
            if self._sleepers:
                self._cv.notify_all()
            due, self._callbacks = self._callbacks, []
            reached, failure = self.value, self.failure
        for _, cb in due:
            _fire(cb, reached, failure)

    def wait(self, value: int, timeout_s: float | None = None) -> None:
        """Block until value >= ``value``; FenceTimeoutError / FenceFailedError otherwise."""
        if self.value >= value:
            return
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        with self._cv:
            while self.failure is None and self.value < value:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise FenceTimeoutError(
                        f"fence {self.fid} at {self.value} did not reach {value} "
                        f"within {timeout_s} s",
                        fence=self.fid,
                        value=value,
                        reached=self.value,
                    )
                self._sleep(left)
            if self.value < value and self.failure is not None:
                raise FenceFailedError(
                    f"fence {self.fid} failed: {self.failure.kind.name}: {self.failure.message}",
                    fence=self.fid,
                    value=value,
                    fault=self.failure,
                )

    def poll(self, value: int, timeout_s: float) -> bool:
        """Wait at most ``timeout_s``; True when reached, False otherwise (failure: False)."""
        with self._cv:
            if self.failure is None and self.value < value:
                self._sleep(timeout_s)
            return self.value >= value

    def _sleep(self, timeout_s: float | None) -> None:
        """``_cv.wait`` (condition held), counted so that signal and fail notify only then."""
        self._sleepers += 1
        try:
            self._cv.wait(timeout_s)
        finally:
            self._sleepers -= 1

    def on_reach(self, value: int, callback: FenceCallback) -> None:
        """Call ``callback(reached, fault)`` once value >= ``value`` or the fence fails."""
        with self._cv:
            if self.failure is None and self.value < value:
                self._callbacks.append((value, callback))
                return
            reached = self.value
            failure = self.failure if reached < value else None
        _fire(callback, reached, failure)

    def schedule(self, value: int) -> None:
        """Record that a submitted command will signal ``value`` (must exceed earlier ones)."""
        if not self.scheduled < value <= U64_MAX:
            raise InvalidArgumentError(
                f"signal value {value} must exceed fence {self.fid}'s last scheduled value "
                f"{self.scheduled} (timeline values only grow) and fit in u64",
                field="signal",
            )
        self.scheduled = value


def _fire(callback: FenceCallback, reached: int, fault: FaultRecord | None) -> None:
    try:
        callback(reached, fault)
    except Exception:  # a client callback must not kill the driver: logged, never silent
        log.exception("fence callback %r raised", callback)
