"""The discrete Fourier transform DFT (ONNX DFT, opsets 17 and 20; ``axis``, ``inverse``,
``onesided`` and ``dft_length`` ints).

One input, input [..., 1 or 2] F32, F16 or F64 (else an UnsupportedDtypeError on
inputs[0].dtype; a rank below 2 or a last axis other than 1 or 2 a ShapeError on
inputs[0].shape), and one output of its dtype (else an UnsupportedDtypeError on
outputs[0].dtype) and of the shape :func:`~stack.kmd.kernels.dft.output_shape` gives (else a
ShapeError on outputs[0].shape). ``axis`` lies in [-rank, -2] or [0, rank - 2] (never the
pair's axis; a negative one counts from the back, as ONNX's: -2 is the last signal axis;
default 1), ``inverse`` and ``onesided`` are 0 or 1 (default 0) and ``dft_length`` at least 1
is required: else an InvalidRequestError on that attribute. A onesided forward transform (RFFT)
takes a real input [..., 1], a onesided inverse (IRFFT) a complex one [..., 2] (else a
ShapeError on inputs[0].shape). A 4-D input is read, and a 4-D output written, in its logical
NCHW order, NHWC ones transposed around the kernel, as EINSUM's operands: the axis counts in
ONNX's order.
"""

from __future__ import annotations

from stack.kmd.kernels.dft import output_shape
from stack.kmd.kernels.ids import KernelId
from stack.umd.errors import InvalidRequestError, ShapeError
from stack.umd.ops import Layout, OpKind, OpRequest
from stack.umd.plan import KernelCall, Semantic
from stack.umd.registry import OpTranslator
from stack.umd.templates import TemplateRegistry
from stack.umd.translators._common import Builder, attr_int, check_dtype, need_counts, same_dtype

_KERNEL = KernelId.DFT


def _logical(shape: tuple[int, ...]) -> Layout:
    return Layout.NCHW if len(shape) == 4 else Layout.ANY


def _flag(value: int, name: str) -> int:
    if value not in (0, 1):
        raise InvalidRequestError(f"{name} must be 0 or 1, got {value}", field=f"attrs.{name}")
    return value


class DFTTranslator(OpTranslator):
    """DFT → the Fourier transform kernel on input and output (NCHW when 4-D), with axis,
    inverse, onesided and dft_length as its immediates."""

    family = "dft"
    ops = frozenset({OpKind.DFT})

    def parse(self, req: OpRequest, templates: TemplateRegistry) -> Semantic:
        need_counts(req, (1, 1))
        check_dtype(templates, _KERNEL, req.inputs[0].dtype, "inputs[0].dtype")
        same_dtype(req, (0,), "outputs")
        b = Builder(req)
        x_in = b.input(0, _logical(req.inputs[0].shape))
        x = x_in.shape
        if len(x) < 2 or x[-1] not in (1, 2):
            raise ShapeError(f"DFT takes input [..., 1 or 2], got {x}", field="inputs[0].shape")
        attrs = req.attr_map()
        axis, rank = attr_int(attrs, "axis", 1), len(x)
        if not (-rank <= axis <= -2 or 0 <= axis <= rank - 2):
            raise InvalidRequestError(f"axis {axis} is not a signal axis of input {x}",
                                      field="attrs.axis")  # fmt: skip
        length = attr_int(attrs, "dft_length", 0)  # 0: not given
        if length < 1:
            raise InvalidRequestError(f"dft_length must be given, at least 1, got {length}",
                                      field="attrs.dft_length")  # fmt: skip
        ints = {
            "axis": axis + rank if axis < 0 else axis,
            "inverse": _flag(attr_int(attrs, "inverse", 0), "inverse"),
            "onesided": _flag(attr_int(attrs, "onesided", 0), "onesided"),
            "dft_length": length,
        }
        if ints["onesided"] and x[-1] != 1 + ints["inverse"]:
            kind = "IRFFT takes a complex" if ints["inverse"] else "RFFT takes a real"
            raise ShapeError(f"DFT {kind} input [..., {1 + ints['inverse']}], got {x}",
                             field="inputs[0].shape")  # fmt: skip
        call = KernelCall(_KERNEL, (x_in, b.output(0, _logical(req.outputs[0].shape))), 1, ints)
        return b.build(call)

    def infer(self, call: KernelCall) -> tuple[tuple[int, ...], ...]:
        i = call.i
        return (output_shape(call.ins[0].shape, i("axis"), i("inverse"), i("onesided"),
                             i("dft_length")),)  # fmt: skip
