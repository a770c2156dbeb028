"""Python symbol extraction from a tree-sitter tree (driven by ``queries/python.scm``)."""

from __future__ import annotations

import ast
import operator
import re
from bisect import bisect_right
from collections.abc import Callable

import tree_sitter as ts

from mapper.ingest import _python_refs
from mapper.ingest._python_imports import imports_of
from mapper.ingest.treesitter import captures, text
from mapper.model import Language, Location, Param, Reference, Signature, Symbol, SymbolKind

# NAME = _IOWR(…) / AMDKFD_IOWR(…): an ioctl number mirrored in Python (ctypes autogen)
_IOCTL_VALUE = re.compile(r"^\w*_IO(?:R|W|WR)?\(")

_DEFS = ("class_definition", "function_definition")
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
    caps = captures(Language.PYTHON, root)
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
        name = text(node.child_by_field_name("left"))
        owner = scope_at(node.start_byte) or module
        declared = _type_name(text(node.child_by_field_name("type")))
        if declared and owner != module:  # a class-level annotation: NAME: Type
            attributes.append((owner, name, declared))
        value = text(node.child_by_field_name("right"))[:_MAX_VALUE] or None
        qual = f"{owner}.{name}" if owner else name
        if qual not in symbols:
            symbols[qual] = Symbol(
                qual,
                SymbolKind.IOCTL if value and _IOCTL_VALUE.match(value) else SymbolKind.CONSTANT,
                Language.PYTHON,
                where(node.start_point[0]),
                value=value,
                end_line=node.end_point[0] + 1,
            )
    refs: list[tuple[int, Reference]] = []  # ((start byte << 32) | end byte, reference)
    append = refs.append
    source, base = root.text or b"", root.start_byte  # the root may start after blank lines
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
    if detail:
        definition_at = {r[0]: r[2] for r in ranges}
        extra = [
            *_python_refs.names(
                sorted(caps.get("reference.name", ()), key=_START), scope_at, where
            ),
            *_python_refs.decorators(caps.get("reference.decorator", ()), definition_at, where),
            *_python_refs.registrations(caps.get("reference.call", ()), scope_at, where),
        ]
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


def _type_name(written: str) -> str | None:
    """The class a simple annotation names: ``Dev``, ``mod.Dev``, ``Dev | None``,
    ``Optional[Dev]``, ``"Dev"``; None for anything else (generics, unions of classes)."""
    t = written.strip().strip("\"'")
    if t.startswith("Optional[") and t.endswith("]"):
        t = t[9:-1]
    parts = [p.strip() for p in t.split("|") if p.strip() != "None"]
    if len(parts) != 1 or not parts[0].replace(".", "").replace("_", "").isalnum():
        return None
    return parts[0]


def _self_attribute(node: ts.Node, module: str) -> tuple[str, str, str] | None:
    """``self.NAME = value`` in a method → (class qualname, NAME, type as written)."""
    left = node.child_by_field_name("left")
    target = left.child_by_field_name("object") if left is not None else None
    if target is None or text(target) != "self":
        return None
    method = _enclosing_def(node)
    owner = _enclosing_def(method) if method is not None else None
    if method is None or owner is None or owner.type != "class_definition":
        return None
    name = text(left.child_by_field_name("attribute")) if left is not None else ""
    declared = _type_name(text(node.child_by_field_name("type")))
    right = node.child_by_field_name("right")
    if declared is None and right is not None:
        if right.type == "identifier":  # self.x = param: the parameter's annotation
            declared = _param_type(method, text(right))
        elif right.type == "call":  # self.x = Type(...)
            callee = text(right.child_by_field_name("function"))
            if callee.rpartition(".")[2][:1].isupper():
                declared = callee
    if not declared:
        return None
    return _scope(method, module), name, declared  # the scope around a method: its class


def _param_type(method: ts.Node, name: str) -> str | None:
    params = method.child_by_field_name("parameters")
    for param in params.named_children if params is not None else []:
        pname = param.child_by_field_name("name")
        if pname is None and param.named_child_count:
            pname = param.named_child(0)
        if pname is not None and text(pname) == name:
            return _type_name(text(param.child_by_field_name("type")))
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


def _definition(
    path: str,
    node: ts.Node,
    owner: str,
    outer: tuple[int, str, bool] | None,
    is_class: bool,
    where: Callable[[int], Location],
    detail: bool = True,
) -> Symbol:
    """The symbol of a class or function definition; ``owner`` is the qualname of its scope
    (the module at top level), ``outer`` the enclosing definition (end byte, qualname, is a
    class) if any."""
    name = text(node.child_by_field_name("name"))
    qual = f"{owner}.{name}" if owner else name
    loc = where(node.start_point[0])
    doc = _docstring(node) if detail else None
    end = node.end_point[0] + 1
    if is_class:
        return Symbol(qual, SymbolKind.CLASS, Language.PYTHON, loc, end_line=end, doc=doc)
    is_method = outer is not None and outer[2]
    kind = SymbolKind.METHOD if is_method else SymbolKind.FUNCTION
    sig = _signature(node, drop_self=is_method and not _is_static(node)) if detail else None
    return Symbol(qual, kind, Language.PYTHON, loc, sig, end_line=end, doc=doc)


def _is_static(node: ts.Node) -> bool:
    parent = node.parent
    if parent is None or parent.type != "decorated_definition":
        return False
    return any(
        c.type == "decorator" and text(c).strip() == "@staticmethod" for c in parent.children
    )


def _signature(node: ts.Node, *, drop_self: bool) -> Signature:
    params: list[Param] = []
    kind = "positional"
    plist = node.child_by_field_name("parameters")
    for child in plist.named_children if plist is not None else []:
        t = child.type
        if t == "keyword_separator":
            kind = "keyword_only"
            continue
        if t in ("positional_separator", "comment"):
            continue
        name, ptype, default, pkind = _param(child, kind)
        if pkind == "var_positional":
            kind = "keyword_only"
        if name:
            params.append(Param(name, ptype, default, pkind))
    if drop_self and params and params[0].name in ("self", "cls"):
        params = params[1:]
    returns = text(node.child_by_field_name("return_type")) or None
    is_async = any(c.type == "async" for c in node.children)
    return Signature(tuple(params), returns, is_async)


def _param(node: ts.Node, kind: str) -> tuple[str, str | None, str | None, str]:
    t = node.type
    if t == "identifier":
        return text(node), None, None, kind
    if t == "list_splat_pattern":
        return _first_named_text(node), None, None, "var_positional"
    if t == "dictionary_splat_pattern":
        return _first_named_text(node), None, None, "var_keyword"
    ptype = text(node.child_by_field_name("type")) or None
    default = text(node.child_by_field_name("value")) or None
    name_node = node.child_by_field_name("name")
    if name_node is None:  # typed_parameter: the name is the first named child
        inner = node.named_child(0) if node.named_child_count else None
        if inner is not None and inner.type in ("list_splat_pattern", "dictionary_splat_pattern"):
            name, _, _, pkind = _param(inner, kind)
            return name, ptype, None, pkind
        return text(inner), ptype, default, kind
    return text(name_node), ptype, default, kind


def _first_named_text(node: ts.Node) -> str:
    """The text of the first named child ("" if none), without building them all."""
    return text(node.named_child(0)) if node.named_child_count else ""


def _docstring(node: ts.Node) -> str | None:
    body = node.child_by_field_name("body")
    if body is None or not body.named_child_count:
        return None
    first = body.named_child(0)  # not named_children, which builds every statement's node
    if first is None or first.type != "expression_statement" or not first.named_child_count:
        return None
    string = first.named_child(0)
    if string is None or string.type != "string":
        return None
    raw = text(string)
    body_text = raw.lstrip("rRuUbBfF")
    quote = body_text[:3] if body_text[:3] in ('"""', "'''") else body_text[:1]
    if "\\" not in raw and body_text.endswith(quote) and len(body_text) >= 2 * len(quote):
        value = body_text[len(quote) : len(body_text) - len(quote)]  # the common, plain case
    else:
        try:
            value = str(ast.literal_eval(raw))
        except (ValueError, SyntaxError):
            value = raw.strip("\"'")
    return value.strip()[:1000] or None
