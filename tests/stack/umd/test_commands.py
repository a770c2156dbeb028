"""Command buffers: flattening, recording and re-execution, and mapped views of memory."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from stack.umd import DType, OpKind, OpRequest, TensorDesc, UmdSession
from stack.umd.commands import flatten
from stack.umd.errors import AddressError


def _relu(session: UmdSession) -> Any:
    a, b = session.alloc(64), session.alloc(64)
    session.write(a, np.arange(-8, 8, dtype=np.float32))
    req = OpRequest.make(
        OpKind.RELU, [TensorDesc(a, (16,), DType.F32)], [TensorDesc(b, (16,), DType.F32)]
    )
    return session.translate(req), b


def test_flatten_keeps_every_blob_in_order(session: UmdSession) -> None:
    t, _ = _relu(session)
    blobs, scratch = flatten([t, t])
    assert blobs == t.blobs * 2 and scratch == ()


def test_a_recorded_buffer_executes_each_time(session: UmdSession) -> None:
    t, out = _relu(session)
    stream = session.create_stream()
    buf = session.record((t,))
    for inline in (False, True, True):
        session.write(out, np.full(16, 7.0, np.float32))
        session.wait(session.execute(stream, buf, inline=inline), timeout_s=10)
        got = session.read(out, (16,), DType.F32)
        np.testing.assert_array_equal(got, np.maximum(np.arange(-8, 8, dtype=np.float32), 0))
    session.release(buf)


def test_an_inline_execution_is_known_done_without_asking_the_kmd(
    session: UmdSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    t, _ = _relu(session)
    stream = session.create_stream()
    buf = session.record((t,))
    queued = session.execute(stream, buf)
    session.wait(queued, timeout_s=10)
    asked: list[int] = []
    real = session.device.fence_value

    def fence_value(ctx: int, fence: int) -> int:
        asked.append(fence)
        return real(ctx, fence)

    monkeypatch.setattr(session.device, "fence_value", fence_value)
    ticket = session.execute(stream, buf, inline=True)
    assert session.done(ticket) and asked == []
    assert session.done(queued) and asked == []  # an earlier value of the same fence
    session.reset_stream(stream)  # a new fence: what was known reached is forgotten
    fresh = session.execute(stream, buf)
    session.wait(fresh, timeout_s=10)
    assert session.done(fresh) and len(asked) == 1
    session.release(buf)


def test_a_mapped_view_aliases_device_memory(session: UmdSession) -> None:
    va = session.alloc(256)
    view = session.map(va + 64, (4,), DType.F32)
    assert view is not None
    view[:] = [1.0, 2.0, 3.0, 4.0]
    np.testing.assert_array_equal(session.read(va + 64, (4,), DType.F32), [1, 2, 3, 4])
    with pytest.raises(AddressError):
        session.map(va + 250, (4,), DType.F32)


def test_resubmitted_command_buffer_runs_each_time(session: UmdSession) -> None:
    t, out = _relu(session)
    stream = session.create_stream()
    ops = (t,)
    for _ in range(3):
        session.write(out, np.full(16, 7.0, np.float32))
        session.wait(session.submit(stream, ops), timeout_s=10)
        got = session.read(out, (16,), DType.F32)
        np.testing.assert_array_equal(got, np.maximum(np.arange(-8, 8, dtype=np.float32), 0))
