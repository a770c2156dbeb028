"""Nothing loaded from the store executes code, and a damaged store gives a clear error.

Each store file is replaced by a pickle whose loading would create a marker file; every reader
(the query API, the incremental ingest, the CLI) refuses it with a typed error naming the file
and the command that rebuilds it, or rebuilds and says so, and the marker never appears.
"""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mapper.config import load_config
from mapper.errors import StoreCorrupt, StoreOutdated
from mapper.ingest import ingest
from mapper.ingest.store import Store
from mapper.query import open_map


class _Payload:
    """Unpickling this creates ``marker`` (harmless, and visible if it ever happens)."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str, str]]:
        return open, (str(self.marker), "w")


def _evil(path: Path, marker: Path) -> None:
    path.write_bytes(pickle.dumps(_Payload(marker)))


@pytest.fixture
def store(minirepo: Path) -> Store:
    ingest(minirepo, embed=False, progress=False)
    s = Store(load_config(minirepo).store_path)
    s.save_vectors({"k": np.ones(4, np.float32)})
    return s


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    cmd = [str(Path(sys.executable).parent / "stackmap"), *args]
    return subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=120)


def test_store_files_are_sqlite_json_and_text(store: Store) -> None:
    folder = store.version_dir()
    assert sorted(p.name for p in folder.iterdir()) == ["map.sqlite", "report.json"]
    assert (folder / "map.sqlite").read_bytes()[:16] == b"SQLite format 3\x00"
    assert (store.path / "vectors.sqlite").read_bytes()[:16] == b"SQLite format 3\x00"
    assert json.loads((folder / "report.json").read_text())["version"] == 1
    assert store.load_vectors()["k"].tolist() == [1.0, 1.0, 1.0, 1.0]


def test_a_pickled_map_file_never_runs(minirepo: Path, store: Store, tmp_path: Path) -> None:
    marker = tmp_path / "executed"
    path = store.map_path()
    _evil(path, marker)
    with pytest.raises(StoreCorrupt, match=r"no SQLite header.*`stackmap ingest --full`") as err:
        open_map(minirepo)
    assert err.value.path == str(path)
    with pytest.raises(StoreCorrupt):
        store.load_parse_cache()
    shown = _cli("show", "layer:runtime", "-C", str(minirepo))
    assert shown.returncode == 2
    assert shown.stderr.strip().splitlines() == [f"error: {path}: {err.value.message}"]
    report = ingest(minirepo, embed=False, progress=False)  # rebuilds from scratch
    assert report.version == 2 and len(report.parsed) == 18
    assert not marker.exists()


def test_a_pickled_vector_cache_report_or_pointer_never_runs(
    minirepo: Path, store: Store, tmp_path: Path
) -> None:
    marker = tmp_path / "executed"
    _evil(store.path / "vectors.sqlite", marker)
    with pytest.raises(StoreCorrupt, match="corrupt embedding cache") as err:
        store.load_vectors()
    assert err.value.path == str(store.path / "vectors.sqlite")
    _evil(store.version_dir() / "report.json", marker)
    with pytest.raises(StoreCorrupt, match="no readable ingest report"):
        store.report()
    _evil(store.path / "current", marker)
    assert store.current_version() is None  # not a number: as if nothing had been built
    assert not marker.exists()


def test_truncated_and_corrupted_map_files_give_the_clear_error(
    minirepo: Path, store: Store
) -> None:
    path = store.map_path()
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3])
    with pytest.raises(StoreCorrupt, match=r"corrupt map file: .*`stackmap ingest --full`"):
        open_map(minirepo)
    path.write_bytes(data[:4096] + b"\xff" * (len(data) - 4096))
    with pytest.raises(StoreCorrupt, match=r"corrupt map file"):
        open_map(minirepo)
    path.write_bytes(b"")
    with pytest.raises(StoreCorrupt, match="no SQLite header"):
        open_map(minirepo)


def test_a_store_of_an_older_version_is_rebuilt_with_a_message(
    minirepo: Path, store: Store, tmp_path: Path
) -> None:
    folder = store.version_dir()
    store.map_path().unlink()
    _evil(folder / "graph.pickle", tmp_path / "executed")  # what older versions wrote
    with pytest.raises(StoreOutdated, match=r"older stackmap \(graph.pickle\)"):
        open_map(minirepo)
    result = _cli("ingest", str(minirepo), "--no-embed")
    assert result.returncode == 0, result.stderr
    assert "older stackmap (graph.pickle); run `stackmap ingest --full`; rebuilding" in (
        result.stderr
    )
    assert open_map(minirepo).version == 2
    assert not (tmp_path / "executed").exists()
