"""Helpers shared by the translators: attribute readers, dtype checks, layout conversion."""

from __future__ import annotations

from collections.abc import Mapping

from stack.kmd.dtypes import DType
from stack.kmd.kernels.ids import KernelId
from stack.umd.errors import InvalidRequestError, ShapeError, UnsupportedDtypeError
from stack.umd.ops import AttrValue, Layout, OpRequest
from stack.umd.plan import KernelCall, Operand, Semantic
from stack.umd.templates import TemplateRegistry

TO_NCHW = (0, 3, 1, 2)
TO_NHWC = (0, 2, 3, 1)


def attr_int(attrs: Mapping[str, AttrValue], name: str, default: int) -> int:
    value = attrs.get(name, default)
    if type(value) is not int:
        raise InvalidRequestError(f"attribute {name} must be an int", field=f"attrs.{name}")
    return value


def attr_float(attrs: Mapping[str, AttrValue], name: str, default: float) -> float:
    value = attrs.get(name, default)
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise InvalidRequestError(f"attribute {name} must be a number", field=f"attrs.{name}")
    return float(value)


def attr_ints(
    attrs: Mapping[str, AttrValue], name: str, n: int | None, default: tuple[int, ...] | None
) -> tuple[int, ...]:
    value = attrs.get(name, default)
    if value is None:
        raise InvalidRequestError(f"attribute {name} is required", field=f"attrs.{name}")
    if isinstance(value, int):
        value = (value,) * (n or 1)
    if not isinstance(value, tuple) or any(type(v) is not int for v in value):
        raise InvalidRequestError(f"attribute {name} must be ints", field=f"attrs.{name}")
    value = tuple(int(v) for v in value)
    if n is not None and len(value) != n:
        raise InvalidRequestError(
            f"attribute {name} needs {n} values, got {len(value)}", field=f"attrs.{name}"
        )
    return value


def window_immediates(
    strides: tuple[int, ...], pads: tuple[int, ...], dil: tuple[int, ...]
) -> dict[str, int]:
    """The 2-D window immediates the convolution-family kernels read (strides, pads top, left,
    bottom, right, dilations); each caller checks the values its kernel accepts."""
    return {
        "stride_h": strides[0], "stride_w": strides[1],
        "pad_top": pads[0], "pad_left": pads[1], "pad_bottom": pads[2], "pad_right": pads[3],
        "dilation_h": dil[0], "dilation_w": dil[1],
    }  # fmt: skip


def window_attrs(attrs: Mapping[str, AttrValue], *groups: str) -> dict[str, int]:
    """The 2-D window's immediates (strides and dilations default 1, pads 0) and each of the
    ``groups`` counts (default 1), as the NCHW convolutions with checked windows read them: a
    stride, dilation or count below 1, or a pad below 0, an InvalidRequestError on it."""
    strides = attr_ints(attrs, "strides", 2, (1, 1))
    pads = attr_ints(attrs, "pads", 4, (0, 0, 0, 0))
    dil = attr_ints(attrs, "dilations", 2, (1, 1))
    counts = {name: attr_int(attrs, name, 1) for name in groups}
    checked = [("strides", strides, 1), ("pads", pads, 0), ("dilations", dil, 1)]
    for name, values, low in [*checked, *((n, (v,), 1) for n, v in counts.items())]:
        if min(values) < low:
            raise InvalidRequestError(f"{name} must be >= {low}, got {values}",
                                      field=f"attrs.{name}")  # fmt: skip
    return {**window_immediates(strides, pads, dil), **counts}


def nchw_call(req: OpRequest, kernel: KernelId, ints: dict[str, int]) -> Semantic:
    """``kernel`` on every input in order and output 0, x (input 0) and y in NCHW (NHWC ones
    converted around it), the other inputs as they are."""
    b = Builder(req)
    x = b.input(0, Layout.NCHW)
    rest = tuple(b.input(i) for i in range(1, len(req.inputs)))
    call = KernelCall(kernel, (x, *rest, b.output(0, Layout.NCHW)), 1 + len(rest), ints)
    return b.build(call)


def need_counts(req: OpRequest, n_in: tuple[int, int], n_out: int = 1) -> None:
    lo, hi = n_in
    if not lo <= len(req.inputs) <= hi:
        want = str(lo) if lo == hi else f"{lo}..{hi}"
        raise InvalidRequestError(
            f"{req.op.name} takes {want} inputs, got {len(req.inputs)}", field="inputs"
        )
    if len(req.outputs) != n_out:
        raise InvalidRequestError(
            f"{req.op.name} takes {n_out} outputs, got {len(req.outputs)}", field="outputs"
        )


def check_dtype(templates: TemplateRegistry, kernel: KernelId, dtype: DType, field: str) -> None:
    supported = templates.get(kernel).dtypes
    if dtype not in supported:
        names = ", ".join(sorted(d.name for d in supported))
        raise UnsupportedDtypeError(
            f"{kernel.name} does not take {dtype.name}; supported: {names}", field=field
        )


def same_dtype(req: OpRequest, idx: tuple[int, ...], group: str = "inputs") -> None:
    descs = getattr(req, group)
    first = req.inputs[idx[0]].dtype
    for i in idx:
        if i < len(descs) and descs[i].dtype != first:
            raise UnsupportedDtypeError(
                f"{group}[{i}] is {descs[i].dtype.name}, expected {first.name}",
                field=f"{group}[{i}].dtype",
            )


def broadcast(a: tuple[int, ...], b: tuple[int, ...], field: str) -> tuple[int, ...]:
    out = []
    for i in range(1, max(len(a), len(b)) + 1):
        x = a[-i] if i <= len(a) else 1
        y = b[-i] if i <= len(b) else 1
        if x != y and 1 not in (x, y):
            raise ShapeError(f"shapes {a} and {b} do not broadcast", field=field)
        out.append(y if x == 1 else x)
    return tuple(reversed(out))


def broadcast_inputs(call: KernelCall) -> tuple[int, ...]:
    """The broadcast of every input's shape (ShapeError naming the input that clashes)."""
    shape = call.ins[0].shape
    for i, p in enumerate(call.ins[1:], start=1):
        shape = broadcast(shape, p.shape, f"inputs[{i}].shape")
    return shape


def permute(shape: tuple[int, ...], perm: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(shape[p] for p in perm)


class Builder:
    """Collects the calls of one request: conversions before, the op's call, conversions after."""

    def __init__(self, req: OpRequest) -> None:
        self.req = req
        self.n_in = len(req.inputs)
        self._next = len(req.inputs) + len(req.outputs)
        self.pre: list[KernelCall] = []
        self.post: list[KernelCall] = []
        self.scratch: list[int] = []

    def _scratch(self, shape: tuple[int, ...], dtype: DType) -> Operand:
        op = Operand(self._next, shape, dtype)
        self._next += 1
        self.scratch.append(max(op.nbytes, 1))
        return op

    def input(self, i: int, want: Layout = Layout.ANY) -> Operand:
        """Input ``i`` as the kernel sees it: NHWC given, NCHW wanted → TRANSPOSE into scratch."""
        d = self.req.inputs[i]
        src = Operand(i, d.shape, d.dtype)
        if want is Layout.ANY or d.layout in (Layout.ANY, want):
            return src
        perm = TO_NCHW if want is Layout.NCHW else TO_NHWC
        dst = self._scratch(permute(d.shape, perm), d.dtype)
        self.pre.append(transpose_call(src, dst, perm))
        return dst

    def output(self, j: int, want: Layout = Layout.ANY) -> Operand:
        """Output ``j`` as the kernel writes it: NHWC asked, NCHW kernel → scratch + TRANSPOSE."""
        d = self.req.outputs[j]
        dst = Operand(self.n_in + j, d.shape, d.dtype)
        if want is Layout.ANY or d.layout in (Layout.ANY, want):
            return dst
        back = TO_NHWC if want is Layout.NCHW else TO_NCHW
        fwd = TO_NCHW if want is Layout.NCHW else TO_NHWC
        src = self._scratch(permute(d.shape, fwd), d.dtype)
        self.post.append(transpose_call(src, dst, back))
        return src

    def build(self, main: KernelCall) -> Semantic:
        fields = tuple(f"outputs[{j}].shape" for j in range(len(main.outs)))
        return Semantic((*self.pre, main, *self.post), tuple(self.scratch), len(self.pre), fields)


def transpose_call(src: Operand, dst: Operand, perm: tuple[int, ...]) -> KernelCall:
    return KernelCall(KernelId.TRANSPOSE, (src, dst), 1, {"perm": perm})
