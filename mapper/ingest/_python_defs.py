"""Python definitions from a tree-sitter node: the symbol of a class or function, with its
signature (parameters as written, ``self``/``cls`` dropped for methods) and docstring."""

from __future__ import annotations

import ast
from collections.abc import Callable

import tree_sitter as ts

from mapper.ingest.treesitter import text
from mapper.model import Language, Location, Param, Signature, Symbol, SymbolKind


def definition(
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


def annotation_class(written: str) -> str | None:
    """The class a simple annotation names: ``Dev``, ``mod.Dev``, ``Dev | None``,
    ``Optional[Dev]`` (``t.``/``typing.Optional``), ``"Dev"``; None for anything else
    (generics, unions of classes)."""
    t = written.strip().strip("\"'")
    for prefix in ("Optional[", "t.Optional[", "typing.Optional["):
        if t.startswith(prefix) and t.endswith("]"):
            t = t[len(prefix) : -1].strip().strip("\"'")
    parts = [p.strip() for p in t.split("|") if p.strip() != "None"]
    if len(parts) != 1 or not parts[0].replace(".", "").replace("_", "").isalnum():
        return None
    return parts[0]
