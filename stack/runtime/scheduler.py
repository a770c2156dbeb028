"""Stream scheduling: the dependency graph -> submission groups over the runtime's streams.

A *group* is a run of consecutive ops of one stream that is submitted to the UMD as one
command buffer. A new group starts on a stream only when an op there depends on an op of
another stream: the group then waits on the tickets of the groups holding those ops. Ops of
independent branches on different streams thus run concurrently, and one run costs one
``submit`` per group rather than one per op.

Dependencies are the Executable's ``deps`` plus every read-after-write edge found from the
tensors (the op that last wrote an input), so a missing ``deps`` entry can cost concurrency
but never correctness of data flow. Write-after-read hazards of memory reuse across streams
must be covered by ``deps`` (the compiler's memory planner emits them).

Groups are listed in creation order, which is a valid submission order: a group only waits
on groups created before it, and waiting on a group closes it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from stack.runtime.executable import OpRecord


@dataclass(frozen=True, slots=True)
class Group:
    """Ops ``ops`` (indices, in order) submitted together on runtime stream ``stream`` after
    the groups ``waits`` (indices into the plan's groups) have completed."""

    stream: int
    ops: tuple[int, ...]
    waits: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Schedule:
    """The groups in submission order and, per stream used, the index of its last group."""

    groups: tuple[Group, ...]
    finals: tuple[int, ...]

    @property
    def streams_used(self) -> tuple[int, ...]:
        return tuple(sorted({g.stream for g in self.groups}))


def lane_of(op: OpRecord, n_streams: int) -> int:
    """The runtime stream an op runs on: its lane folded onto the streams available."""
    return op.stream % n_streams


def build_schedule(ops: Sequence[OpRecord], n_streams: int) -> Schedule:
    """Group ``ops`` (indexed 0..n-1, deps pointing backwards) over ``n_streams`` streams."""
    if n_streams < 1:
        raise ValueError("n_streams must be at least 1")
    writer: dict[int, int] = {}  # tensor id -> op that last wrote it
    group_of: list[int] = []  # op index -> group index
    open_group: dict[int, int] = {}  # stream -> its open group
    latest: dict[int, int] = {}  # stream -> its newest group
    members: list[list[int]] = []
    streams: list[int] = []
    waits: list[tuple[int, ...]] = []
    horizon: list[dict[int, int]] = []  # group -> {stream: newest group it is ordered after}
    for op in ops:
        lane = lane_of(op, n_streams)
        preds = set(op.deps)
        preds.update(writer[t] for t in op.inputs if t in writer)
        current = open_group.get(lane)
        seen = horizon[latest[lane]] if lane in latest else {}
        external = sorted(
            {
                g
                for g in (group_of[p] for p in preds)
                if streams[g] != lane and g > seen.get(streams[g], -1)
            }
        )
        if current is None or external:
            for g in external:  # waiting on a group closes it
                if open_group.get(streams[g]) == g:
                    del open_group[streams[g]]
            current = len(members)
            prev = latest.get(lane)
            reach = dict(horizon[prev]) if prev is not None else {}
            for g in external:
                for s, h in (*horizon[g].items(), (streams[g], g)):
                    reach[s] = max(reach.get(s, -1), h)
            members.append([])
            streams.append(lane)
            waits.append(tuple(external))
            horizon.append(reach)
            open_group[lane] = latest[lane] = current
        members[current].append(op.index)
        group_of.append(current)
        for t in op.outputs:
            writer[t] = op.index
    groups = tuple(
        Group(stream=s, ops=tuple(m), waits=w)
        for s, m, w in zip(streams, members, waits, strict=True)
    )
    last: dict[int, int] = {}
    for i, group in enumerate(groups):
        last[group.stream] = i
    return Schedule(groups=groups, finals=tuple(last[s] for s in sorted(last)))
