"""gRPC facts of a Python module, from the same query pass as the rest of the extraction.

What ``stackmap check`` compares with the contract proto (rules SM501, SM502), read once at
ingest so that the check parses nothing again:

* ``request_read`` references: ``request.FIELD`` read in a method of a servicer class (a
  top-level class with a written base ``<Service>Servicer``), ``request`` being the method's
  first parameter after ``self``; target ``FIELD``, scope the method (or a function nested in
  it). Assignment targets and private names (``_x``) are not reads.
* ``message_field`` references: each keyword of a call ``m.Message(kw=…)`` where ``m`` is a
  name an import binds to a ``*_pb2`` module; target ``"Message kw"`` (``Message`` may be
  dotted: ``Outer.Inner``).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence

import tree_sitter as ts

from mapper.ingest.treesitter import text
from mapper.model import Location, Reference, Symbol, SymbolKind

Keyed = list[tuple[int, Reference]]  # (start byte << 32 | end byte, reference): document order
Scope = Callable[[int], "str | None"]
Where = Callable[[int], Location]

_STORES = frozenset({"assignment", "augmented_assignment", "for_statement"})  # field "left"


def _service_base(written: Iterable[str]) -> bool:
    return any(
        (name := b.rpartition(".")[2]).endswith("Servicer") and name != "Servicer" for b in written
    )


def servicer_requests(
    module: str,
    symbols: Sequence[Symbol],
    bases: Sequence[tuple[str, tuple[str, ...]]],
    static: Collection[str] = (),
) -> dict[str, str]:
    """Method qualname → its request parameter (the one after ``self``), for the methods of
    the module's servicers; ``static`` names the static methods (no ``self`` to skip)."""
    servicers = {cls for cls, written in bases if _service_base(written)}
    servicers = {cls for cls in servicers if cls.rpartition(".")[0] == module}  # top level
    out: dict[str, str] = {}
    for sym in symbols:
        if sym.kind is not SymbolKind.METHOD or sym.qualname.rpartition(".")[0] not in servicers:
            continue
        params = (
            [p.name for p in sym.signature.params if p.kind == "positional"]
            if sym.signature
            else []
        )
        # a method's signature leaves ``self`` out; a static method's keeps its first parameter
        request = params[1:2] if sym.qualname in static else params[:1]
        if request:
            out[sym.qualname] = request[0]
    return out


def request_reads(
    attributes: Iterable[ts.Node], requests: dict[str, str], scope_at: Scope, where: Where
) -> Keyed:
    """``request_read`` references among the captured ``a.b`` attributes (see module doc)."""
    out: Keyed = []
    for node in attributes:
        if node.type != "attribute":
            continue
        scope = scope_at(node.start_byte)
        method = scope
        while method and method not in requests:
            method = method.rpartition(".")[0]
        if not method:
            continue
        obj, attr = node.child_by_field_name("object"), node.child_by_field_name("attribute")
        if obj is None or attr is None or text(obj) != requests[method]:
            continue
        name = text(attr)
        if name.startswith("_") or _stored(node):
            continue
        key = (node.start_byte << 32) | node.end_byte
        out.append((key, Reference("request_read", name, where(node.start_point[0]), scope)))
    return out


def _stored(node: ts.Node) -> bool:
    """Whether the attribute is written (an assignment or loop target) or deleted."""
    parent = node.parent
    if parent is None:
        return False
    if parent.type == "delete_statement":
        return True
    return parent.type in _STORES and parent.child_by_field_name("left") == node


def message_fields(
    calls: Iterable[tuple[ts.Node, str]],
    imports: Sequence[tuple[str, str]],
    scope_at: Scope,
    where: Where,
) -> Keyed:
    """``message_field`` references of the calls (callee node, callee as written without
    whitespace) whose callees were captured (see module doc)."""
    modules = {local for local, bound in imports if bound.rpartition(".")[2].endswith("_pb2")}
    if not modules:
        return []
    out: Keyed = []
    for callee, written in calls:
        head, _, message = written.partition(".")
        call = callee.parent
        if head not in modules or not message[:1].isupper() or call is None:
            continue
        args = call.child_by_field_name("arguments")
        at = where(callee.start_point[0])
        for arg in args.named_children if args is not None else ():
            keyword = arg.child_by_field_name("name") if arg.type == "keyword_argument" else None
            if keyword is not None:
                key = (arg.start_byte << 32) | arg.end_byte
                ref = Reference(  # at the call's line, where the message is named
                    "message_field", f"{message} {text(keyword)}", at, scope_at(arg.start_byte)
                )
                out.append((key, ref))
    return out
