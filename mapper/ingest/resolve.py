"""Name resolution over all parsed files: imports/includes to files, calls to symbols.

Resolution is static and conservative. A Python call resolves through the file's imports
(and the packages re-exporting a name), ``self``/``cls``/``super()`` methods of the enclosing
class and its bases, and names of the same module (confidence 1); ``self.attr.m()`` through
the attribute's annotated or assigned class and ``param.m()`` through the parameter's
annotated class (confidence 0.9); any other attribute call resolves only to the one method of
that name in a class the file imports (0.7) or in a module it imports (0.6), provenance
inferred. A C/C++ call resolves to the same file's definition first, then to the enclosing
namespaces' names, then to a definition elsewhere (source files before headers; confidence
0.8 when several candidates remain). Unresolved names produce no edge.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable

from mapper.ingest._python_defs import annotation_class
from mapper.ingest.code import ParsedFile
from mapper.ingest.relpath import name as _name
from mapper.ingest.relpath import normalise as _normalise
from mapper.ingest.relpath import parent as _parent
from mapper.ingest.relpath import shared as _shared
from mapper.model import Language, Reference, Symbol, SymbolKind

_ARGS = re.compile(r"\([^()]*\)")
_HEADERS = (".h", ".hh", ".hpp", ".hxx", ".cuh")
_KINDS = "FUNCTION METHOD CLASS KERNEL MACRO IOCTL STRUCT"  # what a call may resolve to
CALLABLE = frozenset(SymbolKind[name] for name in _KINDS.split())


class Resolver:
    def __init__(self, parsed: Iterable[ParsedFile], include_paths: Iterable[str] = ()) -> None:
        self.include_paths = tuple(p.strip("/") for p in include_paths)
        self.modules: dict[str, str] = {}  # python module → file path
        self.py: dict[str, Symbol] = {}  # python qualname → symbol
        self.c: dict[str, list[Symbol]] = defaultdict(list)  # C/C++ qualname → symbols
        self.proto: dict[str, Symbol] = {}
        self.methods: dict[str, list[tuple[Symbol, str]]] = defaultdict(
            list
        )  # name → (method, module)
        # name → (method, module, class qualname): methods with their owner precomputed
        self._method_owners: dict[str, list[tuple[Symbol, str, str]]] = defaultdict(list)
        self.paths: dict[str, list[str]] = defaultdict(list)  # basename → file paths
        files = list(parsed)
        for pf in files:
            self.paths[_name(pf.path)].append(pf.path)
            if pf.language is Language.PYTHON and pf.module is not None:
                self.modules.setdefault(pf.module, pf.path)
            for sym in pf.symbols:
                self._index(sym, pf.module)
        self._files = {pf.path: pf for pf in reversed(files)}  # the first of a path wins
        self._imports: dict[str, tuple[ParsedFile, dict[str, str], set[str], set[str]]] = {}
        self._classes: dict[str, str | None] = {}  # scope → enclosing class (memo)
        self._calls: dict[tuple[str, str, str | None], tuple[Symbol, float] | None] = {}
        self._proto_suffixes: dict[str, str] | None = None  # built on first use
        self._reexports: dict[str, Symbol | None] = {}  # name through a package → symbol
        self.bases: dict[str, list[str]] = {}  # class qualname → resolved base qualnames
        self.attr_types: dict[tuple[str, str], str] = {}  # (class, attribute) → class
        for pf in files:
            for cls, written in pf.bases:
                found = [self.python_name(pf, name) for name in written]
                self.bases[cls] = [b.qualname for b in found if b is not None]
            for cls, attr, annotation in pf.attributes:
                typ = self.python_name(pf, annotation)
                if typ is not None and typ.kind is SymbolKind.CLASS:
                    self.attr_types.setdefault((cls, attr), typ.qualname)

    def _index(self, sym: Symbol, module: str | None) -> None:
        if sym.language is Language.PYTHON:
            self.py.setdefault(sym.qualname, sym)
            if sym.kind is SymbolKind.METHOD:
                owner, _, name = sym.qualname.rpartition(".")
                self.methods[name].append((sym, module or ""))
                self._method_owners[name].append((sym, module or "", owner))
        elif sym.language is Language.PROTO:
            self.proto.setdefault(sym.qualname, sym)
        elif sym.language is Language.JSON:
            return  # operator descriptors are data: nothing calls or includes them by name
        else:
            self.c[sym.qualname].append(sym)

    # -- files -------------------------------------------------------------------
    def import_file(self, pf: ParsedFile, ref: Reference) -> str | None:
        """The repository file an import/include names, or None (external or unknown)."""
        if ref.kind == "import" and pf.language is Language.PYTHON:
            parts = ref.target.split(".")
            for cut in range(len(parts), 0, -1):
                path = self.modules.get(".".join(parts[:cut]))
                if path is not None:
                    return path if path != pf.path else None
            return None
        return self._include(pf.path, ref.target)

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

    def _bindings(self, pf: ParsedFile) -> tuple[dict[str, str], set[str], set[str]]:
        """``pf``'s imports as a dict, the targets they bind, and the modules those targets
        live in (with ``pf``'s own), computed once per file."""
        cached = self._imports.get(pf.path)
        if cached is None or cached[0] is not pf:
            bound = {t for _, t in pf.imports}
            modules = bound | {t.rpartition(".")[0] for t in bound} | {pf.module or ""}
            cached = (pf, dict(pf.imports), bound, modules)
            self._imports[pf.path] = cached
        return cached[1], cached[2], cached[3]

    def python_name(self, pf: ParsedFile, name: str) -> Symbol | None:
        """A dotted name as written in ``pf`` (through its imports, or module-local)."""
        imports = self._bindings(pf)[0]
        head, dot, rest = name.partition(".")
        if head in imports:
            full = f"{imports[head]}.{rest}" if dot else imports[head]
            through = self.py.get(full) or self._through_packages(full)
            if through is not None:
                return through
        if pf.module:
            found = self.py.get(f"{pf.module}.{name}")
            if found is not None:
                return found
        return self.py.get(name)

    def _through_packages(self, full: str, depth: int = 0) -> Symbol | None:
        """``full`` named through a module that only imports it (``pkg.Name`` where
        ``pkg/__init__.py`` does ``from .mod import Name``): the longest module prefix of
        ``full`` whose file binds the next name is followed, chains up to eight deep."""
        if full in self._reexports:
            return self._reexports[full]
        found: Symbol | None = None
        parts = full.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            path = self.modules.get(".".join(parts[:cut]))
            pf = self._files.get(path) if path is not None else None
            if pf is None:
                continue
            bound = self._bindings(pf)[0].get(parts[cut])
            if bound is not None and depth < 8:
                target = ".".join([bound, *parts[cut + 1 :]])
                if target != full:
                    found = self.py.get(target) or self._through_packages(target, depth + 1)
            break
        self._reexports[full] = found
        return found

    def _python_call(self, pf: ParsedFile, ref: Reference) -> tuple[Symbol, float] | None:
        raw = ref.target
        is_super = raw.startswith("super().")
        target = raw.removeprefix("super().") if is_super else raw
        if "(" in target:
            target = _ARGS.sub("", _ARGS.sub("", target))
        parts = ["super()", *target.split(".")] if is_super else target.split(".")
        scope = ref.scope
        if scope and len(parts) == 2 and parts[0] in ("self", "cls", "super()"):
            owner = self._enclosing_class(scope)
            member = self.member(owner, parts[1], skip_own=parts[0] == "super()") if owner else None
            if member is not None:
                return member, 1.0
        if scope and len(parts) == 3 and parts[0] == "self":  # self.attr.method()
            owner = self._enclosing_class(scope)
            typ = self._attribute_type(owner, parts[1]) if owner else None
            member = self.member(typ, parts[2]) if typ else None
            if member is not None:
                return member, 0.9
        found = self.python_name(pf, target)
        if found is not None:
            return found, 1.0
        if scope and len(parts) == 2:  # param.method(): the parameter's annotated class
            typ = self._param_class(pf, scope, parts[0])
            member = self.member(typ, parts[1]) if typ else None
            if member is not None:
                return member, 0.9
        if scope:  # a nested function of the enclosing scope
            nested = self.py.get(f"{scope}.{target}")
            if nested is not None:
                return nested, 1.0
        if len(parts) >= 2:
            return self._method_by_name(pf, scope, parts)
        return None

    def _param_class(self, pf: ParsedFile, scope: str, name: str) -> str | None:
        """The class a parameter ``name`` of the function ``scope`` (or of a function it is
        nested in) is annotated with."""
        parts = scope.split(".")
        for cut in range(len(parts), 0, -1):
            fn = self.py.get(".".join(parts[:cut]))
            if fn is None or fn.kind not in (SymbolKind.FUNCTION, SymbolKind.METHOD):
                continue
            for param in fn.signature.params if fn.signature else ():
                if param.name == name:
                    written = annotation_class(param.type or "")
                    typ = self.python_name(pf, written) if written else None
                    return typ.qualname if typ and typ.kind is SymbolKind.CLASS else None
        return None

    def _method_by_name(
        self, pf: ParsedFile, scope: str | None, parts: list[str]
    ) -> tuple[Symbol, float] | None:
        """``obj.attr.m()`` on an object of unknown type: the one method ``m`` of a class the
        file imports (0.7), else of a class in a module it imports or its own module (0.6);
        the enclosing class is no candidate for ``self.attr.m()``."""
        candidates = self._method_owners.get(parts[-1])
        if not candidates:
            return None
        _, bound, modules = self._bindings(pf)
        own = self._enclosing_class(scope) if scope and parts[0] == "self" else None
        named = [row for row in candidates if row[2] != own]
        imported = [m for m, _, owner in named if owner in bound]
        if len(imported) == 1:
            return imported[0], 0.7
        nearby = [m for m, mod, _ in named if mod in modules]
        if not imported and len(nearby) == 1:
            return nearby[0], 0.6
        return None

    def _attribute_type(self, cls: str, attr: str) -> str | None:
        """The class an attribute of ``cls`` (or of one of its bases) is annotated with."""
        queue, seen = [cls], {cls}
        while queue:
            current = queue.pop(0)
            typ = self.attr_types.get((current, attr))
            if typ is not None:
                return typ
            for base in self.bases.get(current, []):
                if base not in seen:
                    seen.add(base)
                    queue.append(base)
        return None

    def member(self, cls: str, name: str, *, skip_own: bool = False) -> Symbol | None:
        """``cls.name`` or the first base class (breadth first) that defines it."""
        queue, seen = [cls], {cls}
        while queue:
            current = queue.pop(0)
            if not (skip_own and current == cls):
                found = self.py.get(f"{current}.{name}")
                if found is not None:
                    return found
            for base in self.bases.get(current, []):
                if base not in seen:
                    seen.add(base)
                    queue.append(base)
        return None

    def _enclosing_class(self, scope: str) -> str | None:
        if scope in self._classes:
            return self._classes[scope]
        found: str | None = None
        parts = scope.split(".")
        for cut in range(len(parts), 0, -1):
            sym = self.py.get(".".join(parts[:cut]))
            if sym is not None and sym.kind is SymbolKind.CLASS:
                found = sym.qualname
                break
        self._classes[scope] = found
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

    def reexported(self, name: str) -> Symbol | None:
        """A Python name a package re-exports (``pkg.Name`` bound by an import in ``pkg``)."""
        module, _, rest = name.rpartition(".")
        pf = self._files.get(self.modules.get(module, ""))
        return self.python_name(pf, rest) if pf is not None and rest else None

    def any_symbol(self, name: str) -> Symbol | None:
        """A symbol named as in contracts and front matter: Python qualname, C name
        (optionally ``path:NAME``), or proto name (full, or ``Service.Rpc`` suffix)."""
        if name in self.py:
            return self.py[name]
        if name in self.proto:
            return self.proto[name]
        if ":" in name and "::" not in name:
            path, _, ident = name.rpartition(":")
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
