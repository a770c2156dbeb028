"""The run hot path: inputs checked against the precomputed signature, outputs fresh arrays."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from stack.runtime import ModelInputError, Runtime


@pytest.fixture
def runtime() -> Iterator[Runtime]:
    rt = Runtime("numpy", streams=2)
    yield rt
    rt.close()


def test_non_contiguous_input_is_accepted(runtime: Runtime, branch_model: Any) -> None:
    exe, inputs, expected = branch_model
    model = runtime.load(exe)
    strided = np.asfortranarray(inputs["a"])
    assert not strided.flags.c_contiguous
    out = model.run({"a": strided})
    np.testing.assert_allclose(out["out/sum:0"], expected["out/sum:0"], rtol=1e-4, atol=1e-4)


def test_right_count_wrong_name_is_refused(runtime: Runtime, conv_model: Any) -> None:
    model = runtime.load(conv_model[0])
    with pytest.raises(ModelInputError) as info:
        model.run({"y": np.zeros((1, 2, 5, 5), np.float32)})
    assert info.value.input == "y"


def test_outputs_are_fresh_arrays_each_run(runtime: Runtime, branch_model: Any) -> None:
    exe, inputs, expected = branch_model
    model = runtime.load(exe)
    first = model.run(inputs)["out/sum:0"]
    first[...] = -1.0  # the caller owns what it got: device memory is untouched
    second = model.run(inputs)["out/sum:0"]
    assert second is not first and not np.shares_memory(first, second)
    np.testing.assert_allclose(second, expected["out/sum:0"], rtol=1e-4, atol=1e-4)


def test_many_runs_with_changing_inputs(runtime: Runtime, branch_model: Any) -> None:
    exe, inputs, _ = branch_model
    model = runtime.load(exe)
    baseline = model.run(inputs)["out/sum:0"]
    for k in range(1, 40):  # both branches are positively homogeneous: f(k a) = k f(a)
        out = model.run({"a": (inputs["a"] * k).astype(np.float32)})["out/sum:0"]
        np.testing.assert_allclose(out, baseline * k, rtol=1e-4, atol=1e-4 * k)
    assert model.last_stats is not None and model.last_stats.attempts == 1
    assert model.last_stats.submits > 1  # two streams: cross-stream waits on every run
