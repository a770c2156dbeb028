"""How C/C++/CUDA code binds layers, as facts: ioctl uses and dispatch, ops tables, base classes.

What the queries (``queries/{c,cpp,cuda}.scm``, "how layers bind") capture becomes
:class:`~mapper.model.Reference` records whose meaning is resolved when the graph is built:

- ``use``: an upper-case name passed to a call (``ioctl(fd, AMDKFD_IOC_CREATE_QUEUE, &a)``,
  ``drmCommandWrite(fd, DRM_AMDGPU_CS, …)``); scope: the enclosing function;
- ``dispatch``: a name a function dispatches on (``case NAME:`` in a switch; scope: the
  switching function) or an entry of an ioctl table (``AMDKFD_IOCTL_DEF(NAME, handler, 0)``,
  ``DRM_IOCTL_DEF_DRV(AMDGPU_CS, amdgpu_cs_ioctl, …)`` naming ``DRM_IOCTL_AMDGPU_CS``; scope:
  the handler);
- ``bind``: a function stored in a function-pointer slot of a table
  (``.open = kfd_open`` or the third entry of ``{a, b, c}``); target: the function, scope:
  the slot as ``Struct::field`` (``Struct::#2`` for a positional entry, resolved through the
  struct's slot order when building);
- ``inherit``: a C++ base class as written; scope: the deriving class.

Function-pointer fields are ``SymbolKind.FIELD`` symbols ``Struct::field`` whose value is
``#<index>``, the field's position in its struct (what positional initializers refer to).
"""

from __future__ import annotations

import re

import tree_sitter as ts

from mapper.ingest.treesitter import end_line, line, text
from mapper.model import Language, Location, Reference, Symbol, SymbolKind

#: ioctl table macros that paste a prefix onto the name they are given
TABLE_PREFIXES = {"DRM_IOCTL_DEF_DRV": "DRM_IOCTL_"}
_UPPER = re.compile(r"^[A-Z][A-Z0-9]*_[A-Z0-9_]+$")
_LOWER = re.compile(r"^[a-z_][a-z0-9_]*$")


def use(path: str, name: ts.Node, scope: str | None, lang: Language) -> Reference:
    return Reference("use", text(name), Location(path, line(name)), scope, lang)


def dispatch(path: str, name: ts.Node, scope: str | None, lang: Language) -> Reference:
    return Reference("dispatch", text(name), Location(path, line(name)), scope, lang)


def table(path: str, declarator: ts.Node, entries: ts.Node, lang: Language) -> list[Reference]:
    """The slot bindings and ioctl-table entries of one initialised variable."""
    owner = _struct_type(declarator.parent)
    refs: list[Reference] = []
    index = 0
    for entry in entries.named_children:
        if entry.type == "comment":
            continue
        where = Location(path, line(entry))
        if entry.type == "initializer_pair":
            designator = entry.child_by_field_name("designator")
            value = entry.child_by_field_name("value")
            if (
                owner
                and designator is not None
                and designator.type == "field_designator"
                and value is not None
                and value.type == "identifier"
            ):
                field = text(designator).lstrip(".").strip()
                refs.append(Reference("bind", text(value), where, f"{owner}::{field}", lang))
        elif entry.type == "identifier" and owner:
            refs.append(Reference("bind", text(entry), where, f"{owner}::#{index}", lang))
        elif entry.type == "call_expression":
            refs.extend(_table_entry(entry, where, lang))
        index += 1
    return refs


def _table_entry(entry: ts.Node, where: Location, lang: Language) -> list[Reference]:
    """``MACRO(NAME, handler, …)``: NAME (with the macro's prefix) dispatched to handler."""
    macro = text(entry.child_by_field_name("function"))
    args = entry.child_by_field_name("arguments")
    names = [text(a) for a in args.named_children] if args is not None else []
    if len(names) < 2 or not _UPPER.match(names[0]):
        return []
    handler = next((n for n in names[1:] if _LOWER.match(n)), None)
    if handler is None:
        return []
    target = TABLE_PREFIXES.get(macro, "") + names[0]
    return [Reference("dispatch", target, where, handler, lang)]


def _struct_type(declaration: ts.Node | None) -> str | None:
    """The struct/class a declaration's type names (``struct T``, ``T``, ``ns::T``)."""
    if declaration is None:
        return None
    typ = declaration.child_by_field_name("type")
    if typ is None:
        return None
    if typ.type in ("struct_specifier", "class_specifier"):
        typ = typ.child_by_field_name("name")
    if typ is None or typ.type not in ("type_identifier", "qualified_identifier"):
        return None
    return text(typ).rpartition("::")[2]


def slot(path: str, field: ts.Node, name: ts.Node, lang: Language) -> Symbol | None:
    """A function-pointer field as ``Struct::field`` with its position in the struct."""
    ident = name
    while ident.child_by_field_name("declarator") is not None:
        ident = ident.child_by_field_name("declarator")  # type: ignore[assignment]
    if ident.type == "parenthesized_declarator":
        inner = [c for c in ident.named_children if c.type != "comment"]
        ident = inner[0] if inner else ident
        while ident.child_by_field_name("declarator") is not None:
            ident = ident.child_by_field_name("declarator")  # type: ignore[assignment]
    if ident.type not in ("field_identifier", "identifier"):
        return None
    fields = field.parent
    owner = _owner_name(fields.parent if fields is not None else None)
    if fields is None or owner is None:
        return None
    index = sum(1 for c in fields.named_children[: _index_of(fields, field)] if _is_field(c))
    loc = Location(path, line(field))
    return Symbol(
        f"{owner}::{text(ident)}",
        SymbolKind.FIELD,
        lang,
        loc,
        value=f"#{index}",
        end_line=end_line(field),
    )


def _is_field(node: ts.Node) -> bool:
    return node.type == "field_declaration"


def _index_of(parent: ts.Node, child: ts.Node) -> int:
    for i, c in enumerate(parent.named_children):
        if c.id == child.id:
            return i
    return 0


def _owner_name(spec: ts.Node | None) -> str | None:
    """The name of a struct/class specifier, or of the typedef around an anonymous one."""
    if spec is None or spec.type not in ("struct_specifier", "class_specifier"):
        return None
    name = spec.child_by_field_name("name")
    if name is not None:
        return text(name).rpartition("::")[2]
    parent = spec.parent
    if parent is not None and parent.type == "type_definition":
        decl = parent.child_by_field_name("declarator")
        return text(decl) if decl is not None else None
    return None


def inherit(
    path: str, cls: ts.Node, qualname: str, bases: ts.Node, lang: Language
) -> list[Reference]:
    """One ``inherit`` reference per base class named in ``bases``."""
    where = Location(path, line(cls))
    return [
        Reference("inherit", re.sub(r"<.*>", "", text(b)), where, qualname, lang)
        for b in bases.named_children
        if b.type in ("type_identifier", "qualified_identifier", "template_type")
    ]
