"""Parse a large batch on the usable cores: forked children take shares of the code files.

Synchronous: the caller waits for every share. Each child parses its share with the same
``parse_one`` the parent uses and sends each result back as its parse-cache text
(:func:`mapper.ingest.codec.dumps`, plain JSON: nothing the parent reads can run code), then
leaves with ``os._exit`` (it never returns into the caller's code). Meanwhile the parent
parses the rest (every doc, contract and proto, and its share of the code); it then reads,
reaps, and decodes the children's texts, so the results and their order are those of a
sequential run. The texts go on into the parse cache, which would otherwise encode every
record again when the map is saved.

Used only where it pays and is safe: ``os.fork`` exists, at least two CPUs are usable, the
process runs no other Python thread (but the progress timer), and the batch holds at least
``MIN_BYTES`` of code (an incremental run parses a few files in-process).
``STACKMAP_PARSE_FORK`` sets the number of processes (``1`` or ``0``: this one only). A child
that fails in any way (killed, an exception, a short or unreadable answer) costs time, never
results: the parent then parses that child's share itself.

``stackmap bench ingest --json --no-embed`` prints the ingest with and without it
(``full_noembed_s`` and ``full_noembed_1proc_s``), alternated in one run.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Sequence
from typing import Any, BinaryIO

from mapper.ingest import codec
from mapper.ingest.scan import Category, SourceFile
from mapper.progress import TICKER

ENV = "STACKMAP_PARSE_FORK"
MIN_BYTES = 256 * 1024
# Rough cost per byte relative to code (parse, query, extraction, encoding) and the fixed cost
# of a proto (protoc runs once per file), to balance the shares.
_WEIGHT = {Category.DOC: 0.3, Category.CONTRACT: 0.6, Category.PROTO: 0.0}
_PROTO_COST = 25_000
_DECODE = 0.1  # the parent's cost of decoding a child's result, per byte of code
MAX_WORKERS = 8

#: One parse: (record, why the file was skipped or None, the record's parse-cache text).
Parsed = tuple[Any, str | None, str | None]


def workers() -> int:
    """How many processes a large parse uses: the usable CPUs (at most ``MAX_WORKERS``), or
    the number ``STACKMAP_PARSE_FORK`` gives (``0`` or ``1``: this process only)."""
    if not hasattr(os, "fork"):
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


def split(entries: Sequence[SourceFile], n: int) -> list[list[int]]:
    """The indexes each of ``n`` processes parses (the parent's first), balanced by estimated
    cost: the parent keeps every non-code file, and each code file, biggest first, goes where
    the load ends lowest (one for a child also costs the parent its decoding)."""
    loads = [0.0] * n
    shares: list[list[int]] = [[] for _ in range(n)]
    code: list[int] = []
    for i, entry in enumerate(entries):
        if entry.category in (Category.CODE, Category.TEST):
            code.append(i)
            continue
        shares[0].append(i)
        loads[0] += len(entry.data) * _WEIGHT.get(entry.category, 1.0)
        loads[0] += _PROTO_COST if entry.category is Category.PROTO else 0
    for i in sorted(code, key=lambda i: (-len(entries[i].data), i)):
        size = len(entries[i].data)
        ends = [loads[0] + size] + [load + size for load in loads[1:]]
        best = min(range(n), key=lambda k: (ends[k], k))
        loads[best] = ends[best]
        if best:
            loads[0] += size * _DECODE
        shares[best].append(i)
    return [sorted(share) for share in shares]


def parse_split(
    entries: Sequence[SourceFile],
    parse_one: Callable[[SourceFile], tuple[Any, str | None]],
    tick: Callable[[str], None],
    n: int | None = None,
) -> list[Parsed]:
    """``parse_one`` over ``entries`` in ``n`` processes (:func:`workers` when None), this one
    and ``n - 1`` forked children; results in the order of ``entries``."""
    mine, *shares = split(entries, n or workers())
    theirs = [share for share in shares if share]
    children: list[_Child | None] = []
    try:
        for share in theirs:
            children.append(_fork(entries, share, parse_one))
        results: dict[int, Parsed] = {}
        for i in mine:
            results[i] = _with_text(parse_one(entries[i]))
            tick(entries[i].path)
        answers = [child.answer() if child is not None else None for child in children]
    finally:  # none is left running, even when this process's own parse failed
        for child in children:
            if child is not None:
                child.close()
    for share, answer in zip(theirs, answers, strict=True):
        received = _decode(answer, len(share)) if answer is not None else None
        if received is None:  # the child failed: do its share here
            received = [_with_text(parse_one(entries[i])) for i in share]
        for i, parsed in zip(share, received, strict=True):
            results[i] = parsed
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
    share: list[int],
    parse_one: Callable[[SourceFile], tuple[Any, str | None]],
) -> _Child | None:
    """A child parsing ``share``; None when the system refuses another process or pipe (the
    parent then parses the share)."""
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
            with os.fdopen(write_end, "wb") as pipe:
                pipe.write(_encode([parse_one(entries[i]) for i in share]))
            status = 0
        finally:  # whatever happened (even an exception), never return into the caller
            os._exit(status)
    os.close(write_end)
    return _Child(pid, os.fdopen(read_end, "rb"))


def _with_text(result: tuple[Any, str | None]) -> Parsed:
    return result[0], result[1], codec.dumps(result[0])


def _encode(results: list[tuple[Any, str | None]]) -> bytes:
    """One JSON line heading the answer, ``[[text length or -1, reason], …]``, then the texts
    one after another (UTF-8): no text is escaped into another JSON document."""
    head: list[list[Any]] = []
    blobs: list[bytes] = []
    for record, reason in results:
        text = codec.dumps(record)
        blob = b"" if text is None else text.encode("utf-8")
        head.append([-1 if text is None else len(blob), reason])
        blobs.append(blob)
    return json.dumps(head).encode("utf-8") + b"\n" + b"".join(blobs)


def _decode(answer: bytes, count: int) -> list[Parsed] | None:
    """The child's results, or None when its answer is not ``count`` well-formed ones."""
    head_end = answer.find(b"\n")
    try:
        head = json.loads(answer[:head_end]) if head_end >= 0 else None
        if not isinstance(head, list) or len(head) != count:
            return None
        out: list[Parsed] = []
        at = head_end + 1
        for size, reason in head:
            text = None if size < 0 else answer[at : at + size].decode("utf-8")
            at += max(size, 0)
            out.append((codec.loads(text), reason, text))
        return out if at == len(answer) else None
    except (ValueError, TypeError, codec.CodecError):
        return None
