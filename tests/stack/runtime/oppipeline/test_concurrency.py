"""Independent branches of a pipeline run at once: the dependency graph, observed overlap, and
a failing branch beside a healthy one."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from stack.runtime.errors import ModuleError
from stack.runtime.oppipeline import RunReport, open_pipeline
from stack.runtime.oppipeline.schedule import Mark, dependencies, width
from stack.umd import Umd
from tests.stack.runtime.oppipeline.configs import BRANCH_MERGE, LINEAR, TWO_BRANCHES, cfg
from tests.stack.runtime.oppipeline.modules import meet, registry_with, umd_on


def test_stages_depend_on_their_producers_and_on_their_streams_previous_stage(umd: Umd) -> None:
    runner = open_pipeline(BRANCH_MERGE, umd)
    deps = dependencies(runner.linked.stages, runner.linked.tensors)
    # b2 is on its own stream: it waits for a only; b1 follows a on stream 0
    assert deps == {
        "a": frozenset(),
        "b1": frozenset({"a"}),
        "b2": frozenset({"a"}),
        "m": frozenset({"b1", "b2"}),
    }
    assert (runner.width, width(runner.linked.stages)) == (2, 2)
    runner.close()
    linear = open_pipeline(LINEAR, umd)
    assert dependencies(linear.linked.stages, linear.linked.tensors) == {
        "conv": frozenset(),
        "act": frozenset({"conv"}),
    }
    assert linear.width == 1
    linear.close()
    # two stages on one stream without a data dependency still run in config order
    same = cfg(TWO_BRANCHES)
    del same["pipeline"][1]["constraints"]
    one = open_pipeline(same, umd)
    assert dependencies(one.linked.stages, one.linked.tensors)["b2"] == frozenset({"b1"})
    one.close()


def test_two_independent_branches_run_at_the_same_time() -> None:
    # Each branch's kernel returns only when the other branch's kernel runs too: the run
    # completes only if the two stages overlap on the device (run one after the other, the
    # first wait breaks after 60 s and the stage fails).
    barrier = threading.Barrier(2, timeout=60)
    umd, device = umd_on(registry_with(meet(barrier)))
    doc = cfg(TWO_BRANCHES)
    for stage in doc["pipeline"][:2]:
        stage["operator"] = "relu_meet"
    runner = open_pipeline(doc, umd)
    rng = np.random.default_rng(1)
    x, z = (rng.standard_normal((4, 3)).astype(np.float32) for _ in range(2))
    for _ in range(3):
        result = runner.run({"x": x, "z": z})
        np.testing.assert_allclose(result.outputs["y"], np.maximum(x, 0) + np.maximum(z, 0))
        report = result.report
        assert [o.operator for o in report.stages] == [
            "meet/relu_meet@1.0.0",
            "meet/relu_meet@1.0.0",
            "builtin/add@1.0.0",
        ]
        assert report.overlapped("b1", "b2")
        assert not report.overlapped("b1", "m") and not report.overlapped("b2", "m")
        marks = [e.mark for e in report.timeline]
        assert marks == [Mark.STARTED] * 2 + [Mark.COMPLETED] * 2 + [Mark.STARTED, Mark.COMPLETED]
        assert {e.stage for e in report.timeline[:4]} == {"b1", "b2"}
        assert [e.stage for e in report.timeline[4:]] == ["m", "m"]
    assert barrier.n_waiting == 0 and not barrier.broken
    runner.close()
    umd.close()
    device.close()


#: {x gathered by i (g)} and {z → relu (b2, own stream)} → add: a branch that faults.
FAILING = cfg(
    TWO_BRANCHES,
    inputs={
        "x": {"shape": [4, 3], "dtype": "f32"},
        "i": {"shape": [4], "dtype": "i64"},
        "z": {"shape": [4, 3], "dtype": "f32"},
    },
)
FAILING["pipeline"][0] = {"name": "g", "operator": "gather", "inputs": ["x", "i"], "outputs": ["u"]}


def _events(report: RunReport, tensor: str) -> list[tuple[str, str, int]]:
    return [(e.action.value, e.at, e.refs) for e in report.buffers if e.tensor == tensor]


def test_a_failing_branch_is_a_module_error_and_the_other_branchs_buffers_are_released(
    umd: Umd,
) -> None:
    runner = open_pipeline(FAILING, umd)
    x, z = np.ones((4, 3), np.float32), -np.ones((4, 3), np.float32)
    with pytest.raises(ModuleError) as e:
        runner.run({"x": x, "i": np.array([0, 1, 9, 2]), "z": z})
    assert (e.value.stage, e.value.module, e.value.cause) == ("g", "builtin", "DeviceFaultError")
    assert e.value.inputs == ("x: [4, 3] f32", "i: [4] i64")
    report = runner.last_report
    assert report is not None
    # both branches started together; the healthy one completed, the merge never ran
    assert [(o.stage, o.status) for o in report.stages] == [("g", "failed"), ("b2", "ok")]
    assert {ev.stage for ev in report.timeline if ev.mark is Mark.STARTED} == {"g", "b2"}
    # the healthy branch's output lived until the failure, then went back to its bin
    assert _events(report, "v") == [("acquired", "b2", 1), ("released", "(abort)", 0)]
    assert _events(report, "z") == [("acquired", "(inputs)", 1), ("released", "b2", 0)]
    acquired = sum(ev.action.value == "acquired" for ev in report.buffers)
    released = sum(ev.action.value == "released" for ev in report.buffers)
    assert (acquired, released) == (5, 5)  # x, i, z, u (g's output), v
    assert runner.session.pool_stats().in_use_bytes == 0
    good = runner.run({"x": x, "i": np.array([0, 1, 3, 2]), "z": z})
    np.testing.assert_allclose(good.outputs["y"], x[[0, 1, 3, 2]])
    assert [o.status for o in good.report.stages] == ["ok", "ok", "ok"]
    runner.close()
