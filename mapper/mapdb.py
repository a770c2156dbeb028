"""The map file: one SQLite database (stdlib ``sqlite3``) per map version, ``map.sqlite``.

Tables (``meta.schema`` is :data:`mapper.model.SCHEMA_VERSION`; JSON columns hold JSON text)::

    meta(key, value)                        format = "stackmap-map", schema, cache_key
    nodes(id, kind, name, layer, path, line, attrs JSON)
    edges(source, target, key, kind, attrs JSON, evidence JSON)
        evidence: [[kind, path, line, confidence, detail], ...] (mapper.model.Evidence)
    parsed(path, digest, category, record JSON, reason)      the parse cache (mapper.ingest.codec)

Reading never executes anything from the file: rows are strings and numbers, decoded by
``json`` into the records of :mod:`mapper.model`. A file that is not such a database (a pickle,
a truncated copy) raises :class:`~mapper.errors.StoreCorrupt`, one of another schema
:class:`~mapper.errors.StoreOutdated`; both name the file and the command that rebuilds it.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mapper.errors import StoreCorrupt, StoreOutdated
from mapper.graph import MapGraph
from mapper.model import SCHEMA_VERSION

FILE = "map.sqlite"
FORMAT = "stackmap-map"
REBUILD = "stackmap ingest --full"
_HEADER = b"SQLite format 3\x00"
_TABLES = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE nodes (
    id TEXT PRIMARY KEY, kind TEXT NOT NULL, name TEXT NOT NULL,
    layer TEXT, path TEXT, line INTEGER, attrs TEXT NOT NULL);
CREATE TABLE edges (
    source TEXT NOT NULL, target TEXT NOT NULL, key TEXT NOT NULL, kind TEXT NOT NULL,
    attrs TEXT NOT NULL, evidence TEXT NOT NULL);
CREATE TABLE parsed (
    path TEXT PRIMARY KEY, digest TEXT NOT NULL, category TEXT NOT NULL, record TEXT, reason TEXT);
"""
# No secondary indexes: readers load whole tables (mapper.query.load), and (source, target,
# key) is unique by construction (mapper.graph keys edges so).
_NODE_FIELDS = ("kind", "name", "layer", "path", "line")
_EDGE_FIELDS = ("kind", "evidence")

ParsedRow = tuple[str, str, str, str | None, str | None]  # path, digest, category, record, reason


_json = json.JSONEncoder(separators=(",", ":"), default=str).encode


def write(path: Path, graph: MapGraph, cache_key: str, parsed: Iterator[ParsedRow]) -> None:
    """Write a new map file at ``path`` (which must not exist yet)."""
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        db.executescript("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;" + _TABLES)
        meta = {"format": FORMAT, "schema": str(SCHEMA_VERSION), "cache_key": cache_key}
        db.executemany("INSERT INTO meta VALUES (?, ?)", meta.items())
        db.executemany(
            "INSERT INTO nodes VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                (
                    node_id,
                    *(data.get(f) for f in _NODE_FIELDS),
                    _json({k: v for k, v in data.items() if k not in _NODE_FIELDS}),
                )
                for node_id, data in graph.nx.nodes(data=True)
            ),
        )
        db.executemany(
            "INSERT INTO edges VALUES (?, ?, ?, ?, ?, ?)",
            (
                (
                    src,
                    dst,
                    key,
                    data["kind"],
                    _json({k: v for k, v in data.items() if k not in _EDGE_FIELDS}),
                    _json(data["evidence"]),
                )
                for src, dst, key, data in graph.nx.edges(keys=True, data=True)
            ),
        )
        db.executemany("INSERT INTO parsed VALUES (?, ?, ?, ?, ?)", parsed)


class MapFile:
    """An open, validated map file (read-only). Use as a context manager or :meth:`close`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            with path.open("rb") as fh:
                header = fh.read(len(_HEADER))
        except OSError as exc:
            raise self._corrupt(f"cannot read it: {exc.strerror or exc}") from exc
        if header != _HEADER:
            raise self._corrupt("not a map file (no SQLite header)")
        self.db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        meta = dict(self.rows("SELECT key, value FROM meta"))
        if meta.get("format") != FORMAT:
            self.close()
            raise self._corrupt("not a map file (no stackmap format mark)")
        if meta.get("schema") != str(SCHEMA_VERSION):
            self.close()
            raise StoreOutdated(
                f"map file of schema {meta.get('schema')}, this stackmap reads schema "
                f"{SCHEMA_VERSION}; run `{REBUILD}` to rebuild it",
                path=str(path),
                rebuild=REBUILD,
                schema=meta.get("schema"),
            )
        self.cache_key = meta.get("cache_key", "")

    def _corrupt(self, why: str) -> StoreCorrupt:
        return StoreCorrupt(
            f"corrupt map file: {why}; run `{REBUILD}` to rebuild it",
            path=str(self.path),
            rebuild=REBUILD,
        )

    def rows(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        """All rows of a query; StoreCorrupt when the file is damaged."""
        try:
            return self.db.execute(sql, params).fetchall()
        except sqlite3.DatabaseError as exc:
            self.close()
            raise self._corrupt(str(exc)) from exc

    def close(self) -> None:
        if getattr(self, "db", None) is not None:
            self.db.close()

    def __enter__(self) -> MapFile:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def graph(self) -> MapGraph:
        """The whole map as a :class:`~mapper.graph.MapGraph`."""
        graph = MapGraph()
        try:
            for node_id, kind, name, layer, path, line, attrs in self.rows(
                "SELECT id, kind, name, layer, path, line, attrs FROM nodes ORDER BY rowid"
            ):
                record = {"kind": kind, "name": name, "layer": layer, "path": path, "line": line}
                graph.nx.add_node(node_id, **record, **json.loads(attrs))
            for src, dst, key, kind, attrs, evidence in self.rows(
                "SELECT source, target, key, kind, attrs, evidence FROM edges ORDER BY rowid"
            ):
                fields = json.loads(attrs)
                graph.nx.add_edge(
                    src, dst, key=key, kind=kind, evidence=json.loads(evidence), **fields
                )
        except (ValueError, TypeError) as exc:
            raise self._corrupt(f"unreadable row: {exc}") from exc
        return graph

    def parsed(self) -> list[ParsedRow]:
        """The parse cache rows, by path."""
        return self.rows("SELECT path, digest, category, record, reason FROM parsed ORDER BY path")
