"""The pipeline end to end in a session: a cache hit gives exactly what a miss gives."""

from __future__ import annotations

import pytest

from stack.kmd.blob import decode
from stack.umd import DType, OpKind, OpRequest, TensorDesc, Umd, UmdSession
from stack.umd.errors import AddressError, InvalidRequestError
from stack.umd.pipeline import Pipeline, cache_key

F = DType.F32


def _matmul(s: UmdSession) -> tuple[OpRequest, OpRequest]:
    a, b, y = s.alloc(4 * 8 * 4), s.alloc(8 * 3 * 4), s.alloc(4 * 3 * 4)
    a2, b2, y2 = s.alloc(4 * 8 * 4), s.alloc(8 * 3 * 4), s.alloc(4 * 3 * 4)

    def req(a: int, b: int, y: int) -> OpRequest:
        return OpRequest.make(
            OpKind.MATMUL,
            [TensorDesc(a, (4, 8), F), TensorDesc(b, (8, 3), F)],
            [TensorDesc(y, (4, 3), F)],
        )

    return req(a, b, y), req(a2, b2, y2)


def test_hit_patches_addresses_and_equals_a_fresh_translation(session: UmdSession) -> None:
    r1, r2 = _matmul(session)
    t1 = session.translate(r1)
    t2 = session.translate(r2)
    assert not t1.cache_hit and t2.cache_hit
    fresh = Pipeline().compile(r2).patch(tuple(d.addr for d in (*r2.inputs, *r2.outputs)))
    assert t2.blobs == fresh
    assert [p.addr for p in decode(t2.blob).params] == [d.addr for d in (*r2.inputs, *r2.outputs)]
    st = session.cache.stats()
    assert (st.hits, st.misses, st.size) == (1, 1, 1)


def test_key_ignores_addresses_but_not_shapes_dtypes_attrs() -> None:
    t = TensorDesc(0, (4,), F)
    base = OpRequest.make(OpKind.ADD, [t, t], [t])
    moved = OpRequest.make(OpKind.ADD, [TensorDesc(64, (4,), F), t], [t])
    assert cache_key(base, "numpy") == cache_key(moved, "numpy")
    assert cache_key(base, "numpy") != cache_key(base, "cupy")
    other = OpRequest.make(OpKind.ADD, [t, t], [t], relu=1)
    assert cache_key(base, "numpy") != cache_key(other, "numpy")
    assert cache_key(base, "numpy") != cache_key(
        OpRequest.make(OpKind.ADD, [TensorDesc(0, (4,), DType.F16)] * 2, [t]), "numpy"
    )


def test_a_hit_still_checks_addresses(session: UmdSession) -> None:
    r1, _ = _matmul(session)
    session.translate(r1)
    bad = OpRequest(r1.op, (TensorDesc(12345, (4, 8), F), r1.inputs[1]), r1.outputs, r1.attrs)
    with pytest.raises(AddressError) as info:
        session.translate(bad)
    assert info.value.field == "inputs[0].addr"


def test_lru_eviction_through_a_session(umd: object) -> None:
    from stack.umd import Umd

    small = Umd("numpy", cache_capacity=2)
    try:
        s = small.create_session()
        va = s.alloc(1024)
        reqs = [
            OpRequest.make(OpKind.RELU, [TensorDesc(va, (n,), F)], [TensorDesc(va, (n,), F)])
            for n in (1, 2, 3)
        ]
        for r in reqs:
            s.translate(r)
        assert small.cache.stats().evictions == 1
        assert not s.translate(reqs[0]).cache_hit  # evicted: a miss again
        assert s.translate(reqs[2]).cache_hit
    finally:
        small.close()


def test_batch_error_names_the_op_index(session: UmdSession) -> None:
    r1, r2 = _matmul(session)
    bad = OpRequest.make(OpKind.MATMUL, r1.inputs, [TensorDesc(r1.outputs[0].addr, (3, 4), F)])
    with pytest.raises(InvalidRequestError) as info:
        session.translate_batch([r1, r2, bad])
    assert info.value.field == "ops[2].outputs[0].shape"


def test_a_launch_beyond_the_blob_limits_is_an_invalid_request() -> None:
    huge = (1 << 20, 1 << 20)  # GPU grid of 2^40 / block elements: more than 3 x u32 can hold
    req = OpRequest.make(OpKind.RELU, [TensorDesc(0, huge, F)], [TensorDesc(0, huge, F)])
    with pytest.raises(InvalidRequestError) as info:
        Pipeline(target="cupy").compile(req)
    assert info.value.field == "inputs" and "cannot be launched" in info.value.message


def test_addresses_are_checked_before_translation(umd: Umd, session: UmdSession) -> None:
    va = session.alloc(64)
    huge = (1 << 20, 1 << 20)
    req = OpRequest.make(OpKind.RELU, [TensorDesc(va, huge, F)], [TensorDesc(va, huge, F)])
    with pytest.raises(AddressError) as info:
        session.translate(req)
    assert info.value.field == "inputs[0].addr"
    assert umd.cache.stats().size == 0  # nothing was compiled for it
