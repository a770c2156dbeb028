"""Which existing op a new one is most like: by spelling, and by shape where the op is known.

The spelling similarity is difflib's ratio between the new name and each op's spellings (its
token, its values' string values), compact. Spelling alone takes ``ConvTranspose`` for a kind
of ``Transpose``. Where the new name is an ONNX operator (the ``onnx`` package's schemas, read
offline) and an existing op's string value is one too, their *shape* is compared as well: the
Jaccard similarity of their inputs', outputs' and attributes' names (``ConvTranspose`` shares
``X``, ``W``, ``B``, ``Y`` and six attributes with ``Conv``, nothing with ``Transpose``).
An op's score is the mean of the two; without a schema for the new name, its spelling alone.
"""

from __future__ import annotations

import difflib
from functools import cache
from typing import Any

from mapper.scenarios import vocab


@cache
def onnx_schemas() -> tuple[Any, ...]:
    """The ONNX operator schemas of the default domain, latest versions (``onnx.defs``,
    offline); empty without the ``onnx`` package."""
    try:
        from onnx import defs
    except ImportError:
        return ()
    return tuple(s for s in defs.get_all_schemas() if s.domain in ("", "ai.onnx"))


@cache
def _schemas() -> dict[str, frozenset[str]]:
    """Compact ONNX operator name → its features (inputs', outputs' and attributes' names)."""
    out: dict[str, frozenset[str]] = {}
    for schema in onnx_schemas():
        features = {f"attr:{a.lower()}" for a in schema.attributes}
        features |= {f"in:{i.name.lower()}" for i in schema.inputs}
        features |= {f"out:{o.name.lower()}" for o in schema.outputs}
        out[vocab.compact(schema.name)] = frozenset(features)
    return out


@cache
def _attributes() -> dict[str, dict[str, str]]:
    """Compact ONNX operator name → its attributes' names and types (``INT``, ``STRING``…)."""
    return {  # str(AttrType.STRING) is "AttrType.STRING"
        vocab.compact(schema.name): {
            a: str(v.type).rpartition(".")[2] for a, v in schema.attributes.items()
        }
        for schema in onnx_schemas()
    }


def attributes(names: set[str]) -> dict[str, str] | None:
    """The ONNX attributes (name → type) of the first of the compact ``names`` that is an
    ONNX operator; None when none is (or without the ``onnx`` package)."""
    schemas = _attributes()
    found = next((n for n in sorted(names) if n in schemas), None)
    return dict(schemas[found]) if found is not None else None


def shape(a: str, b: str) -> float | None:
    """Jaccard similarity of the ONNX schemas of two compact op names; None when either has
    none."""
    schemas = _schemas()
    fa, fb = schemas.get(a), schemas.get(b)
    if fa is None or fb is None or not fa | fb:
        return None
    return len(fa & fb) / len(fa | fb)


def similar_ops(name: str, known: dict[str, list[vocab.Value]]) -> list[tuple[str, float]]:
    """Existing ops by their similarity to ``name``, most similar first."""
    target = vocab.compact(name)
    shaped = target in _schemas()
    scored = []
    for token, values in known.items():
        spelt = vocab.spellings(values)
        spelling = max(difflib.SequenceMatcher(None, target, s).ratio() for s in spelt)
        if shaped:
            form = max((s for s in (shape(target, s) for s in spelt) if s is not None), default=0.0)
            spelling = (spelling + form) / 2
        scored.append((token, spelling))
    return sorted(scored, key=lambda x: (-x[1], x[0]))
