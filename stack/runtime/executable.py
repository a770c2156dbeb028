"""The Executable: what the compiler emits and the runtime loads (seed 003 §4.2).

An Executable holds

* the **code segment** — :class:`OpRecord` s the UMD can translate (op kind, tensor ids,
  attributes), each with its stream lane and the ops it depends on (the dependency graph:
  ``deps`` point to earlier ops only, so the graph is acyclic by construction);
* the **const segment** — raw bytes of every constant, each at a 64-byte aligned offset;
* the **memory plan** — one :class:`TensorInfo` per tensor with its segment, lane, offset,
  size, alignment and lifetime (first/last op index using it);
* the **symbol table** — op and tensor names, and free-form metadata.

The binary layout (``to_bytes``/``from_bytes``, see :mod:`stack.runtime.binary`) is a versioned
header (magic ``b"RSX\\0"``), a segment table, and a SHA-256 checksum. Records are immutable;
:meth:`Executable.validate` checks every cross-reference and raises
:class:`~stack.runtime.errors.ExecutableFormatError` naming the bad ``field``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from stack.runtime.opcodes import ExecDType, ExecLayout, ExecOp

#: An attribute value, as in UMD requests.
AttrValue = int | float | str | tuple[int, ...] | tuple[float, ...]

#: Format version written by this code: (major, minor, patch). A reader refuses another major,
#: reads another minor with a warning (minors only add optional fields) and another patch silently.
#: 2.1: an op record may carry its activation layout (:class:`ExecLayout`; absent: NCHW).
FORMAT_VERSION: tuple[int, int, int] = (2, 1, 0)

#: Alignment of the const segment in the file and of every constant inside it.
CONST_ALIGNMENT = 64


class TensorRole(enum.StrEnum):
    """What a tensor is to the model."""

    INPUT = "input"
    OUTPUT = "output"
    CONST = "const"
    INTERMEDIATE = "intermediate"


class Segment(enum.StrEnum):
    """Where a tensor lives on the device.

    ``ARENA``: the scratch arena of its ``lane`` (offset inside that arena). ``CONST``: the
    const segment (offset inside ``Executable.consts``). ``IO``: the model's IO buffer, which
    the runtime fills with inputs and reads outputs from (offset inside that buffer).
    """

    ARENA = "arena"
    CONST = "const"
    IO = "io"


@dataclass(frozen=True, slots=True)
class TensorInfo:
    """One tensor of the memory plan. ``first_use``/``last_use`` are op indices."""

    id: int
    name: str
    shape: tuple[int, ...]
    dtype: ExecDType
    role: TensorRole
    segment: Segment
    lane: int
    offset: int
    size: int
    alignment: int
    first_use: int
    last_use: int

    @property
    def nbytes(self) -> int:
        """Bytes the tensor's elements occupy (``size`` may be larger, for padding)."""
        count = 1
        for dim in self.shape:
            count *= dim
        return count * ExecDType(self.dtype).itemsize


@dataclass(frozen=True, slots=True)
class OpRecord:
    """One op of the code segment: run ``op`` on tensors ``inputs`` -> ``outputs``.

    ``attrs`` are sorted by name (UMD attribute names); ``stream`` is the lane it is scheduled
    on; ``deps`` are indices of earlier ops that must finish first (beyond same-stream order);
    ``layout`` is the layout of its 4-D activations (format 2.1; NCHW when a file has none).
    """

    index: int
    op: ExecOp
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    attrs: tuple[tuple[str, AttrValue], ...]
    stream: int
    deps: tuple[int, ...]
    name: str = ""
    layout: ExecLayout = ExecLayout.NCHW

    def attr_dict(self) -> dict[str, AttrValue]:
        """The attributes as a dict."""
        return dict(self.attrs)


@dataclass(frozen=True, slots=True)
class Executable:
    """A compiled model. Immutable; serialise with :meth:`to_bytes`, read with :meth:`from_bytes`.

    ``inputs``/``outputs`` are tensor ids (in signature order); ``arena_sizes`` gives the bytes of
    each lane's scratch arena; ``metadata`` is free-form (producer, model name, ...).
    """

    version: tuple[int, int, int]
    tensors: tuple[TensorInfo, ...]
    ops: tuple[OpRecord, ...]
    consts: bytes
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    arena_sizes: tuple[int, ...]
    metadata: tuple[tuple[str, str], ...] = ()

    def to_bytes(self) -> bytes:
        """Validate and serialise; raises ExecutableFormatError if the records are inconsistent."""
        from stack.runtime.binary import encode_executable

        return encode_executable(self)

    @classmethod
    def from_bytes(cls, data: bytes | bytearray | memoryview) -> Executable:
        """Parse and validate; raises ExecutableFormatError(field=...) on any defect."""
        from stack.runtime.binary import decode_executable

        return decode_executable(bytes(data))

    def validate(self) -> None:
        """Check every cross-reference (bounds, alignment, ids, deps); raise on the first defect."""
        from stack.runtime.validate import validate_executable

        validate_executable(self)

    def tensor(self, name: str) -> TensorInfo:
        """The tensor called ``name``; KeyError if none."""
        for info in self.tensors:
            if info.name == name:
                return info
        raise KeyError(name)

    @property
    def input_tensors(self) -> tuple[TensorInfo, ...]:
        """The model inputs, in signature order."""
        return tuple(self.tensors[i] for i in self.inputs)

    @property
    def output_tensors(self) -> tuple[TensorInfo, ...]:
        """The model outputs, in signature order."""
        return tuple(self.tensors[i] for i in self.outputs)

    @property
    def streams(self) -> int:
        """Number of stream lanes the ops use (at least 1)."""
        return max((op.stream for op in self.ops), default=0) + 1

    @property
    def io_size(self) -> int:
        """Bytes of the IO buffer: the end of the furthest IO tensor."""
        return max((t.offset + t.size for t in self.tensors if t.segment is Segment.IO), default=0)
