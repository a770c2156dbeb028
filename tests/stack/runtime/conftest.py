"""A small Executable builder for runtime tests (no compiler needed) and two reference models.

``ExeBuilder`` lays tensors out the way a memory planner would (arena per lane, IO buffer,
64-byte aligned constants), records lifetimes from the ops and adds cross-stream deps from
the data flow, like the compiler's emitter.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from stack.runtime import ExecDType, ExecOp, Executable, OpRecord, Segment, TensorInfo, TensorRole
from stack.runtime.executable import FORMAT_VERSION


def _align(value: int, alignment: int) -> int:
    return (value + alignment - 1) // alignment * alignment


class ExeBuilder:
    def __init__(self) -> None:
        self.tensors: list[dict[str, Any]] = []
        self.ops: list[dict[str, Any]] = []
        self.consts = bytearray()
        self.arena: dict[int, int] = {}
        self.io = 0
        self.inputs: list[int] = []
        self.outputs: list[int] = []

    def _add(
        self,
        name: str,
        shape: tuple[int, ...],
        dtype: ExecDType,
        role: TensorRole,
        segment: Segment,
        lane: int,
        offset: int,
    ) -> int:
        size = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        self.tensors.append(
            dict(
                name=name,
                shape=tuple(shape),
                dtype=dtype,
                role=role,
                segment=segment,
                lane=lane,
                offset=offset,
                size=size,
            )
        )
        return len(self.tensors) - 1

    def _io(self, name: str, shape: tuple[int, ...], dtype: ExecDType, role: TensorRole) -> int:
        offset = _align(self.io, 64)
        tid = self._add(name, shape, dtype, role, Segment.IO, 0, offset)
        # Like the compiler's emitter: an IO tensor of zero elements still reserves a byte.
        self.tensors[tid]["size"] = max(self.tensors[tid]["size"], 1)
        self.io = offset + self.tensors[tid]["size"]
        return tid

    def input(self, name: str, shape: tuple[int, ...], dtype: ExecDType = ExecDType.F32) -> int:
        self.inputs.append(self._io(name, shape, dtype, TensorRole.INPUT))
        return self.inputs[-1]

    def output(self, name: str, shape: tuple[int, ...], dtype: ExecDType = ExecDType.F32) -> int:
        self.outputs.append(self._io(name, shape, dtype, TensorRole.OUTPUT))
        return self.outputs[-1]

    def const(self, name: str, array: np.ndarray) -> int:
        offset = _align(len(self.consts), 64)
        self.consts += b"\0" * (offset - len(self.consts)) + np.ascontiguousarray(array).tobytes()
        dtype = ExecDType.from_numpy(array.dtype)
        return self._add(name, array.shape, dtype, TensorRole.CONST, Segment.CONST, 0, offset)

    def temp(
        self, name: str, shape: tuple[int, ...], dtype: ExecDType = ExecDType.F32, lane: int = 0
    ) -> int:
        offset = _align(self.arena.get(lane, 0), 64)
        tid = self._add(name, shape, dtype, TensorRole.INTERMEDIATE, Segment.ARENA, lane, offset)
        self.arena[lane] = offset + self.tensors[tid]["size"]
        return tid

    def op(
        self,
        kind: ExecOp,
        inputs: list[int],
        outputs: list[int],
        *,
        stream: int = 0,
        name: str = "",
        **attrs: Any,
    ) -> int:
        self.ops.append(
            dict(
                op=kind,
                inputs=tuple(inputs),
                outputs=tuple(outputs),
                stream=stream,
                name=name or f"{kind.name.lower()}_{len(self.ops)}",
                attrs=tuple(sorted(attrs.items())),
            )
        )
        return len(self.ops) - 1

    def build(self) -> Executable:
        writer: dict[int, int] = {}
        uses: dict[int, list[int]] = {}
        records = []
        for i, o in enumerate(self.ops):
            deps = sorted(
                {
                    writer[t]
                    for t in o["inputs"]
                    if t in writer and self.ops[writer[t]]["stream"] != o["stream"]
                }
            )
            records.append(
                OpRecord(
                    i,
                    o["op"],
                    o["inputs"],
                    o["outputs"],
                    o["attrs"],
                    o["stream"],
                    tuple(deps),
                    o["name"],
                )
            )
            for t in (*o["inputs"], *o["outputs"]):
                uses.setdefault(t, []).append(i)
            for t in o["outputs"]:
                writer[t] = i
        lanes = max(self.arena, default=0) + 1
        tensors = tuple(
            TensorInfo(
                id=i,
                alignment=64,
                first_use=min(uses.get(i, [0])),
                last_use=max(uses.get(i, [0])),
                **t,
            )
            for i, t in enumerate(self.tensors)
        )
        return Executable(
            version=FORMAT_VERSION,
            tensors=tensors,
            ops=tuple(records),
            consts=bytes(self.consts),
            inputs=tuple(self.inputs),
            outputs=tuple(self.outputs),
            arena_sizes=tuple(self.arena.get(lane, 0) for lane in range(lanes)),
            metadata=(("producer", "tests"),),
        )


def conv_residual(
    rng: np.random.Generator,
) -> tuple[Executable, dict[str, np.ndarray], dict[str, np.ndarray]]:
    """x -> Conv3x3(pad 1) -> Relu -> Add(x): the Executable, its inputs, numpy's answer."""
    b = ExeBuilder()
    x = b.input("x", (1, 2, 5, 5))
    weight = rng.standard_normal((2, 2, 3, 3)).astype(np.float32)
    bias = rng.standard_normal(2).astype(np.float32)
    w, bb = b.const("w", weight), b.const("b", bias)
    c, r = b.temp("conv", (1, 2, 5, 5)), b.temp("relu", (1, 2, 5, 5))
    y = b.output("y", (1, 2, 5, 5))
    b.op(
        ExecOp.CONV2D, [x, w, bb], [c], strides=(1, 1), pads=(1, 1, 1, 1), dilations=(1, 1), group=1
    )
    b.op(ExecOp.RELU, [c], [r])
    b.op(ExecOp.ADD, [r, x], [y])
    xv = rng.standard_normal((1, 2, 5, 5)).astype(np.float32)
    padded = np.pad(xv, ((0, 0), (0, 0), (1, 1), (1, 1)))
    conv = np.zeros((1, 2, 5, 5), np.float32)
    for i in range(5):
        for j in range(5):
            patch = padded[0, :, i : i + 3, j : j + 3]
            conv[0, :, i, j] = np.tensordot(weight, patch, axes=([1, 2, 3], [0, 1, 2])) + bias
    return b.build(), {"x": xv}, {"y": np.maximum(conv, 0) + xv}


def two_branches(
    rng: np.random.Generator,
) -> tuple[Executable, dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Two independent GEMM chains on streams 0 and 1, joined by an ADD on stream 0."""
    b = ExeBuilder()
    a = b.input("a", (4, 8))
    w = [rng.standard_normal((8, 8)).astype(np.float32) for _ in range(4)]
    wid = [b.const(f"w{i}", m) for i, m in enumerate(w)]
    t0, t1 = b.temp("l0", (4, 8), lane=0), b.temp("l1", (4, 8), lane=0)
    r0, r1 = b.temp("r0", (4, 8), lane=1), b.temp("r1", (4, 8), lane=1)
    y = b.output("out/sum:0", (4, 8))
    b.op(ExecOp.GEMM, [a, wid[0]], [t0], stream=0)
    b.op(ExecOp.GEMM, [a, wid[2]], [r0], stream=1)
    b.op(ExecOp.GEMM, [t0, wid[1]], [t1], stream=0, relu=1)
    b.op(ExecOp.GEMM, [r0, wid[3]], [r1], stream=1, relu=1)
    b.op(ExecOp.ADD, [t1, r1], [y], stream=0)
    av = rng.standard_normal((4, 8)).astype(np.float32)
    left = np.maximum(av @ w[0] @ w[1], 0)
    right = np.maximum(av @ w[2] @ w[3], 0)
    return b.build(), {"a": av}, {"out/sum:0": left + right}


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(0)


@pytest.fixture
def builder() -> type[ExeBuilder]:
    """The ExeBuilder class (test modules cannot import conftest directly)."""
    return ExeBuilder


Model = tuple[Executable, dict[str, np.ndarray], dict[str, np.ndarray]]


@pytest.fixture
def conv_model(rng: np.random.Generator) -> Model:
    return conv_residual(rng)


@pytest.fixture
def branch_model(rng: np.random.Generator) -> Model:
    return two_branches(rng)
