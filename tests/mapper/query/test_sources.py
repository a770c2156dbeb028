"""The map keeps the text of the files it was built from (``Map.source``): the walks scan that
copy, so what they cite agrees with the map whatever the files hold now."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

import pytest

from mapper.errors import StoreCorrupt
from mapper.impact.mapview import MapView
from mapper.ingest.store import Store
from mapper.query import open_map
from mapper.scenarios import early
from tests.mapper.scenarios.pool_toy import FILES
from tests.mapper.toy_map import build_view, up_down_config

_REFUSE = 'MISSING = ("LpPool",)\n\n\ndef refuse(op: str) -> bool:\n    return op in MISSING\n'


def _view(tmp_path: Path) -> MapView:
    files = {**FILES, "toy/up/refuse.py": _REFUSE}
    return build_view(tmp_path, files, up_down_config("sources"))


def test_the_map_holds_each_file_as_it_was_ingested(tmp_path: Path) -> None:
    view = _view(tmp_path)
    (tmp_path / "toy/up/refuse.py").write_text("# rewritten since\n", encoding="utf-8")
    assert view.source("toy/up/refuse.py") == _REFUSE
    assert view.source("toy/down/pool.py") == FILES["toy/down/pool.py"]
    assert view.source("toy/up/absent.py") is None


def test_a_walk_scans_the_map_not_the_working_tree(tmp_path: Path) -> None:
    """The string list naming LpPool is found at its ingested line after the file is gone."""
    view = _view(tmp_path)
    (tmp_path / "toy/up/refuse.py").unlink()
    got = [(p.kind.value, p.path, p.line) for p in early.mentions(view, "LpPool")]
    assert got == [("use", "toy/up/refuse.py", 1)]


def test_a_damaged_sources_table_is_a_clear_error(tmp_path: Path) -> None:
    build_view(tmp_path, FILES, up_down_config("sources"))
    path = Store(tmp_path / ".stackmap").map_path()
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        db.execute("DROP TABLE sources")
    opened = open_map(tmp_path)
    with pytest.raises(StoreCorrupt, match="corrupt map file: no such table: sources") as err:
        opened.source("toy/down/pool.py")
    assert err.value.path == str(path)
    assert "stackmap ingest --full" in err.value.message
