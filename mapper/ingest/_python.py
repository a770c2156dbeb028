"""Python symbol extraction from a tree-sitter tree (driven by ``queries/python.scm``)."""

from __future__ import annotations

import operator
import re
from bisect import bisect_right

import tree_sitter as ts

from mapper.ingest import _python_grpc, _python_refs
from mapper.ingest._python_defs import annotation_class
from mapper.ingest._python_defs import definition as _definition
from mapper.ingest._python_imports import imports_of
from mapper.ingest.treesitter import captures, text
from mapper.model import Language, Location, Reference, Symbol, SymbolKind

# NAME = _IOWR(…) / AMDKFD_IOWR(…): an ioctl number mirrored in Python (ctypes autogen)
_IOCTL_VALUE = re.compile(r"^\w*_IO(?:R|W|WR)?\(")

_DEFS = ("class_definition", "function_definition")
# captures only the detailed extraction reads (name uses, local aliases): a test file's query
# runs without them (decorators stay: what a test decorates with, it exercises)
_DETAIL_ONLY = frozenset({"reference.name", "reference.alias"})
_MAX_VALUE = 200


def extract(
    path: str, root: ts.Node, module: str, *, detail: bool = True
) -> tuple[
    tuple[Symbol, ...],
    tuple[Reference, ...],
    tuple[tuple[str, str], ...],
    tuple[tuple[str, tuple[str, ...]], ...],
    tuple[tuple[str, str, str], ...],
]:
    """Symbols, references, import bindings, class bases (as written) and attribute types
    (class qualname, attribute, type as written) of one module.

    One query pass; every capture list is put in document order first (the query cursor
    returns them in an order that may vary between runs, and first-wins rules depend on it).
    Scopes come from the byte ranges of the definitions, not from walking parents. Without
    ``detail`` functions carry no signature, definitions no docstring, and only calls made
    inside a definition are kept (no import references; the import bindings stay).
    """
    caps = captures(Language.PYTHON, root, frozenset() if detail else _DETAIL_ONLY)
    symbols: dict[str, Symbol] = {}
    ranges: list[tuple[int, int, str]] = []  # (start byte, end byte, qualname) of definitions
    locations: dict[int, Location] = {}  # one Location per line

    def where(row: int) -> Location:
        loc = locations.get(row)
        if loc is None:
            loc = locations[row] = Location(path, row + 1)
        return loc

    defs = caps.get("definition.class", []) + caps.get("definition.function", [])
    defs.sort(key=_START)
    bases: list[tuple[str, tuple[str, ...]]] = []
    open_defs: list[tuple[int, str, bool]] = []  # enclosing (end byte, qualname, is a class)
    for node in defs:
        start = node.start_byte
        while open_defs and open_defs[-1][0] <= start:
            open_defs.pop()
        outer = open_defs[-1] if open_defs else None
        is_class = node.type == "class_definition"
        owner = outer[1] if outer else module
        sym = _definition(path, node, owner, outer, is_class, where, detail)
        symbols.setdefault(sym.qualname, sym)
        ranges.append((start, node.end_byte, sym.qualname))
        open_defs.append((node.end_byte, sym.qualname, is_class))
        if is_class:
            written = _bases(node)
            if written:
                bases.append((sym.qualname, written))
    starts = [r[0] for r in ranges]
    ends = [r[1] for r in ranges]
    names = [r[2] for r in ranges]

    def scope_at(byte: int) -> str | None:
        """The innermost definition around ``byte``."""
        i = bisect_right(starts, byte) - 1
        while i >= 0 and ends[i] < byte:
            i -= 1
        return names[i] if i >= 0 else None

    attributes: list[tuple[str, str, str]] = []
    for node in sorted(caps.get("definition.constant", ()), key=_START):
        owner = scope_at(node.start_byte) or module
        declared = annotation_class(text(node.child_by_field_name("type")))
        for name, right in _assigned(node):
            if declared and owner != module:  # a class-level annotation: NAME: Type
                attributes.append((owner, name, declared))
            shown = right[:_MAX_VALUE] or None
            qual = f"{owner}.{name}" if owner else name
            if qual not in symbols:
                kind = SymbolKind.IOCTL if shown and _IOCTL_VALUE.match(shown) else None
                symbols[qual] = Symbol(
                    qual,
                    kind or SymbolKind.CONSTANT,
                    Language.PYTHON,
                    where(node.start_point[0]),
                    value=shown,
                    end_line=node.end_point[0] + 1,
                )
    refs: list[tuple[int, Reference]] = []  # ((start byte << 32) | end byte, reference)
    append = refs.append
    source, base = root.text or b"", root.start_byte  # the root may start after blank lines
    calls: list[tuple[ts.Node, str]] = []  # (callee node, callee as written without spaces)
    for node in caps.get("reference.call", ()):
        start = node.start_byte
        i = bisect_right(starts, start) - 1  # the enclosing definition, inline (hot loop)
        while i >= 0 and ends[i] < start:
            i -= 1
        scope = names[i] if i >= 0 else None
        if scope is None and not detail:
            continue
        end = node.end_byte
        raw = source[start - base : end - base]  # what node.text gives, sliced here
        callee = "".join(raw.decode("utf-8", errors="replace").split()) if raw else ""
        calls.append((node, callee))
        row = node.start_point[0]
        loc = locations.get(row)
        if loc is None:
            loc = locations[row] = Location(path, row + 1)
        append(((start << 32) | end, Reference("call", callee, loc, scope)))
    imports: list[tuple[str, str]] = []
    for node in sorted(caps.get("reference.import", ()), key=_START):
        loc = where(node.start_point[0])
        start = node.start_byte
        scope = scope_at(start)
        for local, bound, target in imports_of(node, module, path):
            imports.append((local, bound))
            if detail:
                refs.append(
                    ((start << 32) | node.end_byte, Reference("import", target, loc, scope))
                )
    for node in sorted(caps.get("reference.attribute", ()), key=_START):
        found = _self_attribute(node, module)
        if found is not None:
            attributes.append(found)
    for node in sorted(caps.get("reference.local", ()), key=_START):
        typed = _local_type(node)
        if typed is not None:
            attributes.append((scope_at(node.start_byte) or module, *typed))
    for node in sorted(caps.get("reference.returned", ()), key=_START):
        scope = scope_at(node.start_byte)
        if scope is not None:  # what the function returns: its name "return" (no local's)
            attributes.append((scope, "return", text(node.child_by_field_name("function"))))
    definition_at = {r[0]: r[2] for r in ranges}
    decorated = _python_refs.decorators(caps.get("reference.decorator", ()), definition_at, where)
    if not detail:  # a test file: the decorators its tests apply are what they exercise too
        refs += decorated
    if detail:
        extra = [
            *_python_refs.names(
                caps.get("reference.name", ()),
                source,
                base,
                scope_at,
                where,
                _python_refs.aliases(caps.get("reference.alias", ()), scope_at),
            ),
            *decorated,
            *_python_refs.registrations(calls, scope_at, where),
            *_python_grpc.message_fields(calls, imports, scope_at, where),
            *_python_refs.ioctl_uses(calls, scope_at, where),
        ]
        static = {r.scope for _, r in extra if r.kind == "decorator" and r.target == "staticmethod"}
        requests = _python_grpc.servicer_requests(
            module, list(symbols.values()), bases, {s for s in static if s}
        )
        if requests:
            attrs = caps.get("reference.name", ())
            extra += _python_grpc.request_reads(attrs, requests, scope_at, where)
        refs += extra
    refs.sort(key=_FIRST)  # by (start byte, end byte), packed in one int; stable
    return (
        tuple(symbols.values()),
        tuple([r[1] for r in refs]),
        tuple(imports),
        tuple(bases),
        tuple(dict.fromkeys(attributes)),
    )


_START = operator.attrgetter("start_byte")
_FIRST = operator.itemgetter(0)


def _self_attribute(node: ts.Node, module: str) -> tuple[str, str, str] | None:
    """``self.NAME = value`` in a method → (class qualname, NAME, type as written or "")."""
    left = node.child_by_field_name("left")
    target = left.child_by_field_name("object") if left is not None else None
    if target is None or text(target) != "self":
        return None
    method = _enclosing_def(node)
    owner = _enclosing_def(method) if method is not None else None
    if method is None or owner is None or owner.type != "class_definition":
        return None
    name = text(left.child_by_field_name("attribute")) if left is not None else ""
    declared = annotation_class(text(node.child_by_field_name("type")))
    right = node.child_by_field_name("right")
    if declared is None and right is not None:
        if right.type == "identifier":  # self.x = param: the parameter's annotation
            declared = _param_type(method, text(right))
        elif right.type == "call":  # self.x = Type(...)
            callee = text(right.child_by_field_name("function"))
            if callee.rpartition(".")[2][:1].isupper():
                declared = callee
    # the scope around a method: its class; "" when the type cannot be told
    return _scope(method, module), name, declared or ""


def _local_type(node: ts.Node) -> tuple[str, str] | None:
    """``x: Type = …`` / ``x = Callee(…)`` → (x, the type or the callee as written): the callee
    is a class or a factory whose return annotation names one (the resolver tells which)."""
    name = text(node.child_by_field_name("left"))
    declared = annotation_class(text(node.child_by_field_name("type")))
    right = node.child_by_field_name("right")
    if declared is None and right is not None and right.type == "call":
        declared = text(right.child_by_field_name("function"))
    return (name, declared) if declared else None


def _param_type(method: ts.Node, name: str) -> str | None:
    params = method.child_by_field_name("parameters")
    for param in params.named_children if params is not None else []:
        pname = param.child_by_field_name("name")
        if pname is None and param.named_child_count:
            pname = param.named_child(0)
        if pname is not None and text(pname) == name:
            return annotation_class(text(param.child_by_field_name("type")))
    return None


def _bases(node: ts.Node) -> tuple[str, ...]:
    """Base classes as written (``Base``, ``abc.ABC``); keywords such as metaclass= skipped."""
    supers = node.child_by_field_name("superclasses")
    if supers is None:
        return ()
    return tuple(text(c) for c in supers.named_children if c.type in ("identifier", "attribute"))


def _scope(node: ts.Node, module: str) -> str:
    """Qualname of the innermost class/function enclosing ``node`` (the module if none)."""
    names: list[str] = []
    parent = node.parent
    while parent is not None:
        if parent.type in _DEFS:
            names.append(text(parent.child_by_field_name("name")))
        parent = parent.parent
    return ".".join([module, *reversed(names)]) if module else ".".join(reversed(names))


def _enclosing_def(node: ts.Node) -> ts.Node | None:
    parent = node.parent
    while parent is not None and parent.type not in _DEFS:
        parent = parent.parent
    return parent


def _assigned(node: ts.Node) -> list[tuple[str, str]]:
    """(name, value as written) of each name an assignment binds: ``NAME = value``, or each of
    ``A, B = x, y`` and ``(A, B) = x, y`` (its own value when the right side lists one per
    name, else the whole right side; a starred name is left out)."""
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    if left is None or left.type not in ("pattern_list", "tuple_pattern"):
        return [(text(left), text(right))]
    names = [text(c) for c in left.named_children if c.type == "identifier"]
    values = right.named_children if right is not None and right.type == "expression_list" else []
    if len(values) == len(left.named_children) == len(names):
        return [(n, text(v)) for n, v in zip(names, values, strict=True)]
    return [(n, text(right)) for n in names]
