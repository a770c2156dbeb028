"""Keep the vector index equal to the map's chunks without opening Chroma when nothing changed.

A manifest (``<store>/index-manifest.json``: {chunk id: content hash} per vector store and
stack) records what an embedded index holds after each successful sync. A run diffs the wanted
chunks against it and opens the index only to apply a non-empty difference. A Chroma server is
shared, so against one the real contents are always read instead. An ``index-dirty`` marker
is written before changes are applied and removed after the manifest is updated; when a crash
leaves it behind, the next run reconciles against the index's real contents instead.

The index is versioned with the graph: ``index-version`` names the map version the index was
last synced for. :func:`index_lag` tells a reader that the index is behind the map (an ingest
killed mid-way, or a map built since without embeddings), so search can say so instead of
silently missing what changed. An embedded index whose ``chroma.sqlite3`` fails SQLite's
``quick_check`` (or is gone) is damaged: :func:`sync_index` removes it and rebuilds it from the
map's chunks (the vectors come from the cache, nothing is embedded again).
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import sys
from collections.abc import Sequence

from mapper.config import StackmapConfig
from mapper.index import Chunk, VectorIndex
from mapper.ingest.vectors import Vectors

MANIFEST = "index-manifest.json"
DIRTY = "index-dirty"
STAMP = "index-version"
CHROMA = "chroma"


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


def damage(config: StackmapConfig) -> str | None:
    """Why the embedded index's database is unusable (None when it is sound or not embedded,
    or not built yet)."""
    folder = config.store_path / CHROMA
    if config.vector_store != "embedded" or not folder.exists():
        return None
    db = folder / "chroma.sqlite3"
    if not db.is_file():
        return f"{db} is missing"
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
            rows = conn.execute("PRAGMA quick_check").fetchall()
        conn.close()
    except sqlite3.Error as exc:
        return f"{db}: {exc}"
    if rows != [("ok",)]:
        return f"{db}: {rows[0][0]}"
    return None


def index_lag(config: StackmapConfig, map_version: int | None) -> str | None:
    """Why the vector index does not match map version ``map_version`` (None when it does)."""
    if (config.store_path / DIRTY).exists():
        return "an ingest was interrupted while updating the vector index"
    try:
        stamp = int((config.store_path / STAMP).read_text(encoding="utf-8").strip())
    except (OSError, ValueError):
        return "the vector index carries no map version"
    if stamp != map_version:
        return f"the vector index is of map version {stamp}, the map is version {map_version}"
    return None


def sync_index(
    config: StackmapConfig, chunks: Sequence[Chunk], vectors: Vectors, version: int
) -> dict[str, int]:
    """Make the index hold exactly ``chunks`` and stamp it with map ``version``; a damaged
    embedded index is removed and rebuilt (said on stderr and counted as ``rebuilt``)."""
    wanted = {c.id: c.content_hash for c in chunks}
    broken = damage(config)
    if broken is not None:
        print(f"stackmap: the vector index is damaged ({broken}); rebuilding it", file=sys.stderr)
        shutil.rmtree(config.store_path / CHROMA)
        (config.store_path / MANIFEST).unlink(missing_ok=True)
    known = None if broken else _read_manifest(config)
    config.store_path.mkdir(parents=True, exist_ok=True)
    if known == wanted:
        stats = {"chunks": len(wanted), "upserted": 0, "deleted": 0}
    else:
        (config.store_path / DIRTY).write_text("sync in progress\n", encoding="utf-8")
        index = VectorIndex.for_config(config)
        stats = index.sync(chunks, vectors, current=known)
        _write_manifest(config, wanted)
    stamp = config.store_path / STAMP
    tmp = stamp.with_name(STAMP + ".tmp")
    tmp.write_text(f"{version}\n", encoding="utf-8")
    os.replace(tmp, stamp)
    (config.store_path / DIRTY).unlink(missing_ok=True)
    stats["rebuilt"] = int(broken is not None)
    return stats
