"""The two-process parse gives exactly the sequential results, even when its child fails."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest

from mapper.config import load_config
from mapper.ingest import codec, ingest, load_map, parallel
from mapper.ingest.parse import parse_one
from mapper.ingest.scan import Category, SourceFile, scan
from mapper.ingest.store import Store
from mapper.model import Language

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")


def _entries(root: Path) -> list[SourceFile]:
    return list(scan(load_config(root)).files)


def _sequential(root: Path) -> list[parallel.Parsed]:
    config = load_config(root)
    out = []
    for entry in _entries(root):
        record, reason = parse_one(config, entry)
        out.append((record, reason, codec.dumps(record)))
    return out


def _file(path: str, category: Category, size: int) -> SourceFile:
    return SourceFile(path, category, Language.PYTHON, path, b"x" * size)


def test_split_sends_each_code_file_biggest_first_where_the_load_ends_lowest() -> None:
    entries = [
        _file("a.py", Category.CODE, 90),
        _file("b.py", Category.CODE, 60),
        _file("doc.md", Category.DOC, 300),  # weighs 90: the total is 260, the share 119.6
        _file("c_test.py", Category.TEST, 20),
    ]
    # Two processes. The parent starts at 90 (the doc). a: 180 here, 90 there: the child
    # (the parent 99, decoding it). b: 159 here, 150 there: the child (the parent 105).
    # c: 125 here, 170 there: the parent.
    assert parallel.split(entries, 2) == [[2, 3], [0, 1]]
    # Three: a to the first child (a tie goes to the lower), b and c to the second.
    assert parallel.split(entries, 3) == [[2], [0], [1, 3]]


def test_split_keeps_non_code_home_and_gives_each_file_to_one_side(minirepo: Path) -> None:
    entries = _entries(minirepo)
    mine, theirs = parallel.split(entries, 2)
    code = (Category.CODE, Category.TEST)
    assert sorted(mine + theirs) == list(range(len(entries)))
    # protoc's fixed cost outweighs all nine code files: the child parses every one
    assert theirs == [i for i, e in enumerate(entries) if e.category in code]
    assert len(theirs) == 9


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


@pytest.mark.parametrize(
    "answer",
    [
        b"",  # nothing at all
        b"[[3, null]]\nabc",  # a head that lists fewer results than the child was given
        b'[[5, null], [5, null]]\n{"cod',  # a text cut short
        b"not json\n",
    ],
)
def test_an_unreadable_answer_is_no_result(answer: bytes) -> None:
    assert parallel._decode(answer, 2) is None


@pytest.mark.parametrize(
    ("told", "processes"), [("3", 3), ("1", 1), ("0", 1), ("99", 8), ("many", 1), ("", 5)]
)
def test_workers_are_the_usable_cpus_or_as_told(
    monkeypatch: pytest.MonkeyPatch, told: str, processes: int
) -> None:
    monkeypatch.setattr(parallel.os, "sched_getaffinity", lambda _pid: set(range(5)))
    monkeypatch.setenv(parallel.ENV, told)
    assert parallel.workers() == processes


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
