"""Running pipelines: results, buffer lifetimes, the pool per stage, error isolation, fallback."""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import pytest

from stack.runtime.errors import ModelInputError, ModuleError
from stack.runtime.oppipeline import BufferAction, PipelineRunner, open_pipeline
from stack.umd import Umd
from tests.stack.runtime.oppipeline.configs import BRANCH_MERGE, LINEAR, cfg
from tests.stack.runtime.oppipeline.modules import side_by_side

rng = np.random.default_rng(0)

#: x gathered by i, then log: a module that faults on a bad index, NaN on negative values.
FRAGILE: dict[str, Any] = {
    "schema": "refstack.pipeline/1",
    "name": "fragile",
    "inputs": {"x": {"shape": [4, 3], "dtype": "f32"}, "i": {"shape": [2], "dtype": "i64"}},
    "pipeline": [
        {"name": "g", "operator": "gather", "inputs": ["x", "i"], "outputs": ["y"]},
        {
            "name": "log",
            "operator": "unary",
            "inputs": ["y"],
            "outputs": ["z"],
            "attrs": {"fn": "Log"},
            "constraints": {"nan_inf": "forbidden"},
        },
    ],
    "outputs": ["z"],
}


def _bm_inputs() -> dict[str, np.ndarray]:
    return {
        "x": rng.standard_normal((2, 4, 3)).astype(np.float32),
        "k": rng.standard_normal((4, 1)).astype(np.float32),
    }


def _events(runner_result: Any, tensor: str) -> list[tuple[str, str, int]]:
    return [
        (e.action.value, e.at, e.refs) for e in runner_result.report.buffers if e.tensor == tensor
    ]


def test_branch_and_merge_compute_and_hold_buffers_until_the_last_consumer(umd: Umd) -> None:
    runner = open_pipeline(BRANCH_MERGE, umd)
    ins = _bm_inputs()
    result = runner.run(ins)
    t = np.maximum(ins["x"], 0)
    np.testing.assert_allclose(result.outputs["y"], t * ins["k"] + t, rtol=1e-6)
    # branch: t is held by b1 and b2, which run at once (b2 on its own stream): the first to
    # finish drops its reference, the other releases it (no early free)
    events = _events(result, "t")
    assert events[0] == ("acquired", "a", 2)
    assert [e[0::2] for e in events[1:]] == [("dropped", 1), ("released", 0)]
    assert {e[1] for e in events[1:]} == {"b1", "b2"}
    # merge: both merged tensors live until the merge ran
    assert _events(result, "u") == [("acquired", "b1", 1), ("released", "m", 0)]
    assert _events(result, "v") == [("acquired", "b2", 1), ("released", "m", 0)]
    assert _events(result, "y") == [("acquired", "m", 1), ("released", "(outputs)", 0)]
    acquired = sum(e.action is BufferAction.ACQUIRED for e in result.report.buffers)
    released = sum(e.action is BufferAction.RELEASED for e in result.report.buffers)
    assert (acquired, released) == (6, 6)
    runner.close()


def test_pool_reuses_bins_across_runs_and_never_warns(umd: Umd) -> None:
    runner = open_pipeline(BRANCH_MERGE, umd)
    first = runner.run(_bm_inputs()).report.pool
    assert (first.in_use_bytes, first.hits, first.warnings) == (0, 2, 0)
    for _ in range(4):
        pool = runner.run(_bm_inputs()).report.pool
    assert pool.misses == first.misses  # nothing new allocated after the first run
    assert (pool.in_use_bytes, pool.warnings, pool.over_peak_windows) == (0, 0, 0)
    assert pool.allocated_bytes == first.allocated_bytes
    runner.close()


def test_linear_pipeline_with_a_cast_for_its_precision_policy(umd: Umd) -> None:
    doc = cfg(LINEAR)
    doc["pipeline"][1]["constraints"] = {"precision_policy": "fp16"}
    runner = open_pipeline(doc, umd)
    x = rng.standard_normal((1, 3, 8, 8)).astype(np.float32)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    y16 = runner.run({"x": x, "w": w}).outputs["y"]
    runner.close()
    y32 = (r := open_pipeline(LINEAR, umd)).run({"x": x, "w": w}).outputs["y"]
    r.close()
    assert y16.dtype == np.float16 and y32.dtype == np.float32
    np.testing.assert_allclose(y16.astype(np.float32), y32, rtol=2e-2, atol=2e-2)
    assert float(y32.min()) == 0.0 and float(y32.max()) > 0.0


def test_a_faulting_module_is_a_typed_error_and_the_session_recovers(umd: Umd) -> None:
    runner = open_pipeline(FRAGILE, umd)
    x = np.ones((4, 3), np.float32)
    with pytest.raises(ModuleError) as e:
        runner.run({"x": x, "i": np.array([0, 9])})
    err = e.value
    assert (err.module, err.version, err.stage, err.cause) == (
        "builtin",
        "1.0.0",
        "g",
        "DeviceFaultError",
    )
    assert err.inputs == ("x: [4, 3] f32", "i: [2] i64")
    assert "IndexError: index out of range" in err.message
    assert runner.session.pool_stats().in_use_bytes == 0  # nothing the failed run held is kept
    out = runner.run({"x": x * np.e, "i": np.array([0, 3])}).outputs["z"]
    np.testing.assert_allclose(out, np.ones((2, 3)), rtol=1e-6)
    runner.close()


def test_forbidden_nan_is_a_module_error_and_allowed_nan_passes(umd: Umd) -> None:
    bad = {"x": -np.ones((4, 3), np.float32), "i": np.array([0, 1])}
    runner = open_pipeline(FRAGILE, umd)
    with pytest.raises(ModuleError) as e:
        runner.run(bad)
    assert (e.value.stage, e.value.cause, e.value.inputs) == ("log", "NanInf", ("y: [2, 3] f32",))
    assert "6 NaN/Inf value(s) in output 'z'" in e.value.message
    runner.close()
    doc = cfg(FRAGILE)
    del doc["pipeline"][1]["constraints"]
    runner = open_pipeline(doc, umd)
    assert np.isnan(runner.run(bad).outputs["z"]).all()
    runner.close()


def test_declared_identity_fallback_warns_and_counts(
    umd: Umd, caplog: pytest.LogCaptureFixture
) -> None:
    doc = cfg(FRAGILE)
    doc["pipeline"][1]["fallback"] = "identity"
    runner = open_pipeline(doc, umd)
    x = -np.arange(12, dtype=np.float32).reshape(4, 3) - 1
    with caplog.at_level(logging.WARNING, logger="stack.runtime.oppipeline"):
        results = [runner.run({"x": x, "i": np.array([2, 0])}) for _ in range(2)]
    np.testing.assert_array_equal(results[1].outputs["z"], x[[2, 0]])
    assert [o.status for o in results[1].report.stages] == ["ok", "fallback"]
    assert (results[0].report.fallbacks, results[1].report.fallbacks, runner.fallbacks) == (1, 2, 2)
    assert len(caplog.records) == 2
    assert caplog.records[0].getMessage().startswith("stage 'log' fell back to identity: stage")
    runner.close()


def test_a_failing_pipeline_does_not_disturb_another_session(umd: Umd) -> None:
    failing, healthy = open_pipeline(FRAGILE, umd), open_pipeline(BRANCH_MERGE, umd)
    assert failing.session is not healthy.session
    ins = [_bm_inputs() for _ in range(8)]
    errors, outputs = side_by_side(
        lambda: failing.run({"x": np.ones((4, 3), np.float32), "i": np.array([7, 0])}),
        8,
        healthy.run,
        ins,
    )
    assert len(errors) == 8 and {e.stage for e in errors} == {"g"}
    assert len(outputs) == 8
    for i, y in zip(ins, outputs, strict=True):
        t = np.maximum(i["x"], 0)
        np.testing.assert_allclose(y, t * i["k"] + t, rtol=1e-6)
    assert healthy.session.pool_stats().warnings == 0
    failing.close()
    healthy.close()


def test_bad_run_inputs_are_typed(umd: Umd) -> None:
    runner: PipelineRunner = open_pipeline(BRANCH_MERGE, umd)
    ok = _bm_inputs()
    cases = [
        ({**ok, "q": ok["x"]}, "unknown input 'q'; inputs: x, k"),
        ({"x": ok["x"]}, "missing input 'k'"),
        (
            {**ok, "k": ok["k"].astype(np.float64)},
            "input 'k' is [4, 1] float64, the pipeline takes [4, 1] float32",
        ),
        (
            {**ok, "x": ok["x"][:1]},
            "input 'x' is [1, 4, 3] float32, the pipeline takes [2, 4, 3] float32",
        ),
    ]
    for inputs, message in cases:
        with pytest.raises(ModelInputError) as e:
            runner.run(inputs)
        assert e.value.message == message
    runner.close()


def test_the_runtime_opens_pipelines_on_its_umd() -> None:
    from stack.runtime import Runtime
    from stack.runtime.errors import ModelClosedError

    with Runtime("numpy") as rt:
        runner = rt.open_pipeline(BRANCH_MERGE)
        ins = _bm_inputs()
        t = np.maximum(ins["x"], 0)
        np.testing.assert_allclose(runner.run(ins).outputs["y"], t * ins["k"] + t, rtol=1e-6)
        runner.close()
    with pytest.raises(ModelClosedError):
        rt.open_pipeline(BRANCH_MERGE)
