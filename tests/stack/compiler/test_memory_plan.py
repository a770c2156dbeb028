"""The liveness-based planner: reuse in a chain, no sharing across concurrent branches."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from stack.compiler import CompileOptions, PlanError, compile_graph
from stack.compiler.memory_plan import Buffer, MemoryPlan, check_plan
from stack.runtime import Segment


def _chain(mk, n: int):
    nodes, prev = [], "x"
    for i in range(n):
        nodes.append(helper.make_node("Transpose", [prev], [f"t{i}"], perm=[1, 0]))
        prev = f"t{i}"
    nodes.append(helper.make_node("Relu", [prev], ["y"]))
    return mk.graph_of(nodes, [("x", [32, 32])], [("y", None)])


def test_chain_reuses_memory_down_to_the_lower_bound(mk) -> None:
    result = compile_graph(_chain(mk, 8))
    figures = result.memory_figures()
    assert figures["naive_bytes"] == 8 * 4096
    assert figures["lower_bound_bytes"] == 2 * 4096
    assert figures["arena_bytes"] == figures["lower_bound_bytes"]
    check_plan(result.plan, result.schedule)


def _two_branches(mk):
    # x -> a1 -> a2 -> a3 \
    #   -> b1 -> b2 -> b3 -> add -> y      (two independent chains)
    nodes = []
    for br in "ab":
        prev = "x"
        for i in range(1, 4):
            nodes.append(helper.make_node("Transpose", [prev], [f"{br}{i}"], perm=[1, 0]))
            prev = f"{br}{i}"
    nodes.append(helper.make_node("Add", ["a3", "b3"], ["y"]))
    return mk.graph_of(nodes, [("x", [16, 16])], [("y", None)])


def test_concurrent_branches_on_two_lanes_never_share_bytes(mk) -> None:
    result = compile_graph(_two_branches(mk), CompileOptions(streams=2))
    exe, sched = result.executable, result.schedule
    assert set(sched.lanes) == {0, 1}
    lane = {t.name: t.lane for t in exe.tensors if t.segment is Segment.ARENA}
    assert lane["a1"] != lane["b1"]
    # a cross-lane dependency exists where the chains join, nowhere else
    joins = [op for op in exe.ops if op.deps]
    assert len(joins) == 1 and exe.ops[joins[0].index].name.startswith("Add")
    # any two arena tensors that overlap in bytes must be ordered by happens-before
    check_plan(result.plan, sched)
    ranges = {
        t.name: (t.lane, t.offset, t.offset + t.size)
        for t in exe.tensors
        if t.segment is Segment.ARENA
    }
    for a in ["a1", "a2"]:
        for b in ["b1", "b2"]:
            la, sa, ea = ranges[a]
            lb, sb, eb = ranges[b]
            assert la != lb or ea <= sb or eb <= sa


def test_the_same_graph_on_one_lane_packs_tighter(mk) -> None:
    one = compile_graph(_two_branches(mk), CompileOptions(streams=1)).memory_figures()
    two = compile_graph(_two_branches(mk), CompileOptions(streams=2)).memory_figures()
    assert one["arena_bytes"] <= two["arena_bytes"]
    assert one["arena_bytes"] == one["lower_bound_bytes"]


def test_check_plan_catches_an_overlap_of_live_buffers(mk) -> None:
    result = compile_graph(_chain(mk, 3))
    bufs = dict(result.plan.buffers)
    first, second = sorted(bufs.values(), key=lambda b: b.first_use)[:2]
    assert first.offset != second.offset  # both live at the step that reads one, writes other
    forged = Buffer(
        second.value,
        second.lane,
        second.size,
        second.first_use,
        second.last_use,
        first.offset,
        second.uses,
    )
    bufs[second.value] = forged
    bad = MemoryPlan(bufs, result.plan.arena_sizes, 0, 0)
    with pytest.raises(PlanError, match="overlap"):
        check_plan(bad, result.schedule)


@pytest.mark.parametrize("seed", range(6))
def test_random_dags_plan_without_conflicts(mk, seed: int) -> None:
    rng = np.random.default_rng(seed)
    values, nodes = ["x"], []
    for i in range(14):
        a, b = rng.choice(values, 2)
        op = helper.make_node("Add", [str(a), str(b)], [f"v{i}"])
        nodes.append(op)
        values.append(f"v{i}")
    nodes.append(helper.make_node("Add", [values[-1], values[-2]], ["y"]))
    g = mk.graph_of(nodes, [("x", [8, 8])], [("y", None)])
    for streams in (1, 2, 3):
        result = compile_graph(g, CompileOptions(streams=streams))
        check_plan(result.plan, result.schedule)
        assert result.plan.arena_bytes <= result.plan.naive_bytes
