"""Executable emission: program + schedule + memory plan -> :class:`stack.runtime.Executable`.

Tensor records are written in a fixed order (model inputs, then every other value in order of
first appearance); the const segment packs each constant at a 64-byte aligned offset; the IO
buffer packs inputs then outputs at ``alignment``, each in at least one aligned slot (a tensor of
zero elements too, so no two share an address). The result is validated by the runtime's
own format checks (``Executable.validate``) before it is returned, so a bad plan fails here,
in the compiler, with an :class:`EmitError` naming the field.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from stack.compiler.errors import EmitError, UnsupportedDTypeError
from stack.compiler.ir import ElemType, Graph, TensorType
from stack.compiler.memory_plan import MemoryPlan, align_up
from stack.compiler.program import Program
from stack.compiler.schedule import Schedule
from stack.runtime import (
    CONST_ALIGNMENT,
    FORMAT_VERSION,
    ExecDType,
    ExecLayout,
    Executable,
    ExecutableFormatError,
    OpRecord,
    Segment,
    TensorInfo,
    TensorRole,
)

_DTYPES: dict[ElemType, ExecDType] = {
    ElemType.F32: ExecDType.F32,
    ElemType.F16: ExecDType.F16,
    ElemType.F64: ExecDType.F64,
    ElemType.I8: ExecDType.I8,
    ElemType.U8: ExecDType.U8,
    ElemType.I32: ExecDType.I32,
    ElemType.I64: ExecDType.I64,
    ElemType.BOOL: ExecDType.BOOL,
}


def device_dtype(dtype: ElemType, value: str = "") -> ExecDType:
    """The device DType of an IR element type; UnsupportedDTypeError naming the layers if none."""
    try:
        return _DTYPES[dtype]
    except KeyError:
        known = ", ".join(e.value for e in _DTYPES)
        raise UnsupportedDTypeError(
            f"element type {dtype.value} has no device DType (device types: {known})",
            node=value or None,
            dtype=dtype.value,
            layers=["compiler", "umd", "kmd"],
        ) from None


def value_types(graph: Graph, prog: Program) -> dict[str, TensorType]:
    """Static type of every value the program touches (COPY sources of constant outputs too)."""
    src_of = {c: k for k, c in prog.const_names.items()}
    out: dict[str, TensorType] = {}
    for name in prog.roles:
        t = graph.type_of(src_of.get(name, name))
        if t is not None:
            out[name] = t
    return out


def _value_order(graph: Graph, prog: Program) -> list[str]:
    order = list(graph.inputs)
    seen = set(order)
    for step in prog.steps:
        for v in (*step.inputs, *step.outputs):
            if v not in seen:
                seen.add(v)
                order.append(v)
    for v in graph.outputs:
        if v not in seen:
            seen.add(v)
            order.append(v)
    return order


def emit_executable(
    graph: Graph,
    prog: Program,
    sched: Schedule,
    plan: MemoryPlan,
    *,
    alignment: int,
    metadata: Mapping[str, str] | None = None,
) -> Executable:
    """Assemble and validate the Executable."""
    types = value_types(graph, prog)
    uses: dict[str, list[int]] = {}
    for step in prog.steps:
        for v in (*step.inputs, *step.outputs):
            uses.setdefault(v, []).append(step.index)
    order = _value_order(graph, prog)
    ids = {v: i for i, v in enumerate(order)}
    const_source = {c: k for k, c in prog.const_names.items()}
    consts = bytearray()
    io_end = 0
    tensors: list[TensorInfo] = []
    for v in order:
        t = types.get(v)
        if t is None:
            raise EmitError(f"value {v!r} has no static type", node=v)
        role = prog.roles[v]
        nbytes = t.nbytes
        steps = uses.get(v, [0])
        first, last = min(steps), max(steps)
        lane = 0
        if role is TensorRole.CONST:
            segment, offset = Segment.CONST, align_up(len(consts), CONST_ALIGNMENT)
            src = const_source.get(v, v)
            consts.extend(b"\0" * (offset - len(consts)))
            consts.extend(np.ascontiguousarray(graph.constants[src]).tobytes())
            size = nbytes
        elif role in (TensorRole.INPUT, TensorRole.OUTPUT):
            # A zero-element input or output still reserves one aligned slot: every IO
            # tensor gets an address of its own (the runtime keys its IO views by address).
            segment, offset = Segment.IO, align_up(io_end, alignment)
            size = align_up(max(nbytes, 1), alignment)
            io_end = offset + size
        else:
            buf = plan.buffers[prog.root(v)]
            segment, offset, lane, size = Segment.ARENA, buf.offset, buf.lane, buf.size
            first, last = buf.first_use, buf.last_use
        tensors.append(
            TensorInfo(
                id=ids[v],
                name=v,
                shape=t.shape,
                dtype=device_dtype(t.dtype, v),
                role=role,
                segment=segment,
                lane=lane,
                offset=offset,
                size=size,
                alignment=alignment,
                first_use=first,
                last_use=max(first, last),
            )
        )
    consts.extend(b"\0" * (align_up(len(consts), CONST_ALIGNMENT) - len(consts)))
    ops = tuple(
        OpRecord(
            index=s.index,
            op=s.op,
            inputs=tuple(ids[v] for v in s.inputs),
            outputs=tuple(ids[v] for v in s.outputs),
            attrs=s.attrs,
            stream=sched.lanes[s.index],
            deps=sched.deps[s.index],
            name=s.name,
            layout=ExecLayout.NHWC if s.layout == "NHWC" else ExecLayout.NCHW,
        )
        for s in prog.steps
    )
    meta = {
        "producer": "refstack-compiler",
        "model": graph.name,
        "naive_bytes": str(plan.naive_bytes),
        "lower_bound_bytes": str(plan.lower_bound_bytes),
        **(metadata or {}),
    }
    exe = Executable(
        version=FORMAT_VERSION,
        tensors=tuple(tensors),
        ops=ops,
        consts=bytes(consts),
        inputs=tuple(ids[v] for v in graph.inputs),
        outputs=tuple(ids[v] for v in graph.outputs),
        arena_sizes=plan.arena_sizes,
        metadata=tuple(sorted(meta.items())),
    )
    try:
        exe.validate()
    except ExecutableFormatError as err:
        raise EmitError(
            f"emitted Executable is invalid: {err.message}", field=getattr(err, "field", None)
        ) from err
    return exe
