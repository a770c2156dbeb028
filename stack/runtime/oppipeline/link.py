"""The linker: a validated config bound to operators and a device, every shape known and checked.

For each stage, in order: resolve its operator (module, version rule), resolve its precision
policy on the device (refused when unsatisfiable or not offered by the operator), check each
consumed tensor against the shape the stage expects, check that the tensors a merge combines
broadcast, infer the outputs' shapes through the UMD's shape inference and check them against
the shapes the config declares. A mismatch is refused with a
:class:`~stack.runtime.errors.ShapeMismatchError` naming both shapes and the first offending
dimension — never scaled or reshaped silently (seed 004 §3.5).

Connections (seed 004 §3.5): a tensor consumed by several stages is a *branch* (its buffer is
reference-counted and lives until its last consumer finished); a stage combining tensors from
several producers is a *merge* (broadcast); anything else is *linear*.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from stack.errors import UmdError
from stack.runtime.errors import PipelineConfigError, ShapeMismatchError
from stack.runtime.oppipeline.operators import (
    OperatorInfo,
    OperatorSource,
    device_precisions,
    resolve_operator,
    resolve_precision,
)
from stack.runtime.oppipeline.records import (
    Fallback,
    PipelineConfig,
    Shape,
    StageSpec,
)
from stack.umd import DType, OpKind, OpRequest, TensorDesc, operators

#: Ops whose inputs broadcast against each other (a stage of one of them with several
#: producers is a merge).
BROADCASTING = frozenset({OpKind.ADD, OpKind.SUB, OpKind.MUL, OpKind.DIV, OpKind.BINARY})
_FLOATS = frozenset({DType.F16, DType.F32, DType.F64})


class Connection(enum.StrEnum):
    LINEAR = "linear"
    BRANCH = "branch"
    MERGE = "merge"


class ShapeOracle(Protocol):
    """What the linker needs of the UMD: its shape inference (UmdSession.infer_shapes)."""

    def infer_shapes(self, req: OpRequest) -> tuple[tuple[int, ...], ...]: ...


@dataclass(frozen=True, slots=True)
class PipelineTensor:
    """A tensor of the linked pipeline; ``producer`` None: supplied. ``refs``: how many holders
    its buffer has — one per consuming stage, one more when the pipeline returns it."""

    name: str
    shape: tuple[int, ...]
    dtype: DType
    producer: str | None
    consumers: tuple[str, ...]
    returned: bool

    @property
    def refs(self) -> int:
        return len(self.consumers) + int(self.returned)

    @property
    def nbytes(self) -> int:
        return max(math.prod(self.shape) * self.dtype.itemsize, 1)


@dataclass(frozen=True, slots=True)
class LinkedStage:
    spec: StageSpec
    operator: OperatorInfo
    dtype: DType  # what the stage computes in: its precision policy's, else its first input's
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    connection: Connection
    check_nan_inf: bool
    stream: int  # logical stream: equal for stages sharing one


@dataclass(frozen=True, slots=True)
class LinkedPipeline:
    config: PipelineConfig
    device: str  # as the KMD names it: "numpy:cpu", "cupy:0:<GPU name>"
    stages: tuple[LinkedStage, ...]
    tensors: Mapping[str, PipelineTensor]

    def summary(self) -> dict[str, Any]:
        """A JSON-ready description: stages, tensors with shapes and holders, connections."""
        return {
            "name": self.config.name,
            "device": self.device,
            "stages": [
                {
                    "name": s.spec.name, "operator": s.operator.qualified_name,
                    "inputs": list(s.inputs), "outputs": list(s.outputs),
                    "connection": s.connection.value, "dtype": s.dtype.name.lower(),
                    "stream": s.stream, "check_nan_inf": s.check_nan_inf,
                    "fallback": s.spec.fallback.value if s.spec.fallback else None,
                }
                for s in self.stages
            ],
            "tensors": [
                {
                    "name": t.name, "shape": list(t.shape), "dtype": t.dtype.name.lower(),
                    "producer": t.producer, "consumers": list(t.consumers), "refs": t.refs,
                    "connection": Connection.BRANCH.value if len(t.consumers) > 1 else None,
                }
                for t in self.tensors.values()
            ],
            "outputs": list(self.config.outputs),
        }  # fmt: skip


def first_mismatch(produced: tuple[int, ...], expected: Shape) -> int | None:
    """The first dimension where ``produced`` differs from ``expected`` (None entries match
    anything); the rank when only the ranks differ; None when they agree."""
    for i, (p, e) in enumerate(zip(produced, expected, strict=False)):
        if e is not None and p != e:
            return i
    return None if len(produced) == len(expected) else min(len(produced), len(expected))


def _fmt(shape: Shape) -> str:
    return "[" + ", ".join("?" if d is None else str(d) for d in shape) + "]"


def _check_expected(
    stage: StageSpec, field: str, tensor: str, produced: tuple[int, ...], expected: Shape, by: str
) -> None:
    dim = first_mismatch(produced, expected)
    if dim is None:
        return
    if dim < min(len(produced), len(expected)):
        where = f"dimension {dim} is {produced[dim]}, expected {expected[dim]}"
    else:
        where = f"rank is {len(produced)}, expected {len(expected)}"
    raise ShapeMismatchError(
        f"{field}: shape mismatch at stage {stage.name!r}: {tensor} {by} is {_fmt(produced)}, "
        f"the stage expects {_fmt(expected)}: {where}",
        field=field, stage=stage.name, tensor=tensor, produced=produced, expected=expected,
        dim=dim,
    )  # fmt: skip


def _check_merge(stage: StageSpec, shapes: list[tuple[str, tuple[int, ...]]]) -> None:
    """Broadcast the merged tensors pairwise; refuse naming both shapes and the dimension."""
    (acc_name, acc), rest = shapes[0], shapes[1:]
    for j, (name, shape) in enumerate(rest, start=1):
        rank = max(len(acc), len(shape))
        a = (1,) * (rank - len(acc)) + acc
        b = (1,) * (rank - len(shape)) + shape
        for d in range(rank):
            if a[d] != b[d] and 1 not in (a[d], b[d]):
                field = f"{stage.field}.inputs[{j}]"
                raise ShapeMismatchError(
                    f"{field}: merge at stage {stage.name!r} cannot broadcast {acc_name} "
                    f"{_fmt(acc)} with {name} {_fmt(shape)}: dimension {d} is {a[d]} vs {b[d]}",
                    field=field, stage=stage.name, tensor=name, produced=shape, expected=acc,
                    dim=d,
                )  # fmt: skip
        acc = tuple(y if x == 1 else x for x, y in zip(a, b, strict=True))
        acc_name = "their merge"


def link(config: PipelineConfig, oracle: ShapeOracle, source: OperatorSource) -> LinkedPipeline:
    """Bind ``config`` to the operators ``source``'s device runs and to its precisions; every
    shape checked through ``oracle`` (see the module doc). PipelineConfigError /
    ShapeMismatchError name the field."""
    caps = source.capabilities()
    known: dict[str, tuple[tuple[int, ...], DType, str | None]] = {
        s.name: (s.shape, s.dtype, None) for s in config.inputs
    }
    consumers: dict[str, list[str]] = {name: [] for name in known}
    stages: list[LinkedStage] = []
    stream = 0
    for st in config.stages:
        op = resolve_operator(source, st.operator, st.module, st.version, field=st.field)
        ins = [known[u.name] for u in st.inputs]
        dtype = _precision(st, op, ins[0][1], caps)
        for j, (use, (shape, _, producer)) in enumerate(zip(st.inputs, ins, strict=True)):
            by = f"(produced by stage {producer!r})" if producer else "(supplied)"
            if use.shape is not None:
                _check_expected(st, f"{st.field}.inputs[{j}]", use.name, shape, use.shape, by)
            consumers[use.name].append(st.name)
        producers = {p for _, _, p in ins}
        merge = op.op in BROADCASTING and len(st.inputs) > 1 and len(producers) > 1
        if op.op in BROADCASTING and len(st.inputs) > 1:
            _check_merge(st, [(u.name, s) for u, (s, _, _) in zip(st.inputs, ins, strict=True)])
        out_shapes = _infer(oracle, st, op, ins, dtype)
        for j, (use, shape) in enumerate(zip(st.outputs, out_shapes, strict=True)):
            if use.shape is not None:
                _check_expected(st, f"{st.field}.outputs[{j}]", use.name, shape, use.shape,
                                "(inferred)")  # fmt: skip
            known[use.name] = (shape, use.dtype or dtype, st.name)
            consumers[use.name] = []
        if st.fallback is Fallback.IDENTITY:
            _check_identity(st, ins[0], known[st.outputs[0].name])
        if stages and st.constraints.stream_affinity.value == "async_preload":
            stream = max(s.stream for s in stages) + 1
        stages.append(
            LinkedStage(
                st, op, dtype, tuple(u.name for u in st.inputs), tuple(u.name for u in st.outputs),
                Connection.MERGE if merge else Connection.LINEAR,
                op.nan_inf_forbidden or st.constraints.nan_inf == "forbidden", stream,
            )
        )  # fmt: skip
    returned = set(config.outputs)
    tensors = {
        name: PipelineTensor(name, shape, dt, prod, tuple(consumers[name]), name in returned)
        for name, (shape, dt, prod) in known.items()
    }
    return LinkedPipeline(config, caps.device, tuple(stages), tensors)


def _precision(
    st: StageSpec, op: OperatorInfo, first: DType, caps: operators.DeviceCapabilities
) -> DType:
    policy = st.constraints.precision_policy
    if policy is None:
        return first
    field = f"{st.field}.constraints.precision_policy"
    if not op.offers(policy):
        offered = ", ".join(op.precision_policies)
        raise PipelineConfigError(
            f"{field}: operator {op.qualified_name} does not offer {policy} (offers: {offered})",
            field=field,
        )
    dtype = resolve_precision(policy, caps)
    if dtype is None:
        have = ", ".join(device_precisions(caps))
        raise PipelineConfigError(
            f"{field}: {policy} is not satisfiable on the {caps.device} device (it satisfies "
            f"{have})",
            field=field,
        )
    if first not in _FLOATS:
        return first
    if dtype.name.lower() not in op.dtypes:
        takes = ", ".join(sorted(op.dtypes))
        raise PipelineConfigError(
            f"{field}: {policy} runs at {dtype.name.lower()}, which operator "
            f"{op.qualified_name} does not take (takes {takes})",
            field=field,
        )
    return dtype


def _infer(
    oracle: ShapeOracle,
    st: StageSpec,
    op: OperatorInfo,
    ins: list[tuple[tuple[int, ...], DType, str | None]],
    dtype: DType,
) -> tuple[tuple[int, ...], ...]:
    descs = [TensorDesc(0, shape, dtype if dt in _FLOATS else dt) for shape, dt, _ in ins]
    outs = [TensorDesc(0, (), u.dtype or dtype) for u in st.outputs]
    try:
        return oracle.infer_shapes(OpRequest.make(op.op, descs, outs, **dict(st.attrs)))
    except UmdError as exc:
        shown = ", ".join(
            f"{u.name} {_fmt(s)} {d.name.lower()}"
            for u, (s, d, _) in zip(st.inputs, ins, strict=True)
        )
        where = f" ({exc.details['field']})" if exc.details.get("field") else ""
        raise PipelineConfigError(
            f"{st.field}: stage {st.name!r} ({op.qualified_name}) cannot take {shown}: "
            f"{exc.message}{where}",
            field=st.field,
            stage=st.name,
        ) from None


def _check_identity(
    st: StageSpec, src: tuple[tuple[int, ...], DType, str | None], dst: tuple[Any, ...]
) -> None:
    if src[0] != dst[0] or src[1] != dst[1]:
        field = f"{st.field}.fallback"
        raise PipelineConfigError(
            f"{field}: identity cannot stand in for stage {st.name!r}: its first input is "
            f"{_fmt(src[0])} {src[1].name.lower()}, its output {_fmt(dst[0])} "
            f"{dst[1].name.lower()}",
            field=field,
        )
