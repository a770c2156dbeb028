"""``scenario errors``: who detects, reports, cleans up and retries each fault class."""

from __future__ import annotations

from mapper.impact import MapView
from mapper.scenarios.errors import walk_errors


def test_toy_faults_and_their_holes(toy_view: MapView) -> None:
    walks = {w.fault: w for w in walk_errors(toy_view)}
    assert sorted(walks) == ["DeviceError", "LostError"]
    device = walks["DeviceError"]
    assert [(r.node, r.at) for r in device.detects] == [
        ("symbol:toy.back.kernels.launch", "toy/back/kernels.py:23")
    ]
    assert [(r.node, r.layer, r.evidence) for r in device.retries] == [
        ("symbol:toy.mid.plan.retry_launch", "mid", "call path")
    ]
    assert device.cleans_up == () and device.reports == ()
    assert device.holes == ["nobody reports"]
    assert walks["LostError"].holes == [
        "nobody detects",
        "nobody reports",
        "nobody cleans up or retries",
    ]


def test_filter_by_name(toy_view: MapView) -> None:
    assert [w.fault for w in walk_errors(toy_view, "lost")] == ["LostError"]


def test_reference_stack_fence_faults(repo_view: MapView) -> None:
    walks = {w.fault: w for w in walk_errors(repo_view, "Fence")}
    failed = walks["FenceFailedError"]
    assert failed.layer == "kmd"
    assert "symbol:stack.kmd.fence.TimelineFence.wait" in {r.node for r in failed.detects}
    reports = {r.node for r in failed.reports}
    assert {"interface:umd_kmd.submit", "interface:umd_kmd.wait_fence"} <= reports
    for walk in walks.values():
        for role in (*walk.detects, *walk.reports, *walk.cleans_up, *walk.retries):
            assert role.at and ":" in role.at, role
