"""The normalisation family: BATCHNORM (NCHW kernel), LAYERNORM, SOFTMAX."""

from __future__ import annotations

from stack.kmd.kernels.ids import KernelId
from stack.umd.errors import InvalidRequestError, ShapeError
from stack.umd.ops import Layout, OpKind, OpRequest
from stack.umd.plan import KernelCall, Semantic
from stack.umd.registry import OpTranslator
from stack.umd.templates import TemplateRegistry
from stack.umd.translators._common import (
    Builder,
    attr_float,
    attr_int,
    check_dtype,
    need_counts,
    same_dtype,
)

_KERNEL = {
    OpKind.BATCHNORM: KernelId.BATCHNORM,
    OpKind.LAYERNORM: KernelId.LAYERNORM,
    OpKind.SOFTMAX: KernelId.SOFTMAX,
}


def _axis(value: int, ndim: int) -> int:
    if not -ndim <= value < max(ndim, 1):
        raise InvalidRequestError(f"axis {value} out of range for {ndim} dims", field="attrs.axis")
    return value + ndim if value < 0 else value


class NormTranslator(OpTranslator):
    """Normalisations; output shape equals the input's."""

    family = "norm"
    ops = frozenset(_KERNEL)

    def parse(self, req: OpRequest, templates: TemplateRegistry) -> Semantic:
        kernel = _KERNEL[req.op]
        attrs = req.attr_map()
        b = Builder(req)
        if req.op is OpKind.BATCHNORM:
            need_counts(req, (5, 5))
            kattrs: dict = {
                "epsilon": attr_float(attrs, "epsilon", 1e-5),
                "relu": attr_int(attrs, "relu", 0),
            }
            want = Layout.NCHW
        elif req.op is OpKind.LAYERNORM:
            need_counts(req, (2, 3))
            ndim = len(req.inputs[0].shape)
            kattrs = {
                "axis": _axis(attr_int(attrs, "axis", -1), ndim),
                "epsilon": attr_float(attrs, "epsilon", 1e-5),
            }
            want = Layout.ANY
        else:
            need_counts(req, (1, 1))
            kattrs = {
                "axis": _axis(attr_int(attrs, "axis", -1), len(req.inputs[0].shape)),
                "log": attr_int(attrs, "log", 0),
            }
            want = Layout.ANY
        if float(kattrs.get("epsilon", 0.0)) < 0:
            raise InvalidRequestError("epsilon must be >= 0", field="attrs.epsilon")
        same_dtype(req, tuple(range(len(req.inputs))))
        same_dtype(req, (0,), "outputs")
        check_dtype(templates, kernel, req.inputs[0].dtype, "inputs[0].dtype")
        x = b.input(0, want)
        rest = tuple(b.input(i) for i in range(1, len(req.inputs)))
        call = KernelCall(kernel, (x, *rest, b.output(0, want)), 1 + len(rest), kattrs)
        return b.build(call)

    def infer(self, call: KernelCall) -> tuple[tuple[int, ...], ...]:
        x = call.ins[0].shape
        if call.kernel_id is KernelId.BATCHNORM:
            if len(x) < 2:
                raise ShapeError(
                    f"BATCHNORM input needs a channel dim, got {x}", field="inputs[0].shape"
                )
            for i, p in enumerate(call.ins[1:], start=1):
                if p.shape != (x[1],):
                    raise ShapeError(
                        f"must be ({x[1]},), got {p.shape}", field=f"inputs[{i}].shape"
                    )
        elif call.kernel_id is KernelId.LAYERNORM:
            norm = x[call.i("axis") :]
            for i, p in enumerate(call.ins[1:], start=1):
                if p.shape != norm and p.shape[-len(norm) :] != norm:
                    raise ShapeError(f"must be {norm}, got {p.shape}", field=f"inputs[{i}].shape")
        return (x,)
