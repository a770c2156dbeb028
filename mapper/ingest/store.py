"""The versioned on-disk store under ``config.store`` (``.stackmap/`` by default).

::

    .stackmap/current                 the number of the version in use (switched atomically)
    .stackmap/versions/<n>/graph.pickle   the MapGraph
    .stackmap/versions/<n>/parsed.pickle  per-file content hashes and parse results (incremental)
    .stackmap/versions/<n>/report.json    the ingest report of that version
    .stackmap/embeddings.pickle       text-hash → vector cache shared by all versions
    .stackmap/chroma/                 the embedded vector store

A new version is written into a temporary folder, renamed into place, and only then is
``current`` replaced (``os.replace``), so a crash at any point leaves the previous version in
use. The two newest versions are kept. Writers serialise on an flock of ``<store>/lock``;
readers never wait (they read whichever version ``current`` names).
"""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from mapper.errors import StoreError
from mapper.ingest import codec  # noqa: F401 - registers the fast reducers
from mapper.model import SCHEMA_VERSION

CACHE_FORMAT = 4
KEEP = 2


@dataclass(slots=True)
class ParseCache:
    """What the previous ingest read: path → (digest, category, record, skip reason)."""

    key: str = ""
    entries: dict[str, tuple[str, str, Any, str | None]] = field(default_factory=dict)


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
        except (FileNotFoundError, ValueError):
            return None
        except OSError as exc:
            raise StoreError(f"unreadable store: {exc}", path=str(self.path)) from exc

    def version_dir(self, version: int | None = None) -> Path:
        version = self.current_version() if version is None else version
        if version is None:
            raise StoreError(
                "no map has been built here; run `stackmap ingest`", path=str(self.path)
            )
        return self.versions / str(version)

    def graph_path(self) -> Path:
        return self.version_dir() / "graph.pickle"

    def load_parse_cache(self) -> ParseCache:
        version = self.current_version()
        if version is None:
            return ParseCache()
        try:
            with (self.version_dir(version) / "parsed.pickle").open("rb") as fh:
                payload = pickle.load(fh)
        except (
            OSError,
            pickle.UnpicklingError,
            EOFError,
            AttributeError,
            ValueError,
            KeyError,
            TypeError,
            IndexError,
        ):  # unreadable or from another version of the records: parse everything again
            return ParseCache()
        if not isinstance(payload, dict) or payload.get("format") != (CACHE_FORMAT, SCHEMA_VERSION):
            return ParseCache()
        return ParseCache(payload["key"], payload["entries"])

    def report(self) -> dict[str, Any]:
        path = self.version_dir() / "report.json"
        try:
            return dict(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError) as exc:
            raise StoreError(f"no readable ingest report: {exc}", path=str(path)) from exc

    def _existing(self) -> list[int]:
        if not self.versions.is_dir():
            return []
        return [int(p.name) for p in self.versions.iterdir() if p.name.isdigit()]

    def next_version(self) -> int:
        return max([*self._existing(), self.current_version() or 0]) + 1

    def commit(self, version: int, write: dict[str, bytes]) -> int:
        """Write version ``version``'s files, then switch ``current`` to it; returns it."""
        self.versions.mkdir(parents=True, exist_ok=True)
        existing = self._existing()
        tmp = self.versions / f".{version}.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        for name, data in write.items():
            (tmp / name).write_bytes(data)
        os.replace(tmp, self.versions / str(version))
        pointer = self.path / "current.tmp"
        pointer.write_text(f"{version}\n", encoding="utf-8")
        os.replace(pointer, self.path / "current")
        for old in sorted(existing)[: max(0, len(existing) + 1 - KEEP)]:
            shutil.rmtree(self.versions / str(old), ignore_errors=True)
        return version

    @staticmethod
    def dump_cache(cache: ParseCache) -> bytes:
        payload = {
            "format": (CACHE_FORMAT, SCHEMA_VERSION),
            "key": cache.key,
            "entries": cache.entries,
        }
        return pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)

    # -- embedding cache -------------------------------------------------------------
    def load_vectors(self) -> dict[str, npt.NDArray[np.float32]]:
        try:
            with (self.path / "embeddings.pickle").open("rb") as fh:
                keys, matrix = pickle.load(fh)
        except (OSError, pickle.UnpicklingError, EOFError, ValueError, TypeError):
            return {}
        return {k: matrix[i] for i, k in enumerate(keys)}

    def save_vectors(self, vectors: dict[str, npt.NDArray[np.float32]]) -> None:
        keys = sorted(vectors)
        matrix = np.stack([vectors[k] for k in keys]) if keys else np.zeros((0, 384), np.float32)
        self.path.mkdir(parents=True, exist_ok=True)
        tmp = self.path / "embeddings.pickle.tmp"
        with tmp.open("wb") as fh:
            pickle.dump((keys, matrix), fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, self.path / "embeddings.pickle")
