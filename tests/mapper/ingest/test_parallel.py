"""The two-process parse gives exactly the sequential results, even when its child fails."""

from __future__ import annotations

import os
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from mapper.config import load_config
from mapper.ingest import codec, ingest, load_map, parallel
from mapper.ingest.code import parse_source
from mapper.ingest.parse import parse_one
from mapper.ingest.scan import Category, SourceFile, scan
from mapper.ingest.store import Store
from mapper.model import Language

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the forked parse runs on Linux only"
)


def _entries(root: Path) -> list[SourceFile]:
    return list(scan(load_config(root)).files)


def _sequential(root: Path) -> list[parallel.Parsed]:
    config = load_config(root)
    out = []
    for entry in _entries(root):
        record, reason = parse_one(config, entry)
        out.append((record, reason, codec.dumps(record)))
    return out


def test_the_queue_hands_each_index_out_once_across_processes() -> None:
    queue = parallel._Queue(list(range(500)))
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child takes what it can and reports it
        status = 1
        try:
            os.close(read_end)
            with os.fdopen(write_end, "w") as pipe:
                pipe.write(" ".join(str(i) for i in queue))
            status = 0
        finally:
            os._exit(status)
    os.close(write_end)
    mine = list(queue)
    with os.fdopen(read_end) as pipe:
        theirs = [int(i) for i in pipe.read().split()]
    assert os.waitpid(pid, 0)[1] == 0
    assert sorted(mine + theirs) == list(range(500))
    assert list(queue) == []  # an emptied queue stays empty


@pytest.mark.parametrize("processes", [2, 3, 8])
def test_forked_parse_equals_sequential_parse(minirepo: Path, processes: int) -> None:
    config = load_config(minirepo)
    entries = _entries(minirepo)
    ticks: list[str] = []
    forked = parallel.parse_split(entries, lambda e: parse_one(config, e), ticks.append, processes)
    assert forked == _sequential(minirepo)
    assert sorted(ticks) == sorted(e.path for e in entries)


@pytest.mark.parametrize("failure", ["raises", "unknown record", "killed"])
def test_a_failing_child_costs_time_not_results(minirepo: Path, failure: str) -> None:
    config = load_config(minirepo)
    entries = _entries(minirepo)
    parent = os.getpid()

    def parse(entry: SourceFile) -> tuple[object, str | None]:
        if os.getpid() != parent:  # in the child
            if failure == "raises":
                raise RuntimeError("a parser bug")
            if failure == "killed":
                os._exit(9)
            return {"@": "os.system"}, None  # its text names no record class: refused
        return parse_one(config, entry)

    assert parallel.parse_split(entries, parse, lambda _p: None, 3) == _sequential(minirepo)


def test_a_refused_fork_leaves_the_share_to_the_parent(
    minirepo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = load_config(minirepo)

    def refuse() -> int:
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(parallel.os, "fork", refuse)
    entries = _entries(minirepo)
    forked = parallel.parse_split(entries, lambda e: parse_one(config, e), lambda _p: None, 2)
    assert forked == _sequential(minirepo)


def _head(index: int, size: int, why: int) -> bytes:
    return parallel._HEAD.pack(index, size, why)


@pytest.mark.parametrize(
    "answer",
    [
        _head(0, 5, -1) + b'{"cod',  # a text cut short
        _head(0, -1, -1) + _head(0, -1, -1),  # the same file twice
        _head(7, -1, -1),  # an index the batch does not have
        _head(0, -2, -1),  # a length below "none"
        _head(0, 3, -1) + b"\xff\xfe{",  # a text that is not UTF-8
        _head(0, 9, -1) + b"not json!",
        _head(0, -1, -1)[:5],  # a head cut short
    ],
)
def test_an_unreadable_answer_is_no_result(answer: bytes) -> None:
    decoded = parallel._Answer(2)
    decoded.feed(answer)
    assert decoded.complete() is None


@pytest.mark.parametrize("piece", [1, 7, 1 << 20])
def test_frames_decode_to_their_indexes_and_texts_in_pieces_of_any_size(piece: int) -> None:
    parsed = parse_source("a.py", b"def f():\n    return 1\n", Language.PYTHON, "a")
    text = codec.dumps(parsed)
    assert text is not None and "\u00e9" not in text
    sent = parallel._frame(1, (None, "unparsable: é", None)) + parallel._frame(
        0, parallel.with_text((parsed, None))
    )
    decoded = parallel._Answer(2)
    for at in range(0, len(sent), piece):
        decoded.feed(sent[at : at + piece])
    assert decoded.complete() == {1: (None, "unparsable: é", None), 0: (parsed, None, text)}


@pytest.mark.parametrize(
    ("told", "processes"), [("3", 3), ("1", 1), ("0", 1), ("99", 8), ("many", 1), ("", 5)]
)
def test_workers_are_the_usable_cpus_or_as_told(
    monkeypatch: pytest.MonkeyPatch, told: str, processes: int
) -> None:
    monkeypatch.setattr(parallel.os, "sched_getaffinity", lambda _pid: set(range(5)))
    monkeypatch.setenv(parallel.ENV, told)
    assert parallel.workers() == processes


def test_no_fork_off_linux(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parallel.sys, "platform", "darwin")
    monkeypatch.setenv(parallel.ENV, "4")
    assert parallel.workers() == 1


def test_small_batches_other_threads_and_the_switch_stay_in_process(
    minirepo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    entries = _entries(minirepo)
    monkeypatch.setattr(parallel, "_other_threads", lambda: False)
    monkeypatch.setattr(parallel.os, "sched_getaffinity", lambda _pid: {0, 1})
    assert not parallel.enabled(entries)  # far below MIN_BYTES
    monkeypatch.setattr(parallel, "MIN_BYTES", 0)
    assert parallel.enabled(entries)
    monkeypatch.setattr(parallel, "_other_threads", lambda: True)
    assert not parallel.enabled(entries)
    monkeypatch.setattr(parallel, "_other_threads", lambda: False)
    monkeypatch.setattr(parallel.os, "sched_getaffinity", lambda _pid: {0})
    assert not parallel.enabled(entries)
    monkeypatch.setattr(parallel.os, "sched_getaffinity", lambda _pid: {0, 1})
    monkeypatch.setenv(parallel.ENV, "0")
    assert not parallel.enabled(entries)


def test_the_progress_timer_is_no_other_thread_but_any_other_is() -> None:
    done = threading.Event()
    ticker = threading.Thread(target=done.wait, name=parallel.TICKER, daemon=True)
    ticker.start()
    try:
        assert parallel._other_threads() == any(
            t is not threading.current_thread() and t is not ticker for t in threading.enumerate()
        )
    finally:
        done.set()
        ticker.join()
    other = threading.Thread(target=done.wait, daemon=True)
    done.clear()
    other.start()
    try:
        assert parallel._other_threads()
    finally:
        done.set()
        other.join()


def test_ingest_with_the_forked_parse_equals_the_in_process_one(
    minirepo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    forks: list[int] = []
    split = parallel.parse_split
    monkeypatch.setattr(parallel, "MIN_BYTES", 0)
    monkeypatch.setattr(parallel, "_other_threads", lambda: False)  # pytest's own threads
    monkeypatch.setattr(parallel.os, "sched_getaffinity", lambda _pid: {0, 1})

    def counted(*args: Any) -> list[parallel.Parsed]:
        forks.append(1)
        return split(*args)

    monkeypatch.setattr(parallel, "parse_split", counted)
    store = Store(load_config(minirepo).store_path)
    ingest(minirepo, embed=False, progress=False, full=True)
    assert forks == [1]
    forked, forked_cache = load_map(minirepo).signature(), store.load_parse_cache()
    monkeypatch.setenv(parallel.ENV, "0")
    ingest(minirepo, embed=False, progress=False, full=True)
    assert forks == [1]
    assert load_map(minirepo).signature() == forked
    cache = store.load_parse_cache()
    assert (cache.key, cache.texts) == (forked_cache.key, forked_cache.texts)
    assert sorted(cache.texts) == sorted(e.path for e in _entries(minirepo))


def test_a_queue_whose_lock_stays_taken_stops_handing_out(monkeypatch: pytest.MonkeyPatch) -> None:
    queue = parallel._Queue([4, 5, 6])
    monkeypatch.setattr(parallel._Queue, "LOCK_S", 0.01)
    assert next(iter(queue)) == 4
    queue.lock.acquire()  # as a child killed inside the lock leaves it
    assert list(queue) == []


def test_every_process_takes_from_the_queue_one_file_at_a_time(
    minirepo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[parallel._Queue] = []
    real = parallel._Queue

    def recorded(order: list[int]) -> parallel._Queue:
        made.append(real(order))
        return made[-1]

    monkeypatch.setattr(parallel, "_Queue", recorded)
    parent = os.getpid()
    entries = _entries(minirepo)

    def parse(entry: SourceFile) -> tuple[object, str | None]:
        if os.getpid() == parent and entry.category in (Category.CODE, Category.TEST):
            deadline = time.monotonic() + 60  # until the child has taken a file too
            while made[0].taken.value < 2 and time.monotonic() < deadline:
                time.sleep(0.01)
        return None, str(os.getpid())

    parsed = parallel.parse_split(entries, parse, lambda _p: None, 2)
    code = (Category.CODE, Category.TEST)
    by = Counter(p[1] for e, p in zip(entries, parsed, strict=True) if e.category in code)
    (child,) = set(by) - {str(parent)}  # the one child parsed some of the nine code files
    assert by[child] > 0 and sum(by.values()) == 9
    assert {p[1] for e, p in zip(entries, parsed, strict=True) if e.category not in code} == {
        str(parent)
    }
