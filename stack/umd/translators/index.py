"""The indexing family: GATHER, GATHER_ELEMENTS (``axis``), GATHER_ND (``batch_dims``),
SCATTER_ND (``reduction``: none, add, mul, max, min), SCATTER_ELEMENTS (``axis``,
``reduction``), REVERSE_SEQUENCE (``time_axis``, ``batch_axis``: 0 and 1, either way round;
sequence_lens I32/I64 [batch]), TENSOR_SCATTER (``axis``, default -2, not the batch axis;
``mode``: linear, circular; write_indices I32/I64 [batch], optional), SLICE (``starts``,
``ends``, ``steps``: one per axis of the input), PAD (``mode``, ``pads``: begins then ends,
``value``), CENTER_CROP_PAD (``shape``: the target, one size per axis of the input, each at
least 0; the kernel reads it from the output's shape), EXPAND (to the output's shape) and TILE
(``repeats``)."""

from __future__ import annotations

from stack.kmd.dtypes import DType
from stack.kmd.kernels.ids import KernelId
from stack.kmd.kernels.index import PadMode, ScatterReduction
from stack.kmd.kernels.tensor_scatter import TensorScatterMode
from stack.umd.errors import InvalidRequestError, ShapeError, UnsupportedDtypeError
from stack.umd.ops import OpKind, OpRequest
from stack.umd.plan import KernelCall, Semantic
from stack.umd.registry import OpTranslator
from stack.umd.templates import TemplateRegistry
from stack.umd.translators._common import (
    Builder,
    attr_float,
    attr_int,
    attr_ints,
    broadcast,
    need_counts,
    same_dtype,
)
from stack.umd.translators.reduce import axis_of

_KERNEL = {
    OpKind.GATHER: KernelId.GATHER,
    OpKind.GATHER_ELEMENTS: KernelId.GATHER_ELEMENTS,
    OpKind.GATHER_ND: KernelId.GATHER_ND,
    OpKind.SCATTER_ND: KernelId.SCATTER_ND,
    OpKind.SCATTER_ELEMENTS: KernelId.SCATTER_ELEMENTS,
    OpKind.REVERSE_SEQUENCE: KernelId.REVERSE_SEQUENCE,
    OpKind.TENSOR_SCATTER: KernelId.TENSOR_SCATTER,
    OpKind.SLICE: KernelId.SLICE,
    OpKind.PAD: KernelId.PAD,
    OpKind.CENTER_CROP_PAD: KernelId.CENTER_CROP_PAD,
    OpKind.EXPAND: KernelId.EXPAND,
    OpKind.TILE: KernelId.TILE,
}
PAD_MODES = {"constant": PadMode.CONSTANT, "reflect": PadMode.REFLECT, "edge": PadMode.EDGE,
             "wrap": PadMode.WRAP}  # fmt: skip
REDUCTIONS = {r.name.lower(): r for r in ScatterReduction}
TENSOR_SCATTER_MODES = {m.name.lower(): m for m in TensorScatterMode}


def slice_spec(shape: tuple[int, ...], starts, ends, steps) -> tuple[int, ...]:  # type: ignore[no-untyped-def]
    """ONNX Slice bounds clamped per axis into Python-slice triples (a negative stop: "past 0")."""
    spec: list[int] = []
    for n, start, end, step in zip(shape, starts, ends, steps, strict=True):
        if step == 0:
            raise InvalidRequestError("a slice step is 0", field="attrs.steps")
        start = start + n if start < 0 else start
        end = end + n if end < 0 else end
        if step > 0:
            start, end = min(max(start, 0), n), min(max(end, 0), n)
        else:
            start, end = min(max(start, -1), n - 1), min(max(end, -1), n - 1)
            end = -n - 1 if end < 0 else end
        spec += [start, end, step]
    return tuple(spec)


def sequence_axes(req: OpRequest) -> dict:
    """REVERSE_SEQUENCE's time_axis (default 0) and batch_axis (default 1), checked: ONNX
    allows only 0 and 1, one each; its sequence_lens must be I32 or I64."""
    attrs = req.attr_map()
    axes = {
        "time_axis": attr_int(attrs, "time_axis", 0),
        "batch_axis": attr_int(attrs, "batch_axis", 1),
    }
    if {axes["time_axis"], axes["batch_axis"]} != {0, 1}:
        raise InvalidRequestError(
            f"time_axis {axes['time_axis']} and batch_axis {axes['batch_axis']} must be 0 and 1",
            field="attrs.batch_axis" if axes["time_axis"] in (0, 1) else "attrs.time_axis",
        )
    if req.inputs[1].dtype not in (DType.I32, DType.I64):
        raise UnsupportedDtypeError("sequence_lens must be I32 or I64", field="inputs[1].dtype")
    return axes


def cache_update(req: OpRequest, ndim: int) -> dict:
    """TENSOR_SCATTER's axis (default -2; not the batch axis 0) and mode (linear, circular),
    checked; its optional write_indices must be I32 or I64."""
    attrs = req.attr_map()
    axis = axis_of(attr_int(attrs, "axis", -2), ndim)
    if axis == 0:
        raise InvalidRequestError("axis must not be the batch axis 0", field="attrs.axis")
    mode = attrs.get("mode", "linear")
    if mode not in TENSOR_SCATTER_MODES:
        raise InvalidRequestError(f"unknown mode {mode!r}", field="attrs.mode")
    if len(req.inputs) > 2 and req.inputs[2].dtype not in (DType.I32, DType.I64):
        raise UnsupportedDtypeError("write_indices must be I32 or I64", field="inputs[2].dtype")
    same_dtype(req, (0, 1))
    return {"axis": axis, "mode": int(TENSOR_SCATTER_MODES[str(mode)])}


class IndexTranslator(OpTranslator):
    """Ops that select, repeat or pad elements."""

    family = "index"
    ops = frozenset(_KERNEL)

    def parse(self, req: OpRequest, templates: TemplateRegistry) -> Semantic:
        kernel = _KERNEL[req.op]
        attrs = req.attr_map()
        x = req.inputs[0] if req.inputs else None
        ndim = len(x.shape) if x is not None else 0
        scatter = req.op in (OpKind.SCATTER_ND, OpKind.SCATTER_ELEMENTS)
        indexed = scatter or req.op in (OpKind.GATHER, OpKind.GATHER_ELEMENTS, OpKind.GATHER_ND)
        pairs = indexed or req.op is OpKind.REVERSE_SEQUENCE
        cache = req.op is OpKind.TENSOR_SCATTER
        need_counts(req, (3, 3) if scatter else (2, 3) if cache else (2, 2) if pairs else (1, 1))
        same_dtype(req, (0,), "outputs")
        kattrs: dict = {}
        if indexed:
            if req.inputs[1].dtype not in (DType.I32, DType.I64):
                raise UnsupportedDtypeError("indices must be I32 or I64", field="inputs[1].dtype")
            if req.op is OpKind.GATHER_ND:
                kattrs["batch_dims"] = attr_int(attrs, "batch_dims", 0)
            elif scatter:
                same_dtype(req, (0, 2))
                reduction = attrs.get("reduction", "none")
                if reduction not in REDUCTIONS:
                    raise InvalidRequestError(
                        f"unknown reduction {reduction!r}", field="attrs.reduction"
                    )
                kattrs["reduction"] = int(REDUCTIONS[str(reduction)])
                if req.op is OpKind.SCATTER_ELEMENTS:
                    kattrs["axis"] = axis_of(attr_int(attrs, "axis", 0), ndim)
            else:
                kattrs["axis"] = axis_of(attr_int(attrs, "axis", 0), ndim)
        elif req.op is OpKind.REVERSE_SEQUENCE:
            kattrs = sequence_axes(req)
        elif cache:
            kattrs = cache_update(req, ndim)
        elif req.op is OpKind.SLICE:
            parts = [attr_ints(attrs, k, ndim, None) for k in ("starts", "ends", "steps")]
            kattrs["spec"] = slice_spec(req.inputs[0].shape, *parts)
        elif req.op is OpKind.PAD:
            mode = attrs.get("mode", "constant")
            if mode not in PAD_MODES:
                raise InvalidRequestError(f"unknown pad mode {mode!r}", field="attrs.mode")
            pads = attr_ints(attrs, "pads", 2 * ndim, None)
            kattrs["spec"] = (int(PAD_MODES[str(mode)]), *pads)
            kattrs["value"] = attr_float(attrs, "value", 0.0)
        elif req.op is OpKind.CENTER_CROP_PAD:
            kattrs["shape"] = attr_ints(attrs, "shape", ndim, None)
            if any(s < 0 for s in kattrs["shape"]):
                raise InvalidRequestError("shape must be >= 0", field="attrs.shape")
        elif req.op is OpKind.TILE:
            kattrs["repeats"] = attr_ints(attrs, "repeats", ndim, None)
            if any(r < 0 for r in kattrs["repeats"]):
                raise InvalidRequestError("repeats must be >= 0", field="attrs.repeats")
        b = Builder(req)
        ins = tuple(b.input(i) for i in range(len(req.inputs)))
        return b.build(KernelCall(kernel, (*ins, b.output(0)), len(ins), kattrs))

    def infer(self, call: KernelCall) -> tuple[tuple[int, ...], ...]:
        x = call.ins[0].shape
        k = call.kernel_id
        if k is KernelId.GATHER:
            axis = call.i("axis")
            return ((*x[:axis], *call.ins[1].shape, *x[axis + 1 :]),)
        if k is KernelId.GATHER_ND:
            b, idx = call.i("batch_dims"), call.ins[1].shape
            if not idx or not 0 <= b < min(len(x), len(idx)) + 1 or b + idx[-1] > len(x):
                raise ShapeError(f"indices {idx} do not address data {x}", field="inputs[1].shape")
            return ((*idx[:-1], *x[b + idx[-1] :]),)
        if k is KernelId.SCATTER_ND:
            idx, upd = call.ins[1].shape, call.ins[2].shape
            if not idx or idx[-1] > len(x):
                raise ShapeError(f"indices {idx} do not address data {x}", field="inputs[1].shape")
            if upd != (*idx[:-1], *x[idx[-1] :]):
                raise ShapeError(
                    f"updates {upd} must be {(*idx[:-1], *x[idx[-1] :])}", field="inputs[2].shape"
                )
            return (x,)
        if k is KernelId.SCATTER_ELEMENTS:
            idx, upd, axis = call.ins[1].shape, call.ins[2].shape, call.i("axis")
            if len(idx) != len(x) or any(
                i > n for d, (i, n) in enumerate(zip(idx, x, strict=True)) if d != axis
            ):
                raise ShapeError(f"indices {idx} do not address data {x}", field="inputs[1].shape")
            if upd != idx:
                raise ShapeError(f"updates {upd} must be {idx}", field="inputs[2].shape")
            return (x,)
        if k is KernelId.REVERSE_SEQUENCE:
            lens, batch = call.ins[1].shape, call.i("batch_axis")
            if len(x) < 2:
                raise ShapeError(f"input {x} must have rank >= 2", field="inputs[0].shape")
            if lens != (x[batch],):
                raise ShapeError(
                    f"sequence_lens {lens} must be {(x[batch],)}", field="inputs[1].shape"
                )
            return (x,)
        if k is KernelId.TENSOR_SCATTER:
            upd, axis = call.ins[1].shape, call.i("axis")
            if (
                len(upd) != len(x)
                or upd[axis] > x[axis]
                or any(u != n for d, (u, n) in enumerate(zip(upd, x, strict=True)) if d != axis)
            ):
                raise ShapeError(f"update {upd} does not fit past_cache {x} on axis {axis}",
                                 field="inputs[1].shape")  # fmt: skip
            if len(call.ins) > 2 and call.ins[2].shape != x[:1]:
                raise ShapeError(f"write_indices {call.ins[2].shape} must be {x[:1]}",
                                 field="inputs[2].shape")  # fmt: skip
            return (x,)
        if k is KernelId.GATHER_ELEMENTS:
            if len(call.ins[1].shape) != len(x):
                raise ShapeError("indices must have the data's rank", field="inputs[1].shape")
            return (call.ins[1].shape,)
        if k is KernelId.SLICE:
            spec = call.attrs["spec"]
            assert isinstance(spec, tuple)
            return (tuple(len(range(n)[slice(*spec[3 * i : 3 * i + 3])]) for i, n in enumerate(x)),)
        if k is KernelId.PAD:
            spec = call.attrs["spec"]
            assert isinstance(spec, tuple)
            n = len(x)
            return (tuple(int(d + spec[1 + i] + spec[1 + n + i]) for i, d in enumerate(x)),)
        if k is KernelId.CENTER_CROP_PAD:
            shape = call.attrs["shape"]
            assert isinstance(shape, tuple)
            return (tuple(int(d) for d in shape),)
        if k is KernelId.TILE:
            reps = call.attrs["repeats"]
            assert isinstance(reps, tuple)
            return (tuple(int(d * r) for d, r in zip(x, reps, strict=True)),)
        out = call.outs[0].shape
        if broadcast(x, out, "outputs[0].shape") != out:
            raise ShapeError(f"{x} does not expand to {out}", field="outputs[0].shape")
        return (out,)
