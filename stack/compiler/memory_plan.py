"""Liveness-based memory planning: offsets for every intermediate in one arena per stream lane.

A *buffer* is an intermediate value that owns storage (aliases share their root's buffer). It
lives in the arena of the lane its producer runs on. Two buffers of one arena may overlap in
bytes only if one of them is dead before the other is born **in every execution the
dependency graph allows**: every step touching buffer ``a`` (its producer and all readers of
``a`` and of its aliases) happens-before the producer of ``b`` (data edges plus same-lane
order; :mod:`stack.compiler.schedule`). In a single lane that is interval disjointness in
program order; across lanes it also rules out sharing between branches that may run at once.

Placement is greedy by size (largest first; each buffer takes the lowest-addressed gap, among
the buffers it conflicts with, that is large enough), which is known to come close to the
lower bound on CNNs. ``lower_bound_bytes`` is the largest total of simultaneously live buffers
over the program order; ``naive_bytes`` is the sum of all buffers (no reuse).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from stack.compiler.errors import PlanError
from stack.compiler.program import Program
from stack.compiler.schedule import Schedule
from stack.runtime import TensorRole


def align_up(value: int, alignment: int) -> int:
    """``value`` rounded up to a multiple of ``alignment``."""
    return (value + alignment - 1) // alignment * alignment


@dataclass(frozen=True, slots=True)
class Buffer:
    """One planned allocation: its value, lane, aligned size, lifetime and placement."""

    value: str
    lane: int
    size: int
    first_use: int
    last_use: int
    offset: int
    uses: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class MemoryPlan:
    """Placement of every buffer, the arena size per lane, and the plan's figures."""

    buffers: Mapping[str, Buffer]
    arena_sizes: tuple[int, ...]
    naive_bytes: int
    lower_bound_bytes: int

    @property
    def arena_bytes(self) -> int:
        return sum(self.arena_sizes)


def _uses(prog: Program) -> dict[str, list[int]]:
    uses: dict[str, list[int]] = {}
    for step in prog.steps:
        for value in (*step.inputs, *step.outputs):
            uses.setdefault(prog.root(value), []).append(step.index)
    return uses


def plan_memory(
    prog: Program, sched: Schedule, sizes: Mapping[str, int], n_lanes: int, alignment: int
) -> MemoryPlan:
    """Place every arena buffer of ``prog``; ``sizes`` gives each value's byte size."""
    uses = _uses(prog)
    roots = [
        v
        for v, role in prog.roles.items()
        if role is TensorRole.INTERMEDIATE and v not in prog.alias and v in prog.producer
    ]
    info: dict[str, tuple[int, int, int, int, int]] = {}  # lane, size, first, last, use-mask
    for v in roots:
        steps = uses.get(v, [prog.producer[v]])
        mask = 0
        for s in steps:
            mask |= 1 << s
        producer = prog.producer[v]
        info[v] = (
            sched.lanes[producer],
            align_up(max(sizes[v], 1), alignment),
            producer,
            max(steps),
            mask,
        )
    placed: dict[str, Buffer] = {}
    arenas = [0] * max(1, n_lanes)
    order = sorted(roots, key=lambda v: (-info[v][1], info[v][2], v))
    for v in order:
        lane, size, first, last, mask = info[v]
        busy = sorted(
            (b.offset, b.offset + b.size)
            for b in placed.values()
            if b.lane == lane and _conflict(info[b.value], info[v], sched)
        )
        offset = _lowest_gap(busy, size)
        touched = tuple(sorted(set(uses.get(v, [first]))))
        placed[v] = Buffer(v, lane, size, first, last, offset, touched)
        if lane >= len(arenas):
            raise PlanError(f"lane {lane} out of range for {n_lanes} lanes", node=v)
        arenas[lane] = max(arenas[lane], offset + size)
    naive = sum(info[v][1] for v in roots)
    return MemoryPlan(placed, tuple(arenas), naive, _lower_bound(info, len(prog.steps)))


def _conflict(
    a: tuple[int, int, int, int, int], b: tuple[int, int, int, int, int], sched: Schedule
) -> bool:
    """True unless every step touching one buffer happens-before the other's producer."""
    a_mask, b_mask = a[4], b[4]
    a_dead_first = a_mask & ~sched.ancestors[b[2]] == 0
    b_dead_first = b_mask & ~sched.ancestors[a[2]] == 0
    return not (a_dead_first or b_dead_first)


def _lowest_gap(busy: list[tuple[int, int]], size: int) -> int:
    offset = 0
    for start, end in busy:
        if start - offset >= size:
            return offset
        offset = max(offset, end)
    return offset


def _lower_bound(info: Mapping[str, tuple[int, int, int, int, int]], n_steps: int) -> int:
    delta = [0] * (n_steps + 1)
    for _, size, first, last, _ in info.values():
        delta[first] += size
        delta[last + 1] -= size
    live = best = 0
    for d in delta:
        live += d
        best = max(best, live)
    return best


def check_plan(plan: MemoryPlan, sched: Schedule) -> None:
    """Raise PlanError if two conflicting buffers of one arena overlap (an independent check)."""
    buffers = list(plan.buffers.values())
    for i, a in enumerate(buffers):
        for b in buffers[i + 1 :]:
            if a.lane != b.lane or a.offset >= b.offset + b.size or b.offset >= a.offset + a.size:
                continue
            a_before = all(sched.before(s, b.first_use) for s in a.uses)
            b_before = all(sched.before(s, a.first_use) for s in b.uses)
            if not (a_before or b_before):
                raise PlanError(
                    f"buffers {a.value!r} and {b.value!r} overlap while both may be live",
                    node=a.value,
                    other=b.value,
                )
