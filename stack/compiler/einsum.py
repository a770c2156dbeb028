"""Einsum: its shape and dtype rule (registered into :mod:`stack.compiler.shape_rules`' registry
on import), the check of its equation and operands the importer shares, and its constant-folding
evaluator (registered by :mod:`stack.compiler.evaluate`, since evaluate_ops is at its 300
lines).

The IR ``Einsum`` carries ONNX's ``equation`` string as it is: one term of letters (a-z, A-Z)
with at most one ellipsis ``...`` per input, then an optional ``->`` and the output term, which
names each letter at most once and only letters of the inputs; whitespace is ignored. Without
``->`` the output is the ellipsis (when an input has one) then the letters appearing once, in
ASCII order (NumPy's and ONNX's reference's rule). The inputs, one or more, are of one element
type of :data:`EINSUM_TYPES`; a term without an ellipsis has one letter per axis of its input,
one with an ellipsis at most that many, the ellipsis standing for the leading axes left, which
broadcast right-aligned against the other inputs' (a size 1 stretching); the axes of one letter
have one size. The result is of the inputs' type, its shape the output labels' sizes. Folding
computes as the device kernel does (:mod:`stack.kmd.kernels.einsum`): the Einstein sum in
float64 (int64 for integers), written once to the inputs' type.
"""

from __future__ import annotations

import string
from collections.abc import Mapping, Sequence

import numpy as np

from stack.compiler.ir import ElemType, Node, OpType, TensorType
from stack.compiler.shape_rules import _fail, register

#: The element types Einsum computes (the device kernel's, ONNX's and onnxruntime's in common).
EINSUM_TYPES = (ElemType.F32, ElemType.F16, ElemType.F64, ElemType.I32, ElemType.I64)
_ELLIPSIS = "."


def parse(equation: str, n_inputs: int) -> tuple[list[str], str] | str:
    """The input terms and the output term of ``equation`` (an ellipsis written ``.``, an
    implicit output made explicit), or what makes it no equation over ``n_inputs`` inputs."""
    eq = "".join(equation.split())
    lhs, arrow, rhs = eq.partition("->")
    written = lhs.split(",") + ([rhs] if arrow else [])
    for t in written:
        if t.count("...") > 1 or t.replace("...", "").strip(string.ascii_letters):
            return f"equation {eq!r}: term {t!r} is not letters with at most one '...'"
    terms = [t.replace("...", _ELLIPSIS) for t in written]
    ins = terms[:-1] if arrow else terms
    if len(ins) != n_inputs:
        return f"equation {eq!r} has {len(ins)} input terms for {n_inputs} inputs"
    letters = "".join(ins).replace(_ELLIPSIS, "")
    if not arrow:
        once = sorted(c for c in set(letters) if letters.count(c) == 1)
        return ins, (_ELLIPSIS if _ELLIPSIS in "".join(ins) else "") + "".join(once)
    out = terms[-1]
    if len(set(out)) != len(out) or any(c not in letters for c in out.replace(_ELLIPSIS, "")):
        return f"equation {eq!r}: the output {rhs!r} repeats a letter or names one no input has"
    return ins, out


def output_type(equation: str, types: Sequence[TensorType]) -> TensorType | str:
    """The result type of ``equation`` over inputs of ``types``, or what makes them no Einsum."""
    if not types or types[0].dtype not in EINSUM_TYPES:
        got = types[0].dtype.value if types else "no inputs"
        return f"takes one or more inputs of {', '.join(t.value for t in EINSUM_TYPES)}, got {got}"
    for i, t in enumerate(types):
        if t.dtype != types[0].dtype:
            first = types[0].dtype.value
            return f"takes inputs of one type, input {i} is {t.dtype.value}, not {first}"
    parsed = parse(equation, len(types))
    if isinstance(parsed, str):
        return parsed
    ins, out = parsed
    sizes: dict[str, int] = {}
    batch: list[int] = []  # the broadcast ellipsis axes, right-aligned
    for i, (term, t) in enumerate(zip(ins, types, strict=True)):
        named = term.replace(_ELLIPSIS, "")
        width = len(t.shape) - len(named)
        if width < 0 or (_ELLIPSIS not in term and width):
            return f"term {term.replace(_ELLIPSIS, '...')!r} does not fit input {i} {t}"
        at = term.find(_ELLIPSIS)
        dims = t.shape[at : at + width] if at >= 0 else ()
        lettered = t.shape[:at] + t.shape[at + width :] if at >= 0 else t.shape
        for c, n in zip(named, lettered, strict=True):
            if sizes.setdefault(c, n) != n:
                return f"letter {c!r} has size {n} on input {i} {t}, not {sizes[c]}"
        pad = [1] * (len(dims) - len(batch))
        batch = pad + batch
        for k, n in enumerate(dims, start=len(batch) - len(dims)):
            if batch[k] != n and 1 not in (batch[k], n):
                return f"the ellipsis axes of input {i} {t} do not broadcast to {tuple(batch)}"
            batch[k] = n if batch[k] == 1 else batch[k]
    shape: list[int] = []
    for c in out:
        shape += batch if c == _ELLIPSIS else [sizes[c]]
    return TensorType(types[0].dtype, tuple(shape))


def problem(equation: object, types: Sequence[TensorType]) -> str | None:
    """What makes ``equation`` over inputs of ``types`` no Einsum, or None when it fits."""
    if not isinstance(equation, str):
        return f"takes a string equation, got {equation!r}"
    got = output_type(equation, types)
    return got if isinstance(got, str) else None


@register(OpType.EINSUM)
def _einsum(node: Node, t: Sequence[TensorType | None], c: Mapping[str, np.ndarray]) -> list:
    if any(x is None for x in t):
        raise _fail(node, "Einsum inputs are all required")
    equation = node.attr("equation", None)
    why = problem(equation, t)  # type: ignore[arg-type]
    if why is not None:
        raise _fail(node, f"Einsum {why}")
    return [output_type(str(equation), t)]  # type: ignore[arg-type]


def evaluate(node: Node, a: Sequence[np.ndarray]) -> list[np.ndarray]:
    """The Einstein sum of constant inputs, in float64 (int64 for integers), written once to
    their type."""
    xs = [np.asarray(v) for v in a]
    dtype = xs[0].dtype
    wide = np.int64 if dtype.kind in "iu" else np.float64
    parsed = parse(str(node.attr("equation", "")), len(xs))
    assert not isinstance(parsed, str), parsed  # the shape rule refused it before
    ins, out = parsed
    eq = ",".join(ins).replace(_ELLIPSIS, "...") + "->" + out.replace(_ELLIPSIS, "...")
    with np.errstate(all="ignore"):  # IEEE results (inf * 0, overflow) are the answer
        y = np.einsum(eq, *(x.astype(wide) for x in xs), optimize=True)
    return [np.asarray(y).astype(dtype)]
