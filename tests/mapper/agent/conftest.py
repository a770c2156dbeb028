"""Maps the agent's tests ask: this repository and the miniature fixture, each ingested once
per session without embeddings into a temporary store."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from mapper.agent.mapview import MapView, open_view
from mapper.config import load_config
from mapper.ingest import ingest

REPO = Path(__file__).resolve().parents[3]
MINIREPO = REPO / "tests" / "mapper" / "fixtures" / "minirepo"


def _view(root: Path, store: Path) -> MapView:
    config = dataclasses.replace(load_config(root), store=str(store))
    ingest(root, config, embed=False, progress=False)
    return open_view(root, config)


@pytest.fixture(scope="session")
def repo_view(tmp_path_factory: pytest.TempPathFactory) -> MapView:
    return _view(REPO, tmp_path_factory.mktemp("repo-map") / "store")


@pytest.fixture(scope="session")
def mini_view(tmp_path_factory: pytest.TempPathFactory) -> MapView:
    return _view(MINIREPO, tmp_path_factory.mktemp("mini-map") / "store")
