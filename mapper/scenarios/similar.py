"""Which existing op a new one is most like: by spelling, and by shape where the op is known.

The spelling similarity (:func:`spelling`) is the mean of difflib's character ratio between
the compact names and the Jaccard similarity of their words (ONNX writes the words:
``CenterCropPad`` has more characters in common with ``Expand``, and the word ``Pad`` with
``Pad``), the best over each op's spellings (its token, its values' string values). Spelling
alone takes ``ConvTranspose`` for a kind of ``Transpose``. Where the new name is an ONNX
operator (the ``onnx`` package's schemas, read offline) and an existing op's string value is
one too, their *shape* is compared as well: the Jaccard similarity of their inputs', outputs'
and attributes' names, each input that takes only quantised element types counted once more
(``ConvTranspose`` shares ``X``, ``W``, ``B``, ``Y`` and six attributes with ``Conv``, nothing
with ``Transpose``; ``QLinearConv``'s quantised ``x`` and ``w`` are ``ConvInteger``'s).
An op's score is the mean of the two; without a schema for the new name, its spelling alone.

Replayed on the thirteen ops this repository's history added with the predictor choosing
the op itself (``python scripts/newop_history.py --own``), the words and the quantised
inputs raised the pooled file recall from 0.874 to 0.897 (precision 0.870 to 0.886) and the
symbol recall from 0.743 to 0.778 (precision 0.808 to 0.835): AffineGrid now follows
GridSample, QLinearConv ConvInteger, DynamicQuantizeLinear QuantizeLinear.
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
        features |= _inputs(schema)
        features |= {f"out:{o.name.lower()}" for o in schema.outputs}
        out[vocab.compact(schema.name)] = frozenset(features)
    return out


#: Below this similarity the most similar op is a weak match, and the walk says so. Of the
#: thirteen ops in this repository's history (``scripts/newop_history.py --own``), two were
#: chosen below it: ReverseSequence (relu, 0.16; file recall 0.78, where GatherElements, the
#: op its implementer followed, gives 0.93) and CenterCropPad (expand, 0.19; 0.94, where Pad
#: gives 1.00).
WEAK = 0.2

#: Element types of a quantised tensor.
_QUANTISED = frozenset({"tensor(int8)", "tensor(uint8)", "tensor(int4)", "tensor(uint4)"})


def _inputs(schema: Any) -> set[str]:
    """A feature per input (its name), and one more per input that takes only quantised
    element types (``QLinearConv``'s ``x`` is ConvInteger's quantised ``x``, not Conv's)."""
    allowed = {c.type_param_str: set(c.allowed_type_strs) for c in schema.type_constraints}
    out = set()
    for i in schema.inputs:
        name = i.name.lower()
        out.add(f"in:{name}")
        if allowed.get(i.type_str, {i.type_str}) <= _QUANTISED:
            out.add(f"in:{name}:quantised")
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


@cache
def _choices() -> dict[str, frozenset[str]]:
    """Compact ONNX operator name → its string attributes that have a default value."""
    return {
        vocab.compact(schema.name): frozenset(
            a
            for a, v in schema.attributes.items()
            if str(v.type).endswith(".STRING") and v.default_value.s
        )
        for schema in onnx_schemas()
    }


def choices(name: str) -> frozenset[str]:
    """The string attributes of the ONNX operator ``name`` (compact) that choose among named
    values: those with a default (Pad's ``mode``, ``constant`` unless set). One without a
    default holds free text (Einsum's ``equation``, RegexFullMatch's ``pattern``). Empty for
    a name that is no ONNX operator."""
    return _choices().get(name, frozenset())


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


@cache
def _onnx_names() -> dict[str, str]:
    """Compact ONNX operator name → the name as ONNX writes it (``qlinearconv`` →
    ``QLinearConv``)."""
    return {vocab.compact(s.name): s.name for s in onnx_schemas()}


@cache
def _words(compact: str) -> frozenset[str]:
    """The words of a compact op name, from its ONNX spelling (``qlinearconv`` → qlinear,
    conv); the name as one word when ONNX has no such operator."""
    written = _onnx_names().get(compact)
    return frozenset(vocab.glued(vocab.words(written)) if written else (compact,))


def spelling(a: str, b: str) -> float:
    """How alike two compact op names are spelt: the mean of difflib's character ratio and
    the Jaccard similarity of their words (``CenterCropPad`` shares the word ``Pad`` with
    ``Pad``, and more characters with ``Expand`` than with it)."""
    wa, wb = _words(a), _words(b)
    return (difflib.SequenceMatcher(None, a, b).ratio() + len(wa & wb) / len(wa | wb)) / 2


def similar_ops(name: str, known: dict[str, list[vocab.Value]]) -> list[tuple[str, float]]:
    """Existing ops by their similarity to ``name``, most similar first."""
    target = vocab.compact(name)
    shaped = target in _schemas()
    scored = []
    for token, values in known.items():
        spelt = vocab.spellings(values)
        score = max(spelling(target, s) for s in spelt)
        if shaped:
            form = max((s for s in (shape(target, s) for s in spelt) if s is not None), default=0.0)
            score = (score + form) / 2
        scored.append((token, score))
    return sorted(scored, key=lambda x: (-x[1], x[0]))
