"""``scenario trace``: the call path down the layers, and the holes where it cannot be followed."""

from __future__ import annotations

import pytest

from mapper.impact import MapView, UnknownTargetError
from mapper.scenarios.trace import walk_trace


def test_toy_trace_names_the_hole_between_mid_and_back(toy_view: MapView) -> None:
    walk = walk_trace(toy_view, "Relu")
    assert [(s.node, s.layer, s.cite) for s in walk.steps] == [
        ("symbol:toy.front.ops.import_relu", "front", "-"),
        ("symbol:toy.mid.plan.plan", "mid", "toy/front/ops.py:14"),
        (
            "symbol:toy.back.kernels.relu",
            "back",
            "op footprint: toy.back.kernels.relu at toy/back/kernels.py:13",
        ),
    ]
    assert walk.layers_reached == ["front", "mid", "back"]
    assert [(h.layer, h.after) for h in walk.holes] == [("back", "symbol:toy.mid.plan.plan")]
    assert walk.holes[0].reason.startswith(
        "no call from symbol:toy.mid.plan.plan (mid) reaches back: the walk resumes at the "
        "op's own footprint there, symbol:toy.back.kernels.relu (toy/back/kernels.py:13)"
    )
    assert walk.back == ()  # the toy states no completion interface: each boundary is a hole
    assert [layer for layer, _ in walk.back_holes] == ["mid", "front"]
    assert walk.back_holes[0][1] == (
        "completion does not come back from back to mid on the map: no completion interface; "
        "no mid code calls an implementation of one (nor a back method of the same name)"
    )


def test_toy_trace_from_a_node_stops_with_holes_below(toy_view: MapView) -> None:
    walk = walk_trace(toy_view, "toy.mid.plan.plan")
    assert [s.node for s in walk.steps] == ["symbol:toy.mid.plan.plan"]
    assert [h.layer for h in walk.holes] == ["back"]
    assert walk.holes[0].reason.startswith("no call edge from what the walk reached above")


def test_unknown_entry(toy_view: MapView) -> None:
    with pytest.raises(UnknownTargetError):
        walk_trace(toy_view, "Tanh")


def test_reference_stack_matmul_reaches_the_kmd(repo_view: MapView) -> None:
    walk = walk_trace(repo_view, "MatMul")
    assert walk.steps[0].layer == "adapter"
    assert walk.layers_reached[-1] == "kmd"
    reached = set(walk.layers_reached)
    holes = {h.layer for h in walk.holes}
    assert reached | holes == {"adapter", "compiler", "runtime", "umd", "kmd"}
    assert all(h.interfaces for h in walk.holes)  # each hole names the contracts in between


def test_reference_stack_completion_comes_back_through_fences(repo_view: MapView) -> None:
    walk = walk_trace(repo_view, "MatMul")
    back = {(b.interface, b.lower, b.upper, b.layer, b.how) for b in walk.back}
    assert (
        "interface:umd_kmd.wait_fence",
        "symbol:stack.kmd.device.KmdDevice.wait_fence",
        "symbol:stack.umd.session.UmdSession.wait",
        "umd",
        "call",
    ) in back
    assert (
        "interface:runtime_umd.wait",
        "symbol:stack.umd.session.UmdSession.wait",
        "symbol:stack.runtime.executor.LoadedModel._attempt",
        "runtime",
        "name",  # the runtime waits through the UMD's protocol, which the map links by name
    ) in back
    assert {b.layer for b in walk.back} == {"umd", "runtime"}
    assert [layer for layer, _ in walk.back_holes] == ["compiler", "adapter"]
    for step in walk.back:
        assert step.at.count(":") == 1 and step.at.split(":")[1].isdigit(), step
