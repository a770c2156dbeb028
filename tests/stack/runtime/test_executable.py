from __future__ import annotations

import copy
import dataclasses
import logging
import struct
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stack.runtime import ExecOp, Executable, ExecutableFormatError, TensorRole
from stack.runtime.binary import HEADER, SEGMENT_ENTRY, SegmentKind, assemble, seal
from stack.runtime.executable import FORMAT_VERSION
from stack.runtime.records_json import records_to_json


def _segment(data: bytes, kind: SegmentKind) -> tuple[int, int, int]:
    """(table position, offset, length) of segment ``kind``."""
    count = struct.unpack_from("<I", data, 12)[0]
    for i in range(count):
        k, _align, offset, length = SEGMENT_ENTRY.unpack_from(data, HEADER.size + i * 24)
        if k == kind:
            return HEADER.size + i * SEGMENT_ENTRY.size, offset, length
    raise AssertionError(kind)


def _field(data: bytes) -> str:
    with pytest.raises(ExecutableFormatError) as info:
        Executable.from_bytes(data)
    return info.value.field


def test_round_trip_is_exact_and_deterministic(conv_model: Any, branch_model: Any) -> None:
    for exe, _, _ in (conv_model, branch_model):
        data = exe.to_bytes()
        assert data[:4] == b"RSX\0"
        back = Executable.from_bytes(data)
        assert back == exe
        assert back.to_bytes() == data
    exe = branch_model[0]
    assert exe.streams == 2
    assert exe.tensor("out/sum:0").role is TensorRole.OUTPUT
    assert [op.op for op in exe.ops][-1] is ExecOp.ADD


def test_const_segment_is_64_byte_aligned(conv_model: Any) -> None:
    data = conv_model[0].to_bytes()
    _, offset, length = _segment(data, SegmentKind.CONST)
    assert offset % 64 == 0
    assert data[offset : offset + length] == conv_model[0].consts
    for t in conv_model[0].tensors:
        if t.role is TensorRole.CONST:
            assert t.offset % 64 == 0


def test_attribute_types_survive(builder: Any) -> None:
    b = builder()
    x = b.input("x", (2, 2))
    y = b.output("y", (2, 2))
    b.op(ExecOp.GEMM, [x, x], [y], alpha=0.5, trans_a=1, pads=(1, 2), scales=(0.5, 2.0), mode="s")
    exe = b.build()
    back = Executable.from_bytes(exe.to_bytes())
    attrs = back.ops[0].attr_dict()
    assert attrs == {"alpha": 0.5, "trans_a": 1, "pads": (1, 2), "scales": (0.5, 2.0), "mode": "s"}
    assert isinstance(attrs["alpha"], float) and isinstance(attrs["trans_a"], int)
    assert all(isinstance(v, float) for v in attrs["scales"])  # type: ignore[union-attr]


def test_bad_magic(conv_model: Any) -> None:
    data = conv_model[0].to_bytes()
    assert _field(b"ELF\0" + data[4:]) == "magic"


def test_other_major_version_is_refused(conv_model: Any) -> None:
    data = bytearray(conv_model[0].to_bytes())
    struct.pack_into("<H", data, 4, FORMAT_VERSION[0] + 1)
    assert _field(seal(bytes(data))) == "version"


def test_another_minor_version_is_read_with_a_warning(
    conv_model: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="stack.kmd.opmod")
    data = bytearray(conv_model[0].to_bytes())
    struct.pack_into("<H", data, 6, FORMAT_VERSION[1] + 3)
    exe = Executable.from_bytes(seal(bytes(data)))
    assert exe.version == (FORMAT_VERSION[0], FORMAT_VERSION[1] + 3, FORMAT_VERSION[2])
    assert exe.ops == conv_model[0].ops
    assert [r.getMessage() for r in caplog.records] == [
        f"executable format has version {FORMAT_VERSION[0]}.{FORMAT_VERSION[1] + 3}."
        f"{FORMAT_VERSION[2]}, this stack supports {'.'.join(map(str, FORMAT_VERSION))}: loaded "
        "(minor versions differ)"
    ]


def test_another_patch_version_is_read_silently(
    conv_model: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="stack.kmd.opmod")
    data = bytearray(conv_model[0].to_bytes())
    assert struct.unpack_from("<HHH", data, 4) == FORMAT_VERSION
    struct.pack_into("<H", data, 8, FORMAT_VERSION[2] + 7)
    exe = Executable.from_bytes(seal(bytes(data)))
    assert exe.version == (FORMAT_VERSION[0], FORMAT_VERSION[1], FORMAT_VERSION[2] + 7)
    assert caplog.records == []


def test_flipped_byte_fails_the_checksum(conv_model: Any) -> None:
    data = bytearray(conv_model[0].to_bytes())
    data[-5] ^= 0x40
    assert _field(bytes(data)) == "checksum"


@pytest.mark.parametrize("cut", [10, 100, 1])
def test_truncated_file(conv_model: Any, cut: int) -> None:
    data = conv_model[0].to_bytes()
    field = _field(data[: len(data) - cut] if cut != 10 else data[:10])
    assert field == ("header" if cut == 10 else "total_size")


@pytest.mark.parametrize("kind", list(SegmentKind))
def test_segment_running_past_the_end(conv_model: Any, kind: SegmentKind) -> None:
    data = bytearray(conv_model[0].to_bytes())
    pos, offset, _ = _segment(bytes(data), kind)
    struct.pack_into("<Q", data, pos + 16, len(data) - offset + 64)
    assert _field(seal(bytes(data))) == f"segments.{kind.name.lower()}"


def test_misaligned_const_segment(conv_model: Any) -> None:
    data = bytearray(conv_model[0].to_bytes())
    pos, offset, length = _segment(bytes(data), SegmentKind.CONST)
    struct.pack_into("<IIQQ", data, pos, SegmentKind.CONST, 8, offset - 8, length)
    assert _field(seal(bytes(data))) == "segments.const"


def test_unknown_op_code(conv_model: Any) -> None:
    data = conv_model[0].to_bytes()
    relu = f"],[{int(ExecOp.RELU)},[".encode()
    assert data.count(relu) == 1
    patched = data.replace(relu, b"],[0,[")  # same length: 0 is no op code
    with pytest.raises(ExecutableFormatError) as info:
        Executable.from_bytes(seal(patched))
    assert info.value.field == "ops[1].op"
    assert "CONV2D" in info.value.message  # the error lists the known ops


def test_the_file_carries_its_own_codes_not_the_umd_names(conv_model: Any) -> None:
    """Op and dtype are the format's numbers (ExecOp / ExecDType): no UMD or KMD enum name or
    value is written, so renaming or renumbering one leaves every file unchanged."""
    from stack.runtime import UMD_DTYPES, UMD_OPS, ExecDType
    from stack.umd import DType, OpKind

    exe = conv_model[0]
    code, plan, _ = records_to_json(exe)
    assert [row[0] for row in code["ops"]] == [int(op.op) for op in exe.ops]
    assert all(type(row[1]) is int for row in plan["tensors"])
    assert b'"RELU"' not in exe.to_bytes() and b'"F32"' not in exe.to_bytes()
    assert all(type(op.op) is ExecOp for op in exe.ops)
    assert all(type(t.dtype) is ExecDType for t in exe.tensors)
    # every code maps onto the UMD's vocabulary, one to one
    assert set(UMD_OPS) == set(ExecOp) and set(UMD_OPS.values()) == set(OpKind)
    assert set(UMD_DTYPES) == set(ExecDType) and set(UMD_DTYPES.values()) == set(DType)
    assert all(UMD_DTYPES[d].numpy == d.numpy for d in ExecDType)


def test_corrupt_json_segment(conv_model: Any) -> None:
    data = bytearray(conv_model[0].to_bytes())
    _, offset, _ = _segment(bytes(data), SegmentKind.PLAN)
    data[offset] = ord("]")
    assert _field(seal(bytes(data))) == "plan"


def _bad(exe: Executable, **changes: Any) -> str:
    with pytest.raises(ExecutableFormatError) as info:
        dataclasses.replace(exe, **changes).to_bytes()
    return info.value.field


def test_record_validation(conv_model: Any) -> None:
    exe: Executable = conv_model[0]
    t = list(exe.tensors)
    conv = t[3]
    t[3] = dataclasses.replace(conv, offset=exe.arena_sizes[0])
    assert _bad(exe, tensors=tuple(t)) == "tensors[3].offset"
    t[3] = dataclasses.replace(conv, offset=8)
    assert _bad(exe, tensors=tuple(t)) == "tensors[3].offset"
    t[3] = dataclasses.replace(conv, lane=5)
    assert _bad(exe, tensors=tuple(t)) == "tensors[3].lane"
    t[3] = dataclasses.replace(conv, size=4)
    assert _bad(exe, tensors=tuple(t)) == "tensors[3].size"
    ops = list(exe.ops)
    ops[1] = dataclasses.replace(ops[1], deps=(2,))
    assert _bad(exe, ops=tuple(ops)) == "ops[1].deps"
    ops[1] = dataclasses.replace(exe.ops[1], inputs=(99,))
    assert _bad(exe, ops=tuple(ops)) == "ops[1].inputs"
    ops[1] = dataclasses.replace(exe.ops[1], outputs=(0,))  # writes the model input
    assert _bad(exe, ops=tuple(ops)) == "ops[1].outputs"
    assert _bad(exe, consts=exe.consts[:64]) == "tensors[1].offset"
    assert _bad(exe, outputs=(0,)) == "outputs"


def test_consts_hold_the_weights(conv_model: Any) -> None:
    exe: Executable = Executable.from_bytes(conv_model[0].to_bytes())
    w = exe.tensor("w")
    weights = np.frombuffer(exe.consts, np.float32, count=18, offset=w.offset)
    assert weights.shape == (18,) and np.isfinite(weights).all() and np.abs(weights).sum() > 0


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.floats() | st.text(max_size=6),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)


def _paths(doc: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(doc, list):
        for i, item in enumerate(doc):
            out += _paths(item, (*prefix, i))
    elif isinstance(doc, dict):
        for key, item in doc.items():
            out += _paths(item, (*prefix, key))
    return out


def _replace(doc: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    doc = copy.deepcopy(doc)
    node = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return doc


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_any_mutated_record_is_accepted_or_refused_typed(conv_model: Any, data: Any) -> None:
    exe: Executable = conv_model[0]
    docs = list(records_to_json(exe))
    which = data.draw(st.integers(0, 2))
    path = data.draw(st.sampled_from(_paths(docs[which])))
    docs[which] = _replace(docs[which], path, data.draw(_JSON))
    blob = assemble(exe.version, *docs, exe.consts)
    try:
        back = Executable.from_bytes(blob)
    except ExecutableFormatError as err:
        assert err.field
    else:
        back.validate()  # whatever is accepted is consistent, and round-trips
        data = back.to_bytes()
        assert Executable.from_bytes(data).to_bytes() == data


def test_arena_reuse_needs_disjoint_lifetimes(builder: Any) -> None:
    b = builder()
    x = b.input("x", (16,))
    t = [b.temp(f"t{i}", (16,)) for i in range(3)]
    y = b.output("y", (16,))
    b.op(ExecOp.RELU, [x], [t[0]])
    b.op(ExecOp.RELU, [t[0]], [t[1]])
    b.op(ExecOp.RELU, [t[1]], [t[2]])
    b.op(ExecOp.RELU, [t[2]], [y])
    exe = b.build()
    tensors = list(exe.tensors)
    t0, t1, t2 = (tensors[i] for i in t)
    reuse = dataclasses.replace(t2, offset=t0.offset)  # t0 dies at op 1, t2 is born at op 2
    tensors[t[2]] = reuse
    dataclasses.replace(exe, tensors=tuple(tensors)).validate()
    tensors[t[2]] = dataclasses.replace(t2, offset=t1.offset)  # t1 is still read at op 2
    assert _bad(exe, tensors=tuple(tensors)) == f"tensors[{t[2]}].offset"
    tensors[t[2]] = dataclasses.replace(t2, offset=t1.offset + 32)  # a partial overlap
    assert _bad(exe, tensors=tuple(tensors)) == f"tensors[{t[2]}].offset"
    alias = dataclasses.replace(t1, id=t[2], name="t1_view", shape=(4, 4))
    tensors[t[2]] = alias  # same bytes and lifetime: an alias (a reshape), allowed
    dataclasses.replace(exe, tensors=tuple(tensors)).validate()
