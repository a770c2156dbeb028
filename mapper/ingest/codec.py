"""Parse results as JSON text, for the parse cache in the map file (:mod:`mapper.mapdb`).

Loading never runs code named by the data: a :class:`~mapper.ingest.code.ParsedFile` travels
as flat arrays of strings and numbers (most of the cache, kept compact), a doc page or a
contract as objects tagged with the name of one of the record classes listed in ``_RECORDS``
(an unknown tag is an error), tuples as ``{"@t": [...]}``. Front-matter values JSON cannot
hold (a YAML date) are stored as their text.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from mapper import jsontext
from mapper.ingest.code import ParsedFile
from mapper.ingest.contracts import ContractFile
from mapper.ingest.docs import DocPage
from mapper.material import ConstantSpec, DocSection, InterfaceSpec, OpenQuestion, ScenarioStep
from mapper.model import Language, Location, Param, Reference, Signature, Symbol, SymbolKind

_RECORDS: dict[str, type[Any]] = {
    cls.__name__: cls
    for cls in (
        DocPage,
        ContractFile,
        DocSection,
        ScenarioStep,
        InterfaceSpec,
        OpenQuestion,
        ConstantSpec,
        Location,
        Param,
        Signature,
    )
}
_KIND = {m.value: m for m in SymbolKind}
_LANGUAGE = {m.value: m for m in Language}


# What is encoded is built here from frozen records: lists, dicts, strings, numbers.
_json = jsontext.dumps


class CodecError(ValueError):
    """A cached record that does not decode to one of the known record classes."""


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
        return {"@": type(value).__name__, **fields}
    if isinstance(value, tuple):
        return {"@t": [_plain(v) for v in value]}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def _hook(obj: dict[str, Any]) -> Any:
    if "@t" in obj:
        return tuple(obj["@t"])
    tag = obj.pop("@", None)
    if tag is None:
        return obj
    cls = _RECORDS.get(tag)
    if cls is None:
        raise CodecError(f"unknown record {tag!r} in the parse cache")
    return cls(**obj)


def _sig(sig: Signature | None) -> list[Any] | None:
    if sig is None:
        return None
    return [[[p.name, p.type, p.default, p.kind] for p in sig.params], sig.returns, sig.is_async]


def _unsig(flat: list[Any] | None) -> Signature | None:
    if flat is None:
        return None
    return Signature(tuple(Param(*p) for p in flat[0]), flat[1], flat[2])


def _code(pf: ParsedFile) -> list[Any]:
    """The flat arrays of a code record. Kinds and languages are string enums, written as
    their values by both encoders: reading ``.value`` (a property) for each reference and
    symbol made this function 1.4 times as slow (25 against 18 ms over this repository's
    records, in one process)."""
    path = pf.path
    symbols = [
        [
            s.qualname,
            s.kind,
            s.language,
            None if s.location.path == path else s.location.path,
            s.location.line,
            _sig(s.signature),
            s.value,
            s.end_line,
            s.doc,
        ]
        for s in pf.symbols
    ]
    refs = [
        [
            r.kind,
            r.target,
            None if r.location.path == path else r.location.path,
            r.location.line,
            r.scope,
            r.language,
        ]
        for r in pf.references
    ]
    rest = [pf.warnings, pf.imports, pf.module, pf.loc, pf.bases, pf.attributes]
    return [path, pf.language, symbols, refs, *rest]


def _uncode(flat: list[Any]) -> ParsedFile:
    path, language, symbols, refs, warnings, imports, module, loc, bases, attributes = flat
    places: dict[tuple[str, int | None], Location] = {}  # one record per line, as the parser

    def at(p: str | None, line: int | None) -> Location:
        key = (p or path, line)
        found = places.get(key)
        if found is None:
            found = places[key] = Location(*key)
        return found

    return ParsedFile(  # lists made first: tuple() of a generator is slower
        path,
        _LANGUAGE[language],
        tuple(
            [
                Symbol(q, _KIND[k], _LANGUAGE[lang], at(p, line), _unsig(sig), *rest)
                for q, k, lang, p, line, sig, *rest in symbols
            ]
        ),
        tuple(
            [
                Reference(kind, target, at(p, line), scope, _LANGUAGE[lang])
                for kind, target, p, line, scope, lang in refs
            ]
        ),
        tuple(warnings),
        tuple([(a, b) for a, b in imports]),
        module,
        loc,
        tuple([(cls, tuple(names)) for cls, names in bases]),
        tuple([(a, b, c) for a, b, c in attributes]),
    )


def dumps(record: Any) -> str | None:
    """The JSON text of a parse result (None for no record)."""
    if record is None:
        return None
    if isinstance(record, ParsedFile):
        return _json({"code": _code(record)})
    return _json({"record": _plain(record)})


def loads(text: str | None) -> Any:
    """The parse result :func:`dumps` wrote; CodecError when the text is not one."""
    if text is None:
        return None
    try:
        if text.startswith('{"code":'):
            return _uncode(json.loads(text)["code"])
        return json.loads(text, object_hook=_hook)["record"]
    except (ValueError, KeyError, TypeError) as exc:
        raise CodecError(f"unreadable parse-cache record: {exc}") from exc
