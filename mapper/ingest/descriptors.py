"""Operator descriptor files (``NAME.opdesc.json``) as map symbols.

A stack may describe its operators as data: name, version, the kernel they implement, named
inputs and outputs with dtypes, layouts and alignment, required hardware features, tunable
launch parameters. The map reads each such file inside a layer as one ``operator`` symbol of
the component owning the file, so operator modules show on the map with their descriptors.
The symbol's qualname is the file's folder as a dotted module plus the descriptor's name
(``stack.kmd.opmod.builtin.gemm``); its signature lists the inputs (type: dtypes, layout,
alignment) and returns the outputs; its value is ``KERNEL@version requires …``. Pure; a file
that is not a JSON object with a name raises IngestError (the caller makes it a skip).
"""

from __future__ import annotations

import json
from pathlib import PurePosixPath
from typing import Any

from mapper.errors import IngestError
from mapper.ingest.code import ParsedFile
from mapper.model import Language, Location, Param, Signature, Symbol, SymbolKind


def _tensor(spec: Any) -> Param:
    if not isinstance(spec, dict) or not isinstance(spec.get("name"), str):
        raise ValueError("a tensor is an object with a name")
    dtypes = "|".join(str(d) for d in spec.get("dtypes", ()))
    layouts = "|".join(str(d) for d in spec.get("layouts", ("any",)))
    typ = f"{dtypes} {layouts} align {spec.get('alignment', '?')}"
    return Param(spec["name"], typ, "None" if spec.get("optional") else None)


def parse_descriptor(rel_path: str, data: bytes) -> ParsedFile:
    """One descriptor file → a ParsedFile with its one OPERATOR symbol."""
    text = data.decode("utf-8")
    try:
        doc = json.loads(text)
        if not isinstance(doc, dict) or not isinstance(doc.get("name"), str):
            raise ValueError("not an object with a name")
        params = tuple(_tensor(t) for t in doc.get("inputs", ()))
        outs = ", ".join(
            f"{p.name}: {p.type}" for p in (_tensor(t) for t in doc.get("outputs", ()))
        )
    except ValueError as exc:
        raise IngestError(f"not an operator descriptor: {exc}", path=rel_path) from None
    folder = PurePosixPath(rel_path).parent.as_posix().replace("/", ".")
    requires = ", ".join(str(f) for f in doc.get("requires", ()))
    value = f"{doc.get('kernel', '?')}@{doc.get('version', '?')}" + (
        f" requires {requires}" if requires else ""
    )
    line = next((i for i, ln in enumerate(text.splitlines(), 1) if '"name"' in ln), 1)
    sym = Symbol(
        f"{folder}.{doc['name']}",
        SymbolKind.OPERATOR,
        Language.JSON,
        Location(rel_path, line),
        signature=Signature(params, outs or None),
        value=value,
        end_line=text.count("\n") or 1,
        doc=str(doc.get("summary") or "") or None,
    )
    return ParsedFile(rel_path, Language.JSON, (sym,), (), (), loc=text.count("\n"))
