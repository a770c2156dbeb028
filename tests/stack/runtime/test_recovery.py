"""KMD faults injected during a model run: recovery with correct outputs, or a typed error."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from stack.kmd import FaultKind
from stack.runtime import ExecutionFaultError, LoadedModel, RecoveryPolicy, Runtime


def _inject(rt: Runtime, model: LoadedModel, stream: int, kind: FaultKind, after: int = 0) -> None:
    session = model.session
    queue = session.queue_of(model.image.streams[stream])
    rt.umd.device.inject_fault(session.ctx, queue, kind, after=after)


def _close_and_check(rt: Runtime, model: LoadedModel) -> None:
    model.close()
    stats = rt.umd.device.stats()
    assert stats.allocations == 0 and stats.contexts == 0
    rt.close()


def _same(outputs: dict[str, np.ndarray], expected: dict[str, np.ndarray]) -> None:
    assert set(outputs) == set(expected)
    for name, want in expected.items():
        np.testing.assert_allclose(outputs[name], want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("stream", [0, 1])
@pytest.mark.parametrize("kind", [FaultKind.ECC, FaultKind.BAD_ADDRESS])
def test_fault_is_recovered_with_correct_outputs(
    branch_model: Any, stream: int, kind: FaultKind
) -> None:
    exe, inputs, expected = branch_model
    rt = Runtime("numpy", recovery=RecoveryPolicy(max_retries=2))
    model = rt.load(exe)
    _inject(rt, model, stream, kind)
    _same(model.run(inputs, timeout_s=10), expected)
    assert model.last_stats is not None
    assert model.last_stats.attempts == 2
    assert model.last_stats.faults == (kind.name,)
    _same(model.run(inputs), expected)  # the streams are healthy again
    assert model.last_stats.attempts == 1
    _close_and_check(rt, model)


def test_ecc_fault_without_retries_is_a_typed_error(branch_model: Any) -> None:
    exe, inputs, expected = branch_model
    rt = Runtime("numpy", recovery=RecoveryPolicy(max_retries=0))
    model = rt.load(exe)
    _inject(rt, model, 1, FaultKind.ECC)
    with pytest.raises(ExecutionFaultError) as info:
        model.run(inputs, timeout_s=10)
    err = info.value
    assert err.stream == 1 and err.attempts == 1
    assert err.details["fault_kind"] == "ECC"
    assert err.details["ops"]  # names the ops of the failed command buffer
    assert err.to_dict()["layer"] == "runtime"
    _same(model.run(inputs), expected)  # reset after the fault: the model is usable again
    _close_and_check(rt, model)


def test_fault_without_reset_poisons_the_model(conv_model: Any) -> None:
    exe, inputs, _ = conv_model
    rt = Runtime("numpy", recovery=RecoveryPolicy(max_retries=3, reset_on_fault=False))
    model = rt.load(exe)
    _inject(rt, model, 0, FaultKind.ECC)
    with pytest.raises(ExecutionFaultError) as first:
        model.run(inputs, timeout_s=10)
    assert first.value.attempts == 1
    with pytest.raises(ExecutionFaultError):
        model.run(inputs)  # never an answer from a faulted device state
    _close_and_check(rt, model)


def test_hang_times_out_then_recovers_or_fails_typed(branch_model: Any) -> None:
    exe, inputs, expected = branch_model
    rt = Runtime("numpy", recovery=RecoveryPolicy(max_retries=1))
    model = rt.load(exe)
    _inject(rt, model, 1, FaultKind.HANG)
    try:
        outputs = model.run(inputs, timeout_s=0.5)
    except ExecutionFaultError as err:
        assert err.details["fault"] in {"UmdTimeoutError", "DeviceFaultError"}
    else:
        _same(outputs, expected)
        assert model.last_stats is not None and model.last_stats.attempts == 2
    _same(model.run(inputs, timeout_s=10), expected)
    _close_and_check(rt, model)


def test_fault_in_a_later_run(conv_model: Any) -> None:
    exe, inputs, expected = conv_model
    rt = Runtime("numpy", recovery=RecoveryPolicy(max_retries=1))
    model = rt.load(exe)
    _inject(rt, model, 0, FaultKind.ECC, after=2)  # the third command buffer of the queue fails
    attempts = []
    for _ in range(4):
        _same(model.run(inputs, timeout_s=10), expected)
        assert model.last_stats is not None
        attempts.append(model.last_stats.attempts)
    assert attempts == [1, 1, 2, 1]
    _close_and_check(rt, model)
