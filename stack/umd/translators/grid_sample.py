"""Grid sampling: GRID_SAMPLE (``mode`` linear, nearest or cubic; ``padding_mode`` zeros, border
or reflection — by name —; ``align_corners`` 0 or 1).

X is [N, C, *S] at any spatial rank r >= 1 and the grid [N, *O, r] of normalised places (the
last spatial axis first); Y is [N, C, *O] of X's dtype. The kernel reads X, the grid and Y in
their logical order (the grid's last axis is no channel axis), so 4-D NHWC operands are
converted to NCHW around it, as MAXUNPOOL's.
"""

from __future__ import annotations

from stack.kmd.kernels.grid_sample import GridSampleMode, GridSamplePadding
from stack.kmd.kernels.ids import KernelId
from stack.umd.errors import InvalidRequestError, ShapeError, UnsupportedDtypeError
from stack.umd.ops import Layout, OpKind, OpRequest
from stack.umd.plan import KernelCall, Semantic
from stack.umd.registry import OpTranslator
from stack.umd.templates import FLOATS, TemplateRegistry
from stack.umd.translators._common import Builder, attr_int, check_dtype, need_counts, same_dtype

#: GRID_SAMPLE's string attributes -> the kernel's immediates.
GRID_SAMPLE_MODES = {
    "linear": GridSampleMode.LINEAR,
    "nearest": GridSampleMode.NEAREST,
    "cubic": GridSampleMode.CUBIC,
}
GRID_SAMPLE_PADDINGS = {
    "zeros": GridSamplePadding.ZEROS,
    "border": GridSamplePadding.BORDER,
    "reflection": GridSamplePadding.REFLECTION,
}


def _grid_sample_attrs(attrs: dict) -> dict[str, int]:
    out = {}
    for name, table, default in (
        ("mode", GRID_SAMPLE_MODES, "linear"),
        ("padding_mode", GRID_SAMPLE_PADDINGS, "zeros"),
    ):
        value = attrs.get(name, default)
        if value not in table:
            raise InvalidRequestError(f"unknown {name} {value!r}", field=f"attrs.{name}")
        out[name] = int(table[str(value)])
    out["align_corners"] = attr_int(attrs, "align_corners", 0)
    if out["align_corners"] not in (0, 1):
        raise InvalidRequestError(
            f"align_corners must be 0 or 1, got {out['align_corners']}",
            field="attrs.align_corners",
        )
    return out


class GridSampleTranslator(OpTranslator):
    """GRID_SAMPLE → the grid-sampling kernel; converts 4-D NHWC operands to NCHW around it."""

    family = "grid_sample"
    ops = frozenset({OpKind.GRID_SAMPLE})

    def parse(self, req: OpRequest, templates: TemplateRegistry) -> Semantic:
        need_counts(req, (2, 2))
        x, grid = req.inputs
        if len(x.shape) < 3:
            raise ShapeError(
                f"X needs N, C and a spatial axis, got {x.shape}", field="inputs[0].shape"
            )
        check_dtype(templates, KernelId.GRID_SAMPLE, x.dtype, "inputs[0].dtype")
        if grid.dtype not in FLOATS:
            raise UnsupportedDtypeError(
                f"grid must be F16, F32 or F64, got {grid.dtype.name}", field="inputs[1].dtype"
            )
        same_dtype(req, (0,), "outputs")
        kattrs = _grid_sample_attrs(req.attr_map())
        want = Layout.NCHW if len(x.shape) == 4 else Layout.ANY
        b = Builder(req)
        call = KernelCall(
            KernelId.GRID_SAMPLE, (b.input(0, want), b.input(1), b.output(0, want)), 2, kattrs
        )
        return b.build(call)

    def infer(self, call: KernelCall) -> tuple[tuple[int, ...], ...]:
        x, grid = call.ins[0].shape, call.ins[1].shape
        r = len(x) - 2
        if len(grid) != r + 2 or grid[0] != x[0] or grid[-1] != r:
            raise ShapeError(
                f"grid must be [{x[0]}, *out, {r}] for X {x}, got {grid}", field="inputs[1].shape"
            )
        return ((x[0], x[1], *grid[1:-1]),)
