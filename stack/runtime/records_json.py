"""Executable records <-> the JSON documents of the CODE, PLAN and SYMBOLS segments.

Records are written as positional lists (compact, canonical): an op is
``[op_code, inputs, outputs, [[attr, value], ...], stream, deps]``, followed by its layout code
(:class:`~stack.runtime.opcodes.ExecLayout`, format 2.1) when that is not NCHW — a record of
six items (every 2.0 file's) is NCHW; a tensor is
``[shape, dtype_name, role, segment, lane, offset, size, alignment, first_use, last_use]``.
Names live in the SYMBOLS segment (``ops``/``tensors`` name lists, parallel to the records).
Any shape mismatch while reading raises ExecutableFormatError naming the field.
"""

from __future__ import annotations

from typing import Any

from stack.runtime.errors import ExecutableFormatError
from stack.runtime.executable import (
    AttrValue,
    ExecDType,
    ExecLayout,
    ExecOp,
    Executable,
    OpRecord,
    Segment,
    TensorInfo,
    TensorRole,
)


def _attr_out(value: AttrValue) -> Any:
    if isinstance(value, bool):
        return int(value)
    return list(value) if isinstance(value, tuple) else value


def _attr_in(value: Any, field: str) -> AttrValue:
    if isinstance(value, list):
        if all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            return tuple(int(v) for v in value)
        if all(isinstance(v, int | float) and not isinstance(v, bool) for v in value):
            return tuple(float(v) for v in value)
        raise ExecutableFormatError(f"attribute list of mixed types: {value!r}", field=field)
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ExecutableFormatError(f"attribute value {value!r} unsupported", field=field)
    return value


def records_to_json(exe: Executable) -> tuple[Any, Any, Any]:
    """The CODE, PLAN and SYMBOLS documents of ``exe``."""
    code = {
        "ops": [
            [
                int(ExecOp(op.op)),
                list(op.inputs),
                list(op.outputs),
                [[k, _attr_out(v)] for k, v in op.attrs],
                op.stream,
                list(op.deps),
                *([int(op.layout)] if op.layout is not ExecLayout.NCHW else []),
            ]
            for op in exe.ops
        ]
    }
    plan = {
        "tensors": [
            [
                list(t.shape),
                int(ExecDType(t.dtype)),
                t.role.value,
                t.segment.value,
                t.lane,
                t.offset,
                t.size,
                t.alignment,
                t.first_use,
                t.last_use,
            ]
            for t in exe.tensors
        ],
        "inputs": list(exe.inputs),
        "outputs": list(exe.outputs),
        "arena_sizes": list(exe.arena_sizes),
    }
    symbols = {
        "ops": [op.name for op in exe.ops],
        "tensors": [t.name for t in exe.tensors],
        "metadata": [[k, v] for k, v in exe.metadata],
    }
    return code, plan, symbols


def _ints(value: Any, field: str) -> tuple[int, ...]:
    if not isinstance(value, list) or not all(
        isinstance(v, int) and not isinstance(v, bool) for v in value
    ):
        raise ExecutableFormatError(f"expected a list of integers, got {value!r}", field=field)
    return tuple(value)


def _int(value: Any, field: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise ExecutableFormatError(f"expected an integer, got {value!r}", field=field)
    return value


def _op(i: int, row: Any, name: str) -> OpRecord:
    field = f"ops[{i}]"
    if not isinstance(row, list) or len(row) not in (6, 7):
        raise ExecutableFormatError("op record must be a 6- or 7-item list", field=field)
    kind, inputs, outputs, attrs, stream, deps = row[:6]
    try:
        layout = ExecLayout(row[6]) if len(row) == 7 and type(row[6]) is int else None
    except ValueError:
        layout = None
    if len(row) == 7 and layout is None:
        known = ", ".join(f"{k.value} {k.name}" for k in ExecLayout)
        raise ExecutableFormatError(
            f"unknown layout code {row[6]!r} (known: {known})", field=f"{field}.layout"
        )
    try:
        op = ExecOp(kind) if type(kind) is int else None
    except ValueError:
        op = None
    if op is None:
        known = ", ".join(f"{k.value} {k.name}" for k in ExecOp)
        raise ExecutableFormatError(
            f"unknown op code {kind!r} (known: {known})", field=f"{field}.op"
        )
    if not isinstance(attrs, list) or not all(
        isinstance(a, list) and len(a) == 2 and isinstance(a[0], str) for a in attrs
    ):
        raise ExecutableFormatError("attrs must be [name, value] pairs", field=f"{field}.attrs")
    return OpRecord(
        index=i,
        op=op,
        inputs=_ints(inputs, f"{field}.inputs"),
        outputs=_ints(outputs, f"{field}.outputs"),
        attrs=tuple((k, _attr_in(v, f"{field}.attrs.{k}")) for k, v in attrs),
        stream=_int(stream, f"{field}.stream"),
        deps=_ints(deps, f"{field}.deps"),
        name=name,
        layout=layout or ExecLayout.NCHW,
    )


def _tensor(i: int, row: Any, name: str) -> TensorInfo:
    field = f"tensors[{i}]"
    if not isinstance(row, list) or len(row) != 10:
        raise ExecutableFormatError("tensor record must be a 10-item list", field=field)
    shape, dtype, role, segment, lane, offset, size, alignment, first, last = row
    try:
        if type(dtype) is not int:
            raise ValueError(f"dtype code {dtype!r} is not an int")
        dt = ExecDType(dtype)
        rl = TensorRole(role)
        sg = Segment(segment)
    except (KeyError, ValueError, TypeError) as exc:
        raise ExecutableFormatError(f"bad dtype/role/segment: {exc}", field=field) from None
    return TensorInfo(
        id=i,
        name=name,
        shape=_ints(shape, f"{field}.shape"),
        dtype=dt,
        role=rl,
        segment=sg,
        lane=_int(lane, f"{field}.lane"),
        offset=_int(offset, f"{field}.offset"),
        size=_int(size, f"{field}.size"),
        alignment=_int(alignment, f"{field}.alignment"),
        first_use=_int(first, f"{field}.first_use"),
        last_use=_int(last, f"{field}.last_use"),
    )


def _names(symbols: dict[str, Any], key: str, count: int) -> list[str]:
    names = symbols.get(key)
    if not isinstance(names, list) or len(names) != count:
        raise ExecutableFormatError(
            f"symbol table lists {len(names) if isinstance(names, list) else 'no'} {key} "
            f"names for {count} records",
            field=f"symbols.{key}",
        )
    if not all(isinstance(n, str) for n in names):
        raise ExecutableFormatError("symbol names must be strings", field=f"symbols.{key}")
    return names


def records_from_json(
    version: tuple[int, int, int], code: Any, plan: Any, symbols: Any, consts: bytes
) -> Executable:
    """Rebuild an Executable (not yet validated) from the three documents and the consts."""
    for doc, field in ((code, "code"), (plan, "plan"), (symbols, "symbols")):
        if not isinstance(doc, dict):
            raise ExecutableFormatError(f"{field} segment must hold an object", field=field)
    ops_raw = code.get("ops")
    tensors_raw = plan.get("tensors")
    if not isinstance(ops_raw, list):
        raise ExecutableFormatError("code segment has no op list", field="code.ops")
    if not isinstance(tensors_raw, list):
        raise ExecutableFormatError("plan segment has no tensor list", field="plan.tensors")
    op_names = _names(symbols, "ops", len(ops_raw))
    tensor_names = _names(symbols, "tensors", len(tensors_raw))
    metadata = symbols.get("metadata", [])
    if not isinstance(metadata, list) or not all(
        isinstance(m, list) and len(m) == 2 and all(isinstance(s, str) for s in m) for m in metadata
    ):
        raise ExecutableFormatError("metadata must be [key, value] pairs", field="metadata")
    return Executable(
        version=version,
        tensors=tuple(_tensor(i, r, tensor_names[i]) for i, r in enumerate(tensors_raw)),
        ops=tuple(_op(i, r, op_names[i]) for i, r in enumerate(ops_raw)),
        consts=consts,
        inputs=_ints(plan.get("inputs"), "plan.inputs"),
        outputs=_ints(plan.get("outputs"), "plan.outputs"),
        arena_sizes=_ints(plan.get("arena_sizes"), "plan.arena_sizes"),
        metadata=tuple((k, v) for k, v in metadata),
    )
