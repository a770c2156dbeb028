"""The data-movement family: TRANSPOSE, CONCAT, COPY (reshape materialisation), FILL."""

from __future__ import annotations

from stack.kmd.kernels.ids import KernelId
from stack.umd.errors import InvalidRequestError, ShapeError
from stack.umd.ops import OpKind, OpRequest
from stack.umd.plan import KernelCall, Semantic
from stack.umd.registry import OpTranslator
from stack.umd.templates import TemplateRegistry
from stack.umd.translators._common import (
    Builder,
    attr_float,
    attr_int,
    attr_ints,
    check_dtype,
    need_counts,
    permute,
    same_dtype,
)

_KERNEL = {
    OpKind.TRANSPOSE: KernelId.TRANSPOSE,
    OpKind.CONCAT: KernelId.CONCAT,
    OpKind.COPY: KernelId.COPY,
    OpKind.FILL: KernelId.FILL,
}


class DataTranslator(OpTranslator):
    """Ops that move or set bytes without arithmetic on them."""

    family = "data"
    ops = frozenset(_KERNEL)

    def parse(self, req: OpRequest, templates: TemplateRegistry) -> Semantic:
        kernel = _KERNEL[req.op]
        attrs = req.attr_map()
        kattrs: dict = {}
        if req.op is OpKind.FILL:
            need_counts(req, (0, 0))
            kattrs["value"] = attr_float(attrs, "value", 0.0)
        elif req.op is OpKind.CONCAT:
            need_counts(req, (1, 4096))
            ndim = len(req.inputs[0].shape)
            axis = attr_int(attrs, "axis", 0)
            if not -ndim <= axis < ndim:
                raise InvalidRequestError(f"axis {axis} out of range", field="attrs.axis")
            kattrs["axis"] = axis + ndim if axis < 0 else axis
        else:
            need_counts(req, (1, 1))
        if req.op is OpKind.TRANSPOSE:
            ndim = len(req.inputs[0].shape)
            perm = attr_ints(attrs, "perm", None, tuple(reversed(range(ndim))))
            if sorted(perm) != list(range(ndim)):
                raise InvalidRequestError(f"perm {perm} is not a permutation", field="attrs.perm")
            kattrs["perm"] = perm
        if req.inputs:
            same_dtype(req, tuple(range(len(req.inputs))))
            if req.op is not OpKind.COPY:
                same_dtype(req, (0,), "outputs")
        first = req.inputs[0] if req.inputs else req.outputs[0]
        check_dtype(
            templates, kernel, first.dtype, "inputs[0].dtype" if req.inputs else "outputs[0].dtype"
        )
        b = Builder(req)
        ins = tuple(b.input(i) for i in range(len(req.inputs)))
        return b.build(KernelCall(kernel, (*ins, b.output(0)), len(ins), kattrs))

    def infer(self, call: KernelCall) -> tuple[tuple[int, ...], ...]:
        k = call.kernel_id
        if k is KernelId.FILL:
            return (call.outs[0].shape,)
        x = call.ins[0].shape
        if k is KernelId.TRANSPOSE:
            perm = call.attrs["perm"]
            assert isinstance(perm, tuple)
            return (permute(x, tuple(int(p) for p in perm)),)
        if k is KernelId.COPY:
            if call.ins[0].nbytes != call.outs[0].nbytes:
                raise ShapeError("COPY needs equal byte sizes", field="outputs[0].shape")
            return (call.outs[0].shape,)
        axis = call.i("axis")
        total = 0
        for i, p in enumerate(call.ins):
            if (
                len(p.shape) != len(x)
                or p.shape[:axis] + p.shape[axis + 1 :] != x[:axis] + x[axis + 1 :]
            ):
                raise ShapeError(
                    f"{p.shape} does not concatenate with {x}", field=f"inputs[{i}].shape"
                )
            total += p.shape[axis]
        return ((*x[:axis], total, *x[axis + 1 :]),)
