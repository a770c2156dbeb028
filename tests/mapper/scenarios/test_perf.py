"""``scenario perf``: the per-layer checklist, and measured time per layer from a profiled run."""

from __future__ import annotations

from mapper.impact import MapView
from mapper.scenarios.perf import walk_perf


def test_toy_checklist_names_each_place_and_the_empty_layer(toy_view: MapView) -> None:
    walk = walk_perf(toy_view)
    found = {
        layer.layer: {item: [s.node for s in spots] for item, spots in layer.checklist if spots}
        for layer in walk.layers
    }
    assert found == {
        "front": {},
        "mid": {
            "scheduling": ["symbol:toy.mid.plan.plan"],
            "submission": ["symbol:toy.mid.plan.retry_launch"],
        },
        "back": {"submission": ["symbol:toy.back.kernels.launch"]},
    }
    assert all(layer.seconds is None for layer in walk.layers)


def test_reference_stack_profiled_per_layer(repo_view: MapView) -> None:
    walk = walk_perf(repo_view, "mlp", runs=2)
    assert [layer.layer for layer in walk.layers] == [
        "adapter",
        "compiler",
        "runtime",
        "umd",
        "kmd",
    ]
    assert walk.command[-5:] == ("model", "mlp", "--json", "--runs", "2")
    for layer in walk.layers:
        assert layer.seconds is not None and layer.seconds > 0, layer.layer
        assert layer.hottest and all(f"stack/{layer.layer}/" in at for at, _ in layer.hottest)
    assert walk.outside_seconds is not None and walk.outside_seconds > 0
    kmd = next(layer for layer in walk.layers if layer.layer == "kmd")
    sync = dict(kmd.checklist)["synchronisation points"]
    assert "symbol:stack.kmd.fence.TimelineFence.wait" in {s.node for s in sync}
