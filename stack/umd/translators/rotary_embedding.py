"""Rotary position embedding: ROTARY_EMBEDDING (ONNX RotaryEmbedding, opset 23; ``interleaved``
0 or 1, default 0; ``num_heads`` >= 0, default 0, needed by a 3-D X; ``rotary_embedding_dim``
>= 0, default 0 meaning the head size; another value an InvalidRequestError on that attribute).

Inputs in ONNX's order: X [B, H, S, D] or [B, S, H * D] F32, F16 or F64 (else an
UnsupportedDtypeError on inputs[0].dtype; another rank a ShapeError on inputs[0].shape, a 3-D X
without num_heads an InvalidRequestError on attrs.num_heads, a hidden size num_heads does not
divide a ShapeError on inputs[0].shape), cos_cache and sin_cache of X's dtype (else an
UnsupportedDtypeError on inputs[j].dtype) and the optional position_ids I64 (else an
UnsupportedDtypeError on inputs[3].dtype). With position_ids [B, S] (else a ShapeError on
inputs[3].shape) the caches are [P, R / 2], without them [B, S, R / 2] (else a ShapeError on
inputs[j].shape); R, the rotary dimension, is even and at most the head size D (else an
InvalidRequestError on attrs.rotary_embedding_dim). Y is X's shape and dtype (else an
UnsupportedDtypeError or a ShapeError on outputs[0]). The kernel reads X's axes in their logical
order, so a 4-D X stored NHWC is transposed first and a 4-D Y asked NHWC is transposed back, as
the NCHW kernels' operands; the caches and position_ids are taken as stored.
"""

from __future__ import annotations

from stack.kmd.dtypes import DType
from stack.kmd.kernels.ids import KernelId
from stack.umd.errors import InvalidRequestError, ShapeError, UnsupportedDtypeError
from stack.umd.ops import OpKind, OpRequest
from stack.umd.plan import KernelCall, Semantic
from stack.umd.registry import OpTranslator
from stack.umd.templates import TemplateRegistry
from stack.umd.translators._common import attr_int, check_dtype, nchw_call, need_counts, same_dtype

_KERNEL = KernelId.ROTARY_EMBEDDING


def _invalid(name: str, why: str) -> InvalidRequestError:
    return InvalidRequestError(f"ROTARY_EMBEDDING {name} {why}", field=f"attrs.{name}")


class RotaryEmbeddingTranslator(OpTranslator):
    """ROTARY_EMBEDDING → the rotary kernel on X (logical order), the caches, the optional
    position_ids and Y (logical order)."""

    family = "rotary_embedding"
    ops = frozenset({OpKind.ROTARY_EMBEDDING})

    def parse(self, req: OpRequest, templates: TemplateRegistry) -> Semantic:
        need_counts(req, (3, 4))
        check_dtype(templates, _KERNEL, req.inputs[0].dtype, "inputs[0].dtype")
        same_dtype(req, (0, 1, 2))
        same_dtype(req, (0,), "outputs")
        if len(req.inputs) > 3 and req.inputs[3].dtype is not DType.I64:
            raise UnsupportedDtypeError(
                f"position_ids must be I64, got {req.inputs[3].dtype.name}",
                field="inputs[3].dtype",
            )
        attrs = req.attr_map()
        ints = {n: attr_int(attrs, n, 0) for n in ("interleaved", "num_heads")}
        ints["rotary_embedding_dim"] = attr_int(attrs, "rotary_embedding_dim", 0)
        if ints["interleaved"] not in (0, 1):
            raise _invalid("interleaved", f"must be 0 or 1, got {ints['interleaved']}")
        for name in ("num_heads", "rotary_embedding_dim"):
            if ints[name] < 0:
                raise _invalid(name, f"must be >= 0, got {ints[name]}")
        if len(req.inputs[0].shape) == 3 and ints["num_heads"] == 0:
            raise _invalid("num_heads", f"is needed by a 3-D X {req.inputs[0].shape}")
        return nchw_call(req, _KERNEL, ints)

    def infer(self, call: KernelCall) -> tuple[tuple[int, ...], ...]:
        x = call.ins[0].shape
        if len(x) not in (3, 4):
            raise ShapeError(f"ROTARY_EMBEDDING takes X [B, H, S, D] or [B, S, H * D], got {x}",
                             field="inputs[0].shape")  # fmt: skip
        heads = call.i("num_heads")
        if len(x) == 3 and x[2] % heads:
            raise ShapeError(f"num_heads {heads} does not divide X's hidden size {x[2]}",
                             field="inputs[0].shape")  # fmt: skip
        b, s, head = (x[0], x[2], x[3]) if len(x) == 4 else (x[0], x[1], x[2] // heads)
        rot = call.i("rotary_embedding_dim") or head
        if rot % 2 or rot > head:
            raise _invalid("rotary_embedding_dim", f"{rot} must be even and at most the head "
                           f"size {head}")  # fmt: skip
        positions = len(call.ins) > 3
        if positions and call.ins[3].shape != (b, s):
            raise ShapeError(f"position_ids must be {(b, s)} for X {x}, got {call.ins[3].shape}",
                             field="inputs[3].shape")  # fmt: skip
        for j in (1, 2):
            c = call.ins[j].shape
            if (len(c) != 2 or c[1] != rot // 2) if positions else c != (b, s, rot // 2):
                want = f"[P, {rot // 2}]" if positions else str((b, s, rot // 2))
                raise ShapeError(f"inputs[{j}] must be {want} for X {x}, got {c}",
                                 field=f"inputs[{j}].shape")  # fmt: skip
        return (x,)
