"""Plain progress lines on stderr for steps that turn out long, on a terminal or not.

``with step("parsing 120 files"):`` prints nothing when the step is shorter than ``after_s``;
a longer one gets ``stackmap: parsing 120 files...``, then ``stackmap: ... still parsing 120
files (N s)`` every ``every_s`` and ``stackmap: parsing 120 files: done in N s`` at the end. A
timer thread writes the lines; the step itself is never slowed or interrupted.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager


def _say(line: str) -> None:
    sys.stderr.write(f"stackmap: {line}\n")
    sys.stderr.flush()


@contextmanager
def step(
    what: str, *, enabled: bool = True, after_s: float = 2.0, every_s: float = 10.0
) -> Iterator[None]:
    """Progress lines for ``what`` (none at all when ``enabled`` is False)."""
    if not enabled:
        yield
        return
    start = time.monotonic()
    done = threading.Event()
    said = threading.Event()

    def tick() -> None:
        wait = after_s
        while not done.wait(wait):
            elapsed = time.monotonic() - start
            _say(f"... still {what} ({elapsed:.0f} s)" if said.is_set() else f"{what}...")
            said.set()
            wait = every_s

    ticker = threading.Thread(target=tick, name="stackmap-progress", daemon=True)
    ticker.start()
    try:
        yield
    finally:
        done.set()
        ticker.join()
        if said.is_set():
            _say(f"{what}: done in {time.monotonic() - start:.1f} s")
