"""The Fourier transforms: DFT (ONNX DFT, opsets 17 and 20; ``axis``, ``inverse``,
``onesided`` and ``dft_length`` ints) and STFT (ONNX STFT, opset 17; ``frame_step``,
``frame_length`` and ``onesided`` ints).

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

STFT takes signal [B, N, 1 or 2] F32, F16 or F64 (else an UnsupportedDtypeError on
inputs[0].dtype, another shape a ShapeError on inputs[0].shape), the optional window
[frame_length] of its dtype (else an UnsupportedDtypeError or a ShapeError on inputs[1]) and
gives one output of its dtype and of the shape :func:`~stack.kmd.kernels.dft.stft_shape` gives
(else an UnsupportedDtypeError or a ShapeError on outputs[0]). ``frame_step`` (at least 1) and
``frame_length`` (1 to N) are required, ``onesided`` is 0 or 1 (default 1, as ONNX's): else an
InvalidRequestError on that attribute. The 4-D output is written in its logical order, an NHWC
one transposed after the kernel.
"""

from __future__ import annotations

from stack.kmd.kernels.dft import output_shape, stft_shape
from stack.kmd.kernels.ids import KernelId
from stack.umd.errors import InvalidRequestError, ShapeError
from stack.umd.ops import Layout, OpKind, OpRequest
from stack.umd.plan import KernelCall, Semantic
from stack.umd.registry import OpTranslator
from stack.umd.templates import TemplateRegistry
from stack.umd.translators._common import Builder, attr_int, check_dtype, need_counts, same_dtype

_KERNEL = KernelId.DFT
_STFT = KernelId.STFT


def _logical(shape: tuple[int, ...]) -> Layout:
    return Layout.NCHW if len(shape) == 4 else Layout.ANY


def _flag(value: int, name: str) -> int:
    if value not in (0, 1):
        raise InvalidRequestError(f"{name} must be 0 or 1, got {value}", field=f"attrs.{name}")
    return value


def _stft(req: OpRequest, templates: TemplateRegistry) -> Semantic:
    """STFT → the short-time Fourier transform kernel on signal, the optional window and the
    output (NCHW), with frame_step, frame_length and onesided as its immediates."""
    need_counts(req, (1, 2))
    check_dtype(templates, _STFT, req.inputs[0].dtype, "inputs[0].dtype")
    same_dtype(req, (0, 1))
    same_dtype(req, (0,), "outputs")
    x = req.inputs[0].shape
    if len(x) != 3 or x[-1] not in (1, 2):
        raise ShapeError(f"STFT takes signal [B, N, 1 or 2], got {x}", field="inputs[0].shape")
    attrs = req.attr_map()
    step, length = attr_int(attrs, "frame_step", 0), attr_int(attrs, "frame_length", 0)
    if step < 1:
        raise InvalidRequestError(f"frame_step must be given, at least 1, got {step}",
                                  field="attrs.frame_step")  # fmt: skip
    if not 1 <= length <= x[1]:
        raise InvalidRequestError(f"frame_length must be given, 1 to {x[1]}, got {length}",
                                  field="attrs.frame_length")  # fmt: skip
    if len(req.inputs) > 1 and req.inputs[1].shape != (length,):
        raise ShapeError(f"STFT window must be {(length,)}, got {req.inputs[1].shape}",
                         field="inputs[1].shape")  # fmt: skip
    ints = {"frame_step": step, "frame_length": length,
            "onesided": _flag(attr_int(attrs, "onesided", 1), "onesided")}  # fmt: skip
    b = Builder(req)
    ins = tuple(b.input(i) for i in range(len(req.inputs)))
    return b.build(KernelCall(_STFT, (*ins, b.output(0, Layout.NCHW)), len(ins), ints))


class DFTTranslator(OpTranslator):
    """DFT → the Fourier transform kernel on input and output (NCHW when 4-D), with axis,
    inverse, onesided and dft_length as its immediates; STFT → the short-time one."""

    family = "dft"
    ops = frozenset({OpKind.DFT, OpKind.STFT})

    def parse(self, req: OpRequest, templates: TemplateRegistry) -> Semantic:
        if req.op is OpKind.STFT:
            return _stft(req, templates)
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
        if call.kernel_id is _STFT:
            return (stft_shape(call.ins[0].shape, i("frame_step"), i("frame_length"),
                               i("onesided")),)  # fmt: skip
        return (output_shape(call.ins[0].shape, i("axis"), i("inverse"), i("onesided"),
                             i("dft_length")),)  # fmt: skip
