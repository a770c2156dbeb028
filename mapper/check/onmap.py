"""The check reads the stored map: what ingest parsed once, refreshed first when it is stale.

:func:`facts_from_map` makes the stored map current (an incremental ingest, said on stderr,
when there is no map yet, the config changed or files changed since it was built; with
embeddings when the current map has them) and builds the rules' :class:`~mapper.check.facts.Facts`
from its parse cache: contracts, doc pages and the code and proto files, as ingest parsed
them. Nothing is parsed again, except a file outside the map that a page or contract names
(see :meth:`~mapper.check.facts.Facts.parsed`) and a contract ingest could not read (parsed
again to raise its ContractError with the line).
"""

from __future__ import annotations

import sys
from pathlib import Path

from mapper.check.facts import Facts, walk
from mapper.config import StackmapConfig, load_config
from mapper.errors import StoreError
from mapper.ingest import ingest
from mapper.ingest.code import ParsedFile, python_module
from mapper.ingest.contracts import ContractFile, load_contracts
from mapper.ingest.docs import DocPage
from mapper.ingest.pipeline import staleness
from mapper.ingest.scan import Category
from mapper.ingest.store import ParseCache, Store


def refreshed(root: Path, config: StackmapConfig) -> ParseCache:
    """The parse cache of a current map of ``root``, ingesting incrementally first if needed."""
    store = Store(config.store_path)
    reason, cache = staleness(config, store)
    if reason is None:
        return cache
    print(f"stackmap check: {reason}; refreshing the map (incremental ingest)", file=sys.stderr)
    try:
        embedded = bool(store.report().get("embedded"))
    except StoreError:
        embedded = False
    ingest(root, config, embed=embedded, progress=False)
    return store.load_parse_cache()


def facts_from_map(root: Path, config: StackmapConfig | None = None) -> Facts:
    """The rules' facts for ``root`` from its (refreshed) stored map.

    Raises ConfigError / ContractError when the map itself cannot be read, StoreError when the
    store cannot be written.
    """
    root = root.resolve()
    config = config or load_config(root)
    cache = refreshed(root, config)
    code: dict[str, ParsedFile] = {}
    docs: list[DocPage] = []
    contracts: list[ContractFile] = []
    for path in sorted(cache.entries):
        _digest, category, record, reason = cache.entries[path]
        if category == Category.CONTRACT.value and reason is not None:
            load_contracts(root, config)  # raises the ContractError, with its line
        if isinstance(record, ContractFile):
            contracts.append(record)
        elif isinstance(record, DocPage) and config.is_doc(path):
            docs.append(record)
        elif isinstance(record, ParsedFile) and category != Category.TEST.value:
            code[path] = record
    paths = walk(root, config)
    modules: dict[str, str] = {}
    for path in paths:
        if path.endswith(".py"):
            modules.setdefault(python_module(path), path)
    facts = Facts(root, config, tuple(contracts), tuple(docs), frozenset(paths), modules)
    facts.stored.update(code)
    return facts
