"""One bad file never aborts the ingest: each is skipped (with its reason) or read partially."""

from __future__ import annotations

import dataclasses
import os
import threading
from pathlib import Path

import pytest

from mapper.config import load_config
from mapper.errors import StoreError
from mapper.ingest import ingest, load_map
from mapper.ingest.scan import MAX_BYTES


def test_every_bad_file_is_skipped_with_a_reason(minirepo: Path) -> None:
    comp = minirepo / "compiler"
    (comp / "broken.py").write_text("def ok() -> int:\n    return 1\n\ndef bad(:\n    pass\n")
    (comp / "blob.c").write_bytes(b"\x7fELF\x00\x00\x01binary")
    (comp / "latin1.py").write_bytes(b"NAME = 'caf\xe9'\n")
    (comp / "huge.py").write_bytes(b"x = 1\n" * (MAX_BYTES // 6 + 10))
    os.mkfifo(comp / "pipe.py")
    (comp / "dangling.py").symlink_to(minirepo / "does-not-exist.py")
    (comp / "loop").symlink_to(comp, target_is_directory=True)
    (minirepo / "contracts" / "broken.yaml").write_text("contract: broken\nupper: [\n")
    (minirepo / "proto" / "bad.proto").write_text('syntax = "proto3";\nmessage X { int32 = ; }\n')
    (minirepo / "notes" / "bad-front.md").write_text("---\ntitle: [\n---\n# Still here\n")

    report = ingest(minirepo, embed=False, progress=False)

    skips = {s.path: s.reason for s in report.skips}
    assert skips["compiler/blob.c"] == "binary file"
    assert skips["compiler/latin1.py"].startswith("not UTF-8 text")
    assert skips["compiler/huge.py"].startswith("huge file")
    assert skips["compiler/pipe.py"] == "not a regular file"
    assert skips["compiler/dangling.py"] == "broken symlink"
    assert skips["compiler/loop"].startswith("symlink loop")
    assert skips["contracts/broken.yaml"].startswith("invalid YAML")
    assert len(skips) == 7
    assert any(
        w.startswith("compiler/broken.py: syntax errors near line(s) 4") for w in report.warnings
    )
    assert any(w.startswith("proto/bad.proto: ") for w in report.warnings)
    assert any(w.startswith("notes/bad-front.md:") for w in report.warnings)
    graph = load_map(minirepo)
    assert "symbol:compiler.broken.ok" in graph  # partial symbols of the broken file
    assert "doc:notes/bad-front.md#still-here" in graph
    assert "interface:runtime_driver.alloc_pages" in graph  # the rest of the map is intact
    assert not any(n.startswith("file:compiler/loop/") for n, _ in graph.nodes())


def test_crash_before_switch_leaves_previous_map(minirepo: Path) -> None:
    first = ingest(minirepo, embed=False, progress=False)
    store = minirepo / ".stackmap"
    # a version folder left half-written by a crash is ignored, and the next ingest goes on
    (store / "versions" / ".2.tmp").mkdir()
    (store / "versions" / ".2.tmp" / "graph.pickle").write_bytes(b"partial")
    assert load_map(minirepo).signature() is not None
    assert (store / "current").read_text().strip() == str(first.version)
    second = ingest(minirepo, embed=False, progress=False)
    assert second.version == first.version + 1 and second.parsed == ()


def test_unwritable_store_is_a_store_error(minirepo: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder\n")
    config = dataclasses.replace(load_config(minirepo), store=str(blocker / "store"))
    with pytest.raises(StoreError, match="cannot lock the store"):
        ingest(minirepo, config, embed=False, progress=False)


def test_concurrent_ingests_serialise_on_the_store_lock(minirepo: Path) -> None:
    results: list[int] = []

    def one() -> None:
        results.append(ingest(minirepo, embed=False, progress=False, full=True).version)

    threads = [threading.Thread(target=one) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert sorted(results) == [1, 2, 3]  # each writer saw the previous one's version
    assert load_map(minirepo).signature() is not None
