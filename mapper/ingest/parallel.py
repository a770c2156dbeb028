"""Parse a large batch on two cores: one forked child takes about half of the code files.

Synchronous: the caller waits for both halves. The child parses its share with the same
``parse_one`` the parent uses and sends the records back pickled (through the compact
reducers of :mod:`mapper.ingest.codec`) over a pipe, then exits with ``os._exit`` (it never
returns into the caller's code). The parent parses the rest meanwhile (all docs, contracts
and protos, and the other code files), then reads, waits and merges, so the results and
their order are those of a sequential run.

Used only where it pays and is safe: ``os.fork`` exists, at least two CPUs are usable and
one of them is idle right now, the process runs no other Python thread, and the batch holds
at least ``MIN_BYTES`` of code (an incremental run parses a few files in-process).
``STACKMAP_PARSE_FORK=0`` turns it off. A child that fails in any way (killed, unpicklable
result, short read) costs time, never results: the parent then parses the child's share
itself.
"""

from __future__ import annotations

import os
import pickle
import threading
from collections.abc import Callable, Sequence
from typing import Any

from mapper.ingest import codec  # noqa: F401 - registers the compact reducers
from mapper.ingest.scan import Category, SourceFile

ENV = "STACKMAP_PARSE_FORK"
MIN_BYTES = 256 * 1024
# Rough cost per byte relative to code (parse + query + extraction), and the fixed cost of a
# proto (protoc runs once per file), used to balance the two halves.
_WEIGHT = {Category.DOC: 0.3, Category.CONTRACT: 0.6, Category.PROTO: 0.0}
_PROTO_COST = 25_000
_CHILD_SHARE = 0.46  # the parent also decodes the child's records and ran the fork

Result = tuple[Any, str | None]


def enabled(entries: Sequence[SourceFile]) -> bool:
    """Whether :func:`parse_split` would fork for ``entries``."""
    if os.environ.get(ENV, "1") == "0" or not hasattr(os, "fork"):
        return False
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    if (cpus or 1) < 2 or threading.active_count() > 1:
        return False
    code = sum(len(e.data) for e in entries if e.category in (Category.CODE, Category.TEST))
    return code >= MIN_BYTES and _idle_cpu(cpus or 1)


def _idle_cpu(cpus: int) -> bool:
    """Whether a CPU is free for the child right now: fewer runnable tasks (this one
    included) than usable CPUs, per ``/proc/loadavg``. Sharing one busy core, a child only
    adds its transfer cost. True where the kernel does not say (no ``/proc``)."""
    try:
        with open("/proc/loadavg", encoding="ascii") as fh:
            runnable = int(fh.read().split()[3].split("/")[0])
    except (OSError, ValueError, IndexError):
        return True
    return runnable < cpus


def split(entries: Sequence[SourceFile]) -> tuple[list[int], list[int]]:
    """(indexes the parent parses, indexes the child parses), balanced by estimated cost:
    the parent keeps every non-code file; the code files go biggest first to the child until
    it holds its share of the total."""
    code = [i for i, e in enumerate(entries) if e.category in (Category.CODE, Category.TEST)]
    total = float(sum(len(entries[i].data) for i in code))
    for entry in entries:
        if entry.category not in (Category.CODE, Category.TEST):
            total += len(entry.data) * _WEIGHT.get(entry.category, 1.0)
            total += _PROTO_COST if entry.category is Category.PROTO else 0
    child: list[int] = []
    load = 0
    for i in sorted(code, key=lambda i: (-len(entries[i].data), i)):
        size = len(entries[i].data)
        if load + size <= total * _CHILD_SHARE:
            child.append(i)
            load += size
    taken = set(child)
    return [i for i in range(len(entries)) if i not in taken], sorted(child)


def parse_split(
    entries: Sequence[SourceFile],
    parse_one: Callable[[SourceFile], Result],
    tick: Callable[[str], None],
) -> list[Result]:
    """``parse_one`` over ``entries`` in two processes; results in the order of ``entries``."""
    mine, theirs = split(entries)
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: parse, send, and leave without running any caller code
        status = 1
        try:
            os.close(read_end)
            payload = pickle.dumps(
                [parse_one(entries[i]) for i in theirs], protocol=pickle.HIGHEST_PROTOCOL
            )
            with os.fdopen(write_end, "wb") as pipe:
                pipe.write(payload)
            status = 0
        finally:  # whatever happened (even an exception), never return into the caller
            os._exit(status)
    os.close(write_end)
    results: dict[int, Result] = {}
    reader = os.fdopen(read_end, "rb")
    try:
        for i in mine:
            results[i] = parse_one(entries[i])
            tick(entries[i].path)
        payload = reader.read()
    finally:  # closing first: a child still writing gets a broken pipe instead of blocking
        reader.close()
        _, status = os.waitpid(pid, 0)
    received = _load(payload) if status == 0 else None
    if received is None or len(received) != len(theirs):  # the child failed: do its share
        received = [parse_one(entries[i]) for i in theirs]
    for i, result in zip(theirs, received, strict=True):
        results[i] = result
        tick(entries[i].path)
    return [results[i] for i in range(len(entries))]


def _load(payload: bytes) -> list[Result] | None:
    try:
        received = pickle.loads(payload)
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError, KeyError):
        return None
    return received if isinstance(received, list) else None
