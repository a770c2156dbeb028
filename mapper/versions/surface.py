"""The interface surface of one tree: what other layers and clients may depend on.

- contract interfaces (id → kind, symbol, signature, sync),
- public Python definitions inside the layers (qualname → signature),
- proto services, rpcs, messages, fields and enum values,
- C structs (their field declarations), ioctl numbers and numeric macros / enumerators.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from mapper.check.facts import collect
from mapper.config import StackmapConfig
from mapper.ingest.code import ParsedFile
from mapper.material import InterfaceSpec
from mapper.model import Language, Location, Signature, SymbolKind

_C_LANGS = (Language.C, Language.CPP, Language.CUDA)
_PY_KINDS = (SymbolKind.FUNCTION, SymbolKind.METHOD, SymbolKind.CLASS)
_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.DOTALL)


@dataclass(frozen=True, slots=True)
class Item:
    """One element of the surface. ``key`` is stable across revisions (kind + name)."""

    kind: str  # interface python service rpc message field enum-value struct ioctl macro
    name: str
    location: Location
    signature: Signature | None = None
    value: str | None = None  # field "number type", macro value, struct fields, interface sync

    @property
    def key(self) -> str:
        return f"{self.kind}:{self.name}"


Surface = dict[str, Item]


def _struct_fields(root: Path, loc: Location, end: int | None) -> str:
    try:
        lines = (root / loc.path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return ""
    text = _COMMENT.sub("", "\n".join(lines[(loc.line or 1) - 1 : end or loc.line]))
    body = text[text.find("{") + 1 : text.rfind("}")] if "{" in text else ""
    fields = [" ".join(f.split()) for f in body.split(";") if f.strip()]
    return "; ".join(fields)


def interface_item(spec: InterfaceSpec) -> Item:
    """The surface item of one contract interface entry."""
    sync = f"{spec.symbol or ''}|{spec.sync or ''}"
    return Item("interface", spec.id, spec.location, spec.signature, sync)


def code_items(parsed: ParsedFile, root: Path) -> list[Item]:
    """The surface items one parsed code file defines (``root`` holds it, for struct bodies)."""
    items: list[Item] = []
    functions = {
        s.qualname for s in parsed.symbols if s.kind in (SymbolKind.FUNCTION, SymbolKind.METHOD)
    }
    for sym in parsed.symbols:
        if parsed.language is Language.PYTHON:
            parts = sym.qualname.split(".")
            public = not any(p.startswith("_") and p != "__init__" for p in parts)
            nested = sym.qualname.rpartition(".")[0] in functions  # a local helper
            if public and not nested and sym.kind in _PY_KINDS:
                items.append(Item("python", sym.qualname, sym.location, sym.signature))
        elif parsed.language in _C_LANGS:
            if sym.kind is SymbolKind.STRUCT:
                fields = _struct_fields(root, sym.location, sym.end_line)
                items.append(Item("struct", sym.qualname, sym.location, value=fields))
            elif sym.kind is SymbolKind.IOCTL:
                items.append(Item("ioctl", sym.qualname, sym.location, value=sym.value))
            elif (
                sym.kind in (SymbolKind.MACRO, SymbolKind.ENUMERATOR)
                and sym.value
                and (re.fullmatch(r"\(?-?(0[xX][0-9a-fA-F]+|\d+)[uUlL]*\)?", sym.value.strip()))
            ):
                items.append(Item("macro", sym.qualname, sym.location, value=sym.value))
    return items


def proto_items(parsed: ParsedFile) -> list[Item]:
    """The surface items of one parsed proto file."""
    items: list[Item] = []
    for sym in parsed.symbols:
        kind = {
            SymbolKind.SERVICE: "service",
            SymbolKind.RPC: "rpc",
            SymbolKind.MESSAGE: "message",
            SymbolKind.FIELD: "field",
            SymbolKind.ENUMERATOR: "enum-value",
        }.get(sym.kind)
        if kind is None:
            continue
        value = sym.value
        if sym.kind is SymbolKind.FIELD and sym.signature is not None:
            value = f"{sym.value} {sym.signature.returns}"
        items.append(Item(kind, sym.qualname, sym.location, sym.signature, value))
    return items


def surface_of(root: Path, config: StackmapConfig | None = None) -> Surface:
    """The surface of the tree at ``root`` (its own stackmap.toml unless ``config`` is given)."""
    facts = collect(root, config)
    items: list[Item] = [interface_item(spec) for spec in facts.interfaces()]
    for _, _, parsed in facts.layer_files():
        items.extend(code_items(parsed, facts.root))
    for parsed in facts.protos():
        items.extend(proto_items(parsed))
    return {item.key: item for item in items}
