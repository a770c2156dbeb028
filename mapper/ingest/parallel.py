"""Parse a large batch on the usable cores: forked children share the code files with it.

Synchronous: the caller waits for every file. The code files form one queue, biggest first,
that every process takes from as it becomes free (a counter in shared memory), so none
waits on a share that turned out slower than its size said. Each child parses with the same
``parse_one`` the parent uses and sends each result back as soon as it has it, a frame holding
the record's parse-cache text (:func:`mapper.ingest.codec.dumps`, plain JSON: nothing the
parent reads can run code), then leaves with ``os._exit`` (it never returns into the caller's
code). The parent parses every doc, contract and proto and its part of the queue, decoding
what the children sent between two files of its own (were it left to the end, the decoding
would run with the children done and their cores idle); it then reads the rest and reaps
them, so the results and their order are those of a sequential run. The texts go on into the
parse cache, which would otherwise encode every record again when the map is saved.

Used only where it pays and is safe: on Linux (where ``os.fork`` is safe for a child that
only parses; macOS's system frameworks are not), at least two CPUs are usable, the
process runs no other Python thread (but the progress timer), and the batch holds at least
``MIN_BYTES`` of code (an incremental run parses a few files in-process).
``STACKMAP_PARSE_FORK`` sets the number of processes (``1`` or ``0``: this one only). A child
that fails in any way (killed, an exception, a short or unreadable answer) costs time, never
results: the parent parses whatever no answer brought back.

``stackmap bench ingest --json --no-embed`` prints the ingest with and without it
(``full_noembed_s`` and ``full_noembed_1proc_s``), alternated in one run.
"""

from __future__ import annotations

import contextlib
import itertools
import multiprocessing
import os
import struct
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from mapper.ingest import codec
from mapper.ingest.scan import Category, SourceFile
from mapper.progress import TICKER

ENV = "STACKMAP_PARSE_FORK"
MIN_BYTES = 256 * 1024
MAX_WORKERS = 8
_CODE = (Category.CODE, Category.TEST)
_HEAD = struct.Struct("<Iii")  # a frame's head: index, text bytes, reason bytes (-1: none)
_CHUNK = 1 << 20  # bytes read from a pipe at once, and the pipe size asked for

#: One parse: (record, why the file was skipped or None, the record's parse-cache text).
Parsed = tuple[Any, str | None, str | None]


def workers() -> int:
    """How many processes a large parse uses: the usable CPUs (at most ``MAX_WORKERS``), or
    the number ``STACKMAP_PARSE_FORK`` gives (``0`` or ``1``: this process only)."""
    if not sys.platform.startswith("linux"):  # macOS's system libraries are not fork-safe
        return 1
    told = os.environ.get(ENV, "").strip()
    if told:
        try:
            return max(1, min(int(told), MAX_WORKERS))
        except ValueError:
            return 1
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, min(cpus or 1, MAX_WORKERS))


def enabled(entries: Sequence[SourceFile]) -> bool:
    """Whether :func:`parse_split` would fork for ``entries``."""
    if workers() < 2 or _other_threads():
        return False
    code = sum(len(e.data) for e in entries if e.category in (Category.CODE, Category.TEST))
    return code >= MIN_BYTES


def _other_threads() -> bool:
    """Whether a thread runs besides this one and the progress timer: a fork copies only the
    calling thread, and a lock another thread holds would stay held in the child."""
    here = threading.current_thread()
    return any(t is not here and t.name != TICKER for t in threading.enumerate())


class _Queue:
    """Indexes to parse, handed out once each across the processes forked after it is made
    (a counter in shared memory, under its lock). A process that cannot get the lock within
    ``LOCK_S`` (a child killed while it held it) stops taking; the parent parses what was
    never taken."""

    LOCK_S = 10.0

    def __init__(self, order: list[int]) -> None:
        self.order = order
        fork = multiprocessing.get_context("fork")
        self.taken = fork.RawValue("q", 0)
        self.lock = fork.Lock()

    def __iter__(self) -> Iterator[int]:
        lock = self.lock
        while lock.acquire(timeout=self.LOCK_S):
            try:
                at = self.taken.value
                self.taken.value = at + 1
            finally:
                lock.release()
            if at >= len(self.order):
                return
            yield self.order[at]


def parse_split(
    entries: Sequence[SourceFile],
    parse_one: Callable[[SourceFile], tuple[Any, str | None]],
    tick: Callable[[str], None],
    n: int | None = None,
) -> list[Parsed]:
    """``parse_one`` over ``entries`` in ``n`` processes (:func:`workers` when None), this one
    and ``n - 1`` forked children; results in the order of ``entries``."""
    code = [i for i, e in enumerate(entries) if e.category in _CODE]
    queue = _Queue(sorted(code, key=lambda i: (-len(entries[i].data), i)))
    children: list[_Child] = []
    results: dict[int, Parsed] = {}
    try:
        for _ in range((n or workers()) - 1):
            child = _fork(entries, queue, parse_one)
            if child is not None:
                children.append(child)
        rest = [i for i, e in enumerate(entries) if e.category not in _CODE]
        for i in itertools.chain(rest, queue):  # the queue lazily: one file at a time
            results[i] = with_text(parse_one(entries[i]))
            tick(entries[i].path)
            for child in children:  # decode what they sent meanwhile, not all at the end
                child.drain()
        answers = [child.finish() for child in children]
    finally:  # none is left running, even when this process's own parse failed
        for child in children:
            child.close()
    for answer in answers:
        for i, parsed in (answer or {}).items():
            results[i] = parsed
            tick(entries[i].path)
    for i in range(len(entries)):  # what a failed child took and never answered for
        if i not in results:
            results[i] = with_text(parse_one(entries[i]))
            tick(entries[i].path)
    return [results[i] for i in range(len(entries))]


def with_text(result: tuple[Any, str | None]) -> Parsed:
    """A parse result with its record's parse-cache text."""
    return result[0], result[1], codec.dumps(result[0])


def _frame(index: int, parsed: Parsed) -> bytes:
    """One result as a child sends it: :data:`_HEAD` (index, byte lengths of the record's
    parse-cache text and of the reason, -1 for none), then the two, UTF-8."""
    _record, reason, text = parsed
    blob = b"" if text is None else text.encode("utf-8")
    why = b"" if reason is None else reason.encode("utf-8")
    sizes = (-1 if text is None else len(blob), -1 if reason is None else len(why))
    return _HEAD.pack(index, *sizes) + blob + why


class _Answer:
    """A child's results, decoded from its frames as they arrive (in pieces of any size)."""

    def __init__(self, count: int) -> None:
        self.count = count  # the batch's size: an index must be below it
        self.results: dict[int, Parsed] = {}
        self.pending = bytearray()  # the start of a frame not yet whole
        self.broken = False  # a frame that is no result was read: the whole answer is void

    def feed(self, data: bytes) -> None:
        if self.broken:
            return
        self.pending += data
        view, at = memoryview(self.pending), 0
        try:
            while len(view) - at >= _HEAD.size:
                index, size, why = _HEAD.unpack_from(view, at)
                end = at + _HEAD.size + max(size, 0) + max(why, 0)
                if end > len(view):
                    break
                if index >= self.count or index in self.results or min(size, why) < -1:
                    raise ValueError(f"no result of this batch: index {index}")
                body = at + _HEAD.size
                text = None if size < 0 else str(view[body : body + size], "utf-8")
                reason = None if why < 0 else str(view[end - why : end], "utf-8")
                self.results[index] = (codec.loads(text), reason, text)
                at = end
        except (ValueError, codec.CodecError):  # a bad length, index, text or record
            self.broken = True
        finally:
            view.release()
        del self.pending[:at]

    def complete(self) -> dict[int, Parsed] | None:
        """The results, or None when a frame was not a result or the last was cut short."""
        return None if self.broken or self.pending else self.results


class _Child:
    """A forked child, the pipe its frames come through, and what they have said so far."""

    def __init__(self, pid: int, fd: int, count: int) -> None:
        self.pid, self.fd = pid, fd
        self.answer = _Answer(count)
        self.status: int | None = None  # the exit status, once waited for
        self.eof = False
        os.set_blocking(fd, False)

    def drain(self) -> None:
        """Decode what the child has written so far: without waiting until :meth:`finish`
        makes the pipe blocking, then all it will write."""
        while not self.eof:
            try:
                chunk = os.read(self.fd, _CHUNK)
            except BlockingIOError:
                return
            self.eof = not chunk
            self.answer.feed(chunk)

    def finish(self) -> dict[int, Parsed] | None:
        """All its results, once it has exited; None when it did not exit cleanly or sent
        anything that is not a result."""
        os.set_blocking(self.fd, True)
        self.drain()
        self.close()
        return self.answer.complete() if self.status == 0 else None

    def close(self) -> None:
        """Close the pipe (a child still writing gets a broken pipe instead of blocking) and
        wait for the child to exit, once."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
        if self.status is None:
            self.status = os.waitpid(self.pid, 0)[1]


def _fork(
    entries: Sequence[SourceFile],
    queue: _Queue,
    parse_one: Callable[[SourceFile], tuple[Any, str | None]],
) -> _Child | None:
    """A child parsing what it takes from ``queue``; None when the system refuses another
    process or pipe (the others then take its part)."""
    try:
        read_end, write_end = os.pipe()
    except OSError:
        return None
    with contextlib.suppress(OSError, AttributeError):  # room for a few files' frames
        import fcntl  # POSIX only: a fork happens on Linux only

        fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, _CHUNK)
    try:
        pid = os.fork()
    except OSError:
        os.close(read_end)
        os.close(write_end)
        return None
    if pid == 0:  # the child: parse, send, and leave without running any caller code
        status = 1
        try:
            os.close(read_end)
            with os.fdopen(write_end, "wb") as pipe:
                for i in queue:  # each result sent as soon as it is parsed
                    pipe.write(_frame(i, with_text(parse_one(entries[i]))))
                    pipe.flush()
            status = 0
        finally:  # whatever happened (even an exception), never return into the caller
            os._exit(status)
    os.close(write_end)
    return _Child(pid, read_end, len(entries))
