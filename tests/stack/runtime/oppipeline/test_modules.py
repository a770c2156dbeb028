"""Pipelines over third-party operator modules: the descriptor's NaN/Inf rule, a module that
raises isolated from other pipelines and sessions, and the device's selection honoured."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from stack.runtime.errors import ModuleError, PipelineConfigError
from stack.runtime.oppipeline import check_pipeline, open_pipeline
from stack.umd import Umd
from tests.stack.runtime.oppipeline.configs import BRANCH_MERGE, cfg
from tests.stack.runtime.oppipeline.modules import (
    flaky,
    registry_with,
    side_by_side,
    strict,
    umd_on,
)

#: x → relu (whichever module's the device runs, asked by kernel name) → y
RELU: dict[str, Any] = {
    "schema": "refstack.pipeline/1",
    "name": "relu",
    "inputs": {"x": {"shape": [2, 3], "dtype": "f32"}},
    "pipeline": [{"name": "act", "operator": "RELU", "inputs": ["x"], "outputs": ["y"]}],
    "outputs": ["y"],
}


@pytest.fixture
def strict_umd() -> Iterator[Umd]:
    umd, device = umd_on(registry_with(strict()))
    yield umd
    umd.close()
    device.close()


@pytest.fixture
def flaky_umd() -> Iterator[Umd]:
    umd, device = umd_on(registry_with(flaky()))
    yield umd
    umd.close()
    device.close()


def test_the_stage_runs_the_module_the_device_selected(strict_umd: Umd) -> None:
    linked = check_pipeline(RELU, strict_umd)
    assert linked.stages[0].operator.qualified_name == "strict/relu_strict@0.3.1"
    assert linked.stages[0].check_nan_inf  # the descriptor forbids NaN/Inf
    doc = cfg(RELU)
    doc["pipeline"][0].update(operator="relu", module="builtin")
    with pytest.raises(PipelineConfigError) as e:
        check_pipeline(doc, strict_umd)
    assert e.value.message == (
        "pipeline[0].operator: the device runs strict/relu_strict@0.3.1 for kernel RELU, not "
        "builtin/relu@1.0.0"
    )


def test_nan_where_the_descriptor_forbids_it_is_a_module_error(strict_umd: Umd) -> None:
    runner = open_pipeline(RELU, strict_umd)
    x = np.array([[1, -2, 3], [np.nan, 5, -6]], np.float32)
    with pytest.raises(ModuleError) as e:
        runner.run({"x": x})
    err = e.value
    assert (err.module, err.version, err.stage, err.cause, err.inputs) == (
        "strict", "0.3.1", "act", "NanInf", ("x: [2, 3] f32",),
    )  # fmt: skip
    assert err.message == (
        "stage 'act': module strict operator relu_strict 0.3.1 failed (NanInf: 1 NaN/Inf "
        "value(s) in output 'y') on inputs x: [2, 3] f32"
    )
    np.testing.assert_array_equal(
        runner.run({"x": np.nan_to_num(x)}).outputs["y"], [[1, 0, 3], [0, 5, 0]]
    )
    runner.close()


def test_a_raising_module_fails_alone(flaky_umd: Umd) -> None:
    """Two sessions on one device: the pipeline whose module raises gets ModuleError each
    time; the other (no ReLU) keeps producing correct results meanwhile."""
    failing = open_pipeline(RELU, flaky_umd)
    doc = cfg(BRANCH_MERGE)
    for st in doc["pipeline"]:
        if st["operator"] == "relu":
            st["operator"] = "unary"
            st["attrs"] = {"fn": "Abs"}
    healthy = open_pipeline(doc, flaky_umd)
    rng = np.random.default_rng(3)
    ins = [
        {"x": rng.standard_normal((2, 4, 3), dtype=np.float32),
         "k": rng.standard_normal((4, 1), dtype=np.float32)}
        for _ in range(6)
    ]  # fmt: skip
    errors, outputs = side_by_side(
        lambda: failing.run({"x": -np.ones((2, 3), np.float32)}), 6, healthy.run, ins
    )
    assert len(errors) == 6
    assert {(e.module, e.version, e.cause) for e in errors} == {
        ("flaky", "2.1.0", "DeviceFaultError")
    }
    assert "relu_flaky: native library crashed on a negative input" in errors[0].message
    for i, y in zip(ins, outputs, strict=True):
        t = np.abs(i["x"])
        np.testing.assert_allclose(y, t * i["k"] + t, rtol=1e-6)
    assert len(outputs) == 6
    ok = failing.run({"x": np.ones((2, 3), np.float32)}).outputs["y"]  # the session recovered
    np.testing.assert_array_equal(ok, np.ones((2, 3)))
    assert failing.session.pool_stats().in_use_bytes == 0
    failing.close()
    healthy.close()
