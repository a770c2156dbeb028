"""Python name resolution: dotted names through imports and re-exporting packages, calls
through the class hierarchy.

A Python call resolves through the file's imports (and the packages re-exporting a name),
``self``/``cls``/``super()`` methods of the enclosing class and its bases, and names of the
same module (confidence 1); ``self.attr.m()`` through the attribute's annotated or assigned
class, ``param.m()`` through the parameter's annotated class and ``x.m()`` through the class a
local (or module-level) ``x`` is constructed from, annotated with or made by a factory whose
return annotation names (confidence 0.9); any other
attribute call resolves only to the one method of that name in a class the file imports
(0.7) or in a module it imports (0.6), provenance inferred.
"""

from __future__ import annotations

import re
from collections import defaultdict

from mapper.ingest._python_defs import annotation_class
from mapper.ingest.code import ParsedFile
from mapper.ingest.resolve_instances import InstanceTypes
from mapper.model import Language, Reference, Symbol, SymbolKind

_ARGS = re.compile(r"\([^()]*\)")


class PythonNames(InstanceTypes):
    """The Python modules, qualnames, methods, class bases and attribute types of the parsed
    files, and the resolution of names and calls written in them."""

    def __init__(self, files: list[ParsedFile]) -> None:
        self.modules: dict[str, str] = {}  # python module → file path
        self.py: dict[str, Symbol] = {}  # python qualname → symbol
        self.methods: dict[str, list[tuple[Symbol, str]]] = defaultdict(list)  # name → (m, module)
        # name → (method, module, class qualname): methods with their owner precomputed
        self._method_owners: dict[str, list[tuple[Symbol, str, str]]] = defaultdict(list)
        self._files: dict[str, ParsedFile] = {}  # the first of a path wins
        self._imports: dict[str, tuple[ParsedFile, dict[str, str], set[str], set[str]]] = {}
        self._classes: dict[str, str | None] = {}  # scope → enclosing class (memo)
        self._reexports: dict[str, Symbol | None] = {}  # name through a package → symbol
        self.bases: dict[str, list[str]] = {}  # class qualname → resolved base qualnames
        self.attr_types: dict[tuple[str, str], str] = {}  # (owner, name) → class
        self.attributes: set[tuple[str, str]] = set()  # (class, attribute) its methods assign
        self._returned: dict[str, list[str]] = {}  # function → callees it returns, as written
        self._fixtures: dict[tuple[str, str], str | None] = {}  # (file, parameter) → class
        for pf in files:
            self._index(pf)
        for pf in files:
            self._classify(pf)

    def add(self, pf: ParsedFile) -> None:
        """Index one more file (a file outside the map that a contract or page names)."""
        if pf.path in self._files:
            return
        self._index(pf)
        self._classify(pf)
        self._classes.clear()
        self._reexports.clear()
        self._fixtures.clear()

    def file(self, path: str) -> ParsedFile | None:
        """The indexed file at ``path``, or None."""
        return self._files.get(path)

    def _index(self, pf: ParsedFile) -> None:
        module = pf.module or ""
        if pf.language is Language.PYTHON and pf.module is not None:
            self.modules.setdefault(pf.module, pf.path)
        self._files.setdefault(pf.path, pf)
        for owner, name, written in pf.attributes:
            if name == "return":
                self._returned.setdefault(owner, []).append(written)
        for sym in pf.symbols:
            if sym.language is not Language.PYTHON:
                continue
            self.py.setdefault(sym.qualname, sym)
            if sym.kind is SymbolKind.METHOD:
                owner, _, name = sym.qualname.rpartition(".")
                self.methods[name].append((sym, module))
                self._method_owners[name].append((sym, module, owner))

    def _classify(self, pf: ParsedFile) -> None:
        """Class bases and attribute types of ``pf``, once every file's names are indexed."""
        for cls, written in pf.bases:
            found = [self.python_name(pf, name) for name in written]
            self.bases[cls] = [b.qualname for b in found if b is not None]
        for owner, attr, typed in pf.attributes:
            self.attributes.add((owner, attr))
            typ = self.instance_class(pf, typed) if typed else None
            if typ is not None:
                self.attr_types.setdefault((owner, attr), typ)

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
            typ = self._param_class(pf, scope, parts[0]) or self._local_class(scope, parts[0])
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
        nested in) is annotated with, or (unannotated, in a pytest module) the fixture of its
        name gives; a test file's functions carry no signature: a name is taken for a
        parameter there when a fixture of that name exists."""
        parts = scope.split(".")
        for cut in range(len(parts), 0, -1):
            fn = self.py.get(".".join(parts[:cut]))
            if fn is None or fn.kind not in (SymbolKind.FUNCTION, SymbolKind.METHOD):
                continue
            if fn.signature is None:
                return self._fixture_class(pf, name)
            for param in fn.signature.params:
                if param.name == name:
                    written = annotation_class(param.type or "")
                    if not written:
                        return self._fixture_class(pf, name)
                    typ = self.python_name(pf, written)
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

    def reexported(self, name: str) -> Symbol | None:
        """A Python name a package re-exports (``pkg.Name`` bound by an import in ``pkg``)."""
        module, _, rest = name.rpartition(".")
        pf = self._files.get(self.modules.get(module, ""))
        return self.python_name(pf, rest) if pf is not None and rest else None
