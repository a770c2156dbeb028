"""One ingest run: scan → parse what changed → build the graph → classify → index → commit."""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import sqlite3
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from mapper import collector
from mapper.config import StackmapConfig, load_config, matches_any
from mapper.errors import ConfigError, StoreCorrupt, StoreError, StoreOutdated
from mapper.graph import MapGraph
from mapper.ingest.build import Inputs, build_code
from mapper.ingest.build_contracts import build_contracts
from mapper.ingest.build_docs import build_docs
from mapper.ingest.code import ParsedFile
from mapper.ingest.contracts import ContractFile
from mapper.ingest.discover import discover_interfaces
from mapper.ingest.docs import DocPage
from mapper.ingest.holes import find_holes
from mapper.ingest.parse import parse_many
from mapper.ingest.report import IngestReport
from mapper.ingest.scan import Category, SourceFile, scan
from mapper.ingest.store import ParseCache, Store
from mapper.ingest.vectors import classify, vector_source
from mapper.material import Skip
from mapper.progress import bar, show_progress, step

#: Bumped when what a parse extracts from a file changes (the parse cache is keyed on it).
EXTRACTION = 9


def _config_key(config: StackmapConfig) -> str:
    fields = (
        EXTRACTION,
        config.layers,
        config.contracts,
        config.docs,
        config.tests,
        config.ignore,
        config.python_roots,
        config.generated,
        config.c,
    )
    return hashlib.blake2b(repr(fields).encode(), digest_size=12).hexdigest()


def run(
    root: Path, config: StackmapConfig | None, *, embed: bool, progress: bool | None, full: bool
) -> IngestReport:
    timings: dict[str, float] = {}
    start = clock = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        timings[name] = now - clock
        clock = now

    # Not on a terminal (and not told --no-progress): plain lines for the steps that are long.
    plain = progress is None and not show_progress(progress)
    with contextlib.ExitStack() as steps:

        def begin(what: str) -> None:
            steps.close()
            steps.enter_context(step(what, enabled=plain))

        begin("scanning the repository")
        with collector.paused():  # see mapper.collector for the measured gain
            return _run(root, config, embed, progress, full, timings, lap, begin, start)


def _run(
    root: Path,
    config: StackmapConfig | None,
    embed: bool,
    progress: bool | None,
    full: bool,
    timings: dict[str, float],
    lap: Callable[[str], None],
    begin: Callable[[str], None],
    start: float,
) -> IngestReport:
    config = config or load_config(root)
    store = Store(config.store_path)
    scanned = scan(config)
    layer_warnings = _layer_coverage(config, scanned.files, scanned.unmapped)
    lap("scan")
    cache = ParseCache() if full else _previous(store)
    key = _config_key(config)
    if cache.key != key:
        cache = ParseCache(key)
    entries: dict[str, tuple[str, str, Any, str | None]] = {}
    texts: dict[str, str | None] = {}
    parsed: list[str] = []
    todo: list[SourceFile] = []
    for entry in scanned.files:
        old = cache.entries.get(entry.path)
        if old is not None and old[0] == entry.digest and old[1] == entry.category.value:
            entries[entry.path] = old
            texts[entry.path] = cache.texts[entry.path]
        else:
            todo.append(entry)
    begin(f"parsing {len(todo)} files")
    with bar(show_progress(progress), len(todo)) as tick:
        for entry, (record, reason, cached) in zip(
            todo, parse_many(config, todo, tick), strict=True
        ):
            entries[entry.path] = (entry.digest, entry.category.value, record, reason)
            texts[entry.path] = cached
            parsed.append(entry.path)
    entries = {path: entries[path] for path in sorted(entries)}
    removed = sorted(set(cache.entries) - set(entries))
    lap("parse")
    begin("building the graph")
    inputs, skips, warnings, loc = _split(entries)
    graph = MapGraph()
    resolver = build_code(config, inputs, graph)
    build_contracts(graph, resolver, inputs.contracts)
    discover_interfaces(graph, config)
    lap("graph")
    begin("placing docs" + (" (embedding)" if embed else ""))
    vectors = vector_source(store, show_progress(progress)) if embed else None
    classified = classify(config, inputs.docs, vectors) if vectors else {}
    placed = {
        p: (lay, s)
        for p, (lay, s) in classified.items()
        if lay is not None and s >= config.classify_threshold
    }
    build_docs(config, graph, resolver, inputs, placed)
    holes = find_holes(graph, inputs.docs, classified, config.classify_threshold, embed)
    lap("docs")
    index_stats: dict[str, int] = {}
    if vectors is not None:
        from mapper.ingest.chunks import build_chunks
        from mapper.ingest.sync import sync_index

        begin("updating the vector index")
        index_stats = sync_index(config, build_chunks(graph), vectors, store.next_version())
        index_stats["embedded"] = vectors.computed
        try:
            vectors.save()
        except OSError as exc:
            raise StoreError(f"cannot write the vector cache: {exc}", path=str(store.path)) from exc
        lap("index")
    counts = graph.counts()
    version = store.next_version()
    report = IngestReport(
        root=str(config.root),
        version=version,
        files=_file_counts(scanned.files),
        loc=loc,
        parsed=tuple(parsed),
        removed=tuple(removed),
        nodes=counts["nodes"],
        edges=counts["edges"],
        holes=holes,
        skips=tuple([*scanned.skips, *skips]),
        warnings=tuple([*layer_warnings, *warnings]),
        timings=timings,
        embedded=embed,
        unmapped=scanned.unmapped,
        index=index_stats,
    )
    timings["save"] = 0.0  # measured below; the stored report.json carries the rest
    begin(f"saving map version {version}")
    text = json.dumps(report.to_dict(), indent=1, sort_keys=True).encode()
    try:
        store.commit(version, graph, ParseCache(key, entries, texts), text, _sources(scanned.files))
    except (OSError, sqlite3.Error) as exc:
        raise StoreError(f"cannot write the map: {exc}", path=str(store.path)) from exc
    lap("save")
    timings["total"] = time.perf_counter() - start
    return dataclasses.replace(report, timings=dict(timings))


def _sources(files: Sequence[SourceFile]) -> Iterator[tuple[str, str]]:
    """(path, text) of each file that is UTF-8 text, for the map file."""
    for f in files:
        try:
            yield f.path, f.data.decode("utf-8")
        except UnicodeDecodeError:
            continue  # a PDF, a binary descriptor: nothing to quote


def staleness(config: StackmapConfig, store: Store) -> tuple[str | None, ParseCache]:
    """Why the stored map is not the map of the files now (None when it is), with its parse
    cache: no map yet, an unusable store, another config, or files changed since."""
    if store.current_version() is None:
        return "no map has been built yet", ParseCache()
    try:
        cache = store.load_parse_cache()
    except StoreError as exc:
        return f"the stored map is unusable ({exc.message})", ParseCache()
    if cache.key != _config_key(config):
        return "the config changed since the map was built", cache
    now = {f.path: (f.digest, f.category.value) for f in scan(config).files}
    was = {path: (e[0], e[1]) for path, e in cache.entries.items()}
    changed = sorted(p for p in now.keys() | was.keys() if now.get(p) != was.get(p))
    if changed:
        return f"{len(changed)} file(s) changed since the map was built ({changed[0]}, …)", cache
    return None, cache


def _layer_coverage(
    config: StackmapConfig, files: Sequence[SourceFile], unmapped: int
) -> list[str]:
    """Warnings for layer globs that match no file read; ConfigError when the config has no
    layers, or when code exists but no file lies in any layer (a map of nothing)."""
    if not config.layers:
        raise ConfigError(
            "the config declares no [[layers]] (each needs an id and paths); "
            "run `stackmap init .` to propose them",
            path="stackmap.toml",
        )
    out = []
    for layer in config.layers:
        for glob in layer.paths:
            if not any(matches_any(f.path, (glob,)) for f in files):
                out.append(f"stackmap.toml: layer {layer.id!r} path {glob!r} matches no file")
    in_layers = sum(1 for f in files if f.category is Category.CODE)
    if in_layers == 0 and unmapped > 0:
        raise ConfigError(
            f"no code file lies in any layer ({unmapped} code files match no layer's paths); "
            "check the [[layers]] paths globs",
            path="stackmap.toml",
        )
    return out


def _previous(store: Store) -> ParseCache:
    """The current version's parse cache; an empty one, said on stderr, when the store was
    written by another version of the tool or is damaged (everything is parsed again)."""
    try:
        return store.load_parse_cache()
    except (StoreCorrupt, StoreOutdated) as exc:
        print(f"stackmap: {exc}; rebuilding the map from scratch", file=sys.stderr)
        return ParseCache()


def _split(
    entries: dict[str, tuple[str, str, Any, str | None]],
) -> tuple[Inputs, list[Skip], list[str], int]:
    inputs = Inputs()
    skips: list[Skip] = []
    warnings: list[str] = []
    loc = 0
    for path in sorted(entries):
        _digest, category, record, reason = entries[path]
        if reason is not None or record is None:
            skips.append(Skip(path, reason or "unparsed"))
            continue
        if isinstance(record, ParsedFile):
            loc += record.loc
            warnings.extend(record.warnings)
            target = inputs.tests if category == Category.TEST.value else inputs.code
            target[path] = record
        elif isinstance(record, DocPage):
            warnings.extend(record.warnings)
            inputs.docs[path] = record
        elif isinstance(record, ContractFile):
            inputs.contracts[path] = record
    return inputs, skips, warnings, loc


def _file_counts(files: Sequence[SourceFile]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for f in files:
        counts[f.category.value] = counts.get(f.category.value, 0) + 1
    return dict(sorted(counts.items()))
