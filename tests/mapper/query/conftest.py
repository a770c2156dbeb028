"""A built map of the miniature repository, shared by the query tests of one module."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from mapper.ingest import ingest
from mapper.query import Map, open_map

MINIREPO = Path(__file__).parents[1] / "fixtures" / "minirepo"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A private copy of the miniature repository with its map ingested (no embeddings)."""
    dest = tmp_path_factory.mktemp("query") / "minirepo"
    shutil.copytree(MINIREPO, dest, ignore=shutil.ignore_patterns(".stackmap"))
    ingest(dest, embed=False, progress=False)
    return dest


@pytest.fixture(scope="module")
def m(built: Path) -> Map:
    return open_map(built)
