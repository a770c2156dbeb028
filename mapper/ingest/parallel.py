"""Parse a large batch on the usable cores: forked children share the code files with it.

Synchronous: the caller waits for every file. The code files form one queue, biggest first,
that every process takes from as it becomes free (a counter in shared memory), so none
waits on a share that turned out slower than its size said. Each child parses with the same
``parse_one`` the parent uses and sends each result back as its parse-cache text
(:func:`mapper.ingest.codec.dumps`, plain JSON: nothing the parent reads can run code), then
leaves with ``os._exit`` (it never returns into the caller's code). The parent parses every
doc, contract and proto and its part of the queue; it then reads, reaps, and decodes the
children's texts, so the results and their order are those of a sequential run. The texts go
on into the parse cache, which would otherwise encode every record again when the map is
saved.

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

import itertools
import json
import multiprocessing
import os
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, BinaryIO

from mapper.ingest import codec
from mapper.ingest.scan import Category, SourceFile
from mapper.progress import TICKER

ENV = "STACKMAP_PARSE_FORK"
MIN_BYTES = 256 * 1024
MAX_WORKERS = 8
_CODE = (Category.CODE, Category.TEST)

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
    children: list[_Child | None] = []
    results: dict[int, Parsed] = {}
    try:
        for _ in range((n or workers()) - 1):
            children.append(_fork(entries, queue, parse_one))
        rest = [i for i, e in enumerate(entries) if e.category not in _CODE]
        for i in itertools.chain(rest, queue):  # the queue lazily: one file at a time
            results[i] = with_text(parse_one(entries[i]))
            tick(entries[i].path)
        answers = [child.answer() if child is not None else None for child in children]
    finally:  # none is left running, even when this process's own parse failed
        for child in children:
            if child is not None:
                child.close()
    for answer in answers:
        for i, parsed in (_decode(answer, len(entries)) if answer is not None else None) or ():
            results[i] = parsed
            tick(entries[i].path)
    for i in range(len(entries)):  # what a failed child took and never answered for
        if i not in results:
            results[i] = with_text(parse_one(entries[i]))
            tick(entries[i].path)
    return [results[i] for i in range(len(entries))]


class _Child:
    """A forked child and the pipe its answer comes through."""

    def __init__(self, pid: int, reader: BinaryIO) -> None:
        self.pid, self.reader = pid, reader
        self.status: int | None = None  # the exit status, once waited for

    def answer(self) -> bytes | None:
        """All it wrote, once it has exited; None when it did not exit cleanly."""
        written = self.reader.read()
        self.close()
        return written if self.status == 0 else None

    def close(self) -> None:
        """Close the pipe (a child still writing gets a broken pipe instead of blocking) and
        wait for the child to exit, once."""
        self.reader.close()
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
            # each result encoded as soon as it is parsed: while there is a file left to
            # take, not after the queue is empty and the parent may be waiting
            answer = _encode((i, *parse_one(entries[i])) for i in queue)
            with os.fdopen(write_end, "wb") as pipe:
                pipe.write(answer)
            status = 0
        finally:  # whatever happened (even an exception), never return into the caller
            os._exit(status)
    os.close(write_end)
    return _Child(pid, os.fdopen(read_end, "rb"))


def with_text(result: tuple[Any, str | None]) -> Parsed:
    """A parse result with its record's parse-cache text."""
    return result[0], result[1], codec.dumps(result[0])


def _encode(results: Iterable[tuple[int, Any, str | None]]) -> bytes:
    """One JSON line heading the answer, ``[[index, text length or -1, reason], …]``, then
    the texts one after another (UTF-8): no text is escaped into another JSON document."""
    head: list[list[Any]] = []
    blobs: list[bytes] = []
    for index, record, reason in results:
        text = codec.dumps(record)
        blob = b"" if text is None else text.encode("utf-8")
        head.append([index, -1 if text is None else len(blob), reason])
        blobs.append(blob)
    return json.dumps(head).encode("utf-8") + b"\n" + b"".join(blobs)


def _decode(answer: bytes, count: int) -> list[tuple[int, Parsed]] | None:
    """A child's (index, result) pairs, or None when its answer is not well-formed results
    for distinct indexes below ``count``."""
    head_end = answer.find(b"\n")
    try:
        head = json.loads(answer[:head_end]) if head_end >= 0 else None
        if not isinstance(head, list):
            return None
        out: list[tuple[int, Parsed]] = []
        at = head_end + 1
        for index, size, reason in head:
            if not (isinstance(index, int) and 0 <= index < count):
                return None
            text = None if size < 0 else answer[at : at + size].decode("utf-8")
            at += max(size, 0)
            out.append((index, (codec.loads(text), reason, text)))
        distinct = len({i for i, _ in out}) == len(out)
        return out if at == len(answer) and distinct else None
    except (ValueError, TypeError, codec.CodecError):
        return None
