"""The linear-algebra family: GEMM, MATMUL, MATMUL_INTEGER (→ GEMM_I8), QLINEARMATMUL."""

from __future__ import annotations

from stack.kmd.dtypes import DType
from stack.kmd.kernels.ids import KernelId
from stack.umd.errors import InvalidRequestError, ShapeError, UnsupportedDtypeError
from stack.umd.ops import OpKind, OpRequest
from stack.umd.plan import KernelCall, Semantic
from stack.umd.registry import OpTranslator
from stack.umd.templates import QUANT, TemplateRegistry
from stack.umd.translators._common import (
    Builder,
    attr_float,
    attr_int,
    broadcast,
    check_dtype,
    need_counts,
    same_dtype,
)

_KERNEL = {
    OpKind.GEMM: KernelId.GEMM,
    OpKind.MATMUL: KernelId.MATMUL,
    OpKind.MATMUL_INTEGER: KernelId.GEMM_I8,
    OpKind.QLINEARMATMUL: KernelId.QLINEARMATMUL,
}


def matmul_shape(a: tuple[int, ...], b: tuple[int, ...], field: str) -> tuple[int, ...]:
    """numpy.matmul's output shape (1-D operands promoted, batch dims broadcast)."""
    if not a or not b:
        raise ShapeError("matmul operands must have at least one dim", field=field)
    a2 = (1, *a) if len(a) == 1 else a
    b2 = (*b, 1) if len(b) == 1 else b
    if a2[-1] != b2[-2]:
        raise ShapeError(f"inner dims differ: {a} @ {b}", field=field)
    batch = broadcast(a2[:-2], b2[:-2], field)
    out = (*batch, a2[-2], b2[-1])
    if len(a) == 1:
        out = out[:-2] + out[-1:]
    if len(b) == 1:
        out = out[:-1]
    return out


class LinearTranslator(OpTranslator):
    """Matrix products; all take their operands as given (no layout)."""

    family = "linear"
    ops = frozenset(_KERNEL)

    def parse(self, req: OpRequest, templates: TemplateRegistry) -> Semantic:
        kernel = _KERNEL[req.op]
        attrs = req.attr_map()
        b = Builder(req)
        if req.op is OpKind.GEMM:
            need_counts(req, (2, 3))
            same_dtype(req, (0, 1, 2))
            kattrs: dict = {
                "trans_a": attr_int(attrs, "trans_a", 0),
                "trans_b": attr_int(attrs, "trans_b", 0),
                "relu": attr_int(attrs, "relu", 0),
                "alpha": attr_float(attrs, "alpha", 1.0),
                "beta": attr_float(attrs, "beta", 1.0),
            }
        elif req.op is OpKind.MATMUL:
            need_counts(req, (2, 2))
            same_dtype(req, (0, 1))
            kattrs = {}
        elif req.op is OpKind.MATMUL_INTEGER:
            need_counts(req, (2, 4))
            kattrs = {}
            if req.outputs[0].dtype is not DType.I32:
                raise UnsupportedDtypeError("MATMUL_INTEGER writes I32", field="outputs[0].dtype")
        else:
            need_counts(req, (8, 8))
            kattrs = {}
            for i in (2, 5, 7):
                if req.inputs[i].dtype not in QUANT:
                    raise UnsupportedDtypeError(
                        "zero points must be I8 or U8", field=f"inputs[{i}].dtype"
                    )
        check_dtype(templates, kernel, req.inputs[0].dtype, "inputs[0].dtype")
        if req.op in (OpKind.MATMUL_INTEGER, OpKind.QLINEARMATMUL):
            other = 3 if req.op is OpKind.QLINEARMATMUL else 1
            check_dtype(templates, kernel, req.inputs[other].dtype, f"inputs[{other}].dtype")
        params = tuple(b.input(i) for i in range(len(req.inputs)))
        call = KernelCall(kernel, (*params, b.output(0)), len(params), kattrs)
        return b.build(call)

    def infer(self, call: KernelCall) -> tuple[tuple[int, ...], ...]:
        ins = call.ins
        if call.kernel_id is KernelId.GEMM:
            a, bsh = ins[0].shape, ins[1].shape
            if len(a) != 2 or len(bsh) != 2:
                raise ShapeError(f"GEMM takes 2-D A and B, got {a} and {bsh}", field="inputs")
            m, k = (a[1], a[0]) if call.attrs["trans_a"] else a
            k2, n = (bsh[1], bsh[0]) if call.attrs["trans_b"] else bsh
            if k != k2:
                raise ShapeError(f"GEMM inner dims differ: {k} vs {k2}", field="inputs[1].shape")
            if len(ins) > 2 and broadcast(ins[2].shape, (m, n), "inputs[2].shape") != (m, n):
                raise ShapeError(
                    f"C {ins[2].shape} does not broadcast to ({m}, {n})", field="inputs[2].shape"
                )
            return ((m, n),)
        if call.kernel_id is KernelId.QLINEARMATMUL:
            return (matmul_shape(ins[0].shape, ins[3].shape, "inputs[3].shape"),)
        if call.kernel_id is KernelId.GEMM_I8 and len(ins) > 4:
            raise InvalidRequestError("too many inputs", field="inputs")
        return (matmul_shape(ins[0].shape, ins[1].shape, "inputs[1].shape"),)
