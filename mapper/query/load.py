"""Opening a map: read the current version's map file into records, once per store version.

The opened :class:`~mapper.query.map.Map` is cached per store (keyed by the version number and
the map file's modification time), so every feature in one process shares one read. Opening
never writes and never executes anything from the store (see :mod:`mapper.mapdb`).
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

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
    with MapFile(path) as mf:
        node_rows = mf.rows("SELECT id, kind, name, layer, path, line, attrs FROM nodes")
        edge_rows = mf.rows("SELECT source, target, key, kind, attrs, evidence FROM edges")
    try:
        nodes = {
            nid: Node(nid, NodeKind(kind), name, layer, p, line, json.loads(attrs))
            for nid, kind, name, layer, p, line, attrs in node_rows
        }
        edges = [
            Edge(src, dst, EdgeKind(kind), _evidence(evidence), key, _extra(attrs))
            for src, dst, key, kind, attrs, evidence in edge_rows
        ]
    except (ValueError, TypeError) as exc:
        raise StoreCorrupt(
            f"corrupt map file: unreadable row ({exc}); run `stackmap ingest --full`",
            path=str(path),
            rebuild="stackmap ingest --full",
        ) from exc
    return Map(config, version, nodes, edges)


def _evidence(text: str) -> tuple[Evidence, ...]:
    items = [
        Evidence(EvidenceKind(kind), path, line, confidence, detail)
        for kind, path, line, confidence, detail in json.loads(text)
    ]
    return tuple(sorted(items, key=evidence_rank))


_BUILD_FIELDS = frozenset({"provenance", "confidence", "path", "line"})


def _extra(text: str) -> dict[str, object]:
    """An edge's own fields (a step's order and action), without the per-claim ones."""
    return {k: v for k, v in json.loads(text).items() if k not in _BUILD_FIELDS}
