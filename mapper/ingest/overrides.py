"""C++ inheritance in driver code: a class's bases and the base methods its methods override.

Input: ``inherit`` references (a class declaration's base names as written) and the C/C++
class, struct and method symbols of the parsed files. Output: ``INHERIT`` and ``OVERRIDE``
:class:`~mapper.ingest.binding_kinds.Binding` records. Pure and deterministic.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping

from mapper.ingest.binding_kinds import Binding, BindingKind
from mapper.ingest.code import ParsedFile
from mapper.model import Language, Symbol, SymbolKind


def cpp_inheritance(files: list[ParsedFile]) -> Iterable[Binding]:
    """Each C++ class → the base classes its declaration names (resolved through the
    enclosing namespaces), and each method → the method of the same name it overrides in
    its nearest (breadth-first) base."""
    methods: dict[str, dict[str, Symbol]] = defaultdict(dict)  # class → name → method
    classes: dict[str, list[str]] = defaultdict(list)  # last name → class qualnames
    class_syms: dict[str, Symbol] = {}
    for pf in files:
        for sym in pf.symbols:
            if sym.language is Language.PYTHON or sym.language is Language.PROTO:
                continue
            if sym.kind is SymbolKind.METHOD and "::" in sym.qualname:
                owner, _, name = sym.qualname.rpartition("::")
                methods[owner].setdefault(name, sym)
            elif sym.kind in (SymbolKind.CLASS, SymbolKind.STRUCT):
                classes[sym.qualname.rpartition("::")[2]].append(sym.qualname)
                class_syms.setdefault(sym.qualname, sym)
    bases: dict[str, list[str]] = defaultdict(list)
    for pf in files:
        for ref in pf.references:
            if ref.kind == "inherit" and ref.scope:
                base = _base_class(ref.scope, ref.target, classes)
                if base is not None:
                    bases[ref.scope].append(base)
                    if ref.scope in class_syms:
                        yield Binding(
                            BindingKind.INHERIT,
                            class_syms[ref.scope].node_id,
                            class_syms[base].node_id,
                            ref.location,
                            ref.target,
                        )
    for derived in sorted(bases):
        for name, method in sorted(methods.get(derived, {}).items()):
            base_method = _inherited(derived, name, bases, methods)
            if base_method is not None:
                yield Binding(
                    BindingKind.OVERRIDE,
                    method.node_id,
                    base_method.node_id,
                    method.location,
                    method.qualname,
                )


def _base_class(derived: str, written: str, classes: Mapping[str, list[str]]) -> str | None:
    """The class a base name written in ``derived``'s declaration refers to."""
    candidates = classes.get(written.rpartition("::")[2], [])
    if written in candidates:
        return written
    outer = derived.split("::")[:-1]
    for cut in range(len(outer), -1, -1):
        full = "::".join([*outer[:cut], written])
        if full in candidates and full != derived:
            return full
    suffix = [c for c in candidates if c.endswith("::" + written) and c != derived]
    return suffix[0] if len(suffix) == 1 else None


def _inherited(
    cls: str,
    name: str,
    bases: Mapping[str, list[str]],
    methods: Mapping[str, Mapping[str, Symbol]],
) -> Symbol | None:
    queue, seen = list(bases.get(cls, [])), {cls}
    while queue:
        current = queue.pop(0)
        if current in seen:
            continue
        seen.add(current)
        found = methods.get(current, {}).get(name)
        if found is not None:
            return found
        queue.extend(bases.get(current, []))
    return None
