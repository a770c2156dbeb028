"""Max unpooling: MAXUNPOOL (``kernel_shape``, ``strides``, ``pads``: begins then ends, one per
spatial axis; ``output_shape``: the whole output shape, optional).

The output's shape is ``(in - 1) * stride + kernel - pad_begin - pad_end`` per spatial axis, or
``output_shape``, which may only enlarge it. The indices are flat places in the output (as
MaxPool returns them), so X, I and Y are read in NCHW order: 4-D NHWC operands are converted.
"""

from __future__ import annotations

from stack.kmd.dtypes import DType
from stack.kmd.kernels.ids import KernelId
from stack.umd.errors import InvalidRequestError, ShapeError, UnsupportedDtypeError
from stack.umd.ops import Layout, OpKind, OpRequest
from stack.umd.plan import KernelCall, Semantic
from stack.umd.registry import OpTranslator
from stack.umd.templates import TemplateRegistry
from stack.umd.translators._common import Builder, attr_ints, check_dtype, need_counts, same_dtype


def _window(attrs: dict, n: int) -> dict[str, tuple[int, ...]]:
    out = {
        "kernel_shape": attr_ints(attrs, "kernel_shape", n, None),
        "strides": attr_ints(attrs, "strides", n, (1,) * n),
        "pads": attr_ints(attrs, "pads", 2 * n, (0,) * 2 * n),
    }
    for name, low in (("kernel_shape", 1), ("strides", 1), ("pads", 0)):
        if min(out[name]) < low:
            raise InvalidRequestError(
                f"{name} must be >= {low}, got {out[name]}", field=f"attrs.{name}"
            )
    if "output_shape" in attrs:
        out["output_shape"] = attr_ints(attrs, "output_shape", n + 2, None)
    return out


def _ints(call: KernelCall, name: str) -> tuple[int, ...]:
    value = call.attrs[name]
    assert isinstance(value, tuple)
    return tuple(int(v) for v in value)


class MaxUnpoolTranslator(OpTranslator):
    """MAXUNPOOL → the scatter kernel; converts 4-D NHWC operands to NCHW around it."""

    family = "unpool"
    ops = frozenset({OpKind.MAXUNPOOL})

    def parse(self, req: OpRequest, templates: TemplateRegistry) -> Semantic:
        need_counts(req, (2, 2))
        x = req.inputs[0]
        if len(x.shape) < 3:
            raise ShapeError(
                f"X needs N, C and a spatial axis, got {x.shape}", field="inputs[0].shape"
            )
        check_dtype(templates, KernelId.MAXUNPOOL, x.dtype, "inputs[0].dtype")
        if req.inputs[1].dtype not in (DType.I32, DType.I64):
            raise UnsupportedDtypeError("indices must be I32 or I64", field="inputs[1].dtype")
        same_dtype(req, (0,), "outputs")
        attrs = _window(req.attr_map(), len(x.shape) - 2)
        want = Layout.NCHW if len(x.shape) == 4 else Layout.ANY
        b = Builder(req)
        call = KernelCall(
            KernelId.MAXUNPOOL, (b.input(0, want), b.input(1, want), b.output(0, want)), 2, attrs
        )
        return b.build(call)

    def infer(self, call: KernelCall) -> tuple[tuple[int, ...], ...]:
        x, idx = call.ins[0].shape, call.ins[1].shape
        if idx != x:
            raise ShapeError(f"indices {idx} must have X's shape {x}", field="inputs[1].shape")
        k, s, p = (_ints(call, a) for a in ("kernel_shape", "strides", "pads"))
        n = len(k)
        spatial = tuple((x[2 + i] - 1) * s[i] + k[i] - p[i] - p[n + i] for i in range(n))
        if min(spatial) < 1:
            raise ShapeError(f"pads {p} leave an empty output {spatial}", field="attrs.pads")
        default = (*x[:2], *spatial)
        if "output_shape" not in call.attrs:
            return (default,)
        given = _ints(call, "output_shape")
        if given[:2] != default[:2] or any(g < d for g, d in zip(given, default, strict=True)):
            raise ShapeError(
                f"output_shape {given} must be at least {default} (N, C equal)",
                field="attrs.output_shape",
            )
        return (given,)
