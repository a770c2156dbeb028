"""The two-process parse gives exactly the sequential results, even when its child fails."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mapper.config import load_config
from mapper.ingest import ingest, load_map, parallel
from mapper.ingest.parse import parse_one
from mapper.ingest.scan import Category, SourceFile, scan

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")


def _entries(root: Path) -> list[SourceFile]:
    return list(scan(load_config(root)).files)


def test_split_gives_every_file_to_one_side_and_keeps_non_code_home(minirepo: Path) -> None:
    entries = _entries(minirepo)
    mine, theirs = parallel.split(entries)
    assert sorted(mine + theirs) == list(range(len(entries)))
    assert theirs, "the child gets code to parse"
    code = (Category.CODE, Category.TEST)
    assert all(entries[i].category in code for i in theirs)
    assert [i for i, e in enumerate(entries) if e.category not in code] == [
        i for i in mine if entries[i].category not in code
    ]


def test_forked_parse_equals_sequential_parse(minirepo: Path) -> None:
    (minirepo / "compiler" / "broken.py").write_text(
        "def ok() -> int:\n    return 1\n\ndef bad(:\n"
    )
    (minirepo / "compiler" / "deep.py").write_text("x = " + "(" * 2000 + ")" * 2000 + "\n")
    (minirepo / "contracts" / "broken.yaml").write_text("contract: broken\nupper: [\n")
    config = load_config(minirepo)
    entries = _entries(minirepo)
    assert {"compiler/broken.py", "compiler/deep.py"} <= {
        entries[i].path for i in parallel.split(entries)[1]
    } | {e.path for e in entries if e.category is Category.CONTRACT}
    ticks: list[str] = []
    forked = parallel.parse_split(entries, lambda e: parse_one(config, e), ticks.append)
    assert forked == [parse_one(config, e) for e in entries]
    assert sorted(ticks) == sorted(e.path for e in entries)


def test_a_failing_child_costs_time_not_results(minirepo: Path) -> None:
    config = load_config(minirepo)
    entries = _entries(minirepo)
    parent = os.getpid()

    def parse(entry: SourceFile) -> tuple[object, str | None]:
        if os.getpid() != parent:  # in the child: a result that cannot be sent back
            return (lambda: None), None
        return parse_one(config, entry)

    assert parallel.parse_split(entries, parse, lambda _p: None) == [
        parse_one(config, e) for e in entries
    ]


def test_small_batches_and_the_switch_stay_in_process(
    minirepo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    entries = _entries(minirepo)
    assert not parallel.enabled(entries)  # far below MIN_BYTES
    monkeypatch.setattr(parallel, "MIN_BYTES", 0)
    monkeypatch.setenv(parallel.ENV, "0")
    assert not parallel.enabled(entries)


def test_ingest_with_the_forked_parse_equals_the_in_process_one(
    minirepo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(parallel, "MIN_BYTES", 0)
    monkeypatch.setattr(parallel.threading, "active_count", lambda: 1)  # pytest's own threads
    monkeypatch.setattr(parallel, "_idle_cpu", lambda _cpus: True)  # even on a busy machine
    assert parallel.enabled(_entries(minirepo)) == (len(os.sched_getaffinity(0)) >= 2)
    ingest(minirepo, embed=False, progress=False, full=True)
    forked = load_map(minirepo).signature()
    monkeypatch.setenv(parallel.ENV, "0")
    ingest(minirepo, embed=False, progress=False, full=True)
    assert load_map(minirepo).signature() == forked
