"""Everything the rules look at, collected straight from the ingest parsers (no embeddings).

:func:`collect` walks the repository once: contracts (``load_contracts``), docs
(``parse_markdown``), protos (``parse_proto``) and the code files inside the configured
layers (``parse_file``). Code outside the layers (the map tool itself, tests, scripts) is
parsed lazily, only when a doc or contract names it. Synchronous; one pass per check run.
(On a current map, :mod:`mapper.check.onmap` fills the same record from the stored parse.)

Names are answered by the ingest resolver over these files (:meth:`Facts.resolver`,
:meth:`Facts.definition`): the resolver that made the map's edges, so the check and the map
agree on what a name is.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from mapper.config import StackmapConfig, load_config
from mapper.errors import IngestError
from mapper.ingest.code import CODE_LANGUAGES, ParsedFile, language_for, parse_file, python_module
from mapper.ingest.contracts import ContractFile, load_contracts
from mapper.ingest.definitions import Definition, definition
from mapper.ingest.docs import DocPage, parse_markdown
from mapper.ingest.resolve import Resolver
from mapper.material import InterfaceSpec
from mapper.model import Language, Symbol, SymbolKind

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


@dataclass(slots=True)
class Facts:
    """The parsed repository. ``files`` holds every code/proto file parsed so far (keyed by
    path); ``paths`` every non-ignored file; ``modules`` Python module name → path."""

    root: Path
    config: StackmapConfig
    contracts: tuple[ContractFile, ...]
    docs: tuple[DocPage, ...]
    paths: frozenset[str]
    modules: dict[str, str]
    files: dict[str, ParsedFile] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    cache: dict[str, Any] = field(default_factory=dict)  # shared by rules within one run
    stored: dict[str, ParsedFile] = field(default_factory=dict)  # parsed at ingest, unread yet

    # ---------------------------------------------------------------- files and symbols
    def parsed(self, path: str) -> ParsedFile | None:
        """The parsed file (parsed now if needed); None when it cannot be parsed."""
        if path not in self.files:
            if path not in self.paths:
                return None
            try:
                stored = self.stored.pop(path, None)
                self.files[path] = stored or parse_file(self.root, path)
            except IngestError as exc:
                self.warnings.append(str(exc))
                return None
            self.warnings.extend(self.files[path].warnings)
        return self.files[path]

    def layer_files(self, *languages: Language) -> Iterator[tuple[str, str, ParsedFile]]:
        """(path, layer, parsed) for every code file inside a layer, in path order."""
        if "layer_files" not in self.cache:
            found = []
            for path in sorted(self.paths):
                layer = self.config.layer_of(path)
                lang = language_for(path)
                if layer is not None and lang in CODE_LANGUAGES:
                    found.append((path, layer, lang))
            self.cache["layer_files"] = found
        for path, layer, lang in self.cache["layer_files"]:
            if languages and lang not in languages:
                continue
            parsed = self.parsed(path)
            if parsed is not None:
                yield path, layer, parsed

    def protos(self) -> Iterator[ParsedFile]:
        for path in sorted(p for p in self.paths if p.endswith(".proto")):
            parsed = self.parsed(path)
            if parsed is not None:
                yield parsed

    def symbol_in(self, path: str, qualname: str) -> Symbol | None:
        parsed = self.parsed(path)
        if parsed is None:
            return None
        return next((s for s in parsed.symbols if s.qualname == qualname), None)

    # ---------------------------------------------------------------- names
    def resolver(self) -> Resolver:
        """The ingest resolver over the layers' code, as parsed once (one per check run)."""
        if "resolver" not in self.cache:
            self.cache["resolver"] = Resolver(pf for _, _, pf in self.layer_files())
        resolver: Resolver = self.cache["resolver"]
        return resolver

    def definition(self, dotted: str) -> Definition | None:
        """Where a dotted Python name is defined (:func:`mapper.ingest.definitions.definition`
        over :meth:`resolver`); a module outside the layers is parsed when the name leads
        into it."""
        return definition(self.resolver(), dotted, modules=self.modules, fetch=self.parsed)

    def is_python_name(self, name: str) -> bool:
        """A dotted name whose first part is a top-level module or package of the repository."""
        parts = name.split(".")
        return (
            len(parts) > 1
            and all(_IDENT.match(p) for p in parts)
            and any(m == parts[0] or m.startswith(parts[0] + ".") for m in self.modules)
        )

    def proto_symbols(self) -> Iterator[Symbol]:
        for parsed in self.protos():
            yield from parsed.symbols

    def proto_symbol(self, name: str, *kinds: SymbolKind) -> Symbol | None:
        """A proto symbol by full name or by its name without the package."""
        for sym in self.proto_symbols():
            if kinds and sym.kind not in kinds:
                continue
            if sym.qualname == name or sym.qualname.endswith("." + name):
                return sym
        return None

    # ---------------------------------------------------------------- the map
    def interfaces(self) -> Iterator[InterfaceSpec]:
        for contract in self.contracts:
            yield from contract.interfaces

    def interface_ids(self) -> frozenset[str]:
        return frozenset(i.id for i in self.interfaces())

    def contract_between(self, upper: str, lower: str) -> tuple[ContractFile, ...]:
        return tuple(c for c in self.contracts if c.upper == upper and c.lower == lower)

    def span_end(self, spec: InterfaceSpec) -> int | None:
        """Last line of an interface's YAML entry (the line before the next entry)."""
        contract = next((c for c in self.contracts if c.id == spec.contract), None)
        if contract is None or spec.location.line is None:
            return None
        starts = [i.location.line for i in contract.interfaces]
        starts += [c.location.line for c in contract.constants]
        later = sorted(n for n in starts if n is not None and n > spec.location.line)
        if later:
            return later[0] - 1
        return _line_count(self.root / contract.path)

    def components(self) -> dict[str, DocPage]:
        """Component id → the page declaring it (front matter ``component``)."""
        out: dict[str, DocPage] = {}
        for page in self.docs:
            comp = page.front_matter.get("component")
            if isinstance(comp, str) and comp:
                out.setdefault(comp, page)
        return out


def _line_count(path: Path) -> int | None:
    try:
        return max(1, len(path.read_bytes().splitlines()))
    except OSError:
        return None


def walk(root: Path, config: StackmapConfig) -> list[str]:
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = Path(dirpath).relative_to(root).as_posix()
        rel_dir = "" if rel_dir == "." else rel_dir + "/"
        dirnames[:] = sorted(
            d for d in dirnames if d != ".git" and not config.is_ignored(f"{rel_dir}{d}/_")
        )
        for name in filenames:
            rel = rel_dir + name
            if not config.is_ignored(rel):
                out.append(rel)
    return out


def collect(root: Path, config: StackmapConfig | None = None) -> Facts:
    """Read the map and index the code of the repository at ``root`` (parse-only).

    Raises ConfigError / ContractError / IngestError when the map itself cannot be read.
    """
    root = root.resolve()
    config = config or load_config(root)
    paths = walk(root, config)
    modules: dict[str, str] = {}
    for path in paths:
        if path.endswith(".py"):
            modules.setdefault(python_module(path), path)
    docs = tuple(parse_markdown(root, p) for p in sorted(paths) if config.is_doc(p))
    contracts = load_contracts(root, config)
    return Facts(root, config, contracts, docs, frozenset(paths), modules)


def module_path(modules: dict[str, str], dotted: str) -> tuple[str, str, list[str]] | None:
    """Split ``a.b.C.m`` into (module, its file, the remaining names) by the longest module
    prefix that is a file of the repository; None when no prefix is."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        mod = ".".join(parts[:cut])
        if mod in modules:
            return mod, modules[mod], parts[cut:]
    return None


def posix(path: str) -> str:
    return PurePosixPath(path).as_posix()


def split_c_name(name: str) -> tuple[str, str]:
    """``("path", "NAME")`` for a C name written ``path:NAME`` (a file with an extension before
    one colon), else ``("", name)`` (``ns::name`` stays whole)."""
    path, sep, ident = name.partition(":")
    if not sep or ident.startswith(":") or "." not in path.rpartition("/")[2]:
        return "", name
    return path, ident
