"""Scaled dot-product attention: ATTENTION (ONNX Attention, opsets 23 to 25; ``is_causal`` 0 or
1, ``qk_matmul_output_mode`` 0 to 3, ``softmax_precision`` 0, 1, 10 or 11, ``q_num_heads`` and
``kv_num_heads`` >= 0 (>= 1 for 3-D operands), ``left_window_size`` and ``right_window_size``
>= -1, ``scale`` >= 0 (0: 1 / sqrt(D)) and ``softcap``; another value an InvalidRequestError on
that attribute).

Inputs in ONNX's order: Q, K and V F32, F16 or F64, of one dtype (else an UnsupportedDtypeError
on inputs[j].dtype) and one rank, 3 or 4, then the optional attn_mask (BOOL or Q's dtype),
past_key and past_value (Q's dtype) and nonpad_kv_seqlen (I64; its past_key and past_value
empty). Four outputs of Q's dtype, always written: Y, present_key, present_value and
qk_matmul_output. Shapes as the kernel's (:mod:`stack.kmd.kernels.attention`), else a
ShapeError on the field. The kernel reads 4-D operands in their logical order, so one stored
NHWC is transposed first and a 4-D output asked NHWC is transposed back; 3-D and smaller ones
are taken as stored.
"""

from __future__ import annotations

from stack.kmd.dtypes import DType
from stack.kmd.kernels.attention import DEFAULT_INTS, SoftmaxPrecision
from stack.kmd.kernels.ids import KernelId
from stack.umd.errors import InvalidRequestError, ShapeError, UnsupportedDtypeError
from stack.umd.ops import Layout, OpKind, OpRequest
from stack.umd.plan import KernelCall, Semantic
from stack.umd.registry import OpTranslator
from stack.umd.templates import TemplateRegistry
from stack.umd.translators._common import (
    Builder,
    attr_float,
    attr_int,
    broadcast,
    check_dtype,
    need_counts,
    same_dtype,
)

_KERNEL = KernelId.ATTENTION
_INTS = ("is_causal", "q_num_heads", "kv_num_heads", "qk_matmul_output_mode",
         "softmax_precision", "left_window_size", "right_window_size")  # fmt: skip
_ALLOWED = {
    "is_causal": (0, 1),
    "qk_matmul_output_mode": (0, 1, 2, 3),
    "softmax_precision": tuple(SoftmaxPrecision),
}


def _invalid(name: str, why: str) -> InvalidRequestError:
    return InvalidRequestError(f"ATTENTION {name} {why}", field=f"attrs.{name}")


def _shape_error(field: str, want: object, got: tuple[int, ...]) -> ShapeError:
    return ShapeError(f"ATTENTION {field} must be {want}, got {got}", field=field)


def _dtype_error(j: int, want: str, got: DType) -> UnsupportedDtypeError:
    return UnsupportedDtypeError(f"ATTENTION inputs[{j}] must be {want}, got {got.name}",
                                 field=f"inputs[{j}].dtype")  # fmt: skip


class AttentionTranslator(OpTranslator):
    """ATTENTION → the attention kernel on Q, K, V, the optional attn_mask, past_key,
    past_value and nonpad_kv_seqlen, and its four outputs (4-D ones in logical order)."""

    family = "attention"
    ops = frozenset({OpKind.ATTENTION})

    def parse(self, req: OpRequest, templates: TemplateRegistry) -> Semantic:
        need_counts(req, (3, 7), 4)
        check_dtype(templates, _KERNEL, req.inputs[0].dtype, "inputs[0].dtype")
        same_dtype(req, tuple(j for j in (0, 1, 2, 4, 5) if j < len(req.inputs)))
        same_dtype(req, (0, 1, 2, 3), "outputs")
        q = req.inputs[0].dtype
        if len(req.inputs) > 3 and req.inputs[3].dtype not in (q, DType.BOOL):
            raise _dtype_error(3, f"BOOL or {q.name}", req.inputs[3].dtype)
        if len(req.inputs) > 6 and req.inputs[6].dtype is not DType.I64:
            raise _dtype_error(6, "I64", req.inputs[6].dtype)
        attrs = req.attr_map()
        imm: dict[str, int | float] = {}
        for name, default in zip(_INTS, DEFAULT_INTS, strict=True):
            value = attr_int(attrs, name, default)
            if value not in _ALLOWED.get(name, (value,)) or value < min(default, 0):
                raise _invalid(name, f"{value} is out of range")
            imm[name] = value
        if len(req.inputs[0].shape) == 3 and min(imm["q_num_heads"], imm["kv_num_heads"]) < 1:
            raise _invalid("q_num_heads", "and kv_num_heads are needed by 3-D operands")
        imm["scale"] = attr_float(attrs, "scale", 0.0)
        imm["softcap"] = attr_float(attrs, "softcap", 0.0)
        if imm["scale"] < 0:
            raise _invalid("scale", f"{imm['scale']} is negative")
        b = Builder(req)
        ins = tuple(b.input(j, Layout.NCHW if len(d.shape) == 4 else Layout.ANY)
                    for j, d in enumerate(req.inputs))  # fmt: skip
        outs = tuple(b.output(j, Layout.NCHW if len(d.shape) == 4 else Layout.ANY)
                     for j, d in enumerate(req.outputs))  # fmt: skip
        return b.build(KernelCall(_KERNEL, (*ins, *outs), len(ins), imm))

    def infer(self, call: KernelCall) -> tuple[tuple[int, ...], ...]:
        q, k, v = (p.shape for p in call.ins[:3])
        if len(q) not in (3, 4) or len(k) != len(q) or len(v) != len(q):
            raise _shape_error("inputs[0].shape", "3-D or 4-D like K and V", q)
        hq, hkv = (q[1], k[1]) if len(q) == 4 else (call.i("q_num_heads"), call.i("kv_num_heads"))
        if len(q) == 3 and (q[2] % hq or k[2] % hkv or v[2] % hkv):
            raise _shape_error("inputs[0].shape", f"split by {hq} and {hkv} heads", q)
        split = (lambda t, h: t) if len(q) == 4 else (lambda t, h: (t[0], h, t[1], t[2] // h))
        q4, k4, v4 = split(q, hq), split(k, hkv), split(v, hkv)
        if hq % hkv or k4[0] != q4[0] or k4[3] != q4[3] or v4[:3] != k4[:3]:
            raise _shape_error("inputs[1].shape", f"heads dividing {hq}, head size {q4[3]}", k)
        past = call.ins[4].shape[2] if len(call.ins) > 5 and len(call.ins[4].shape) == 4 else 0
        for j, d in ((4, k4[3]), (5, v4[3])):
            if len(call.ins) > j and call.ins[j].shape != (q4[0], hkv, past, d):
                raise _shape_error(f"inputs[{j}].shape", (q4[0], hkv, past, d), call.ins[j].shape)
        total = past + k4[2]
        scores = (*q4[:3], total)
        if len(call.ins) > 3:
            m = call.ins[3].shape
            padded = broadcast((*m[:-1], total), scores, "inputs[3].shape")
            if not 1 <= len(m) <= 4 or m[-1] > total or padded != scores:
                raise _shape_error("inputs[3].shape", f"broadcast to {scores}, padded", m)
        if len(call.ins) > 6 and (call.ins[6].shape != (q4[0],) or past):
            raise _shape_error("inputs[6].shape", f"({q4[0]},) with an empty past",
                               call.ins[6].shape)  # fmt: skip
        y = (q[0], q[1], hq * v4[3]) if len(q) == 3 else (*q4[:3], v4[3])
        return (y, (*k4[:2], total, k4[3]), (*v4[:2], total, v4[3]), scores)
