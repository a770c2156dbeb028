"""Compact, fast pickling of parse results: a ParsedFile travels as plain tuples.

Pickling tens of thousands of small slotted records one by one is slow; the reducer registered
here flattens a :class:`~mapper.ingest.code.ParsedFile` into tuples of strings and numbers
(pickled at C speed) and rebuilds the records on load. Used by the parse cache and by the
parallel parse workers. Importing this module registers the reducers.
"""

from __future__ import annotations

import copyreg
import dataclasses
from typing import Any

from mapper import model
from mapper.ingest.code import ParsedFile
from mapper.ingest.contracts import ContractFile
from mapper.ingest.docs import DocPage
from mapper.model import Language, Location, Param, Reference, Signature, Symbol, SymbolKind

Flat = tuple[Any, ...]
# enum ↔ plain value by dict lookup (``.value`` and ``Enum(value)`` run Python code each time)
_VALUE: dict[Any, str] = {m: m.value for e in (SymbolKind, Language) for m in e}
_KIND: dict[str, SymbolKind] = {m.value: m for m in SymbolKind}
_LANGUAGE: dict[str, Language] = {m.value: m for m in Language}


def _sig(sig: Signature | None) -> Flat | None:
    if sig is None:
        return None
    return (
        tuple((p.name, p.type, p.default, p.kind) for p in sig.params),
        sig.returns,
        sig.is_async,
    )


def _unsig(flat: Flat | None) -> Signature | None:
    if flat is None:
        return None
    return Signature(tuple(Param(*p) for p in flat[0]), flat[1], flat[2])


def encode(pf: ParsedFile) -> Flat:
    path = pf.path
    symbols = tuple(
        [  # list comprehensions: faster than generators fed to tuple()
            (
                s.qualname,
                _VALUE[s.kind],
                _VALUE[s.language],
                None if s.location.path == path else s.location.path,
                s.location.line,
                None if s.signature is None else _sig(s.signature),
                s.value,
                s.end_line,
                s.doc,
            )
            for s in pf.symbols
        ]
    )
    refs = tuple(
        [
            (
                r.kind,
                r.target,
                None if (where := r.location).path == path else where.path,
                where.line,
                r.scope,
                _VALUE[r.language],
            )
            for r in pf.references
        ]
    )
    return (
        path,
        _VALUE[pf.language],
        symbols,
        refs,
        pf.warnings,
        pf.imports,
        pf.module,
        pf.loc,
        pf.bases,
        pf.attributes,
    )


def decode(flat: Flat) -> ParsedFile:
    path, language, symbols, refs, warnings, imports, module, loc, bases, attributes = flat
    return ParsedFile(
        path,
        _LANGUAGE[language],
        tuple(
            Symbol(
                q,
                _KIND[k],
                _LANGUAGE[lang],
                Location(p or path, line),
                _unsig(sig),
                value,
                end,
                doc,
            )
            for q, k, lang, p, line, sig, value, end, doc in symbols
        ),
        tuple(
            Reference(kind, target, Location(p or path, line), scope, _LANGUAGE[lang])
            for kind, target, p, line, scope, lang in refs
        ),
        warnings,
        imports,
        module,
        loc,
        bases,
        attributes,
    )


def _reduce_parsed(pf: ParsedFile) -> tuple[Any, ...]:
    return decode, (encode(pf),)


def _register() -> None:
    copyreg.pickle(ParsedFile, _reduce_parsed)
    classes: list[type[Any]] = [
        model.Location,
        model.Param,
        model.Signature,
        model.InterfaceSpec,
        model.ConstantSpec,
        model.ScenarioStep,
        model.DocSection,
        ContractFile,
        DocPage,
    ]
    for cls in classes:
        names = tuple(f.name for f in dataclasses.fields(cls))

        def reduce(obj: Any, cls: type[Any] = cls, names: tuple[str, ...] = names) -> Any:
            return cls, tuple(getattr(obj, n) for n in names)

        copyreg.pickle(cls, reduce)


_register()
