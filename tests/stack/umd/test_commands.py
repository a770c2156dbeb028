"""Flattening of command buffers, cached for re-submission."""

from __future__ import annotations

from typing import Any

import numpy as np

from stack.umd import DType, OpKind, OpRequest, TensorDesc, UmdSession
from stack.umd.commands import FlatCommands


def _relu(session: UmdSession) -> Any:
    a, b = session.alloc(64), session.alloc(64)
    session.write(a, np.arange(-8, 8, dtype=np.float32))
    req = OpRequest.make(
        OpKind.RELU, [TensorDesc(a, (16,), DType.F32)], [TensorDesc(b, (16,), DType.F32)]
    )
    return session.translate(req), b


def test_same_tuple_is_flattened_once(session: UmdSession) -> None:
    t, _ = _relu(session)
    flat = FlatCommands(limit=4)
    ops = (t, t)
    blobs, scratch = flat.get(ops)
    assert blobs == t.blobs * 2 and scratch == ()
    again, _ = flat.get(ops)
    assert again is blobs  # cached by identity
    listed, _ = flat.get([t, t])
    assert listed == blobs and listed is not blobs  # a list may change: never cached


def test_cache_is_bounded(session: UmdSession) -> None:
    t, _ = _relu(session)
    flat = FlatCommands(limit=2)
    tuples = [(t,) * n for n in range(1, 6)]
    for ops in tuples:
        assert flat.get(ops)[0] == t.blobs * len(ops)
    assert len(flat._by_id) <= 2


def test_resubmitted_command_buffer_runs_each_time(session: UmdSession) -> None:
    t, out = _relu(session)
    stream = session.create_stream()
    ops = (t,)
    for _ in range(3):
        session.write(out, np.full(16, 7.0, np.float32))
        session.wait(session.submit(stream, ops), timeout_s=10)
        got = session.read(out, (16,), DType.F32)
        np.testing.assert_array_equal(got, np.maximum(np.arange(-8, 8, dtype=np.float32), 0))
