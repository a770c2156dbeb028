"""C, C++ and CUDA symbol extraction from a tree-sitter tree (``queries/{c,cpp,cuda}.scm``)."""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable

import tree_sitter as ts

from mapper.ingest import _cbindings
from mapper.ingest.treesitter import end_line, line, matches, text
from mapper.model import Language, Location, Param, Reference, Signature, Symbol, SymbolKind

# _IO/_IOR/_IOW/_IOWR and wrappers named so (DRM_IOWR, AMDKFD_IOWR)
_IOCTL = re.compile(r"^\s*\w*_IO(R|W|WR)?\s*\(")
_INT = re.compile(r"^\s*\(?\s*(-?(?:0[xX][0-9a-fA-F]+|0[bB][01]+|\d+))[uUlL]*\s*\)?\s*$")
_TEMPLATE_ARGS = re.compile(r"<[^<>]*>")
_SCOPES = ("namespace_definition", "class_specifier", "struct_specifier")
_WRAPPERS = ("pointer_declarator", "reference_declarator", "parenthesized_declarator")
_DEF_KINDS = {
    "definition.function": SymbolKind.FUNCTION,
    "definition.class": SymbolKind.CLASS,
    "definition.struct": SymbolKind.STRUCT,
    "definition.enum": SymbolKind.ENUM,
    "definition.enumerator": SymbolKind.ENUMERATOR,
    "definition.macro": SymbolKind.MACRO,
}


def extract(
    path: str, root: ts.Node, language: Language
) -> tuple[tuple[Symbol, ...], tuple[Reference, ...]]:
    _VALUES.clear()  # enumerator values are memoised per list of this tree only
    symbols: dict[str, Symbol] = {}
    refs: list[Reference] = []
    cpp = language is not Language.C
    found = list(matches(language, root))
    scope_at = _scopes(found, cpp)
    for caps in found:
        def_key = next((k for k in caps if k in _DEF_KINDS), None)
        if def_key is not None:
            node, name_node = caps[def_key][0], caps["name"][0]
            sym = _definition(path, node, name_node, _DEF_KINDS[def_key], language, cpp)
            if sym is None:
                continue
            old = symbols.get(sym.qualname)
            # a definition with a body wins over an earlier prototype of the same name
            if (
                old is None
                or (node.type == "function_definition" and old.kind is not sym.kind)
                or (node.type == "function_definition" and _is_prototype(old))
            ):
                symbols[sym.qualname] = sym
        elif "reference.call" in caps:
            node = caps["reference.call"][0]
            target = _callee(caps["name"][0])
            scope = scope_at(node.start_byte)
            refs.append(Reference("call", target, Location(path, line(node)), scope, language))
        elif "reference.use" in caps or "reference.dispatch" in caps:
            name = caps["name"][0]
            scope = scope_at(name.start_byte)
            make = _cbindings.use if "reference.use" in caps else _cbindings.dispatch
            refs.append(make(path, name, scope, language))
        elif "reference.table" in caps:
            table = caps["reference.table"][0]
            refs.extend(_cbindings.table(path, table, caps["name"][0], language))
        elif "definition.slot" in caps:
            slot = _cbindings.slot(path, caps["definition.slot"][0], caps["name"][0], language)
            if slot is not None:
                symbols.setdefault(slot.qualname, slot)
        elif "reference.inherit" in caps:
            cls = caps["reference.inherit"][0]
            qual = "::".join([*_prefix(cls, cpp), text(caps["name"][0])])
            refs.extend(_cbindings.inherit(path, cls, qual, caps["bases"][0], language))
        elif "reference.include" in caps:
            node = caps["reference.include"][0]
            target = text(caps["name"][0]).strip().strip('"<>')
            refs.append(Reference("include", target, Location(path, line(node)), None, language))
    return tuple(symbols.values()), tuple(refs)


def _is_prototype(sym: Symbol) -> bool:
    return sym.end_line == sym.location.line and sym.kind in (
        SymbolKind.FUNCTION,
        SymbolKind.METHOD,
    )


def _prefix(node: ts.Node, cpp: bool) -> list[str]:
    if not cpp:
        return []
    names: list[str] = []
    parent = node.parent
    while parent is not None:
        if parent.type in _SCOPES:
            name = parent.child_by_field_name("name")
            if name is not None:
                names.append(text(name))
        parent = parent.parent
    return list(reversed(names))


def _function_declarator(node: ts.Node) -> ts.Node | None:
    while node is not None and node.type in _WRAPPERS:
        inner = node.child_by_field_name("declarator")
        if inner is None:
            return None
        node = inner
    return node if node is not None and node.type == "function_declarator" else None


def _definition(
    path: str, node: ts.Node, name_node: ts.Node, kind: SymbolKind, lang: Language, cpp: bool
) -> Symbol | None:
    loc = Location(path, line(node))
    end = end_line(node)
    if kind is SymbolKind.FUNCTION:
        return _function(path, node, name_node, lang, cpp)
    name = text(name_node)
    prefix = _prefix(node, cpp)
    if kind is SymbolKind.MACRO:
        value_node = node.child_by_field_name("value")
        value = text(value_node).strip() or None
        if value is None and re.search(r"_(H|HPP|H_)$", name):
            return None  # include guard
        sig = None
        if node.type == "preproc_function_def":
            params = node.child_by_field_name("parameters")
            names = [text(p) for p in params.named_children] if params is not None else []
            sig = Signature(tuple(Param(n) for n in names))
        elif value is not None and (
            _IOCTL.match(value) or ("IOCTL" in name.upper() and _INT.match(value))
        ):
            kind = SymbolKind.IOCTL  # _IO*(...) or an IOCTL-named precomputed number
        return Symbol(name, kind, lang, loc, sig, value=value, end_line=end)
    if kind is SymbolKind.ENUMERATOR:
        enum = node.parent.parent if node.parent is not None else None
        if enum is not None and any(c.type == "class" for c in enum.children):
            enum_name = enum.child_by_field_name("name")
            prefix = [*_prefix(enum, cpp), text(enum_name)]
        qual = "::".join([*prefix, name])
        return Symbol(qual, kind, lang, loc, value=_enumerator_value(node), end_line=end)
    if node.type == "type_definition" or kind is SymbolKind.CLASS or cpp:
        qual = "::".join([*prefix, name])
    else:
        qual = name
    return Symbol(qual, kind, lang, loc, end_line=end)


_VALUES: dict[tuple[int, int], dict[int, str | None]] = {}


def _enumerator_value(node: ts.Node) -> str | None:
    """The written value, else the previous enumerator's integer value + 1 (0 for the first).

    Values are computed once per enumerator list (memoised for the list being read).
    """
    parent = node.parent
    if parent is None:
        return None
    key = (parent.id, parent.start_byte)
    if key not in _VALUES:
        _VALUES.clear()  # only the current list is ever needed
        values: dict[int, str | None] = {}
        last: int | None = -1
        for child in parent.named_children:
            if child.type != "enumerator":
                continue
            written = child.child_by_field_name("value")
            if written is not None:
                raw = text(written).strip()
                match = _INT.match(raw)
                last = int(match.group(1), 0) if match else None
                values[child.start_byte] = raw
            else:
                last = None if last is None else last + 1
                values[child.start_byte] = None if last is None else str(last)
        _VALUES[key] = values
    return _VALUES[key].get(node.start_byte)


def _function(
    path: str, node: ts.Node, name_node: ts.Node, lang: Language, cpp: bool
) -> Symbol | None:
    decl = _function_declarator(name_node)
    if decl is None:
        return None
    if (decl.child_by_field_name("declarator") or decl).type == "parenthesized_declarator":
        return None  # a function-pointer field: a slot (_cbindings.slot)
    if node.type == "declaration" and any(p.type == "compound_statement" for p in _ancestors(node)):
        return None  # a local prototype inside a function body
    ident = decl.child_by_field_name("declarator")
    name = text(ident)
    prefix = _prefix(node, cpp)
    in_class = any(p.type in ("class_specifier", "struct_specifier") for p in _ancestors(node))
    kind = SymbolKind.METHOD if cpp and (in_class or "::" in name) else SymbolKind.FUNCTION
    if lang is Language.CUDA and any(c.type == "__global__" for c in node.children):
        kind = SymbolKind.KERNEL
    returns = _type_text(node) + _stars(name_node, decl)
    sig = Signature(_params(decl.child_by_field_name("parameters")), returns or None)
    qual = "::".join([*prefix, name]) if cpp else name
    return Symbol(qual, kind, lang, Location(path, line(node)), sig, end_line=end_line(node))


def _ancestors(node: ts.Node) -> list[ts.Node]:
    out: list[ts.Node] = []
    parent = node.parent
    while parent is not None:
        out.append(parent)
        parent = parent.parent
    return out


def _type_text(node: ts.Node) -> str:
    quals = [text(c) for c in node.children if c.type == "type_qualifier"]
    return " ".join([*quals, text(node.child_by_field_name("type"))]).strip()


def _stars(outer: ts.Node, inner: ts.Node) -> str:
    """The ``*``/``&`` of the wrappers between a declarator and its inner declarator."""
    marks = ""
    node: ts.Node | None = outer
    while node is not None and node != inner:
        if node.type == "pointer_declarator":
            marks += "*"
        elif node.type == "reference_declarator":
            marks += "&"
        node = node.child_by_field_name("declarator")
    return marks


def _params(plist: ts.Node | None) -> tuple[Param, ...]:
    params: list[Param] = []
    for child in plist.named_children if plist is not None else []:
        if child.type == "variadic_parameter":
            params.append(Param("...", None, None, "var_positional"))
            continue
        if child.type not in ("parameter_declaration", "optional_parameter_declaration"):
            continue
        declarator = child.child_by_field_name("declarator")
        ptype = _type_text(child)
        if declarator is None:
            if ptype == "void":
                continue
            params.append(Param("", ptype))
            continue
        inner = declarator
        while inner.child_by_field_name("declarator") is not None:
            inner = inner.child_by_field_name("declarator")  # type: ignore[assignment]
        suffix = _stars(declarator, inner)
        if declarator.type == "array_declarator":
            suffix += "[]"
        default = text(child.child_by_field_name("default_value")) or None
        params.append(Param(text(inner), (ptype + suffix).strip() or None, default))
    return tuple(params)


def _callee(node: ts.Node) -> str:
    if node.type == "template_function":
        node = node.child_by_field_name("name") or node
    callee = "".join(text(node).split())
    return _TEMPLATE_ARGS.sub("", callee) if "<" in callee else callee


def _scopes(found: list[dict[str, list[ts.Node]]], cpp: bool) -> Callable[[int], str | None]:
    """Byte offset → the name of the innermost function definition around it (None outside
    any). From the definitions the query captured (every ``function_definition``): looking
    it up by offset costs a bisection, walking ``node.parent`` up costs a descent from the
    root per step."""
    functions = sorted(
        {
            (node.start_byte, node.end_byte, _function_name(node, cpp))
            for caps in found
            for key in caps
            if key in _DEF_KINDS and (node := caps[key][0]).type == "function_definition"
        }
    )
    starts = [f[0] for f in functions]

    def scope_at(offset: int) -> str | None:
        i = bisect_right(starts, offset) - 1
        while i >= 0 and functions[i][1] < offset:
            i -= 1
        return functions[i][2] if i >= 0 else None

    return scope_at


def _function_name(node: ts.Node, cpp: bool) -> str | None:
    decl = _function_declarator(node.child_by_field_name("declarator") or node)
    if decl is None:
        return None
    name = text(decl.child_by_field_name("declarator"))
    return "::".join([*_prefix(node, cpp), name]) if cpp else name
