from __future__ import annotations

import pytest

from stack.umd import DType, Layout, OpKind, OpRequest, TensorDesc
from stack.umd.errors import InvalidRequestError, UnknownOpError
from stack.umd.service import umd_pb2 as pb
from stack.umd.service.convert import proto_field, request_from_proto, request_to_proto


def test_round_trip_keeps_everything() -> None:
    req = OpRequest.make(
        OpKind.CONV2D,
        [
            TensorDesc(4096, (1, 8, 8, 3), DType.F32, Layout.NHWC),
            TensorDesc(8192, (4, 3, 3, 3), DType.F32),
        ],
        [TensorDesc(16384, (1, 8, 8, 4), DType.F32, Layout.NHWC)],
        pads=(1, 1, 1, 1), group=1, epsilon=0.5, name="c1", scales=(0.5, 2.0),
    )  # fmt: skip
    assert request_from_proto(request_to_proto(req, 1, 2)) == req


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda m: setattr(m, "op_type", 99), "op_type"),
        (lambda m: setattr(m.inputs[0], "data_type", 0), "inputs[0].data_type"),
        (lambda m: setattr(m.inputs[0], "data_type", 42), "inputs[0].data_type"),
        (lambda m: setattr(m.inputs[0], "layout", 9), "inputs[0].layout"),
        (lambda m: setattr(m.inputs[0], "byte_size", 1), "inputs[0].byte_size"),
        (lambda m: m.outputs[0].shape.extend([1] * 8), "outputs[0].shape"),
        (lambda m: m.outputs[0].shape.extend([1 << 63, 4]), "outputs[0].shape"),
        (lambda m: m.attrs["axis"].Clear(), "attrs.axis"),
    ],
)
def test_malformed_messages_name_the_field(mutate: object, field: str) -> None:
    req = OpRequest.make(
        OpKind.SOFTMAX,
        [TensorDesc(0, (2, 3), DType.F32)],
        [TensorDesc(0, (2, 3), DType.F32)],
        axis=1,
    )
    m = request_to_proto(req)
    mutate(m)  # type: ignore[operator]
    with pytest.raises(InvalidRequestError) as info:
        request_from_proto(m, "")
    assert info.value.field == field
    if field == "op_type":
        assert isinstance(info.value, UnknownOpError) and "GEMM" in str(info.value)


def test_batch_prefix_and_proto_field_names() -> None:
    m = pb.OpRequest(
        op_type=pb.OP_RELU, inputs=[pb.TensorDesc(shape=[2], data_type=pb.DT_F32, byte_size=3)]
    )
    with pytest.raises(InvalidRequestError) as info:
        request_from_proto(m, "ops[5].")
    assert info.value.field == "ops[5].inputs[0].byte_size"
    assert proto_field("ops[1].inputs[0].addr") == "ops[1].inputs[0].device_addr"
    assert proto_field("outputs[0].dtype") == "outputs[0].data_type"
    assert proto_field("op") == "op_type"
