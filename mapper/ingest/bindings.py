"""Resolve how layers bind in driver code: ioctl uses and dispatch, ops-table slots, overrides.

Input: the parse facts of :mod:`mapper.ingest._cbindings` (``use``, ``dispatch``, ``bind``,
``inherit`` references and ``FIELD`` slot symbols), Python calls to ioctl constants, and the
:class:`~mapper.ingest.resolve.Resolver`. Output: :class:`Binding` records, each one source
node id → target node id with the location that shows it. Pure and deterministic.

- An **ioctl** is named by its number's macro (``AMDKFD_IOC_CREATE_QUEUE``,
  ``DRM_IOCTL_AMDGPU_CS``); its definition is the C ``#define`` when the repository has one,
  else a Python mirror (ctypes autogen). A use is an ioctl name passed to a call in C, a call
  of a Python mirror (``kfd.AMDKFD_IOC_CREATE_QUEUE(fd, …)``), the request name given to a
  Python ``fcntl.ioctl(fd, NAME, …)``, or the use of a request-number macro an ioctl is
  built from (``DRM_AMDGPU_CS`` inside ``DRM_IOWR(DRM_COMMAND_BASE + DRM_AMDGPU_CS, …)``, as
  libdrm's ``drmCommandWrite`` calls do). A dispatch is a ``case``
  label or an ioctl-table entry naming it; its source is the switching function or the handler.
- An **enumerator** of the repository named by a function: a ``case`` label that is no ioctl
  (the function dispatches on it: ``case GGML_OP_ADD:`` in a backend's compute function, as a
  Python registry keyed by an enum member does), or a use (assigned, initialised from or
  passed: ``result->op = GGML_OP_ADD``, what a Python reference to an enum member is).
- A **slot** is a function-pointer field ``Struct::field``. A ``bind`` (designated or
  positional initializer) makes the function an implementation of the slot; a call through a
  member (``ops->submit(…)``, ``backend->iface.graph_compute(…)``) calls the slot when exactly
  one struct in the repository has a function-pointer field of that name.
- An **override** is a C++ method of a class whose (transitive) base defines a method of the
  same name (:mod:`mapper.ingest.overrides`).

The records and the edge each kind becomes are in :mod:`mapper.ingest.binding_kinds`.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable

from mapper.graph import MapGraph
from mapper.ingest.binding_kinds import EDGES, Binding, BindingKind
from mapper.ingest.code import ParsedFile
from mapper.ingest.overrides import cpp_inheritance
from mapper.ingest.resolve import Resolver
from mapper.model import Language, Provenance, Reference, Symbol, SymbolKind

_NAME = re.compile(r"[A-Z_][A-Z0-9_]*")
_ARG_STRUCT = re.compile(r",\s*(?:(?:struct|union)\s+)?(\w+)\s*\)\s*$")
_NOT_ALIASES = frozenset({"DRM_COMMAND_BASE", "DRM_IOCTL_BASE"})


def add_bindings(graph: MapGraph, resolver: Resolver, parsed: Iterable[ParsedFile]) -> int:
    """Add the edge of each resolved binding, every location kept as evidence; the count of
    new edges. The ``binding`` attribute of an edge says which kind of binding made it."""
    added = 0
    for b in resolve(parsed, resolver):
        kind, confidence, evidence = EDGES[b.kind]
        prov = Provenance.TREE_SITTER if confidence >= 0.9 else Provenance.INFERRED
        where = b.location
        added += graph.link(
            b.source,
            b.target,
            kind,
            prov,
            confidence,
            where.path,
            where.line,
            key=f"{kind.value}:{b.kind.value}",
            extra=(("binding", b.kind.value), ("name", b.name)),
            evidence=evidence,
            detail=f"{b.kind.value} {b.name}",
        )
    return added


def arg_struct(value: str | None) -> str | None:
    """The argument struct of an ioctl number's definition (its last macro argument)."""
    if not value:
        return None
    found = _ARG_STRUCT.search(value)
    return found.group(1) if found else None


def resolve(parsed: Iterable[ParsedFile], resolver: Resolver) -> list[Binding]:
    """Every binding the facts show, sorted by location then kind."""
    files = list(parsed)
    index = _Index(files, resolver)
    out: list[Binding] = []
    for pf in files:
        out.extend(index.file_bindings(pf))
    out.extend(index.mirrors())
    out.extend(index.arg_structs())
    out.extend(cpp_inheritance(files))
    out.extend(_routes(out))
    return sorted(set(out), key=lambda b: (b.location.path, b.location.line or 0, b.kind, b.target))


class _Index:
    def __init__(self, files: list[ParsedFile], resolver: Resolver) -> None:
        self.resolver = resolver
        self.ioctls: dict[str, Symbol] = {}  # name → canonical definition (C first)
        self.py_ioctls: dict[str, list[Symbol]] = defaultdict(list)
        self.slots: dict[str, list[Symbol]] = defaultdict(list)  # field name → slot symbols
        self.positional: dict[tuple[str, int], Symbol] = {}
        self.methods: set[str] = set()  # names of the C++ methods the repository defines
        for pf in files:
            for sym in pf.symbols:
                if sym.kind is SymbolKind.METHOD and sym.language is not Language.PYTHON:
                    self.methods.add(sym.qualname.rpartition("::")[2])
                if sym.kind is SymbolKind.IOCTL:
                    name = sym.qualname.rpartition(".")[2]
                    if sym.language is Language.PYTHON:
                        self.py_ioctls[name].append(sym)
                    else:
                        self.ioctls.setdefault(name, sym)
                elif sym.kind is SymbolKind.FIELD and sym.language is not Language.PYTHON:
                    owner, _, field = sym.qualname.rpartition("::")
                    self.slots[field].append(sym)
                    if sym.value and sym.value.startswith("#"):
                        self.positional[(owner, int(sym.value[1:]))] = sym
        for name, syms in self.py_ioctls.items():  # a C definition wins over a mirror
            self.ioctls.setdefault(name, syms[0])
        self.aliases = self._aliases()

    def _aliases(self) -> dict[str, str]:
        """Request-number macro → the one ioctl built from it."""
        seen: dict[str, set[str]] = defaultdict(set)
        for name, sym in self.ioctls.items():
            if sym.language is Language.PYTHON or not sym.value:
                continue
            head = sym.value.split("(", 1)
            for ident in _NAME.findall(head[1] if len(head) == 2 else ""):
                if ident not in _NOT_ALIASES and ident != name and ident not in self.ioctls:
                    seen[ident].add(name)
        return {alias: next(iter(names)) for alias, names in seen.items() if len(names) == 1}

    def ioctl(self, name: str) -> Symbol | None:
        sym = self.ioctls.get(name)
        if sym is None and name in self.aliases:
            sym = self.ioctls.get(self.aliases[name])
        return sym

    def file_bindings(self, pf: ParsedFile) -> Iterable[Binding]:
        python = pf.language is Language.PYTHON
        prefix = "symbol:" if python else f"symbol:c:{pf.path}:"
        pf_scopes = {s.qualname for s in pf.symbols}
        for ref in pf.references:
            if ref.scope is None:
                continue
            if python:
                if ref.kind == "call":
                    yield from self._python_use(pf, ref, prefix)
                elif ref.kind == "use" and (sym := self.ioctl(ref.target)) is not None:
                    src = prefix + ref.scope
                    yield Binding(BindingKind.IOCTL_USE, src, sym.node_id, ref.location, ref.target)
                continue
            kind = ref.kind
            if kind == "use" or kind == "dispatch":
                sym = self.ioctl(ref.target)
                if sym is None:
                    if ref.scope in pf_scopes:
                        yield from self._enumerator(pf, ref, prefix)
                    continue
                bkind = BindingKind.IOCTL_USE if kind == "use" else BindingKind.IOCTL_DISPATCH
                src = prefix + ref.scope
                if kind == "dispatch" and ref.scope not in pf_scopes:
                    # a table entry: its handler, else (defined elsewhere) the table's file
                    handler = self._function(ref.scope, pf.path)
                    src = handler.node_id if handler is not None else f"file:{pf.path}"
                yield Binding(bkind, src, sym.node_id, ref.location, ref.target)
            elif kind == "bind":
                yield from self._bind(pf, ref)
            elif kind == "call" and ("->" in ref.target or "." in ref.target):
                yield from self._slot_call(ref, prefix)

    def _enumerator(self, pf: ParsedFile, ref: Reference, prefix: str) -> Iterable[Binding]:
        """A function's ``case NAME:`` or use of NAME, NAME an enumerator: the one of that
        name (this file's where several files define it; none where that leaves several)."""
        found = [s for s in self.resolver.c.get(ref.target, []) if s.kind is SymbolKind.ENUMERATOR]
        same = [s for s in found if s.location.path == pf.path]
        if len(same or found) == 1:
            kind = BindingKind.ENUM_CASE if ref.kind == "dispatch" else BindingKind.ENUM_USE
            target = (same or found)[0].node_id
            yield Binding(kind, prefix + (ref.scope or ""), target, ref.location, ref.target)

    def _python_use(self, pf: ParsedFile, ref: Reference, prefix: str) -> Iterable[Binding]:
        found = self.resolver.call(pf, ref)
        if found is None or found[0].kind is not SymbolKind.IOCTL:
            return
        name = found[0].qualname.rpartition(".")[2]
        canonical = self.ioctls.get(name, found[0])
        yield Binding(
            BindingKind.IOCTL_USE, prefix + (ref.scope or ""), canonical.node_id, ref.location, name
        )

    def _function(self, name: str, prefer: str) -> Symbol | None:
        found = self.resolver.c_symbol(name, prefer=prefer)
        return found[0] if found is not None else None

    def _bind(self, pf: ParsedFile, ref: Reference) -> Iterable[Binding]:
        owner, _, field = (ref.scope or "").rpartition("::")
        if field.startswith("#"):
            slot = self.positional.get((owner, int(field[1:])))
        else:
            slot = next((s for s in self.slots.get(field, []) if s.qualname == ref.scope), None)
        function = self._function(ref.target, pf.path)
        if slot is None or function is None or function.kind is SymbolKind.FIELD:
            return
        name = slot.qualname
        yield Binding(BindingKind.SLOT_BIND, function.node_id, slot.node_id, ref.location, name)

    def _slot_call(self, ref: Reference, prefix: str) -> Iterable[Binding]:
        """A call through the one function-pointer field of its name. In C every member call
        is one. In C++ a member of a plain object (``task.get()``) is a method, and so is a
        member through a pointer whose name a C++ method of the repository has
        (``server->graph_compute()``); a member reached through another
        (``backend->iface.graph_compute(…)``, the ops table a struct holds) is a slot."""
        parts = re.split(r"->|\.", ref.target)
        method = not ref.target.endswith(f"->{parts[-1]}") or parts[-1] in self.methods
        if ref.language is not Language.C and len(parts) == 2 and method:  # C++, one deep
            return
        slots = self.slots.get(parts[-1], [])
        if len(slots) == 1:
            yield Binding(
                BindingKind.SLOT_CALL,
                prefix + (ref.scope or ""),
                slots[0].node_id,
                ref.location,
                ref.target,
            )

    def mirrors(self) -> Iterable[Binding]:
        for name, syms in self.py_ioctls.items():
            canonical = self.ioctls[name]
            if canonical.language is Language.PYTHON:
                continue
            for sym in syms:
                yield Binding(
                    BindingKind.IOCTL_MIRROR, sym.node_id, canonical.node_id, sym.location, name
                )

    def arg_structs(self) -> Iterable[Binding]:
        """Each ioctl definition → the struct its number is built with (C struct in the
        repository; for a Python mirror, the ``struct_<name>`` class of its module)."""
        for syms in [*([s] for s in self.ioctls.values()), *self.py_ioctls.values()]:
            for sym in syms:
                name = arg_struct(sym.value)
                if name is None:
                    continue
                if sym.language is Language.PYTHON:
                    module = sym.qualname.rpartition(".")[0]
                    target: Symbol | None = self.resolver.py.get(f"{module}.{name}")
                else:
                    structs = [
                        s
                        for s in self.resolver.c.get(name, [])
                        if s.kind in (SymbolKind.STRUCT, SymbolKind.CLASS)
                    ]
                    same = [s for s in structs if s.location.path == sym.location.path]
                    ranked = same or structs
                    target = ranked[0] if ranked else None
                if target is not None:
                    yield Binding(
                        BindingKind.IOCTL_ARG, sym.node_id, target.node_id, sym.location, name
                    )


def _routes(found: list[Binding]) -> list[Binding]:
    """Through an ioctl or a slot: each use → each function that provides it, at the use."""
    providers: dict[str, set[str]] = defaultdict(set)
    for b in found:
        provider = b.kind is BindingKind.IOCTL_DISPATCH or b.kind is BindingKind.SLOT_BIND
        if provider and b.source.startswith("symbol:"):  # a dispatching file is no callee
            providers[b.target].add(b.source)
    routes = []
    for b in found:
        if b.kind is BindingKind.IOCTL_USE or b.kind is BindingKind.SLOT_CALL:
            kind = (
                BindingKind.IOCTL_ROUTE
                if b.kind is BindingKind.IOCTL_USE
                else BindingKind.SLOT_ROUTE
            )
            for target in sorted(providers.get(b.target, ())):
                routes.append(Binding(kind, b.source, target, b.location, b.name))
    return routes
