"""The agent's tools on the fixture map: typed arguments, compact JSON, citations recorded."""

from __future__ import annotations

import json

import pytest

from mapper.agent.mapview import MapView
from mapper.agent.tools import Toolbox, ToolError, specs
from mapper.errors import UnknownNameError


def test_registry_holds_the_ten_tools() -> None:
    assert [s.name for s in specs()] == [
        "search",
        "node",
        "neighbours",
        "explain_path",
        "interfaces_between",
        "impact",
        "findings",
        "scenario_walk",
        "role_view",
        "read_excerpt",
    ]


def test_interfaces_between_and_node(mini_view: MapView) -> None:
    box = Toolbox(mini_view)
    data = box.run("interfaces_between", upper="runtime", lower="driver")
    assert [i["id"] for i in data["interfaces"]] == [
        "interface:runtime_driver.alloc_pages",
        "interface:runtime_driver.free_pages",
        "interface:runtime_driver.alloc_rpc",
    ]
    node = box.run("node", node_id="runtime_driver.free_pages")["node"]
    assert node["synchronization"] == (
        "The caller waits on the fence of every command using the pages first."
    )
    assert [c.tool for c in box.calls] == ["interfaces_between", "node"]
    assert ("contracts/runtime_driver.yaml", 21) in box.returned


def test_scenario_walk_is_ordered(mini_view: MapView) -> None:
    data = Toolbox(mini_view).run("scenario_walk", node_id="launch-fused")
    assert [s["target"] for s in data["steps"]] == [
        "component:compiler.passes",
        "interface:compiler_runtime.launch",
        "component:runtime.core",
    ]


def test_excerpt_only_for_returned_paths(mini_view: MapView) -> None:
    box = Toolbox(mini_view)
    refused = json.loads(box.run_json("read_excerpt", path="driver/mini_drv.h", line=7))
    assert refused == {
        "error": "driver/mini_drv.h was not returned by any tool; cite only what tools return"
    }
    box.run("search", query="MINI_IOCTL_ALLOC")
    text = box.run("read_excerpt", path="driver/mini_drv.h", line=7, context=0)["excerpt"]
    assert text == "7: #define MINI_IOCTL_ALLOC _IOWR('M', 1, struct mini_alloc)"


def test_bad_arguments_are_typed_errors(mini_view: MapView) -> None:
    box = Toolbox(mini_view)
    with pytest.raises(ToolError, match="no node 'nowhere' on the map"):
        box.run("node", node_id="nowhere")
    with pytest.raises(ToolError, match="bad arguments for search"):
        box.run("search", query="x", limit=0)
    with pytest.raises(UnknownNameError, match="unknown layer 'gpu'; known: compiler, driver"):
        box.run("interfaces_between", upper="gpu", lower="driver")
    with pytest.raises(UnknownNameError, match="unknown tool 'grep'"):
        box.run("grep")
