"""Keep the vector index equal to the map's chunks without opening Chroma when nothing changed.

A manifest (``<store>/index-manifest.json``: {chunk id: content hash} per vector store and
stack) records what an embedded index holds after each successful sync. A run diffs the wanted
chunks against it and opens the index only to apply a non-empty difference. A Chroma server is
shared, so against one the real contents are always read instead. An ``index-dirty`` marker
is written before changes are applied and removed after the manifest is updated; when a crash
leaves it behind, the next run reconciles against the index's real contents instead.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence

from mapper.config import StackmapConfig
from mapper.index import Chunk, VectorIndex
from mapper.ingest.pipeline import Vectors

MANIFEST = "index-manifest.json"
DIRTY = "index-dirty"


def _key(config: StackmapConfig) -> str:
    return f"{config.vector_store}|{config.name}"


def _read_manifest(config: StackmapConfig) -> dict[str, str] | None:
    path = config.store_path / MANIFEST
    if config.vector_store != "embedded" or (config.store_path / DIRTY).exists():
        return None  # a shared server changes under us: always read what it holds
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    entry = data.get(_key(config)) if isinstance(data, dict) else None
    return dict(entry) if isinstance(entry, dict) else None


def _write_manifest(config: StackmapConfig, manifest: dict[str, str]) -> None:
    path = config.store_path / MANIFEST
    tmp = path.with_name(MANIFEST + ".tmp")
    tmp.write_text(json.dumps({_key(config): manifest}, sort_keys=True), encoding="utf-8")
    os.replace(tmp, path)


def sync_index(config: StackmapConfig, chunks: Sequence[Chunk], vectors: Vectors) -> dict[str, int]:
    wanted = {c.id: c.content_hash for c in chunks}
    known = _read_manifest(config)
    if known == wanted:
        return {"chunks": len(wanted), "upserted": 0, "deleted": 0}
    config.store_path.mkdir(parents=True, exist_ok=True)
    (config.store_path / DIRTY).write_text("sync in progress\n", encoding="utf-8")
    index = VectorIndex.for_config(config)
    stats = index.sync(chunks, vectors, current=known)
    _write_manifest(config, wanted)
    (config.store_path / DIRTY).unlink()
    return stats
