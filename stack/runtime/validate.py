"""Semantic validation of an Executable: every reference resolves, every byte is in bounds.

Run on every encode and decode (and by the loader): the runtime never hands the UMD an
address it did not check. The first defect raises ExecutableFormatError naming its ``field``.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import defaultdict

from stack.runtime.errors import ExecutableFormatError
from stack.runtime.executable import (
    CONST_ALIGNMENT,
    FORMAT_VERSION,
    ExecDType,
    ExecOp,
    Executable,
    OpRecord,
    Segment,
    TensorInfo,
    TensorRole,
)

_SEGMENT_OF_ROLE = {
    TensorRole.INPUT: (Segment.IO,),
    TensorRole.OUTPUT: (Segment.IO,),
    TensorRole.CONST: (Segment.CONST,),
    TensorRole.INTERMEDIATE: (Segment.ARENA,),
}


def _bad(message: str, field: str) -> ExecutableFormatError:
    return ExecutableFormatError(message, field=field)


def _check_tensor(exe: Executable, pos: int, t: TensorInfo) -> None:
    field = f"tensors[{pos}]"
    if t.id != pos:
        raise _bad(f"tensor id {t.id} at position {pos}", f"{field}.id")
    if not isinstance(t.dtype, ExecDType) or not isinstance(t.role, TensorRole):
        raise _bad("dtype/role must be ExecDType/TensorRole members", field)
    if any(d < 0 for d in t.shape):
        raise _bad(f"negative dimension in {t.shape}", f"{field}.shape")
    if t.segment not in _SEGMENT_OF_ROLE[t.role]:
        raise _bad(f"a {t.role.value} tensor cannot live in {t.segment.value}", f"{field}.segment")
    if t.alignment < 1 or t.alignment & (t.alignment - 1):
        raise _bad(f"alignment {t.alignment} is not a power of two", f"{field}.alignment")
    if t.offset < 0 or t.offset % t.alignment:
        raise _bad(f"offset {t.offset} not {t.alignment}-aligned", f"{field}.offset")
    if t.size < t.nbytes:
        raise _bad(f"size {t.size} smaller than the {t.nbytes} bytes of {t.shape}", f"{field}.size")
    if t.first_use > t.last_use:
        raise _bad(f"lifetime [{t.first_use}, {t.last_use}] is empty", f"{field}.first_use")
    if t.segment is Segment.ARENA:
        if not 0 <= t.lane < len(exe.arena_sizes):
            raise _bad(f"lane {t.lane} has no arena", f"{field}.lane")
        limit = exe.arena_sizes[t.lane]
    elif t.segment is Segment.CONST:
        if t.offset % CONST_ALIGNMENT:
            raise _bad(f"const offset {t.offset} not 64-aligned", f"{field}.offset")
        limit = len(exe.consts)
    else:
        return
    if t.offset + t.size > limit:
        raise _bad(
            f"[{t.offset}, {t.offset + t.size}) exceeds its {t.segment.value} segment of {limit} B",
            f"{field}.offset",
        )


def _check_op(exe: Executable, pos: int, op: OpRecord) -> None:
    field = f"ops[{pos}]"
    n = len(exe.tensors)
    if op.index != pos:
        raise _bad(f"op index {op.index} at position {pos}", f"{field}.index")
    if not isinstance(op.op, ExecOp):
        raise _bad(f"op {op.op!r} is not an ExecOp", f"{field}.op")
    for kind, ids in (("inputs", op.inputs), ("outputs", op.outputs)):
        for tid in ids:
            if not 0 <= tid < n:
                raise _bad(f"tensor id {tid} does not exist ({n} tensors)", f"{field}.{kind}")
    if not op.outputs:
        raise _bad("an op must write at least one tensor", f"{field}.outputs")
    for tid in op.outputs:
        if exe.tensors[tid].role in (TensorRole.INPUT, TensorRole.CONST):
            raise _bad(f"op writes read-only tensor {tid}", f"{field}.outputs")
    names = [k for k, _ in op.attrs]
    if names != sorted(set(names)):
        raise _bad("attribute names must be unique and sorted", f"{field}.attrs")
    if op.stream < 0:
        raise _bad(f"stream {op.stream} is negative", f"{field}.stream")
    for dep in op.deps:
        if not 0 <= dep < pos:
            raise _bad(f"dependency {dep} does not point to an earlier op", f"{field}.deps")


def _check_reuse(exe: Executable) -> None:
    """Two arena tensors of one lane may share bytes only if their lifetimes (inclusive op
    ranges) are disjoint, or if they are aliases (same offset, size and lifetime). A sweep over op
    indices keeps the live ranges of each lane sorted by offset: O(n log n)."""
    lanes: dict[int, list[TensorInfo]] = defaultdict(list)
    for t in exe.tensors:
        if t.segment is Segment.ARENA and t.size > 0:
            lanes[t.lane].append(t)
    for tensors in lanes.values():
        events = sorted(
            [(t.last_use + 1, 0, t.id) for t in tensors] + [(t.first_use, 1, t.id) for t in tensors]
        )
        starts: list[int] = []
        live: list[list[int]] = []  # per live range: [offset, end, alias count, first tensor id]
        for _time, adding, tid in events:
            t = exe.tensors[tid]
            end = t.offset + t.size
            i = bisect_left(starts, t.offset)
            same = i < len(starts) and live[i][:2] == [t.offset, end]
            if not adding:
                live[i][2] -= 1
                if live[i][2] == 0:
                    del starts[i], live[i]
                continue
            if same and exe.tensors[live[i][3]].first_use == t.first_use:
                live[i][2] += 1  # an alias: same bytes, same lifetime
                continue
            clash = None
            if i > 0 and live[i - 1][1] > t.offset:
                clash = live[i - 1][3]
            elif i < len(starts) and starts[i] < end:
                clash = live[i][3]
            if clash is not None:
                raise _bad(
                    f"[{t.offset}, {end}) of lane {t.lane} overlaps tensor {clash} while both "
                    f"are live (ops {t.first_use}..{t.last_use})",
                    f"tensors[{tid}].offset",
                )
            starts.insert(i, t.offset)
            live.insert(i, [t.offset, end, 1, tid])


def _check_io(exe: Executable) -> None:
    """Every model input and output owns bytes of its own in the IO buffer: at least one (a
    tensor of zero elements too), overlapping no other IO tensor. The runtime keys the host
    views of the IO buffer by address: two tensors at one address would share one view."""
    io = sorted((t.offset, t.id) for t in exe.tensors if t.segment is Segment.IO)
    end, owner = 0, -1
    for offset, tid in io:
        t = exe.tensors[tid]
        if t.size < 1:
            raise _bad(f"IO tensor {t.name!r} reserves no bytes", f"tensors[{tid}].size")
        if offset < end:
            raise _bad(
                f"IO tensor {t.name!r} at [{offset}, {offset + t.size}) overlaps IO tensor "
                f"{exe.tensors[owner].name!r}",
                f"tensors[{tid}].offset",
            )
        end, owner = offset + t.size, tid


def validate_executable(exe: Executable) -> None:
    """Raise ExecutableFormatError(field=...) on the first inconsistency in ``exe``."""
    if len(exe.version) != 3 or exe.version[0] != FORMAT_VERSION[0]:
        raise _bad(f"version {exe.version} is not {FORMAT_VERSION[0]}.x", "version")
    if any(size < 0 for size in exe.arena_sizes):
        raise _bad("arena sizes must be non-negative", "arena_sizes")
    for pos, tensor in enumerate(exe.tensors):
        _check_tensor(exe, pos, tensor)
    for kind, ids, role in (
        ("inputs", exe.inputs, TensorRole.INPUT),
        ("outputs", exe.outputs, TensorRole.OUTPUT),
    ):
        for tid in ids:
            if not 0 <= tid < len(exe.tensors) or exe.tensors[tid].role is not role:
                raise _bad(f"tensor {tid} is not a model {role.value}", kind)
    io_names = [exe.tensors[i].name for i in (*exe.inputs, *exe.outputs)]
    if len(set(io_names)) != len(io_names):
        raise _bad("input and output names must be unique", "symbols.tensors")
    for pos, op in enumerate(exe.ops):
        _check_op(exe, pos, op)
    _check_io(exe)
    _check_reuse(exe)
