"""Einstein summation: EINSUM (ONNX Einsum, opset 12; ``equation``, a string, required).

The equation is ``term,term,...`` with an optional ``->output``, one term per input; a term is
letters (a-z, A-Z) with at most one ellipsis ``...``, whitespace ignored. Without ``->`` the
output is the ellipsis (when an input has one) then the letters appearing once, in ASCII order;
an explicit output names each letter at most once and only letters some input has. Anything
else is an InvalidRequestError on attrs.equation, as is a term count other than the input count.

The inputs (one or more) are F32, F16, F64, I32 or I64, all of one dtype (else an
UnsupportedDtypeError on inputs[0].dtype or on inputs[i].dtype), and Y is of that dtype (else
one on outputs[0].dtype). A term without an ellipsis has one letter per axis of its input, one
with an ellipsis at most that many (else a ShapeError on inputs[i].shape); the ellipsis stands
for the input's remaining leading axes, which broadcast against the other inputs' (right
aligned, a size 1 stretching) while the axes of one letter all have one size (else a ShapeError
on inputs[i].shape). Y's shape is its labels' sizes.

The kernel gets no string: the equation, resolved against the shapes, is the int list
``subscripts`` of :mod:`stack.kmd.kernels.einsum` - one label per axis of each input then of Y,
the letters a-z, A-Z labels 0..51 and the broadcast batch's axes 52, 53, ... from its left. The
equation names the axes in their logical order, so a 4-D operand stored NHWC is transposed into
NCHW first and a 4-D Y asked NHWC transposed back after, as the NCHW kernels' operands.
"""

from __future__ import annotations

import string

from stack.kmd.blob import MAX_ITEMS
from stack.kmd.kernels.ids import KernelId
from stack.umd.errors import InvalidRequestError, ShapeError
from stack.umd.ops import Layout, OpKind, OpRequest
from stack.umd.plan import KernelCall, Semantic
from stack.umd.registry import OpTranslator
from stack.umd.templates import TemplateRegistry
from stack.umd.translators._common import Builder, check_dtype, need_counts, same_dtype

_KERNEL = KernelId.EINSUM
_ELLIPSIS = "."
#: The first label of the axes an ellipsis stands for (the letters are 0..51).
BATCH_LABEL = len(string.ascii_letters)


def _bad(why: str) -> InvalidRequestError:
    return InvalidRequestError(f"EINSUM equation {why}", field="attrs.equation")


def terms_of(equation: object, n_inputs: int) -> tuple[list[str], str]:
    """The input terms and the output term of ``equation`` (an ellipsis written ``.``; the
    implicit output made explicit); an InvalidRequestError on attrs.equation if it is none."""
    if not isinstance(equation, str):
        raise _bad(f"must be a string, got {equation!r}")
    eq = "".join(equation.split())
    lhs, arrow, rhs = eq.partition("->")
    written = lhs.split(",") + ([rhs] if arrow else [])
    for t in written:
        if t.count("...") > 1 or t.replace("...", "").strip(string.ascii_letters):
            raise _bad(f"{eq!r}: term {t!r} is not letters with at most one '...'")
    terms = [t.replace("...", _ELLIPSIS) for t in written]
    ins = terms[:-1] if arrow else terms
    if len(ins) != n_inputs:
        raise _bad(f"{eq!r} has {len(ins)} input terms for {n_inputs} inputs")
    letters = "".join(ins).replace(_ELLIPSIS, "")
    if not arrow:
        once = sorted(c for c in set(letters) if letters.count(c) == 1)
        return ins, (_ELLIPSIS if _ELLIPSIS in "".join(ins) else "") + "".join(once)
    out = terms[-1]
    if len(set(out)) != len(out) or any(c not in letters for c in out.replace(_ELLIPSIS, "")):
        raise _bad(f"{eq!r}: the output {rhs!r} repeats a letter or names one no input has")
    return ins, out


def subscripts(ins: list[str], out: str, ranks: list[int]) -> tuple[int, ...]:
    """The kernel's labels of ``ins`` over inputs of ``ranks``, then of ``out``; a ShapeError
    on inputs[i].shape when a term does not fit its input's rank."""
    widths = []
    for i, (term, rank) in enumerate(zip(ins, ranks, strict=True)):
        named = len(term.replace(_ELLIPSIS, ""))
        width = rank - named if _ELLIPSIS in term else 0
        if width < 0 or (_ELLIPSIS not in term and named != rank):
            raise ShapeError(f"EINSUM term {term.replace(_ELLIPSIS, '...')!r} does not fit "
                             f"inputs[{i}] of rank {rank}", field=f"inputs[{i}].shape")  # fmt: skip
        widths.append(width)
    batch = max(widths, default=0)

    def labels(term: str, width: int) -> list[int]:
        got: list[int] = []
        for c in term:
            if c == _ELLIPSIS:
                got += range(BATCH_LABEL + batch - width, BATCH_LABEL + batch)
            else:
                got.append(string.ascii_letters.index(c))
        return got

    flat = [lb for term, w in zip(ins, widths, strict=True) for lb in labels(term, w)]
    return (*flat, *labels(out, batch))


def _name(label: int) -> str:
    return string.ascii_letters[label] if label < BATCH_LABEL else f"... axis {label - BATCH_LABEL}"


class EinsumTranslator(OpTranslator):
    """EINSUM → the Einstein-sum kernel on every input and Y (NCHW when 4-D), the equation
    encoded as the int list ``subscripts``."""

    family = "einsum"
    ops = frozenset({OpKind.EINSUM})

    def parse(self, req: OpRequest, templates: TemplateRegistry) -> Semantic:
        need_counts(req, (1, MAX_ITEMS))
        check_dtype(templates, _KERNEL, req.inputs[0].dtype, "inputs[0].dtype")
        same_dtype(req, tuple(range(len(req.inputs))))
        same_dtype(req, (0,), "outputs")
        if "equation" not in req.attr_map():
            raise _bad("is required")
        ins, out = terms_of(req.attr_map()["equation"], len(req.inputs))
        b = Builder(req)

        def logical(shape: tuple[int, ...]) -> Layout:
            return Layout.NCHW if len(shape) == 4 else Layout.ANY

        xs = tuple(b.input(i, logical(d.shape)) for i, d in enumerate(req.inputs))
        labels = subscripts(ins, out, [len(x.shape) for x in xs])
        y = b.output(0, logical(req.outputs[0].shape))
        return b.build(KernelCall(_KERNEL, (*xs, y), len(xs), {"subscripts": labels}))

    def infer(self, call: KernelCall) -> tuple[tuple[int, ...], ...]:
        labels = tuple(int(v) for v in call.attrs["subscripts"])  # type: ignore[union-attr]
        sizes: dict[int, int] = {}
        at = 0
        for i, x in enumerate(call.ins):
            own: dict[int, int] = {}
            for lb, n in zip(labels[at : at + len(x.shape)], x.shape, strict=True):
                have = sizes.get(lb, n)
                stretch = lb >= BATCH_LABEL and 1 in (have, n)
                if own.get(lb, n) != n or (have != n and not stretch):
                    why = f"EINSUM {_name(lb)} of inputs[{i}] {x.shape} has size {n}"
                    raise ShapeError(f"{why}, not {own.get(lb, have)}", field=f"inputs[{i}].shape")
                own[lb] = n
                sizes[lb] = n if have == 1 else have
            at += len(x.shape)
        return (tuple(sizes[lb] for lb in labels[at:]),)
