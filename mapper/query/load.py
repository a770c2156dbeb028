"""Opening a map: read the current version's map file into records, once per store version.

The opened :class:`~mapper.query.map.Map` is cached per store (keyed by the version number and
the map file's modification time), so every feature in one process shares one read. Opening
never writes and never executes anything from the store (see :mod:`mapper.mapdb`).
"""

from __future__ import annotations

import threading
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from mapper import collector
from mapper.config import StackmapConfig, load_config
from mapper.errors import StoreCorrupt
from mapper.ingest.store import Store
from mapper.mapdb import MapFile
from mapper.model import Edge, EdgeKind, Evidence, EvidenceKind, Node, NodeKind, evidence_rank
from mapper.query.map import Map

_CACHE: dict[Path, tuple[tuple[int, int], Map]] = {}
_LOCK = threading.Lock()


def open_map(root: Path | str = ".", config: StackmapConfig | None = None) -> Map:
    """The current map of the repository at ``root`` (its ``stackmap.toml`` names the store).

    Cached: a second call returns the same object until a new version is ingested.
    Raises MapNotIngested when no map was built, StoreOutdated when the store was written by
    another version of the tool, StoreCorrupt when a store file is damaged (each names the file
    and the command that rebuilds it), ConfigError for a missing or bad config.
    """
    config = config or load_config(Path(root))
    store = Store(config.store_path)
    path = store.map_path()
    stamp = (store.current_version() or 0, path.stat().st_mtime_ns)
    with _LOCK:
        cached = _CACHE.get(store.path)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        opened = read_map(path, config, stamp[0])
        _CACHE[store.path] = (stamp, opened)
        return opened


def read_map(path: Path, config: StackmapConfig, version: int) -> Map:
    """A :class:`Map` from one map file (uncached)."""
    with collector.paused():  # see mapper.collector for the measured gain
        return _read(path, config, version)


def open_edges(config: StackmapConfig, kinds: Collection[EdgeKind]) -> Map:
    """A map of the current version holding only the edges of ``kinds`` and the nodes they
    join (not cached): what a question about those relations needs, without making records
    of the rest (the check asks it of ``implements`` edges). Raises as :func:`open_map` does.
    """
    store = Store(config.store_path)
    path = store.map_path()
    wanted = tuple(k.value for k in kinds)
    with collector.paused():
        with MapFile(path) as mf:
            joined, edge_rows = mf.edges_of(wanted)
        ids = {at: row[0] for at, row in joined.items()}
        version = store.current_version() or 0
        return _records(path, config, version, list(joined.values()), ids, edge_rows)


def _read(path: Path, config: StackmapConfig, version: int) -> Map:
    with MapFile(path) as mf:
        node_rows, edge_rows = mf.documents()
    ids = [row[0] for row in node_rows]
    return _records(path, config, version, node_rows, ids, edge_rows)


def _records(
    path: Path,
    config: StackmapConfig,
    version: int,
    node_rows: list[Any],
    ids: Sequence[str] | Mapping[int, str],
    edge_rows: list[Any],
) -> Map:
    """The map of the decoded rows; ``ids`` names a node by its position, as edges do."""
    try:
        nodes = {
            nid: Node(nid, _NODE_KIND[kind], name, layer, at, line, attrs)
            for nid, kind, name, layer, at, line, attrs in node_rows
        }
        edges = [
            Edge(ids[src], ids[dst], _EDGE_KIND[kind], _evidence(items), key or kind, attrs)
            for src, dst, kind, key, _provenance, items, attrs in edge_rows
        ]
    except (ValueError, TypeError, KeyError, IndexError) as exc:
        raise StoreCorrupt(
            f"corrupt map file: unreadable row ({exc!r}); run `stackmap ingest --full`",
            path=str(path),
            rebuild="stackmap ingest --full",
        ) from exc
    return Map(config, version, nodes, edges, path)


_NODE_KIND = {k.value: k for k in NodeKind}
_EDGE_KIND = {k.value: k for k in EdgeKind}
_EVIDENCE_KIND = {k.value: k for k in EvidenceKind}


def _evidence(items: list[list[Any]]) -> tuple[Evidence, ...]:
    found = [
        Evidence(_EVIDENCE_KIND[kind], path, line, confidence, detail)
        for kind, path, line, confidence, detail in items
    ]
    if len(found) > 1:
        found.sort(key=evidence_rank)
    return tuple(found)
