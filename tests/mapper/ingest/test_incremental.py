"""Re-ingest after edit, delete and rename equals a from-scratch ingest: graph and index."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from mapper.config import load_config
from mapper.index import VectorIndex
from mapper.ingest import ingest, load_map

pytestmark = pytest.mark.slow


def _index(root: Path) -> dict[str, object]:
    cfg = load_config(root)
    return VectorIndex.for_config(cfg).contents()


def _scratch(root: Path, tmp: Path) -> Path:
    fresh = tmp / "fresh"
    shutil.copytree(root, fresh, ignore=shutil.ignore_patterns(".stackmap"))
    ingest(fresh, embed=True, progress=False)
    return fresh


def _same(a: Path, b: Path) -> None:
    assert load_map(a).signature() == load_map(b).signature()
    assert _index(a) == _index(b)


def _edit(root: Path) -> None:
    path = root / "compiler" / "ir.py"
    text = path.read_text().replace(
        "def make_node(", "def make_graph() -> list[Node]:\n    return []\n\n\ndef make_node("
    )
    path.write_text(text)
    doc = root / "notes" / "memory-release.md"
    doc.write_text(doc.read_text() + "\n## After the fence\n\nThe buffer returns to the pool.\n")


def _delete(root: Path) -> None:
    (root / "kernels" / "add.cu").unlink()
    (root / "docs" / "runtime" / "core.md").unlink()


def _rename(root: Path) -> None:
    (root / "compiler" / "passes.py").rename(root / "compiler" / "optimise.py")
    (root / "driver" / "mini_drv.c").rename(root / "driver" / "mini_core.c")


@pytest.mark.parametrize("change", [_edit, _delete, _rename], ids=["edit", "delete", "rename"])
def test_incremental_equals_from_scratch(minirepo: Path, tmp_path: Path, change) -> None:  # type: ignore[no-untyped-def]
    ingest(minirepo, embed=True, progress=False)
    before = load_map(minirepo).signature()
    change(minirepo)
    report = ingest(minirepo, embed=True, progress=False)
    assert 0 < len(report.parsed) + len(report.removed) <= 4
    assert load_map(minirepo).signature() != before
    _same(minirepo, _scratch(minirepo, tmp_path))
    ids = set(_index(minirepo))
    graph = load_map(minirepo)
    assert all(i in graph for i in ids)  # no stale vectors
    if change is _rename:
        assert "symbol:compiler.passes.FusePass" not in graph
        assert "symbol:compiler.optimise.FusePass" in graph
        assert "symbol:c:driver/mini_core.c:mini_alloc_pages" in graph
        assert report.removed == ("compiler/passes.py", "driver/mini_drv.c")
