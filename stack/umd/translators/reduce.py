"""The reduction family: REDUCE (``fn`` = ONNX op name, ``axes``), ARG_REDUCE (``fn`` ArgMax /
ArgMin, ``axis``, ``keepdims``, ``select_last_index``), CUMSUM (``axis``, ``exclusive``,
``reverse``) and TOPK (``axis``, ``largest``, ``sorted``; k is the outputs' size on axis)."""

from __future__ import annotations

from stack.kmd.dtypes import DType
from stack.kmd.kernels.ids import KernelId
from stack.kmd.kernels.reduce import ReduceFn
from stack.umd.errors import InvalidRequestError, ShapeError
from stack.umd.ops import OpKind, OpRequest
from stack.umd.plan import KernelCall, Semantic
from stack.umd.registry import OpTranslator
from stack.umd.templates import TemplateRegistry
from stack.umd.translators._common import (
    Builder,
    attr_int,
    attr_ints,
    check_dtype,
    need_counts,
    same_dtype,
)
from stack.umd.translators.pointwise import fn_code, want_out

REDUCE_FNS = {
    "ReduceSum": ReduceFn.SUM, "ReduceMean": ReduceFn.MEAN, "ReduceMax": ReduceFn.MAX,
    "ReduceMin": ReduceFn.MIN, "ReduceProd": ReduceFn.PROD, "ReduceL1": ReduceFn.L1,
    "ReduceL2": ReduceFn.L2, "ReduceLogSum": ReduceFn.LOG_SUM,
    "ReduceLogSumExp": ReduceFn.LOG_SUM_EXP, "ReduceSumSquare": ReduceFn.SUM_SQUARE,
}  # fmt: skip
ARG_FNS = {"ArgMax": 0, "ArgMin": 1}
_KERNEL = {
    OpKind.REDUCE: KernelId.REDUCE,
    OpKind.ARG_REDUCE: KernelId.ARG_REDUCE,
    OpKind.CUMSUM: KernelId.CUMSUM,
    OpKind.TOPK: KernelId.TOPK,
}


def axis_of(value: int, ndim: int, field: str = "attrs.axis") -> int:
    """``value`` in ``[-ndim, ndim)`` made non-negative; InvalidRequestError otherwise."""
    if not -ndim <= value < ndim:
        raise InvalidRequestError(f"axis {value} out of range for {ndim} dims", field=field)
    return value + ndim if value < 0 else value


class ReduceTranslator(OpTranslator):
    """Reductions and scans along axes."""

    family = "reduce"
    ops = frozenset(_KERNEL)

    def parse(self, req: OpRequest, templates: TemplateRegistry) -> Semantic:
        kernel = _KERNEL[req.op]
        attrs = req.attr_map()
        need_counts(req, (1, 1), 2 if req.op is OpKind.TOPK else 1)
        check_dtype(templates, kernel, req.inputs[0].dtype, "inputs[0].dtype")
        ndim = len(req.inputs[0].shape)
        if req.op is OpKind.REDUCE:
            fn = fn_code(req, REDUCE_FNS)
            axes = attr_ints(attrs, "axes", None, tuple(range(ndim)))
            mask = 0
            for a in axes:
                mask |= 1 << axis_of(a, ndim, "attrs.axes")
            kattrs: dict = {
                "fn": fn,
                "axes_mask": mask,
                "keepdims": attr_int(attrs, "keepdims", 1),
            }
            want_out(req, req.inputs[0].dtype)
        elif req.op is OpKind.ARG_REDUCE:
            kattrs = {
                "fn": fn_code(req, ARG_FNS),
                "axis": axis_of(attr_int(attrs, "axis", 0), ndim),
                "select_last_index": attr_int(attrs, "select_last_index", 0),
                "keepdims": attr_int(attrs, "keepdims", 1),
            }
            want_out(req, DType.I64)
        elif req.op is OpKind.CUMSUM:
            kattrs = {
                "axis": axis_of(attr_int(attrs, "axis", 0), ndim),
                "exclusive": attr_int(attrs, "exclusive", 0),
                "reverse": attr_int(attrs, "reverse", 0),
                "prod": attr_int(attrs, "prod", 0),
            }
            want_out(req, req.inputs[0].dtype)
        else:
            kattrs = {
                "axis": axis_of(attr_int(attrs, "axis", -1), ndim),
                "largest": attr_int(attrs, "largest", 1),
                "sorted": attr_int(attrs, "sorted", 1),
            }
            same_dtype(req, (0,), "outputs")
            if req.outputs[1].dtype is not DType.I64:
                raise InvalidRequestError("TOPK's indices must be I64", field="outputs[1].dtype")
        b = Builder(req)
        outs = tuple(b.output(j) for j in range(len(req.outputs)))
        return b.build(KernelCall(kernel, (b.input(0), *outs), 1, kattrs))

    def infer(self, call: KernelCall) -> tuple[tuple[int, ...], ...]:
        x = call.ins[0].shape
        k = call.kernel_id
        if k is KernelId.CUMSUM:
            return (x,)
        if k is KernelId.TOPK:
            axis = call.i("axis")
            n = call.outs[0].shape[axis] if len(call.outs[0].shape) == len(x) else -1
            if not 0 <= n <= x[axis]:
                raise ShapeError(f"k must lie in [0, {x[axis]}]", field="outputs[0].shape")
            shape = (*x[:axis], n, *x[axis + 1 :])
            return (shape, shape)
        keep = call.i("keepdims")
        if k is KernelId.REDUCE:
            mask = call.i("axes_mask")
            axes = {i for i in range(len(x)) if mask >> i & 1}
        else:
            axes = {call.i("axis")}
        return (tuple(1 if i in axes else d for i, d in enumerate(x) if keep or i not in axes),)
