"""The versioned on-disk store under ``config.store`` (``.stackmap/`` by default).

::

    .stackmap/current                    the number of the version in use (switched atomically)
    .stackmap/versions/<n>/map.sqlite    the graph, the parse cache and the text of the files
                                         read (format: mapper.mapdb)
    .stackmap/versions/<n>/report.json   the ingest report of that version
    .stackmap/vectors.sqlite             text-hash → embedding cache shared by all versions
    .stackmap/chroma/                    the embedded vector store

Nothing here is pickled: every file is SQLite, JSON or text, read as data. A new version is
written into a temporary folder, renamed into place, and only then is ``current`` replaced
(``os.replace``), so a crash at any point leaves the previous version in use. The two newest
versions are kept. Writers serialise on an flock of ``<store>/lock``; readers never wait (they
read whichever version ``current`` names).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from mapper import mapdb
from mapper.errors import MapNotIngested, StoreCorrupt, StoreError, StoreOutdated
from mapper.graph import MapGraph
from mapper.ingest import codec

KEEP = 2
VECTORS = "vectors.sqlite"

Entry = tuple[str, str, Any, str | None]  # digest, category, record, skip reason


@dataclass(slots=True)
class ParseCache:
    """What an ingest read: path → (digest, category, record, skip reason), and each record's
    JSON text (:func:`mapper.ingest.codec.dumps`), the one :meth:`Store.commit` writes."""

    key: str = ""
    entries: dict[str, Entry] = field(default_factory=dict)
    texts: dict[str, str | None] = field(default_factory=dict)


class Store:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.versions = path / "versions"

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """Hold the store's writer lock (an flock on ``<store>/lock``); a second ingest of the
        same store waits for the first to finish."""
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            handle = (self.path / "lock").open("a+b")
        except OSError as exc:
            raise StoreError(f"cannot lock the store: {exc}", path=str(self.path)) from exc
        with handle:
            try:
                import fcntl
            except ImportError:  # no flock on this platform: single writer by convention
                yield
                return
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)

    def current_version(self) -> int | None:
        try:
            return int((self.path / "current").read_text(encoding="utf-8").strip())
        except (FileNotFoundError, ValueError, UnicodeDecodeError):
            return None
        except OSError as exc:
            raise StoreError(f"unreadable store: {exc}", path=str(self.path)) from exc

    def version_dir(self, version: int | None = None) -> Path:
        version = self.current_version() if version is None else version
        if version is None:
            raise MapNotIngested(
                "no map has been built here; run `stackmap ingest`",
                path=str(self.path),
                rebuild="stackmap ingest",
            )
        return self.versions / str(version)

    def map_path(self, version: int | None = None) -> Path:
        """The current (or given) version's map file; StoreOutdated when that version was
        written by an older stackmap (a pickled graph), MapNotIngested when there is none."""
        folder = self.version_dir(version)
        path = folder / mapdb.FILE
        if not path.exists() and (folder / "graph.pickle").exists():
            raise StoreOutdated(
                f"map written by an older stackmap (graph.pickle); run `{mapdb.REBUILD}`",
                path=str(folder / "graph.pickle"),
                rebuild=mapdb.REBUILD,
            )
        if not path.exists():
            raise MapNotIngested(
                "no map has been built here; run `stackmap ingest`",
                path=str(path),
                rebuild="stackmap ingest",
            )
        return path

    def open(self) -> mapdb.MapFile:
        return mapdb.MapFile(self.map_path())

    def load_graph(self) -> MapGraph:
        with self.open() as mf:
            return mf.graph()

    def load_parse_cache(self) -> ParseCache:
        """The current version's parse cache (empty when there is no map yet); StoreCorrupt /
        StoreOutdated when the map file cannot be used (the ingest then parses everything)."""
        if self.current_version() is None:
            return ParseCache()
        with self.open() as mf:
            rows = mf.parsed()
            cache = ParseCache(mf.cache_key)
        for path, digest, category, text, reason in rows:
            try:
                record = codec.loads(text)
            except codec.CodecError as exc:
                raise StoreCorrupt(
                    f"corrupt parse cache: {exc}; run `{mapdb.REBUILD}`",
                    path=str(mf.path),
                    rebuild=mapdb.REBUILD,
                ) from exc
            cache.entries[path] = (digest, category, record, reason)
            cache.texts[path] = text
        return cache

    def report(self) -> dict[str, Any]:
        path = self.version_dir() / "report.json"
        try:
            return dict(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError) as exc:
            raise StoreCorrupt(
                f"no readable ingest report: {exc}; run `{mapdb.REBUILD}`",
                path=str(path),
                rebuild=mapdb.REBUILD,
            ) from exc

    def _existing(self) -> list[int]:
        if not self.versions.is_dir():
            return []
        return [int(p.name) for p in self.versions.iterdir() if p.name.isdigit()]

    def next_version(self) -> int:
        return max([*self._existing(), self.current_version() or 0]) + 1

    def commit(
        self,
        version: int,
        graph: MapGraph,
        cache: ParseCache,
        report: bytes,
        sources: Iterable[tuple[str, str]] = (),
    ) -> int:
        """Write version ``version`` (map file, with the ``sources`` it was built from, and
        report), then switch ``current`` to it."""
        self.versions.mkdir(parents=True, exist_ok=True)
        existing = self._existing()
        tmp = self.versions / f".{version}.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        rows = (
            (path, digest, category, cache.texts[path], reason)
            for path, (digest, category, _record, reason) in cache.entries.items()
        )
        mapdb.write(tmp / mapdb.FILE, graph, cache.key, rows, sources)
        (tmp / "report.json").write_bytes(report)
        os.replace(tmp, self.versions / str(version))
        pointer = self.path / "current.tmp"
        pointer.write_text(f"{version}\n", encoding="utf-8")
        os.replace(pointer, self.path / "current")
        for old in sorted(existing)[: max(0, len(existing) + 1 - KEEP)]:
            shutil.rmtree(self.versions / str(old), ignore_errors=True)
        return version

    # -- embedding cache -------------------------------------------------------------
    def load_vectors(self) -> dict[str, npt.NDArray[np.float32]]:
        """The embedding cache (empty when there is none); StoreCorrupt when it is damaged."""
        path = self.path / VECTORS
        if not path.exists():
            return {}
        try:
            with path.open("rb") as fh:
                if fh.read(16) != b"SQLite format 3\x00":
                    raise sqlite3.DatabaseError("no SQLite header")
            with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
                rows = db.execute("SELECT key, vec FROM vectors").fetchall()
            return {k: np.frombuffer(v, dtype=np.float32).copy() for k, v in rows}
        except (sqlite3.DatabaseError, OSError, ValueError) as exc:
            raise StoreCorrupt(
                f"corrupt embedding cache: {exc}; delete it or run `{mapdb.REBUILD}`",
                path=str(path),
                rebuild=mapdb.REBUILD,
            ) from exc

    def save_vectors(self, vectors: dict[str, npt.NDArray[np.float32]]) -> None:
        self.path.mkdir(parents=True, exist_ok=True)
        tmp = self.path / (VECTORS + ".tmp")
        tmp.unlink(missing_ok=True)
        with contextlib.closing(sqlite3.connect(tmp)) as db, db:
            db.execute("CREATE TABLE vectors (key TEXT PRIMARY KEY, vec BLOB NOT NULL)")
            db.executemany(
                "INSERT INTO vectors VALUES (?, ?)",
                ((k, np.asarray(vectors[k], np.float32).tobytes()) for k in sorted(vectors)),
            )
        os.replace(tmp, self.path / VECTORS)
