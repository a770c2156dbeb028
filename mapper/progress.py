"""Progress on stderr: plain lines for steps that turn out long (on a terminal or not), and a
bar for counted work on a terminal.

``with step("parsing 120 files"):`` prints nothing when the step is shorter than ``after_s``;
a longer one gets ``stackmap: parsing 120 files...``, then ``stackmap: ... still parsing 120
files (N s)`` every ``every_s`` and ``stackmap: parsing 120 files: done in N s`` at the end. A
timer thread writes the lines; the step itself is never slowed or interrupted.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

#: The name of :func:`step`'s timer thread. It only waits and writes to stderr, so a fork
#: while it runs is safe for a child that never writes there (:mod:`mapper.ingest.parallel`).
TICKER = "stackmap-progress"


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

    ticker = threading.Thread(target=tick, name=TICKER, daemon=True)
    ticker.start()
    try:
        yield
    finally:
        done.set()
        ticker.join()
        if said.is_set():
            _say(f"{what}: done in {time.monotonic() - start:.1f} s")


def show_progress(progress: bool | None) -> bool:
    """Whether to draw a bar: as told, else on a terminal outside CI."""
    if progress is not None:
        return progress
    return sys.stderr.isatty() and not os.environ.get("CI")


@contextmanager
def bar(enabled: bool, total: int, what: str = "parsing") -> Iterator[Callable[..., None]]:
    """A progress bar on stderr; the yielded ``tick(label, done=None)`` advances it."""
    if not enabled or total == 0:
        yield lambda *_args: None
        return
    from rich.console import Console
    from rich.progress import Progress

    # No auto-refresh thread: ticks redraw at most ten times a second instead.
    with Progress(console=Console(stderr=True), transient=True, auto_refresh=False) as shown:
        task = shown.add_task(what, total=total)
        drawn = 0.0

        def tick(label: str, done: int | None = None) -> None:
            nonlocal drawn
            if done is None:
                shown.update(task, advance=1, description=f"{what} {label[-40:]}")
            else:
                shown.update(task, completed=done)
            now = time.monotonic()
            if now - drawn >= 0.1:
                drawn = now
                shown.refresh()

        yield tick
