"""Column to image: COL2IM (``image_shape`` and ``block_shape``, one per spatial axis, each at
least 1; ``dilations`` and ``strides``, default 1s, at least 1; ``pads``, begins then ends,
default 0s, at least 0).

X is [N, C·∏block_shape, L], L the number of block places in the padded image; Y is
[N, C, *image_shape] of X's dtype. The kernel writes Y in its logical order (the channel axis
is no last axis), so a 4-D NHWC output is converted from NCHW after it, as MAXUNPOOL's.
"""

from __future__ import annotations

import math

from stack.kmd.kernels.col2im import block_places
from stack.kmd.kernels.ids import KernelId
from stack.umd.errors import InvalidRequestError, ShapeError
from stack.umd.ops import Layout, OpKind, OpRequest
from stack.umd.plan import KernelCall, Semantic
from stack.umd.registry import OpTranslator
from stack.umd.templates import TemplateRegistry
from stack.umd.translators._common import Builder, attr_ints, check_dtype, need_counts, same_dtype


def _col2im_attrs(attrs: dict) -> dict[str, tuple[int, ...]]:
    image = attr_ints(attrs, "image_shape", None, None)
    r = len(image)
    out = {
        "image_shape": image,
        "block_shape": attr_ints(attrs, "block_shape", r, None),
        "dilations": attr_ints(attrs, "dilations", r, (1,) * r),
        "pads": attr_ints(attrs, "pads", 2 * r, (0,) * 2 * r),
        "strides": attr_ints(attrs, "strides", r, (1,) * r),
    }
    for name, values in out.items():
        low = 0 if name == "pads" else 1
        if not values or min(values) < low:
            raise InvalidRequestError(
                f"{name} must be >= {low} per spatial axis, got {values}", field=f"attrs.{name}"
            )
    return out


class Col2ImTranslator(OpTranslator):
    """COL2IM → the column-to-image kernel; converts a 4-D NHWC output from NCHW after it."""

    family = "col2im"
    ops = frozenset({OpKind.COL2IM})

    def parse(self, req: OpRequest, templates: TemplateRegistry) -> Semantic:
        need_counts(req, (1, 1))
        x = req.inputs[0]
        if len(x.shape) != 3:
            raise ShapeError(f"X must be [N, C*prod(block), L], got {x.shape}",
                             field="inputs[0].shape")  # fmt: skip
        check_dtype(templates, KernelId.COL2IM, x.dtype, "inputs[0].dtype")
        same_dtype(req, (0,), "outputs")
        a = _col2im_attrs(req.attr_map())
        spec = (*a["block_shape"], *a["dilations"], *a["pads"], *a["strides"])
        want = Layout.NCHW if len(a["image_shape"]) == 2 else Layout.ANY
        b = Builder(req)
        call = KernelCall(KernelId.COL2IM, (b.input(0), b.output(0, want)), 1, {**a, "spec": spec})
        return b.build(call)

    def infer(self, call: KernelCall) -> tuple[tuple[int, ...], ...]:
        n, ck, length = call.ins[0].shape
        image, block, dil, pads, strides = (
            tuple(int(v) for v in call.attrs[k])  # type: ignore[union-attr]
            for k in ("image_shape", "block_shape", "dilations", "pads", "strides")
        )
        places = block_places(image, block, dil, pads, strides)
        if min(places) < 1:
            raise ShapeError(f"block {block} does not fit the padded image {image} pads {pads}",
                             field="attrs.block_shape")  # fmt: skip
        k = math.prod(block)
        if ck % k or length != math.prod(places):
            raise ShapeError(
                f"X {call.ins[0].shape} must be [N, C*{k}, {math.prod(places)}] "
                f"({' x '.join(map(str, places))} block places)",
                field="inputs[0].shape",
            )
        return ((n, ck // k, *image),)
