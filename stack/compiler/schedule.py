"""Stream lanes and the dependency graph of a program.

Lane assignment follows chains: an op continues on the lane of its first operand's producer
when that producer is still the lane's last op; otherwise (a branch) it opens on the lane idle
the longest. ``deps`` of an op are the producers of its operands on *other* lanes (same-lane
order is implied: a lane runs its ops in index order). :func:`happens_before` gives, per op,
the set of ops guaranteed to have finished before it starts — the relation the memory planner
uses to decide which tensors may share bytes across concurrent streams.
"""

from __future__ import annotations

from dataclasses import dataclass

from stack.compiler.program import Program


@dataclass(frozen=True, slots=True)
class Schedule:
    """Per step: its lane, its cross-lane deps, and its ancestors as a bitmask."""

    lanes: tuple[int, ...]
    deps: tuple[tuple[int, ...], ...]
    ancestors: tuple[int, ...]

    def before(self, a: int, b: int) -> bool:
        """True when step ``a`` is guaranteed to finish before step ``b`` starts."""
        return bool(self.ancestors[b] >> a & 1)


def data_preds(prog: Program) -> list[list[int]]:
    """Per step, the steps producing its operands (through aliases to their roots)."""
    preds: list[list[int]] = []
    for step in prog.steps:
        found: list[int] = []
        for value in step.inputs:
            p = prog.producer.get(prog.root(value))
            if p is not None and p not in found:
                found.append(p)
        preds.append(found)
    return preds


def assign_lanes(prog: Program, n_lanes: int) -> list[int]:
    """A lane per step (see the module docstring)."""
    preds = data_preds(prog)
    lanes: list[int] = []
    tail = [-1] * max(1, n_lanes)
    for i, step in enumerate(prog.steps):
        lane = -1
        if preds[i]:
            first = prog.producer.get(prog.root(step.inputs[0]), preds[i][0])
            if tail[lanes[first]] == first:
                lane = lanes[first]
        if lane < 0:
            lane = min(range(len(tail)), key=lambda k: tail[k])
        lanes.append(lane)
        tail[lane] = i
    return lanes


def happens_before(preds: list[list[int]], lanes: list[int]) -> list[int]:
    """Ancestor bitmasks over data edges plus same-lane program order."""
    anc: list[int] = []
    last_on_lane: dict[int, int] = {}
    for i, ps in enumerate(preds):
        mask = 0
        edges = list(ps)
        if lanes[i] in last_on_lane:
            edges.append(last_on_lane[lanes[i]])
        for p in edges:
            mask |= anc[p] | (1 << p)
        anc.append(mask)
        last_on_lane[lanes[i]] = i
    return anc


def schedule(prog: Program, n_lanes: int) -> Schedule:
    """Lanes, cross-lane deps and the happens-before relation of ``prog``."""
    preds = data_preds(prog)
    lanes = assign_lanes(prog, n_lanes)
    deps = tuple(tuple(sorted(p for p in ps if lanes[p] != lanes[i])) for i, ps in enumerate(preds))
    return Schedule(tuple(lanes), deps, tuple(happens_before(preds, lanes)))
