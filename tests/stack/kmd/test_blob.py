"""The instruction-blob format: round trip, exact layout, and refusal of corrupt blobs."""

from __future__ import annotations

import struct
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stack.kmd import blob as B
from stack.kmd.dtypes import DType
from stack.kmd.errors import BlobFormatError
from stack.kmd.kernels.ids import KernelId


def _sample() -> B.InstructionBlob:
    return B.InstructionBlob(
        kernel_id=KernelId.GEMM,
        params=(
            B.TensorParam(0x1000, 64 * 128 * 4, DType.F32, (64, 128)),
            B.TensorParam(0x20000, 128 * 32 * 4, DType.F32, (128, 32)),
            B.TensorParam(0x40000, 64 * 32 * 4, DType.F32, (64, 32)),
        ),
        launch=B.LaunchConfig((2, 1, 1), (256, 1, 1), 1024),
        ints=(0, 1, -1),
        floats=(1.0, 0.5),
        flags=3,
    )


def _recrc(data: bytearray) -> bytes:
    struct.pack_into("<I", data, len(data) - 4, zlib.crc32(bytes(data[:-4])))
    return bytes(data)


def test_header_layout_matches_the_seed() -> None:
    data = B.encode(_sample())
    magic, version, flags, kid, size, count = struct.unpack_from("<IHHIII", data, 0)
    assert (magic, version, flags, kid, count) == (0x5A5A5A5A, 1, 3, int(KernelId.GEMM), 3)
    assert size == len(data) == B.blob_size(3, 3, 2) == 56 + 3 * 84 + 5 * 8 + 4
    assert struct.unpack_from("<3I3II", data, 20) == (2, 1, 1, 256, 1, 1, 1024)
    assert struct.unpack_from("<Q", data, 56)[0] == 0x1000
    assert struct.unpack_from("<I", data, len(data) - 4)[0] == zlib.crc32(data[:-4])


def test_round_trip() -> None:
    assert B.decode(B.encode(_sample())) == _sample()


def test_decode_accepts_bytearray_and_memoryview() -> None:
    data = B.encode(_sample())
    assert B.decode(bytearray(data)) == B.decode(memoryview(data)) == _sample()


_param = st.builds(
    B.TensorParam,
    addr=st.integers(0, 2**64 - 1),
    nbytes=st.just(2**40),
    dtype=st.sampled_from(list(DType)),
    shape=st.lists(st.integers(0, 16), max_size=8).map(tuple),
)


@settings(max_examples=60, deadline=None)
@given(
    kid=st.sampled_from(list(KernelId)),
    params=st.lists(_param, max_size=6).map(tuple),
    ints=st.lists(st.integers(-(2**63), 2**63 - 1), max_size=12).map(tuple),
    floats=st.lists(st.floats(allow_nan=False), max_size=4).map(tuple),
    flags=st.integers(0, 0xFFFF),
)
def test_round_trip_property(kid, params, ints, floats, flags) -> None:  # type: ignore[no-untyped-def]
    blob = B.InstructionBlob(kid, params, B.LaunchConfig(), ints, floats, flags)
    assert B.decode(B.encode(blob)) == blob


def _corrupt(offset: int, fmt: str, value: int, *, fix_crc: bool = True) -> bytes:
    data = bytearray(B.encode(_sample()))
    struct.pack_into(fmt, data, offset, value)
    return _recrc(data) if fix_crc else bytes(data)


P0 = 56  # first param descriptor


@pytest.mark.parametrize(
    ("data", "field", "offset"),
    [
        (_corrupt(0, "<I", 0xDEADBEEF), "magic", 0),
        (_corrupt(4, "<H", 2), "version", 4),
        (_corrupt(8, "<I", 999), "kernel_id", 8),
        (_corrupt(12, "<I", 10), "instruction_size", 12),
        (_corrupt(16, "<I", 4), "param_count", 16),
        (_corrupt(48, "<I", 5000), "n_ints", 48),
        (_corrupt(P0 + 16, "<B", 77), "params[0].dtype", P0 + 16),
        (_corrupt(P0 + 17, "<B", 9), "params[0].ndim", P0 + 17),
        (_corrupt(P0 + 18, "<H", 1), "params[0].reserved", P0 + 18),
        (_corrupt(P0 + 20, "<q", -5), "params[0].dims[0]", P0 + 20),
        (_corrupt(P0 + 20 + 8 * 3, "<q", 7), "params[0].dims[3]", P0 + 20 + 24),
        (_corrupt(P0 + 8, "<Q", 16), "params[0].nbytes", P0 + 8),
        (_corrupt(P0, "<Q", 0x2000, fix_crc=False), "crc32", 56 + 3 * 84 + 40),
    ],
)
def test_corrupt_blob_names_offset_and_field(data: bytes, field: str, offset: int) -> None:
    with pytest.raises(BlobFormatError) as info:
        B.decode(data)
    assert (info.value.field, info.value.offset) == (field, offset)
    assert field in str(info.value) and str(offset) in str(info.value)


def test_truncated_blob() -> None:
    data = B.encode(_sample())
    with pytest.raises(BlobFormatError) as info:
        B.decode(data[:30])
    assert info.value.field == "header"
    with pytest.raises(BlobFormatError) as info:
        B.decode(data[:-8])
    assert info.value.field == "instruction_size"


@pytest.mark.parametrize(
    ("blob", "field"),
    [
        (
            B.InstructionBlob(KernelId.RELU, (B.TensorParam(0, 8, DType.F32, (1,) * 9),)),
            "params[0].ndim",
        ),
        (
            B.InstructionBlob(KernelId.RELU, (B.TensorParam(-1, 8, DType.F32, (1,)),)),
            "params[0].addr",
        ),
        (B.InstructionBlob(KernelId.RELU, (), ints=(2**63,)), "ints"),
        (B.InstructionBlob(KernelId.RELU, (), flags=1 << 16), "flags"),
        (B.InstructionBlob(KernelId.RELU, (), B.LaunchConfig((1, 1, -1))), "grid"),
    ],
)
def test_encode_refuses_unrepresentable(blob: B.InstructionBlob, field: str) -> None:
    with pytest.raises(BlobFormatError) as info:
        B.encode(blob)
    assert info.value.field == field
