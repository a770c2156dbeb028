"""The point-wise family: UNARY and BINARY (functions named by the ``fn`` attribute), WHERE, CAST.

``fn`` is the ONNX op name (``"Exp"``, ``"Pow"``, ``"Less"``...), the request vocabulary; the
translator maps it onto the kernel's function code. UNARY also reads ``alpha``, ``beta``,
``i0``, ``i1``; BINARY reads ``i0`` (Mod's ``fmod``). Outputs: BOOL for predicates, comparisons
and logic, else the first input's dtype (CAST: any).
"""

from __future__ import annotations

from collections.abc import Mapping

from stack.kmd.dtypes import DType
from stack.kmd.kernels.binary import BinaryFn
from stack.kmd.kernels.ids import KernelId
from stack.kmd.kernels.unary import UnaryFn
from stack.umd.errors import InvalidRequestError, UnsupportedDtypeError
from stack.umd.ops import OpKind, OpRequest
from stack.umd.plan import KernelCall, Semantic
from stack.umd.registry import OpTranslator
from stack.umd.templates import FLOATS, INTS, TemplateRegistry
from stack.umd.translators._common import (
    Builder,
    attr_float,
    attr_int,
    broadcast_inputs,
    need_counts,
    same_dtype,
)

UNARY_FNS: dict[str, UnaryFn] = {
    "Neg": UnaryFn.NEG, "Abs": UnaryFn.ABS, "Sqrt": UnaryFn.SQRT,
    "Reciprocal": UnaryFn.RECIPROCAL, "Exp": UnaryFn.EXP, "Log": UnaryFn.LOG,
    "Erf": UnaryFn.ERF, "Tanh": UnaryFn.TANH, "Sigmoid": UnaryFn.SIGMOID, "Gelu": UnaryFn.GELU,
    "HardSigmoid": UnaryFn.HARD_SIGMOID, "HardSwish": UnaryFn.HARD_SWISH,
    "LeakyRelu": UnaryFn.LEAKY_RELU, "Clip": UnaryFn.CLIP, "Ceil": UnaryFn.CEIL,
    "Floor": UnaryFn.FLOOR, "Round": UnaryFn.ROUND, "Sin": UnaryFn.SIN, "Cos": UnaryFn.COS,
    "Tan": UnaryFn.TAN, "Asin": UnaryFn.ASIN, "Acos": UnaryFn.ACOS, "Atan": UnaryFn.ATAN,
    "Sinh": UnaryFn.SINH, "Cosh": UnaryFn.COSH, "Asinh": UnaryFn.ASINH,
    "Acosh": UnaryFn.ACOSH, "Atanh": UnaryFn.ATANH, "Sign": UnaryFn.SIGN, "Not": UnaryFn.NOT,
    "BitwiseNot": UnaryFn.BITWISE_NOT, "Elu": UnaryFn.ELU, "Selu": UnaryFn.SELU,
    "Celu": UnaryFn.CELU, "Softplus": UnaryFn.SOFTPLUS, "Softsign": UnaryFn.SOFTSIGN,
    "ThresholdedRelu": UnaryFn.THRESHOLDED_RELU, "IsNaN": UnaryFn.ISNAN,
    "IsInf": UnaryFn.ISINF, "Mish": UnaryFn.MISH, "Shrink": UnaryFn.SHRINK, "Swish": UnaryFn.SWISH,
}  # fmt: skip
BINARY_FNS: dict[str, BinaryFn] = {
    "Pow": BinaryFn.POW, "Mod": BinaryFn.MOD, "Min": BinaryFn.MIN, "Max": BinaryFn.MAX,
    "Equal": BinaryFn.EQUAL, "Less": BinaryFn.LESS, "LessOrEqual": BinaryFn.LESS_EQUAL,
    "Greater": BinaryFn.GREATER, "GreaterOrEqual": BinaryFn.GREATER_EQUAL,
    "And": BinaryFn.AND, "Or": BinaryFn.OR, "Xor": BinaryFn.XOR,
    "BitwiseAnd": BinaryFn.BITWISE_AND, "BitwiseOr": BinaryFn.BITWISE_OR,
    "BitwiseXor": BinaryFn.BITWISE_XOR, "BitShiftLeft": BinaryFn.SHIFT_LEFT,
    "BitShiftRight": BinaryFn.SHIFT_RIGHT, "PRelu": BinaryFn.PRELU,
}  # fmt: skip
BOOLS = frozenset({DType.BOOL})
#: What the functions take and give (the kernels' contract, checked before submission).
INTEGER_FNS = frozenset({UnaryFn.NEG, UnaryFn.ABS, UnaryFn.SIGN, UnaryFn.BITWISE_NOT, UnaryFn.CLIP})
PREDICATES = frozenset({UnaryFn.ISNAN, UnaryFn.ISINF})
BINARY_PREDICATES = frozenset(
    {
        BinaryFn.EQUAL, BinaryFn.LESS, BinaryFn.LESS_EQUAL, BinaryFn.GREATER,
        BinaryFn.GREATER_EQUAL, BinaryFn.AND, BinaryFn.OR, BinaryFn.XOR,
    }
)  # fmt: skip
LOGIC = frozenset({BinaryFn.AND, BinaryFn.OR, BinaryFn.XOR})
INTEGER_ONLY = frozenset(
    {
        BinaryFn.BITWISE_AND, BinaryFn.BITWISE_OR, BinaryFn.BITWISE_XOR, BinaryFn.SHIFT_LEFT,
        BinaryFn.SHIFT_RIGHT,
    }
)  # fmt: skip
MIXED = frozenset({BinaryFn.POW})


def fn_code(req: OpRequest, table: Mapping[str, int]) -> int:
    """The function code the request's ``fn`` names in ``table`` (InvalidRequestError listing
    the known names otherwise)."""
    name = req.attr_map().get("fn")
    if not isinstance(name, str) or name not in table:
        known = ", ".join(sorted(table))
        raise InvalidRequestError(
            f"{req.op.name} needs attribute fn, one of: {known}; got {name!r}", field="attrs.fn"
        )
    return int(table[name])


def _need_dtype(dtype: DType, allowed: frozenset[DType], what: str, field: str) -> None:
    if dtype not in allowed:
        names = ", ".join(sorted(d.name for d in allowed))
        raise UnsupportedDtypeError(
            f"{what} does not take {dtype.name}; takes {names}", field=field
        )


def want_out(req: OpRequest, dtype: DType) -> None:
    got = req.outputs[0].dtype
    if got != dtype:
        raise UnsupportedDtypeError(
            f"{req.op.name} writes {dtype.name}, output is {got.name}", field="outputs[0].dtype"
        )


class PointwiseTranslator(OpTranslator):
    """Element-wise functions with broadcasting; the output shape is the inputs' broadcast."""

    family = "pointwise"
    ops = frozenset({OpKind.UNARY, OpKind.BINARY, OpKind.WHERE, OpKind.CAST})

    def parse(self, req: OpRequest, templates: TemplateRegistry) -> Semantic:
        attrs = req.attr_map()
        kattrs: dict = {}
        x = req.inputs[0].dtype if req.inputs else DType.F32
        if req.op is OpKind.UNARY:
            need_counts(req, (1, 1))
            ufn = UnaryFn(fn_code(req, UNARY_FNS))
            allowed = (
                BOOLS if ufn is UnaryFn.NOT else FLOATS | INTS if ufn in INTEGER_FNS else FLOATS
            )
            _need_dtype(x, allowed, f"UNARY {ufn.name}", "inputs[0].dtype")
            want_out(req, DType.BOOL if ufn in PREDICATES else x)
            kattrs = {
                "fn": int(ufn),
                "i0": attr_int(attrs, "i0", 0),
                "i1": attr_int(attrs, "i1", 0),
            }
            kattrs |= {
                "alpha": attr_float(attrs, "alpha", 0.0),
                "beta": attr_float(attrs, "beta", 0.0),
            }
            kernel = KernelId.UNARY
        elif req.op is OpKind.BINARY:
            need_counts(req, (2, 2))
            bfn = BinaryFn(fn_code(req, BINARY_FNS))
            allowed = BOOLS if bfn in LOGIC else INTS if bfn in INTEGER_ONLY else FLOATS | INTS
            _need_dtype(x, allowed, f"BINARY {bfn.name}", "inputs[0].dtype")
            if bfn in MIXED:
                _need_dtype(req.inputs[1].dtype, FLOATS | INTS, "an exponent", "inputs[1].dtype")
            else:
                same_dtype(req, (0, 1))
            want_out(req, DType.BOOL if bfn in BINARY_PREDICATES else x)
            kattrs = {"fn": int(bfn), "i0": attr_int(attrs, "i0", 0)}
            kernel = KernelId.BINARY
        elif req.op is OpKind.WHERE:
            need_counts(req, (3, 3))
            _need_dtype(x, BOOLS, "WHERE's condition", "inputs[0].dtype")
            same_dtype(req, (1, 2))
            want_out(req, req.inputs[1].dtype)
            kernel = KernelId.WHERE
        else:
            need_counts(req, (1, 1))
            kernel = KernelId.CAST
        b = Builder(req)
        ins = tuple(b.input(i) for i in range(len(req.inputs)))
        return b.build(KernelCall(kernel, (*ins, b.output(0)), len(ins), kattrs))

    def infer(self, call: KernelCall) -> tuple[tuple[int, ...], ...]:
        return (broadcast_inputs(call),)
