"""An embedded ingest of the miniature repository: classification, index, search, offline."""

from __future__ import annotations

import shutil
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from mapper.config import load_config
from mapper.index import VectorIndex
from mapper.ingest import IngestReport, ingest, load_map
from mapper.search import search

MINIREPO = Path(__file__).parent / "fixtures" / "minirepo"


@pytest.fixture(scope="module")
def embedded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, IngestReport]]:
    root = tmp_path_factory.mktemp("embedded") / "minirepo"
    shutil.copytree(MINIREPO, root, ignore=shutil.ignore_patterns(".stackmap"))
    real_connect = socket.socket.connect
    attempts: list[object] = []  # recorded too, in case a background thread swallows the error

    def refuse(self: socket.socket, address: object) -> None:
        if isinstance(address, tuple):  # network, not a local unix socket
            attempts.append(address)
            raise OSError(f"network access during ingest: {address}")
        real_connect(self, address)  # type: ignore[arg-type]

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
        mp.setattr(socket.socket, "connect", refuse)
        mp.setattr(socket.socket, "connect_ex", refuse)
        report = ingest(root, embed=True, progress=False)
        search(root, "device memory")  # a query embeds too
    assert attempts == []
    yield root, report


def test_docs_classified_or_holes(embedded: tuple[Path, IngestReport]) -> None:
    root, report = embedded
    graph = load_map(root)
    edge = graph.edge("doc:notes/memory-release.md", "layer:runtime", "describes")
    assert edge is not None
    assert edge["provenance"] == "embedding" and edge["confidence"] >= 0.35
    assert graph.node("doc:notes/memory-release.md")["layer"] == "runtime"
    lunch = next(h for h in report.holes if h.node == "doc:notes/lunch.md")
    assert lunch.missing == ("layer",) and "< threshold 0.35" in lunch.reason
    assert "doc:notes/memory-release.md" not in {h.node for h in report.holes}


def test_index_chunks_carry_map_metadata(embedded: tuple[Path, IngestReport]) -> None:
    root, report = embedded
    cfg = load_config(root)
    contents = VectorIndex.for_config(cfg).contents()
    assert report.index["chunks"] == len(contents)
    meta = contents["symbol:c:driver/mini_drv.c:mini_alloc_pages"]
    assert (meta["kind"], meta["layer"], meta["component"], meta["path"], meta["line"]) == (
        "symbol",
        "driver",
        "driver.mini_drv",
        "driver/mini_drv.c",
        5,
    )
    assert meta["interface"] == "runtime_driver.alloc_pages"
    assert (
        contents["doc:docs/scenarios/launch.md#launching-a-fused-op"]["scenario"] == "launch-fused"
    )
    assert "symbol:proto:mini.v1.AllocRequest.size" not in contents  # fields: exact search only


def test_hybrid_search(embedded: tuple[Path, IngestReport]) -> None:
    root, _ = embedded
    hits = search(root, "who frees device memory after the fence")
    assert hits[0].id.startswith("doc:notes/memory-release.md") and hits[0].match == "vector"
    assert hits[0].layer == "runtime"
    exact = search(root, "where is mini_alloc_pages used")
    assert exact[0].match == "exact" and exact[0].name == "mini_alloc_pages"
    assert {h.path for h in exact if h.match == "exact"} == {
        "driver/mini_drv.c",
        "driver/mini_drv.h",
    }
    only_driver = search(root, "device memory", layer="driver", kind="symbol")
    assert only_driver and all(h.layer == "driver" and h.kind == "symbol" for h in only_driver)


def test_reingest_embeds_nothing_new(embedded: tuple[Path, IngestReport]) -> None:
    root, _ = embedded
    again = ingest(root, embed=True, progress=False)
    assert again.parsed == () and again.index["upserted"] == 0 and again.index["embedded"] == 0


def test_crashed_sync_is_reconciled(embedded: tuple[Path, IngestReport]) -> None:
    from mapper.ingest.sync import DIRTY

    root, _ = embedded
    cfg = load_config(root)
    index = VectorIndex.for_config(cfg)
    lost = "symbol:c:driver/mini_drv.c:mini_alloc_pages"
    index.delete([lost])  # as if a sync died half-way ...
    (cfg.store_path / DIRTY).write_text("sync in progress\n")  # ... leaving its marker
    report = ingest(root, embed=True, progress=False)
    assert report.index["upserted"] == 1 and lost in index.contents()
    assert not (cfg.store_path / DIRTY).exists()
