"""Loading: bytes/file -> validated Executable -> device image (memory, constants, commands).

Everything that does not depend on the input values happens here, once per model:

1. read and validate the Executable (magic, version, checksum, bounds, records);
2. allocate, through one UMD session, one scratch arena per stream lane, one IO buffer and
   one const buffer, and upload the const segment;
3. turn every op into a UMD ``OpRequest`` (addresses = buffer base + planned offset) and
   translate them all in one ``translate_batch``;
4. group the translated ops into per-stream command buffers (:mod:`stack.runtime.scheduler`).

A run then only writes inputs, submits the prepared groups and reads outputs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from stack.errors import UmdError
from stack.runtime.errors import ModelLoadError
from stack.runtime.executable import Executable, OpRecord, Segment, TensorInfo
from stack.runtime.opcodes import LAYOUT_OPERANDS, UMD_DTYPES, UMD_LAYOUTS, UMD_OPS
from stack.runtime.scheduler import Schedule, build_schedule
from stack.umd import Layout, OpRequest, TensorDesc, Translated
from stack.umd.protocol import SessionApi

#: Alignment of every buffer the runtime allocates (covers every planned tensor alignment).
BUFFER_ALIGN = 256


def read_executable(source: Executable | bytes | bytearray | Path | str) -> Executable:
    """The Executable in ``source``; ModelLoadError if a file cannot be read,
    ExecutableFormatError if its contents are malformed."""
    if isinstance(source, Executable):
        source.validate()
        return source
    if isinstance(source, Path | str):
        try:
            data = Path(source).read_bytes()
        except OSError as exc:
            raise ModelLoadError(
                f"cannot read {source}: {exc.strerror}", path=str(source)
            ) from None
        return Executable.from_bytes(data)
    return Executable.from_bytes(bytes(source))


@dataclass(frozen=True, slots=True)
class DeviceImage:
    """A model resident on the device: its buffers, prepared commands and schedule.

    ``arenas``/``io_base``/``const_base`` are base addresses in the model's session;
    ``commands[g]`` holds the translated ops of group ``g`` of ``schedule``. Translations that
    carry conversion scratch can be submitted once only (the UMD frees the scratch when they
    complete): ``retranslate[g]`` lists ``(position in group, op index)`` of those, which the
    executor translates afresh from ``requests`` after their first use. ``cmdbufs[g]`` is the
    UMD command buffer recorded for group ``g`` (validated and bound once, executed each run),
    None for a group holding such translations (it is submitted instead).
    """

    exe: Executable
    arenas: tuple[int, ...]
    io_base: int
    const_base: int
    streams: tuple[int, ...]
    schedule: Schedule
    commands: tuple[tuple[Translated, ...], ...]
    requests: tuple[OpRequest, ...]
    retranslate: tuple[tuple[tuple[int, int], ...], ...]
    cache_hits: int
    cmdbufs: tuple[int | None, ...] = ()

    def addr(self, t: TensorInfo) -> int:
        """Device address of tensor ``t``."""
        if t.segment is Segment.ARENA:
            return self.arenas[t.lane] + t.offset
        if t.segment is Segment.CONST:
            return self.const_base + t.offset
        return self.io_base + t.offset


def _alloc(session: SessionApi, nbytes: int, what: str) -> int:
    try:
        return session.alloc(max(nbytes, 1), BUFFER_ALIGN)
    except UmdError as exc:
        raise ModelLoadError(
            f"cannot allocate the {what} ({nbytes} B): {exc.message}", cause=type(exc).__name__
        ) from exc


def _request(image_addr: Any, exe: Executable, op: OpRecord) -> OpRequest:
    """The UMD request of ``op``: its activation operands (:data:`LAYOUT_OPERANDS`) carry the
    record's layout, every other descriptor ANY."""
    acts_in, acts_out = LAYOUT_OPERANDS.get(op.op, ((), ()))

    def desc(tid: int, activation: bool) -> TensorDesc:
        t = exe.tensors[tid]
        layout = UMD_LAYOUTS[op.layout] if activation and len(t.shape) == 4 else Layout.ANY
        return TensorDesc(image_addr(t), t.shape, UMD_DTYPES[t.dtype], layout)

    return OpRequest(
        UMD_OPS[op.op],
        tuple(desc(t, i in acts_in) for i, t in enumerate(op.inputs)),
        tuple(desc(t, j in acts_out) for j, t in enumerate(op.outputs)),
        op.attrs,
    )


def build_image(session: SessionApi, exe: Executable, n_streams: int) -> DeviceImage:
    """Allocate, upload and translate ``exe`` in ``session`` (which the caller owns and closes,
    freeing everything allocated here, also when this raises ModelLoadError)."""
    arenas = tuple(
        _alloc(session, size, f"arena of lane {i}") for i, size in enumerate(exe.arena_sizes)
    )
    io_base = _alloc(session, exe.io_size, "IO buffer")
    const_base = _alloc(session, len(exe.consts), "const segment")
    try:
        if exe.consts:
            session.write(const_base, np.frombuffer(exe.consts, dtype=np.uint8))
        lanes = max(1, min(n_streams, exe.streams))
        streams = tuple(session.create_stream() for _ in range(lanes))
    except UmdError as exc:
        raise ModelLoadError(f"cannot prepare the device: {exc.message}") from exc
    partial = DeviceImage(
        exe, arenas, io_base, const_base, streams, Schedule((), ()), (), (), (), 0
    )
    requests = [_request(partial.addr, exe, op) for op in exe.ops]
    try:
        translated = session.translate_batch(requests)
    except UmdError as exc:
        raise ModelLoadError(
            f"the UMD refused an op of the Executable: {exc.message}",
            cause=type(exc).__name__,
            field=exc.details.get("field"),
        ) from exc
    schedule = build_schedule(exe.ops, lanes)
    commands = tuple(tuple(translated[i] for i in g.ops) for g in schedule.groups)
    retranslate = tuple(
        tuple((pos, i) for pos, i in enumerate(g.ops) if translated[i].scratch)
        for g in schedule.groups
    )
    hits = sum(1 for t in translated if t.cache_hit)
    try:
        cmdbufs = tuple(
            None if redo else session.record(ops)
            for ops, redo in zip(commands, retranslate, strict=True)
        )
    except UmdError as exc:
        raise ModelLoadError(f"cannot record the command buffers: {exc.message}") from exc
    return DeviceImage(
        exe,
        arenas,
        io_base,
        const_base,
        streams,
        schedule,
        commands,
        tuple(requests),
        retranslate,
        hits,
        cmdbufs,
    )
