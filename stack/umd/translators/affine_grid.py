"""Affine grids: AFFINE_GRID (``size``: N, C and the 2 or 3 spatial sizes S, as ONNX's size
input; ``align_corners`` 0 or 1, default 0).

theta is [N, r, r + 1], r = len(size) - 2, and the grid [N, *S, r] of theta's dtype. The grid's
last axis holds coordinates (x first), not channels, so the kernel writes it in its logical
order whatever its layout, as GRID_SAMPLE reads its grid.
"""

from __future__ import annotations

from stack.kmd.kernels.ids import KernelId
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


def _affine_grid_attrs(attrs: dict) -> dict[str, int | tuple[int, ...]]:
    size = attr_ints(attrs, "size", None, None)
    if len(size) not in (4, 5) or min(size[:2]) < 0 or min(size[2:]) < 1:
        raise InvalidRequestError(
            f"size must be N and C (at least 0), then 2 or 3 spatial sizes (at least 1), "
            f"got {size}",
            field="attrs.size",
        )
    align = attr_int(attrs, "align_corners", 0)
    if align not in (0, 1):
        raise InvalidRequestError(
            f"align_corners must be 0 or 1, got {align}", field="attrs.align_corners"
        )
    return {"size": size, "align_corners": align}


class AffineGridTranslator(OpTranslator):
    """AFFINE_GRID → the affine-grid kernel; the grid is written in its logical order."""

    family = "affine_grid"
    ops = frozenset({OpKind.AFFINE_GRID})

    def parse(self, req: OpRequest, templates: TemplateRegistry) -> Semantic:
        need_counts(req, (1, 1))
        theta = req.inputs[0]
        check_dtype(templates, KernelId.AFFINE_GRID, theta.dtype, "inputs[0].dtype")
        same_dtype(req, (0,), "outputs")
        kattrs = _affine_grid_attrs(req.attr_map())
        b = Builder(req)
        call = KernelCall(KernelId.AFFINE_GRID, (b.input(0), b.output(0)), 1, kattrs)
        return b.build(call)

    def infer(self, call: KernelCall) -> tuple[tuple[int, ...], ...]:
        theta, size = call.ins[0].shape, call.attrs["size"]
        assert isinstance(size, tuple)
        n, r = int(size[0]), len(size) - 2
        if theta != (n, r, r + 1):
            raise ShapeError(
                f"theta must be [{n}, {r}, {r + 1}] for size {size}, got {theta}",
                field="inputs[0].shape",
            )
        return ((n, *(int(s) for s in size[2:]), r),)
