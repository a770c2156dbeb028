"""Conversion between ``contracts/umd.proto`` messages and the in-process records.

Every check a message needs before it becomes an :class:`~stack.umd.ops.OpRequest` is here,
each failure an :class:`~stack.umd.errors.InvalidRequestError` naming the proto field
(``ops[2].inputs[0].byte_size``). Fields are named as in the proto (``device_addr``,
``data_type``, ``op_type``), also when the error arose deeper, in the pipeline.
"""

from __future__ import annotations

import math
import struct

from stack.kmd.blob import HEADER, PARAM
from stack.kmd.dtypes import DType
from stack.umd.errors import InvalidRequestError, UnknownOpError
from stack.umd.ops import AttrValue, Layout, OpKind, OpRequest, TensorDesc
from stack.umd.pipeline import Translated
from stack.umd.service import umd_pb2 as pb

_MAX_BYTES = 1 << 62
_MAX_DIMS = 8
_MAX_ATTR_ITEMS = 4096
_ADDR = struct.Struct("<Q")
_RENAMES = ((".addr", ".device_addr"), (".dtype", ".data_type"))


def proto_field(field: str) -> str:
    """An in-process field path spelled as in the proto."""
    for old, new in _RENAMES:
        if field.endswith(old):
            field = field[: -len(old)] + new
    if field == "op" or field.endswith(".op"):
        field += "_type"
    return field


_DTYPES = {int(d): d for d in DType}
_LAYOUTS = {int(x): x for x in Layout}
_OPS = {int(o): o for o in OpKind}


def desc_from_proto(t: pb.TensorDesc, where: str) -> TensorDesc:
    dtype = _DTYPES.get(t.data_type)
    if dtype is None:
        raise InvalidRequestError(
            f"{where}.data_type {t.data_type} is not a known DataType", field=f"{where}.data_type"
        )
    layout = _LAYOUTS.get(t.layout)
    if layout is None:
        raise InvalidRequestError(f"{where}.layout {t.layout} is unknown", field=f"{where}.layout")
    shape = tuple(t.shape)
    if len(shape) > _MAX_DIMS or any(d > _MAX_BYTES for d in shape):
        raise InvalidRequestError(f"{where}.shape is not a legal shape", field=f"{where}.shape")
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes > _MAX_BYTES:
        raise InvalidRequestError(f"{where} is too large", field=f"{where}.shape")
    if t.byte_size != nbytes:
        raise InvalidRequestError(
            f"{where}.byte_size {t.byte_size} != shape {shape} x {dtype.name} = {nbytes}",
            field=f"{where}.byte_size",
        )
    return TensorDesc(t.device_addr, shape, dtype, layout)


def attr_from_proto(name: str, v: pb.AttrValue) -> AttrValue:
    kind = v.WhichOneof("value")
    if kind is None:
        raise InvalidRequestError(f"attribute {name} has no value", field=f"attrs.{name}")
    if kind in ("ints", "floats"):
        values = getattr(v, kind).values
        if len(values) > _MAX_ATTR_ITEMS:
            raise InvalidRequestError(f"attribute {name} is too long", field=f"attrs.{name}")
        return tuple(values)
    value: AttrValue = getattr(v, kind)
    return value


def request_from_proto(m: pb.OpRequest, prefix: str = "") -> OpRequest:
    """The in-process request for a proto ``OpRequest`` (fields prefixed with ``prefix``)."""
    op = _OPS.get(m.op_type)
    if op is None:
        known = ", ".join(k.name for k in OpKind)
        raise UnknownOpError(
            f"unknown op_type {m.op_type}; known: {known}", field=f"{prefix}op_type"
        )
    inputs = tuple(desc_from_proto(t, f"{prefix}inputs[{i}]") for i, t in enumerate(m.inputs))
    outputs = tuple(desc_from_proto(t, f"{prefix}outputs[{i}]") for i, t in enumerate(m.outputs))
    attrs = tuple(sorted((k, attr_from_proto(k, v)) for k, v in m.attrs.items()))
    return OpRequest(op, inputs, outputs, attrs)


class RequestDecoder:
    """:func:`request_from_proto` with a bounded memo keyed by the op's wire bytes.

    Conversion is a pure function of the op's fields (not of the session, request id or
    submit flags, which are cleared for the key), so requests repeating an op — the common case
    of a model's steady state — skip it. Only successful conversions are remembered.
    """

    def __init__(self, capacity: int = 4096) -> None:
        self.capacity = capacity
        self._memo: dict[bytes, OpRequest] = {}

    def decode(self, m: pb.OpRequest, prefix: str = "") -> OpRequest:
        sid, rid, only, wait = m.session_id, m.request_id, m.translate_only, m.wait
        if sid or rid or only or wait:
            m.session_id = m.request_id = 0
            m.translate_only = m.wait = False
            key = m.SerializeToString(deterministic=True)
            m.session_id, m.request_id, m.translate_only, m.wait = sid, rid, only, wait
        else:
            key = m.SerializeToString(deterministic=True)
        req = self._memo.get(key)
        if req is None:
            req = request_from_proto(m, prefix)
            if len(self._memo) >= self.capacity:
                self._memo.clear()
            self._memo[key] = req
        return req


def desc_to_proto(d: TensorDesc, tensor_id: int = 0) -> pb.TensorDesc:
    return pb.TensorDesc(
        tensor_id=tensor_id,
        shape=d.shape,
        data_type=int(d.dtype),  # type: ignore[arg-type]
        byte_size=d.byte_size,
        device_addr=d.addr,
        layout=int(d.layout),  # type: ignore[arg-type]
    )


def attr_to_proto(value: AttrValue) -> pb.AttrValue:
    if isinstance(value, bool | int):
        return pb.AttrValue(i=int(value))
    if isinstance(value, float):
        return pb.AttrValue(f=value)
    if isinstance(value, str):
        return pb.AttrValue(s=value)
    if all(isinstance(x, int) for x in value):
        return pb.AttrValue(ints=pb.IntList(values=[int(x) for x in value]))
    return pb.AttrValue(floats=pb.FloatList(values=[float(x) for x in value]))


def request_to_proto(req: OpRequest, session_id: int = 0, request_id: int = 0) -> pb.OpRequest:
    return pb.OpRequest(
        session_id=session_id,
        request_id=request_id,
        op_type=int(req.op),  # type: ignore[arg-type]
        inputs=[desc_to_proto(d) for d in req.inputs],
        outputs=[desc_to_proto(d) for d in req.outputs],
        attrs={k: attr_to_proto(v) for k, v in req.attrs},
    )


_HEADERS: dict[bytes, tuple[pb.HardwareInstruction, tuple[int, ...]]] = {}


def fill_instruction(out: pb.HardwareInstruction, blob: bytes) -> None:
    """Fill ``out`` (in place: no message copies) with one blob and its header fields.

    The header-derived part (kernel id, launch config, where the addresses are) is memoised
    by the header's bytes.
    """
    head = blob[: HEADER.size]
    memo = _HEADERS.get(head)
    if memo is None:
        h = HEADER.unpack_from(blob, 0)
        launch = pb.LaunchConfig(grid=h[6:9], block=h[9:12], shared_mem=h[12])
        offsets = tuple(HEADER.size + i * PARAM.size for i in range(h[5]))
        memo = (pb.HardwareInstruction(kernel_id=h[3], launch_config=launch), offsets)
        if len(_HEADERS) >= 4096:
            _HEADERS.clear()
        _HEADERS[head] = memo
    out.MergeFrom(memo[0])
    out.instruction_blob = blob
    unpack = _ADDR.unpack_from
    out.param_addrs.extend([unpack(blob, off)[0] for off in memo[1]])


def instruction(blob: bytes) -> pb.HardwareInstruction:
    """The proto form of one blob (see :func:`fill_instruction`)."""
    out = pb.HardwareInstruction()
    fill_instruction(out, blob)
    return out


def fill_response(
    out: pb.OpResponse,
    t: Translated,
    request_id: int,
    latency_us: int,
    fence_value: int = 0,
    status: bool = True,
) -> pb.OpResponse:
    """Fill ``out`` in place with the response for one op (``status=False``: inside a batch,
    whose own status counts)."""
    if status:
        out.status.code = 0
    add = out.instructions.add
    for blob in t.blobs:
        fill_instruction(add(), blob)
    out.translate_latency_us = latency_us
    out.request_id = request_id
    out.cache_hit = t.cache_hit
    out.fence_value = fence_value
    out.submitted = fence_value != 0
    out.primary = t.primary
    return out


def response_for(
    t: Translated, request_id: int, latency_us: int, fence_value: int = 0
) -> pb.OpResponse:
    """The response for one op."""
    return fill_response(pb.OpResponse(), t, request_id, latency_us, fence_value)
