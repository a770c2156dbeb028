"""The map file: one SQLite database (stdlib ``sqlite3``) per map version, ``map.sqlite``.

Tables (``meta.schema`` is :data:`mapper.model.SCHEMA_VERSION`)::

    meta(key, value)                  format = "stackmap-map", schema, cache_key
    graph(part, body)                 two JSON documents, part "nodes" and part "edges":
        nodes: [[id, kind, name, layer, path, line, {other attributes}], ...]
        edges: [[source, target, kind, key, provenance, evidence, {other attributes}], ...]
            source and target are positions in the nodes list; key is null when it is the
            kind; evidence is [[kind, path, line, confidence, detail], ...]
            (mapper.model.Evidence) in the order the claims were made
    parsed(path, digest, category, record JSON, reason)      the parse cache (mapper.ingest.codec)
    sources(path, body)               the text of each file the map was built from (UTF-8;
                                      a file that is not text has none)

The graph is two documents rather than a row per node and edge because readers mostly load it
whole (:mod:`mapper.query.load`): one JSON text per part is encoded and decoded in one call,
and naming nodes by position keeps the edges a third of the size. An edge's ``confidence``,
``path`` and ``line`` (:mod:`mapper.graph`) are not stored: they are its highest evidence
confidence and its first evidence's place. A reader that needs only some kinds of edges (the
check, of ``implements``) picks them and their nodes out with SQLite's JSON functions
(:meth:`MapFile.edges_of`) instead of decoding both documents.

The sources let a feature quote or scan the text behind a node (a table row, a string list)
as the map saw it: the line numbers agree with the map's even after the files change, and a
map copied elsewhere (a CI artifact) answers without the repository. A reader fetches one file
at a time (:meth:`MapFile.source`).

Reading never executes anything from the file: rows are strings and numbers, decoded by
``json`` into the records of :mod:`mapper.model`. A file that is not such a database (a pickle,
a truncated copy) raises :class:`~mapper.errors.StoreCorrupt`, one of another schema
:class:`~mapper.errors.StoreOutdated`; both name the file and the command that rebuilds it.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from mapper import jsontext
from mapper.errors import StoreCorrupt, StoreOutdated
from mapper.graph import MapGraph
from mapper.model import SCHEMA_VERSION

FILE = "map.sqlite"
FORMAT = "stackmap-map"
REBUILD = "stackmap ingest --full"
_HEADER = b"SQLite format 3\x00"
_TABLES = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE graph (part TEXT PRIMARY KEY, body TEXT NOT NULL);
CREATE TABLE parsed (
    path TEXT PRIMARY KEY, digest TEXT NOT NULL, category TEXT NOT NULL, record TEXT, reason TEXT);
CREATE TABLE sources (path TEXT PRIMARY KEY, body TEXT NOT NULL);
"""
_NODE_FIELDS = ("kind", "name", "layer", "path", "line")
# what an edge row holds in columns of its own, or leaves to be derived from its evidence
_EDGE_FIELDS = frozenset(("kind", "provenance", "confidence", "path", "line", "evidence"))

ParsedRow = tuple[str, str, str, str | None, str | None]  # path, digest, category, record, reason
NodeRow = tuple[str, str, str, str | None, str | None, int | None, dict[str, Any]]
EdgeRow = tuple[int, int, str, str | None, str, list[list[Any]], dict[str, Any]]


# The rows are lists and dicts built here from the graph's records.
_json = jsontext.dumps_lenient


def write(
    path: Path,
    graph: MapGraph,
    cache_key: str,
    parsed: Iterator[ParsedRow],
    sources: Iterable[tuple[str, str]] = (),
) -> None:
    """Write a new map file at ``path`` (which must not exist yet); ``sources``: (path, text)
    of the files the map was built from.

    The pages are 64 KiB (SQLite's default is 4 KiB): most of the file is a few large texts
    (the graph's two documents, a record and a source per file), which then span fewer
    overflow pages. On this repository's map (11 MB) it halves the time SQLite takes to write.
    """
    position: dict[str, int] = {}
    nodes: list[NodeRow] = []
    for node_id, data in graph.nodes():
        position[node_id] = len(nodes)
        extra = dict(data)  # the other attributes: a copy less the five columns
        for name in _NODE_FIELDS:
            extra.pop(name, None)
        place = (data.get("layer"), data.get("path"), data.get("line"))
        nodes.append((node_id, data["kind"], data["name"], *place, extra))
    fixed = len(_EDGE_FIELDS)  # every edge record holds these; most hold nothing else
    edges = [
        (
            position[src],
            position[dst],
            data["kind"],
            None if key == data["kind"] else key,
            data["provenance"],
            data["evidence"],
            {} if len(data) == fixed else {k: v for k, v in data.items() if k not in _EDGE_FIELDS},
        )
        for src, dst, key, data in graph.raw_edges()
    ]
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        db.executescript(
            "PRAGMA page_size = 65536; PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;"
            + _TABLES
        )
        meta = {"format": FORMAT, "schema": str(SCHEMA_VERSION), "cache_key": cache_key}
        db.executemany("INSERT INTO meta VALUES (?, ?)", meta.items())
        db.executemany(
            "INSERT INTO graph VALUES (?, ?)", (("nodes", _json(nodes)), ("edges", _json(edges)))
        )
        db.executemany("INSERT INTO parsed VALUES (?, ?, ?, ?, ?)", parsed)
        db.executemany("INSERT INTO sources VALUES (?, ?)", sources)


class MapFile:
    """An open, validated map file (read-only). Use as a context manager or :meth:`close`."""

    def __init__(self, path: Path, *, shared: bool = False) -> None:
        """``shared``: the connection may be used from other threads than this one, one call
        at a time (its owner serialises them)."""
        self.path = path
        try:
            with path.open("rb") as fh:
                header = fh.read(len(_HEADER))
        except OSError as exc:
            raise self._corrupt(f"cannot read it: {exc.strerror or exc}") from exc
        if header != _HEADER:
            raise self._corrupt("not a map file (no SQLite header)")
        self.db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=not shared)
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

    def documents(self) -> tuple[list[NodeRow], list[EdgeRow]]:
        """The nodes and edges documents, decoded (rows as the module doc lists them)."""
        parts = dict(self.rows("SELECT part, body FROM graph"))
        try:
            nodes, edges = json.loads(parts["nodes"]), json.loads(parts["edges"])
        except (KeyError, ValueError, TypeError) as exc:
            self.close()
            raise self._corrupt(f"unreadable graph: {exc!r}") from exc
        if not isinstance(nodes, list) or not isinstance(edges, list):
            raise self._corrupt("unreadable graph: not lists of rows")
        return nodes, edges

    def edges_of(self, kinds: tuple[str, ...]) -> tuple[dict[int, NodeRow], list[EdgeRow]]:
        """The edges of ``kinds`` and the nodes they join (by position), picked out of the
        documents by SQLite's JSON functions: the rest is never decoded into Python."""
        marks = ", ".join("?" * len(kinds))
        found = self.rows(
            "SELECT e.value FROM graph g, json_each(g.body) e WHERE g.part = 'edges' "
            f"AND json_extract(e.value, '$[2]') IN ({marks})",
            kinds,
        )
        try:
            edges = [json.loads(text) for (text,) in found]
            joined = sorted({int(row[0]) for row in edges} | {int(row[1]) for row in edges})
            nodes = self.rows(
                "SELECT e.key, e.value FROM graph g, json_each(g.body) e WHERE g.part = 'nodes' "
                f"AND e.key IN ({', '.join(map(str, joined))})"
            )
            return {at: json.loads(text) for at, text in nodes}, edges
        except (ValueError, TypeError, IndexError) as exc:
            self.close()
            raise self._corrupt(f"unreadable graph: {exc!r}") from exc

    def graph(self) -> MapGraph:
        """The whole map as a :class:`~mapper.graph.MapGraph`."""
        graph = MapGraph()
        nodes, edges = self.documents()
        try:
            ids = []
            for node_id, kind, name, layer, path, line, attrs in nodes:
                fields = {"kind": kind, "name": name, "layer": layer, "path": path, "line": line}
                graph.put_node(node_id, {**fields, **attrs})
                ids.append(node_id)
            for src, dst, kind, key, provenance, evidence, attrs in edges:
                first = evidence[0]
                record: dict[str, Any] = {
                    "kind": kind,
                    "provenance": provenance,
                    "confidence": max(item[3] for item in evidence),
                    "path": first[1],
                    "line": first[2],
                    "evidence": evidence,
                }
                graph.put_edge(ids[src], ids[dst], key or kind, {**record, **attrs})
        except (ValueError, TypeError, IndexError, KeyError) as exc:
            raise self._corrupt(f"unreadable row: {exc!r}") from exc
        return graph

    def source(self, path: str) -> str | None:
        """The text of ``path`` as the map was built from it; None for a file it holds no
        text of. StoreCorrupt when the file is damaged."""
        found = self.rows("SELECT body FROM sources WHERE path = ?", (path,))
        if not found:
            return None
        body = found[0][0]
        if not isinstance(body, str):
            self.close()
            raise self._corrupt(f"unreadable source of {path}: not text")
        return body

    def parsed(self) -> list[ParsedRow]:
        """The parse cache rows, by path."""
        return self.rows("SELECT path, digest, category, record, reason FROM parsed ORDER BY path")
