"""Ingest: read a stack's code, protos, docs and contracts into the graph and the vector index.

The parsers (``code``, ``proto``, ``docs``, ``contracts``) are pure readers. :func:`ingest`
runs the whole pipeline (:mod:`mapper.ingest.pipeline`) and persists a new map version under
``config.store``; :func:`load_map` reads the current one.
"""

from __future__ import annotations

from pathlib import Path

from mapper.config import StackmapConfig, load_config
from mapper.graph import MapGraph
from mapper.ingest.report import IngestReport

__all__ = ["IngestReport", "ingest", "load_map"]


def ingest(
    root: Path,
    config: StackmapConfig | None = None,
    *,
    embed: bool = True,
    progress: bool | None = None,
    full: bool = False,
) -> IngestReport:
    """Build or incrementally refresh the map of ``root``; synchronous.

    Only files whose content hash changed since the current version are parsed again
    (``full=True`` reparses everything); the graph is rebuilt from the per-file results and
    the vector index is synced to it (``embed=False`` skips embeddings: no index update, and
    docs without a layer are reported as holes instead of being classified). The new version
    becomes current atomically at the end; a crash leaves the previous one in use. Bad files
    become skips in the report, never exceptions. Raises ConfigError for a missing or bad
    config and StoreError when the store cannot be written or the vector store reached.
    """
    from mapper.ingest.pipeline import run
    from mapper.ingest.store import Store

    config = config or load_config(root)
    with Store(config.store_path).lock():
        return run(root, config, embed=embed, progress=progress, full=full)


def load_map(root: Path, config: StackmapConfig | None = None) -> MapGraph:
    """The current persisted graph of ``root``; StoreError when none was built."""
    from mapper.ingest.store import Store

    config = config or load_config(root)
    return Store(config.store_path).load_graph()
