"""Name resolution over all parsed files: imports/includes to files, calls to symbols.

Resolution is static and conservative. Python names and calls resolve as
:mod:`mapper.ingest.resolve_python` describes. A C/C++ call resolves to the same file's
definition first, then to the enclosing namespaces' names, then to a definition elsewhere
(source files before headers; confidence 0.8 when several candidates remain). An
``#include`` resolves relative to the including file, then to the include paths, then to the
nearest file whose path ends with the written one. Unresolved names produce no edge.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable

from mapper.ingest.code import ParsedFile
from mapper.ingest.definitions import definition
from mapper.ingest.relpath import name as _name
from mapper.ingest.relpath import normalise as _normalise
from mapper.ingest.relpath import parent as _parent
from mapper.ingest.relpath import shared as _shared
from mapper.ingest.resolve_python import PythonNames
from mapper.model import Language, Reference, Symbol, SymbolKind

_HEADERS = (".h", ".hh", ".hpp", ".hxx", ".cuh")
_C_PATH = re.compile(r"([^:]+):(?!:)(.+)")  # "path:NAME"; not "Class::method" alone
_KINDS = "FUNCTION METHOD CLASS KERNEL MACRO IOCTL STRUCT"  # what a call may resolve to
CALLABLE = frozenset(SymbolKind[name] for name in _KINDS.split())


class Resolver(PythonNames):
    """Every parsed file's names: the Python half (:class:`PythonNames`) plus C/C++/CUDA
    symbols by qualname, proto symbols, and file basenames for includes."""

    def __init__(self, parsed: Iterable[ParsedFile], include_paths: Iterable[str] = ()) -> None:
        files = list(parsed)
        super().__init__(files)
        self.include_paths = tuple(p.strip("/") for p in include_paths)
        self.c: dict[str, list[Symbol]] = defaultdict(list)  # C/C++ qualname → symbols
        self.proto: dict[str, Symbol] = {}
        self.paths: dict[str, list[str]] = defaultdict(list)  # basename → file paths
        for pf in files:
            self.paths[_name(pf.path)].append(pf.path)
            for sym in pf.symbols:
                if sym.language is Language.PROTO:
                    self.proto.setdefault(sym.qualname, sym)
                elif sym.language is not Language.PYTHON and sym.language is not Language.JSON:
                    self.c[sym.qualname].append(sym)  # JSON descriptors are data: never called
        self._calls: dict[tuple[str, str, str | None], tuple[Symbol, float] | None] = {}
        self._proto_suffixes: dict[str, str] | None = None  # built on first use

    # -- files -------------------------------------------------------------------
    def import_file(self, pf: ParsedFile, ref: Reference) -> str | None:
        """The repository file an import/include names, or None (external or unknown)."""
        if ref.kind == "import" and pf.language is Language.PYTHON:
            path = self.module_file(ref.target)
            return path if path != pf.path else None
        return self._include(pf.path, ref.target)

    def module_file(self, dotted: str) -> str | None:
        """The file of the longest module prefix of a dotted Python name, or None."""
        parts = dotted.split(".")
        for cut in range(len(parts), 0, -1):
            path = self.modules.get(".".join(parts[:cut]))
            if path is not None:
                return path
        return None

    def _include(self, including: str, target: str) -> str | None:
        """An ``#include``: relative to the including file's folder, then to each include
        path, then the one file whose path ends with the written path (the nearest to the
        including file when several do); None when outside the repository."""
        for folder in (_parent(including), *self.include_paths):
            path = _normalise(f"{folder}/{target}" if folder not in ("", ".") else target)
            if path is not None and path in self._files:
                return path if path != including else None
        candidates = [
            p for p in self.paths.get(_name(target), []) if p == target or p.endswith("/" + target)
        ]
        if not candidates:
            return None
        pick = min(candidates, key=lambda p: (-_shared(p, including), p))
        return pick if pick != including else None

    # -- calls -------------------------------------------------------------------
    def call(self, pf: ParsedFile, ref: Reference) -> tuple[Symbol, float] | None:
        """The symbol a call resolves to, with a confidence; None when unresolved. Answers
        for the files the resolver indexed are memoised per (file, callee, scope)."""
        if pf.language is Language.PROTO:
            return None
        memo = self._calls if self._files.get(pf.path) is pf else None
        key = (pf.path, ref.target, ref.scope)
        if memo is not None and key in memo:
            return memo[key]
        if pf.language is Language.PYTHON:
            found = self._python_call(pf, ref)
        else:
            found = self._c_call(pf, ref)
        if memo is not None:
            memo[key] = found
        return found

    def _c_call(self, pf: ParsedFile, ref: Reference) -> tuple[Symbol, float] | None:
        target = ref.target
        if "->" in target or "." in target:
            return None
        names = [target]
        if ref.scope and "::" in ref.scope:
            outer = ref.scope.split("::")[:-1]
            names = ["::".join([*outer[:cut], target]) for cut in range(len(outer), 0, -1)] + names
        for name in names:
            found = self.c_symbol(name, prefer=pf.path)
            if found is not None:
                return found
        return None

    def c_symbol(self, name: str, prefer: str | None = None) -> tuple[Symbol, float] | None:
        """A C/C++/CUDA symbol by qualname: the preferred file, then sources before headers."""
        candidates = [s for s in self.c.get(name, []) if s.kind in CALLABLE]
        if not candidates:
            return None
        same = [s for s in candidates if s.location.path == prefer]
        if same:
            return same[0], 1.0
        ranked = sorted(
            candidates, key=lambda s: (s.location.path.endswith(_HEADERS), s.location.path)
        )
        return ranked[0], 1.0 if len(candidates) == 1 else 0.8

    def named(self, name: str) -> str | None:
        """The node a contract entry's ``symbol`` or a page's front-matter ``symbols`` names:
        the symbol :meth:`any_symbol` finds, else one a Python package re-exports
        (``stack.umd.DType`` imported into ``stack/umd/__init__.py``), else what
        :func:`~mapper.ingest.definitions.definition` finds (an inherited member, an instance
        attribute: its class; a star import; a Python module: its file). None for none; the
        check asks the same question of the same resolver."""
        sym = self.any_symbol(name) or self.reexported(name)
        if sym is not None:
            return sym.node_id
        found = definition(self, name)
        if found is None:
            return None
        return found.symbol.node_id if found.symbol is not None else f"file:{found.path}"

    def any_symbol(self, name: str) -> Symbol | None:
        """A symbol named as in contracts and front matter: Python qualname, C name
        (optionally ``path:NAME``), or proto name (full, or ``Service.Rpc`` suffix)."""
        if name in self.py:
            return self.py[name]
        if name in self.proto:
            return self.proto[name]
        if split := _C_PATH.fullmatch(name):  # path:NAME, NAME may be C++ Class::method
            path, ident = split.groups()
            matches = [s for s in self.c.get(ident, []) if s.location.path == path]
            if matches:
                return matches[0]
            name = ident
        if name in self.c:
            found = self.c_symbol(name)
            return found[0] if found else self.c[name][0]
        if self._proto_suffixes is None:  # "a.b.C.D" → "b.C.D", "C.D", "D" (least name wins)
            self._proto_suffixes = {}
            for full in sorted(self.proto, reverse=True):
                parts = full.split(".")
                for cut in range(1, len(parts)):
                    self._proto_suffixes[".".join(parts[cut:])] = full
        best = self._proto_suffixes.get(name)
        return self.proto[best] if best is not None else None
