"""The importers of DFT (opset 17+), the discrete Fourier transform along one axis, and of STFT
(opset 17+), the short-time one over frames of a signal; in a module of their own beside
:mod:`stack.adapter.ops_index`, whose CumSum they follow in taking a shape-deciding value from a
constant input (ops_index is past its 300 lines).

The IR ``DFT`` takes ONNX's input [..., 1 or 2] (a real signal, or a complex one as
(real, imaginary) pairs; float16, float32 or float64) and carries resolved attributes only:
``axis`` (ONNX's axis attribute up to opset 19, default 1; its optional scalar ``axis`` input
from opset 20, default -2), made non-negative; ``dft_length`` (ONNX's optional scalar
``dft_length`` input; by default the signal's length on axis, or 2 * (length - 1) for a
onesided inverse, IRFFT); ``inverse`` and ``onesided``. Those inputs decide the output's shape,
so they must be constants: a run-time one is a DynamicShapeError naming the node and the
tensor. What ONNX forbids is a ModelFormatError naming the node: an opset below 17, a missing
or extra input or output, an input that is not float [..., 1 or 2], an axis outside
[-r, -2] or [0, r - 2] (r the input's rank: never the pair's axis), a dft_length or axis that is
not one integer, a dft_length below 1, inverse or onesided other than 0 or 1, a onesided forward
transform (RFFT) of a complex input or a onesided inverse (IRFFT) of a real one (a bfloat16 input,
which ONNX allows, has no IR type and is refused at the graph input, an UnsupportedTypeError
naming the tensor). A constant input folds at import.

The IR ``STFT`` takes ONNX's signal [B, N, 1 or 2] (float16, float32 or float64) and its optional
window (data, a run-time tensor or a constant) and carries resolved attributes only:
``frame_step`` (ONNX's required scalar input), ``frame_length`` (its optional scalar input; by
default the window's length, else N) and ``onesided`` (default 1). frame_step and frame_length
decide the output's shape, so a run-time one is a DynamicShapeError naming the node and the
tensor. A ModelFormatError naming the node: an opset below 17, a missing or extra input or
output, a signal that is not float [B, N, 1 or 2], a frame_step or frame_length that is not one
integer, a frame_step below 1, a frame_length outside [1, N], a window that is not [frame_length]
of signal's type, onesided other than 0 or 1.
"""

from __future__ import annotations

import onnx

from stack.adapter.context import ImportContext, attributes, present_inputs
from stack.adapter.errors import ModelFormatError
from stack.adapter.registry import register
from stack.compiler import OpType
from stack.compiler.dft import input_problem, problem
from stack.compiler.stft import input_problem as stft_input_problem
from stack.compiler.stft import problem as stft_problem

_OP = "DFT"
_STFT = "STFT"


def _scalar(ctx: ImportContext, proto: onnx.NodeProto, name: str, i: int, role: str) -> int | None:
    """Input ``i``'s one integer (None when omitted); a DynamicShapeError naming the tensor when
    it is computed at run time, a ModelFormatError naming the node when it is not one integer."""
    value = ctx.const_input(proto, name, i, role)
    if value is None:
        return None
    if value.dtype.kind not in "iu" or value.size != 1 or value.ndim > 1:
        op = proto.op_type
        raise ModelFormatError(f"{op} {role} must be one integer, got {value.dtype}"
                               f"{list(value.shape)}", op=op, node=name)  # fmt: skip
    return int(value.reshape(()))


@register(_OP)
def dft(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    """output = the discrete Fourier transform of input along axis over dft_length points,
    forward or inverse, full or onesided (opset 17+): the IR ``DFT`` of input's type."""
    axis_input = ctx.opset >= 20  # axis is an attribute up to opset 19, an input from 20
    ins, outs, a = present_inputs(proto, 4), list(proto.output), attributes(proto)

    def bad(why: str) -> ModelFormatError:
        return ModelFormatError(f"{_OP} {why}", op=_OP, node=name)

    if (ctx.opset < 17 or not 1 <= len(ins) <= 2 + axis_input or not ins[0] or len(outs) != 1
            or not outs[0] or (axis_input and "axis" in a)):  # fmt: skip
        takes = "input and the optional dft_length and axis" if axis_input else (
            "input and the optional dft_length, axis an attribute")  # fmt: skip
        raise bad(f"(opset 17+, model opset {ctx.opset}) takes {takes}, and one output, got "
                  f"{ins} -> {outs}, attributes {sorted(a)}")  # fmt: skip
    x = ctx.type_of(ins[0])
    why = input_problem(x)
    if why is not None:
        raise bad(why)
    rank = len(x.shape)
    given = _scalar(ctx, proto, name, 2, "axis") if axis_input else int(a.get("axis", 1))
    axis = (-2 if axis_input else 1) if given is None else given
    if not (-rank <= axis <= -2 or 0 <= axis <= rank - 2):
        raise bad(f"takes an axis in [{-rank}, -2] or [0, {rank - 2}] for input {x}, got {axis}")
    axis += rank if axis < 0 else 0
    inverse, onesided = int(a.get("inverse", 0)), int(a.get("onesided", 0))
    length = _scalar(ctx, proto, name, 1, "dft_length")
    if length is None:  # ONNX's default: the signal's length, IRFFT's from its onesided half
        n = x.shape[axis]
        length = 2 * (n - 1) if inverse and onesided else n
    why = problem(x, axis, inverse, onesided, length)
    if why is not None:
        raise bad(why)
    ctx.emit(name, OpType.DFT, [ins[0]], outs, axis=axis, inverse=inverse, onesided=onesided,
             dft_length=length)  # fmt: skip


@register(_STFT)
def stft(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    """output = the DFT of each frame of signal times the window (opset 17+): the IR ``STFT``
    of signal's type, [B, frames, frame_length // 2 + 1 or frame_length, 2]."""
    ins, outs, a = present_inputs(proto, 5), list(proto.output), attributes(proto)

    def bad(why: str) -> ModelFormatError:
        return ModelFormatError(f"{_STFT} {why}", op=_STFT, node=name)

    if (ctx.opset < 17 or not 2 <= len(ins) <= 4 or not ins[0] or not ins[1] or len(outs) != 1
            or not outs[0]):  # fmt: skip
        raise bad(f"(opset 17+, model opset {ctx.opset}) takes signal, frame_step and the "
                  f"optional window and frame_length, and one output, got {ins} -> "
                  f"{outs}")  # fmt: skip
    x = ctx.type_of(ins[0])
    why = stft_input_problem(x)
    if why is not None:
        raise bad(why)
    step = _scalar(ctx, proto, name, 1, "frame_step")
    window = ctx.type_of(ins[2]) if len(ins) > 2 and ins[2] else None
    length = _scalar(ctx, proto, name, 3, "frame_length")
    if length is None:  # ONNX's default: the window's length, else the signal's
        length = window.shape[0] if window is not None and window.shape else x.shape[1]
    onesided = int(a.get("onesided", 1))
    why = stft_problem(x, window, int(step or 0), length, onesided)
    if why is not None:
        raise bad(why)
    ctx.emit(name, OpType.STFT, [ins[0], *([ins[2]] if window is not None else [])], outs,
             frame_step=step, frame_length=length, onesided=onesided)  # fmt: skip
