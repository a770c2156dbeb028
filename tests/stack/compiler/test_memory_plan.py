"""The liveness-based planner: reuse in a chain, no sharing across concurrent branches."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from stack.compiler import CompiledModel, CompileOptions, PlanError, compile_graph
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


_OPS = {
    "Add": np.add,
    "Sub": np.subtract,
    "Mul": lambda a, b: a * b * np.float32(0.5),  # scaled below so values stay bounded
    "Relu": lambda a, b: np.maximum(a, 0),
    "Transpose": lambda a, b: a.T,
}


@pytest.mark.parametrize("seed", range(6))
def test_random_dags_plan_without_conflicts_and_compute_what_numpy_computes(mk, seed: int) -> None:
    """Random DAGs of binary and unary ops: the plan has no conflicts on 1-3 lanes, and running
    the compiled model gives NumPy's answer (a plan that let two live values share bytes would
    not)."""
    rng = np.random.default_rng(seed)
    values, nodes, steps = ["x"], [], []
    for i in range(14):
        kind = str(rng.choice(list(_OPS)))
        a, b = (str(v) for v in rng.choice(values, 2))
        if kind == "Mul":
            half = f"h{i}"
            nodes.append(helper.make_node("Mul", [a, b], [half]))
            nodes.append(helper.make_node("Mul", [half, "half"], [f"v{i}"]))
        elif kind in ("Relu", "Transpose"):
            attrs = {"perm": [1, 0]} if kind == "Transpose" else {}
            nodes.append(helper.make_node(kind, [a], [f"v{i}"], **attrs))
        else:
            nodes.append(helper.make_node(kind, [a, b], [f"v{i}"]))
        steps.append((kind, a, b, f"v{i}"))
        values.append(f"v{i}")
    nodes.append(helper.make_node("Add", [values[-1], values[-2]], ["y"]))
    g = mk.graph_of(nodes, [("x", [8, 8])], [("y", None)], inits={"half": np.float32(0.5)})
    x = rng.standard_normal((8, 8)).astype(np.float32)
    env = {"x": x}
    for kind, a, b, out in steps:
        env[out] = _OPS[kind](env[a], env[b]).astype(np.float32)
    expected = env[values[-1]] + env[values[-2]]
    for streams in (1, 2, 3):
        result = compile_graph(g, CompileOptions(streams=streams))
        check_plan(result.plan, result.schedule)
        assert result.plan.arena_bytes <= result.plan.naive_bytes
        with CompiledModel(g, CompileOptions(streams=streams)) as model:
            got = model.run({"x": x})["y"]
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
