from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from stack.runtime import ExecOp, OpRecord
from stack.runtime.scheduler import Schedule, build_schedule


def _op(
    i: int, stream: int, ins: tuple[int, ...], outs: tuple[int, ...], deps: tuple[int, ...] = ()
) -> OpRecord:
    return OpRecord(i, ExecOp.ADD, ins, outs, (), stream, deps)


def _ordered_after(schedule: Schedule, late: int, early: int) -> bool:
    """Whether group ``late`` cannot start before group ``early`` has completed."""
    groups = schedule.groups
    if late == early:
        return True
    seen, stack = set(), [late]
    while stack:
        g = stack.pop()
        if g in seen:
            continue
        seen.add(g)
        if groups[g].stream == groups[early].stream and g >= early:
            return True
        stack.extend(groups[g].waits)
        stack.extend(h for h in range(g) if groups[h].stream == groups[g].stream)
    return False


def test_two_branches_become_three_groups() -> None:
    ops = [
        _op(0, 0, (0,), (1,)),
        _op(1, 1, (0,), (2,)),
        _op(2, 0, (1,), (3,)),
        _op(3, 1, (2,), (4,)),
        _op(4, 0, (3, 4), (5,)),
        _op(5, 0, (5,), (6,)),
    ]
    plan = build_schedule(ops, 2)
    assert [(g.stream, g.ops, g.waits) for g in plan.groups] == [
        (0, (0, 2), ()),
        (1, (1, 3), ()),
        (0, (4, 5), (1,)),
    ]
    assert plan.finals == (2, 1)
    single = build_schedule(ops, 1)
    assert [g.ops for g in single.groups] == [(0, 1, 2, 3, 4, 5)]


def test_wait_already_covered_is_not_repeated() -> None:
    ops = [
        _op(0, 1, (0,), (1,)),
        _op(1, 0, (1,), (2,)),  # waits on stream 1
        _op(2, 0, (1, 2), (3,)),  # depends on op 0 again: already ordered after it
    ]
    plan = build_schedule(ops, 2)
    assert [(g.stream, g.ops, g.waits) for g in plan.groups] == [(1, (0,), ()), (0, (1, 2), (0,))]


def test_declared_deps_are_honoured_without_data_flow() -> None:
    ops = [_op(0, 0, (0,), (1,)), _op(1, 1, (0,), (2,), deps=(0,))]
    plan = build_schedule(ops, 2)
    assert plan.groups[1].waits == (0,)


@st.composite
def _graphs(draw: st.DrawFn) -> list[OpRecord]:
    n = draw(st.integers(1, 14))
    ops = []
    for i in range(n):
        stream = draw(st.integers(0, 3))
        ins = tuple(draw(st.lists(st.integers(0, i), max_size=3)))  # tensor t written by op t-1
        deps = tuple(sorted(set(draw(st.lists(st.integers(0, max(i - 1, 0)), max_size=2)))))
        ops.append(_op(i, stream, ins, (i + 1,), deps if i else ()))
    return ops


@settings(max_examples=150, deadline=None)
@given(_graphs(), st.integers(1, 3))
def test_every_dependency_is_ordered(ops: list[OpRecord], n_streams: int) -> None:
    plan = build_schedule(ops, n_streams)
    group_of = {i: g for g, grp in enumerate(plan.groups) for i in grp.ops}
    assert sorted(group_of) == list(range(len(ops)))
    for g, grp in enumerate(plan.groups):
        assert all(w < g for w in grp.waits)  # creation order is a valid submission order
        assert list(grp.ops) == sorted(grp.ops)
    for op in ops:
        preds = set(op.deps) | {t - 1 for t in op.inputs if t > 0}
        for p in preds:
            assert _ordered_after(plan, group_of[op.index], group_of[p]), (op, p)
    for stream in {g.stream for g in plan.groups}:
        last = max(i for i, g in enumerate(plan.groups) if g.stream == stream)
        assert last in plan.finals
    assert len(plan.finals) == len({g.stream for g in plan.groups})
