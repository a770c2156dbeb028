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


def desc_from_proto(t: pb.TensorDesc, where: str) -> TensorDesc:
    try:
        dtype = DType(t.data_type)
    except ValueError:
        raise InvalidRequestError(
            f"{where}.data_type {t.data_type} is not a known DataType", field=f"{where}.data_type"
        ) from None
    try:
        layout = Layout(t.layout)
    except ValueError:
        raise InvalidRequestError(
            f"{where}.layout {t.layout} is unknown", field=f"{where}.layout"
        ) from None
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
    try:
        op = OpKind(m.op_type)
    except ValueError:
        known = ", ".join(k.name for k in OpKind)
        raise UnknownOpError(
            f"unknown op_type {m.op_type}; known: {known}", field=f"{prefix}op_type"
        ) from None
    inputs = tuple(desc_from_proto(t, f"{prefix}inputs[{i}]") for i, t in enumerate(m.inputs))
    outputs = tuple(desc_from_proto(t, f"{prefix}outputs[{i}]") for i, t in enumerate(m.outputs))
    attrs = tuple(sorted((k, attr_from_proto(k, v)) for k, v in m.attrs.items()))
    return OpRequest(op, inputs, outputs, attrs)


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


def instruction(blob: bytes) -> pb.HardwareInstruction:
    """The proto form of one blob: the blob itself plus its header fields, read in place."""
    h = HEADER.unpack_from(blob, 0)
    n_params = h[5]
    addrs = [_ADDR.unpack_from(blob, HEADER.size + i * PARAM.size)[0] for i in range(n_params)]
    return pb.HardwareInstruction(
        kernel_id=h[3],
        instruction_blob=blob,
        launch_config=pb.LaunchConfig(grid=h[6:9], block=h[9:12], shared_mem=h[12]),
        param_addrs=addrs,
    )


def response_for(
    t: Translated, request_id: int, latency_us: int, fence_value: int = 0
) -> pb.OpResponse:
    return pb.OpResponse(
        status=pb.Status(code=0),
        instructions=[instruction(b) for b in t.blobs],
        translate_latency_us=latency_us,
        request_id=request_id,
        cache_hit=t.cache_hit,
        fence_value=fence_value,
        submitted=fence_value != 0,
    )
