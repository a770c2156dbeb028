"""Python references beyond calls and imports: names used, decorators, registry calls.

From the captures of ``queries/python.scm`` (one query pass with the rest of the extraction):

* ``name`` references: a name that may denote a class, a constant or an enum member (``Name``,
  ``mod.NAME``, ``Enum.MEMBER``, ``mod.Enum.MEMBER``: capitalised, or with a capitalised
  part) used in code, once per (scope, name); bindings (definition names, parameters, import
  lists, assignment targets, keyword names) are not uses. A name written through a local alias
  (``k = KernelId`` … ``k.GEMM``) is recorded as the aliased name.
* ``decorator`` references: the decorator as written (``register``, ``mod.register``; the
  callee of ``@register(...)``), scoped to the qualname of the definition it decorates.
* ``register`` references: a call to a function whose name starts with ``register`` (a
  registry call): one per name argument, target ``"<callee> <argument>"``.
* ``use`` references: the request argument of an ioctl call (``fcntl.ioctl(fd, NAME, …)``,
  ``ioctl(fd, mod.NAME, …)``) when it is a name, target the name without its module, so the
  user-space side of an ioctl written in Python links to the ioctl's definition.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Iterable

import tree_sitter as ts

from mapper.ingest.treesitter import text
from mapper.model import Location, Reference

_BINDING_PARENTS = frozenset(
    {
        "class_definition",
        "function_definition",
        "dotted_name",
        "aliased_import",
        "parameters",
        "lambda_parameters",
        "global_statement",
        "nonlocal_statement",
        "typed_parameter",
        "list_splat_pattern",
        "dictionary_splat_pattern",
    }
)
# parent type → the field holding the name it binds
_BINDING_FIELD = {
    "keyword_argument": "name",
    "default_parameter": "name",
    "typed_default_parameter": "name",
    "assignment": "left",
    "augmented_assignment": "left",
    "for_statement": "left",
}

# a captured attribute with a capitalised part: ``Name.attr``, ``obj.Name``, ``mod.Enum.MEMBER``
_CAPITALISED_ATTRIBUTE = re.compile(
    rb"[A-Z]\w*[.]\w+$|\w+[.][A-Z]\w*$|[a-z_][a-z0-9_]*[.][A-Z]\w*[.][A-Z]\w*$"
)

_FIRST = operator.itemgetter(0)

Where = Callable[[int], Location]
Scope = Callable[[int], "str | None"]


def _flat(node: ts.Node | None) -> str:
    return "".join(text(node).split())


def _is_use(node: ts.Node) -> bool:
    """Whether a captured name is a use (not a binding, not the member part of ``a.B``)."""
    parent = node.parent
    if parent is None:
        return True
    kind = parent.type
    if kind in _BINDING_PARENTS:
        return False
    if kind == "attribute" and node.type == "identifier":
        return False  # ``a.B`` is captured whole; its parts are not names on their own
    field = _BINDING_FIELD.get(kind)
    return field is None or parent.child_by_field_name(field) != node


Keyed = list[tuple[int, Reference]]  # (start byte << 32 | end byte, reference): document order


def _key(node: ts.Node) -> int:
    return (node.start_byte << 32) | node.end_byte


def aliases(nodes: Iterable[ts.Node], scope_at: Scope) -> dict[tuple[str | None, str], str]:
    """``(scope, local) → Name`` for each ``local = Name`` assignment of a capitalised name (a
    class or constant given a short local name: ``k = KernelId``)."""
    out: dict[tuple[str | None, str], str] = {}
    for node in nodes:
        left, right = (_flat(node.child_by_field_name(f)) for f in ("left", "right"))
        if right[:1].isupper() and left != right:
            out[(scope_at(node.start_byte), left)] = right
    return out


def names(
    nodes: Iterable[ts.Node],
    source: bytes,
    base: int,
    scope_at: Scope,
    where: Where,
    local: dict[tuple[str | None, str], str] | None = None,
) -> Keyed:
    """``name`` references, the first use per (scope, name), from the captured identifiers and
    attributes in any order (``source``: the root's bytes, which start at byte ``base`` of the
    file); a name written through a local alias (``k.GEMM`` after ``k = KernelId``) is the
    aliased name's (``KernelId.GEMM``)."""
    named: list[tuple[int, bytes, ts.Node]] = []  # the capitalised ones, then in document order
    for node in nodes:
        start = node.start_byte
        if node.type == "identifier":
            if not 65 <= source[start - base] <= 90:  # A-Z: decided without slicing
                continue
            raw = source[start - base : node.end_byte - base]
        else:
            raw = source[start - base : node.end_byte - base]
            if not _CAPITALISED_ATTRIBUTE.match(raw):
                continue
        named.append((_key(node), raw, node))
    named.sort(key=_FIRST)
    seen: set[tuple[str | None, str]] = set()
    out: Keyed = []
    for key, raw, node in named:
        scope = scope_at(key >> 32)
        name = raw.decode("utf-8", errors="replace")
        head, dot, rest = name.partition(".")
        if local and dot and (scope, head) in local:
            name = f"{local[(scope, head)]}.{rest}"
        if (scope, name) in seen or not _is_use(node):
            continue
        seen.add((scope, name))
        out.append((key, Reference("name", name, where(node.start_point[0]), scope)))
    return out


def decorators(nodes: Iterable[ts.Node], definition_at: dict[int, str], where: Where) -> Keyed:
    """``decorator`` references scoped to the decorated definition's qualname."""
    out: Keyed = []
    for node in nodes:
        parent = node.parent
        target = parent.child_by_field_name("definition") if parent is not None else None
        qualname = definition_at.get(target.start_byte) if target is not None else None
        expr = node.named_child(0) if node.named_child_count else None
        if qualname is None or expr is None:
            continue
        callee = expr.child_by_field_name("function") if expr.type == "call" else expr
        ref = Reference("decorator", _flat(callee), where(node.start_point[0]), qualname)
        out.append((_key(node), ref))
    return out


Calls = Iterable[tuple[ts.Node, str]]  # (callee node, callee as written without whitespace)


def registrations(calls: Calls, scope_at: Scope, where: Where) -> Keyed:
    """``register`` references: each name argument of a call to ``register*``/``*.register*``."""
    out: Keyed = []
    for callee, name in calls:
        if not name.rpartition(".")[2].startswith("register"):
            continue
        call = callee.parent
        args = call.child_by_field_name("arguments") if call is not None else None
        for arg in args.named_children if args is not None else ():
            if arg.type in ("identifier", "attribute"):
                loc = where(arg.start_point[0])
                scope = scope_at(arg.start_byte)
                ref = Reference("register", f"{name} {_flat(arg)}", loc, scope)
                out.append((_key(arg), ref))
    return out


def ioctl_uses(calls: Calls, scope_at: Scope, where: Where) -> Keyed:
    """``use`` references: the request name passed to ``ioctl``/``fcntl.ioctl``/``x.ioctl``."""
    out: Keyed = []
    for callee, name in calls:
        if name.rpartition(".")[2] != "ioctl":
            continue
        call = callee.parent
        args = call.child_by_field_name("arguments") if call is not None else None
        positional = (
            [a for a in args.named_children if a.type != "keyword_argument"] if args else []
        )
        if len(positional) < 2 or positional[1].type not in ("identifier", "attribute"):
            continue
        request = positional[1]
        name = _flat(request).rpartition(".")[2]
        ref = Reference("use", name, where(request.start_point[0]), scope_at(request.start_byte))
        out.append((_key(request), ref))
    return out
