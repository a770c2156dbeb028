"""The convolution family: CONV2D, MAXPOOL, AVGPOOL, GLOBALAVGPOOL, GLOBALLPPOOL, MAXROIPOOL,
ROIALIGN.

CONV2D, MAXPOOL, AVGPOOL and GLOBALAVGPOOL run in the layout of their X: an NHWC X (its
descriptor's ``layout``; shape [N, H, W, C]) sets the kernel's ``layout`` immediate to 1 and the
kernel reads X (and CONV2D's residual R) and writes Y in NHWC, no conversion; an R or Y in the
other layout is converted (a TRANSPOSE through scratch). The other ops' kernels are NCHW: NHWC
activations are converted, a TRANSPOSE into an NCHW scratch buffer before the kernel and, for an
NHWC output, a TRANSPOSE from the kernel's NCHW scratch output after it.
"""

from __future__ import annotations

from stack.kmd.dtypes import DType
from stack.kmd.kernels.ids import KernelId
from stack.kmd.kernels.layout import KernelLayout
from stack.kmd.kernels.pool import RoiAlignMode
from stack.umd.errors import InvalidRequestError, ShapeError, UnsupportedDtypeError
from stack.umd.ops import Layout, OpKind, OpRequest
from stack.umd.plan import KernelCall, Semantic
from stack.umd.registry import OpTranslator
from stack.umd.templates import TemplateRegistry
from stack.umd.translators._common import (
    TO_NCHW,
    TO_NHWC,
    Builder,
    attr_float,
    attr_int,
    attr_ints,
    check_dtype,
    need_counts,
    permute,
    same_dtype,
    window_immediates,
)

_KERNEL = {
    OpKind.CONV2D: KernelId.CONV2D,
    OpKind.MAXPOOL: KernelId.MAXPOOL,
    OpKind.AVGPOOL: KernelId.AVGPOOL,
    OpKind.GLOBALAVGPOOL: KernelId.GLOBALAVGPOOL,
    OpKind.GLOBALLPPOOL: KernelId.GLOBALLPPOOL,
    OpKind.MAXROIPOOL: KernelId.MAXROIPOOL,
    OpKind.ROIALIGN: KernelId.ROIALIGN,
}
#: ROIALIGN's string attributes -> the kernel's immediates.
ROI_ALIGN_MODES = {"avg": RoiAlignMode.AVG, "max": RoiAlignMode.MAX}
ROI_ALIGN_COORDS = {"half_pixel": 1, "output_half_pixel": 0}
#: The ops whose kernels take a ``layout`` immediate (:mod:`stack.kmd.kernels.layout`).
LAYOUT_OPS = frozenset({OpKind.CONV2D, OpKind.MAXPOOL, OpKind.AVGPOOL, OpKind.GLOBALAVGPOOL})


def _window_attrs(attrs: dict, kernel_hw: tuple[int, int] | None) -> dict:
    strides = attr_ints(attrs, "strides", 2, (1, 1))
    pads = attr_ints(attrs, "pads", 4, (0, 0, 0, 0))
    dil = attr_ints(attrs, "dilations", 2, (1, 1))
    if min(strides) < 1 or min(dil) < 1 or min(pads) < 0:
        raise ShapeError("strides/dilations must be >= 1, pads >= 0", field="attrs.strides")
    out = {**window_immediates(strides, pads, dil), "ceil_mode": attr_int(attrs, "ceil_mode", 0)}
    if kernel_hw is not None:
        out["kernel_h"], out["kernel_w"] = kernel_hw
    return out


def _fused_pool(attrs: dict) -> dict:
    """A CONV2D's fused max pool: the kernel's pool immediates (and the pool's ceil mode)."""
    k = attr_ints(attrs, "pool_kernel", 2, None)
    s = attr_ints(attrs, "pool_strides", 2, (1, 1))
    p = attr_ints(attrs, "pool_pads", 4, (0, 0, 0, 0))
    if min(k) < 1 or min(s) < 1 or min(p) < 0:
        raise ShapeError(
            "pool window and strides must be >= 1, pads >= 0", field="attrs.pool_kernel"
        )
    return {
        "pool_h": k[0], "pool_w": k[1], "pool_stride_h": s[0], "pool_stride_w": s[1],
        "pool_pad_top": p[0], "pool_pad_left": p[1], "pool_pad_bottom": p[2],
        "pool_pad_right": p[3], "pool_ceil": attr_int(attrs, "pool_ceil", 0),
    }  # fmt: skip


def _algorithm(attrs: dict, kattrs: dict) -> int:
    """A CONV2D's ``algorithm``: 0 direct, 1 Winograd F(2x2,3x3) (W then holds the compiler's
    transformed weights U[4, 4, M, C]; stride 1, dilation 1, group 1, no fused pool)."""
    algorithm = attr_int(attrs, "algorithm", 0)
    if algorithm not in (0, 1):
        raise ShapeError(f"unknown conv algorithm {algorithm} (0 direct, 1 Winograd)",
                         field="attrs.algorithm")  # fmt: skip
    plain = (kattrs["stride_h"], kattrs["stride_w"], kattrs["dilation_h"], kattrs["dilation_w"])
    if algorithm and (plain != (1, 1, 1, 1) or kattrs["group"] != 1 or "pool_h" in kattrs):
        raise ShapeError(
            "Winograd needs stride 1, dilation 1, group 1 and no fused pool",
            field="attrs.algorithm",
        )
    return algorithm


def _roi_align_attrs(req: OpRequest, attrs: dict) -> dict:
    """ROIALIGN's immediates: output_height/width at least 1, sampling_ratio at least 0, the
    mode and coordinate_transformation_mode by name; batch_indices I64 (or I32)."""
    need_counts(req, (3, 3))
    same_dtype(req, (0, 1))
    if req.inputs[2].dtype not in (DType.I64, DType.I32):
        raise UnsupportedDtypeError(
            f"batch_indices must be I64 or I32, got {req.inputs[2].dtype.name}",
            field="inputs[2].dtype",
        )
    out = {
        "output_h": attr_int(attrs, "output_height", 1),
        "output_w": attr_int(attrs, "output_width", 1),
        "sampling_ratio": attr_int(attrs, "sampling_ratio", 0),
        "spatial_scale": attr_float(attrs, "spatial_scale", 1.0),
    }
    for key, name, least in (("output_h", "output_height", 1), ("output_w", "output_width", 1),
                             ("sampling_ratio", "sampling_ratio", 0)):  # fmt: skip
        if out[key] < least:
            raise ShapeError(f"{name} must be >= {least}, got {out[key]}", field=f"attrs.{name}")
    for key, name, table, default in (
        ("mode", "mode", ROI_ALIGN_MODES, "avg"),
        ("half_pixel", "coordinate_transformation_mode", ROI_ALIGN_COORDS, "half_pixel"),
    ):
        value = attrs.get(name, default)
        if value not in table:
            raise InvalidRequestError(f"unknown {name} {value!r}", field=f"attrs.{name}")
        out[key] = int(table[str(value)])
    return out


def _out_dim(size: int, k: int, stride: int, lo: int, hi: int, dil: int, ceil: bool) -> int:
    span = size + lo + hi - dil * (k - 1) - 1
    if span < 0:
        raise ShapeError(f"window {k} larger than padded input {size}", field="inputs[0].shape")
    return (-(-span // stride) if ceil else span // stride) + 1


class ConvPoolTranslator(OpTranslator):
    """Windowed NCHW ops; converts NHWC activations around the kernel."""

    family = "conv_pool"
    ops = frozenset(_KERNEL)

    def parse(self, req: OpRequest, templates: TemplateRegistry) -> Semantic:
        kernel = _KERNEL[req.op]
        attrs = req.attr_map()
        b = Builder(req)
        if req.op is OpKind.CONV2D:
            need_counts(req, (2, 4))
            same_dtype(req, (0, 1, 2, 3))
            kattrs = _window_attrs(attrs, None)
            kattrs["group"] = attr_int(attrs, "group", 1)
            kattrs["relu"] = attr_int(attrs, "relu", 0)
            if "pool_kernel" in attrs:
                kattrs.update(_fused_pool(attrs))
            kattrs["algorithm"] = _algorithm(attrs, kattrs)
        elif req.op is OpKind.GLOBALAVGPOOL:
            need_counts(req, (1, 1))
            kattrs = {}
        elif req.op is OpKind.GLOBALLPPOOL:
            need_counts(req, (1, 1))
            kattrs = {"p": attr_int(attrs, "p", 2)}
            if kattrs["p"] < 1:
                raise ShapeError(f"p must be >= 1, got {kattrs['p']}", field="attrs.p")
        elif req.op is OpKind.MAXROIPOOL:
            need_counts(req, (2, 2))
            same_dtype(req, (0, 1))
            pooled = attr_ints(attrs, "pooled_shape", 2, None)
            if min(pooled) < 1:
                raise ShapeError(
                    f"pooled_shape must be >= 1, got {pooled}", field="attrs.pooled_shape"
                )
            scale = attr_float(attrs, "spatial_scale", 1.0)
            kattrs = {"pooled_h": pooled[0], "pooled_w": pooled[1], "spatial_scale": scale}
        elif req.op is OpKind.ROIALIGN:
            kattrs = _roi_align_attrs(req, attrs)
        else:
            need_counts(req, (1, 1))
            kshape = attr_ints(attrs, "kernel_shape", 2, None)
            kattrs = _window_attrs(attrs, (kshape[0], kshape[1]))
            if req.op is OpKind.AVGPOOL:
                kattrs["count_include_pad"] = attr_int(attrs, "count_include_pad", 0)
        check_dtype(templates, kernel, req.inputs[0].dtype, "inputs[0].dtype")
        act = Layout.NCHW
        if req.op in LAYOUT_OPS and req.inputs[0].layout is Layout.NHWC:
            act = Layout.NHWC
            kattrs["layout"] = int(KernelLayout.NHWC)
        x = b.input(0, act)
        rest = tuple(b.input(i, act if i == 3 else Layout.ANY) for i in range(1, len(req.inputs)))
        call = KernelCall(kernel, (x, *rest, b.output(0, act)), 1 + len(rest), kattrs)
        return b.build(call)

    def infer(self, call: KernelCall) -> tuple[tuple[int, ...], ...]:
        if not call.attrs.get("layout", 0):
            return self._infer(
                call, call.ins[0].shape, call.ins[3].shape if len(call.ins) > 3 else None
            )
        if len(call.ins[0].shape) != 4:
            raise ShapeError(
                f"{call.kernel_id.name} takes 4-D NHWC input, got {call.ins[0].shape}",
                field="inputs[0].shape",
            )
        r = permute(call.ins[3].shape, TO_NCHW) if len(call.ins) > 3 else None
        outs = self._infer(call, permute(call.ins[0].shape, TO_NCHW), r)
        return tuple(permute(y, TO_NHWC) for y in outs)

    def _infer(
        self, call: KernelCall, x: tuple[int, ...], residual: tuple[int, ...] | None
    ) -> tuple[tuple[int, ...], ...]:
        """The output shapes in NCHW from X's (and R's) NCHW shape."""
        if len(x) != 4:
            raise ShapeError(
                f"{call.kernel_id.name} takes 4-D NCHW input, got {x}", field="inputs[0].shape"
            )
        n, c, h, w = x
        if call.kernel_id in (KernelId.GLOBALAVGPOOL, KernelId.GLOBALLPPOOL):
            return ((n, c, 1, 1),)
        if call.kernel_id is KernelId.MAXROIPOOL:
            rois = call.ins[1].shape
            if len(rois) != 2 or rois[1] != 5:
                raise ShapeError(f"rois must be [R, 5], got {rois}", field="inputs[1].shape")
            return ((rois[0], c, call.i("pooled_h"), call.i("pooled_w")),)
        if call.kernel_id is KernelId.ROIALIGN:
            rois, idx = call.ins[1].shape, call.ins[2].shape
            if len(rois) != 2 or rois[1] != 4:
                raise ShapeError(f"rois must be [R, 4], got {rois}", field="inputs[1].shape")
            if idx != rois[:1]:
                raise ShapeError(f"batch_indices must be [{rois[0]}], got {idx}",
                                 field="inputs[2].shape")  # fmt: skip
            return ((rois[0], c, call.i("output_h"), call.i("output_w")),)
        if call.kernel_id is KernelId.CONV2D:
            wsh = call.ins[1].shape
            g = call.i("group")
            if call.attrs.get("algorithm", 0) and len(wsh) == 4:
                if wsh[:2] != (4, 4):
                    raise ShapeError(
                        f"Winograd weights must be [4, 4, M, C], got {wsh}", field="inputs[1].shape"
                    )
                wsh = (wsh[2], wsh[3], 3, 3)  # the 3x3 kernel the weights were transformed from
            if len(wsh) != 4 or g < 1 or wsh[1] * g != c or wsh[0] % g:
                raise ShapeError(
                    f"weights {wsh} do not fit input channels {c} with group {g}",
                    field="inputs[1].shape",
                )
            if len(call.ins) > 2 and call.ins[2].shape != (wsh[0],):
                raise ShapeError(f"bias must be ({wsh[0]},)", field="inputs[2].shape")
            m, kh, kw = wsh[0], wsh[2], wsh[3]
            out = self._window_out(call, (n, c, h, w), m, kh, kw)
            if residual is not None and residual != out:
                raise ShapeError(
                    f"residual {residual} must equal the convolution's output {out}",
                    field="inputs[3].shape",
                )
            if call.attrs.get("pool_h", 0):
                i, ceil = call.i, bool(call.attrs.get("pool_ceil", 0))
                ph = _out_dim(out[2], i("pool_h"), i("pool_stride_h"), i("pool_pad_top"),
                              i("pool_pad_bottom"), 1, ceil)  # fmt: skip
                pw = _out_dim(out[3], i("pool_w"), i("pool_stride_w"), i("pool_pad_left"),
                              i("pool_pad_right"), 1, ceil)  # fmt: skip
                return ((n, m, ph, pw),)
            return (out,)
        else:
            m, kh, kw = c, call.i("kernel_h"), call.i("kernel_w")
        return (self._window_out(call, (n, c, h, w), m, kh, kw),)

    @staticmethod
    def _window_out(
        call: KernelCall, x: tuple[int, ...], m: int, kh: int, kw: int
    ) -> tuple[int, int, int, int]:
        n, _, h, w = x
        ceil = bool(call.attrs.get("ceil_mode", 0))
        i = call.i
        oh = _out_dim(h, kh, i("stride_h"), i("pad_top"), i("pad_bottom"), i("dilation_h"), ceil)
        ow = _out_dim(w, kw, i("stride_w"), i("pad_left"), i("pad_right"), i("dilation_w"), ceil)
        return (n, m, oh, ow)
