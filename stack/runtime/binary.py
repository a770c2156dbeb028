"""The Executable's binary layout (little-endian), and its encoder and decoder.

::

    header   "<4sHHHHIQ32s" magic b"RSX\\0", major u16, minor u16, patch u16, flags u16,
                            n_segments u32, total_size u64, sha256[32] of the whole file with
                            this field zeroed
    table    n_segments x "<IIQQ"  kind u32 (SegmentKind), alignment u32, offset u64, length u64
    segments CODE    canonical JSON: op records (op name, inputs, outputs, attrs, stream, deps)
             PLAN    canonical JSON: tensor records (the memory plan), io ids, arena sizes
             SYMBOLS canonical JSON: op names, tensor names, metadata
             CONST   raw bytes, file offset aligned to 64

Canonical JSON = sorted keys, no whitespace, UTF-8, so equal Executables give equal bytes.
Decoding checks, in order: header size, magic, version (another major is refused, another minor
read with a warning, another patch silently: :func:`stack.umd.operators.check_version`), segment
table, total size
(truncation), checksum, segment bounds and alignment, then the records themselves.
"""

from __future__ import annotations

import enum
import hashlib
import json
import struct
from typing import Any

from stack.runtime.errors import ExecutableFormatError
from stack.runtime.executable import (
    CONST_ALIGNMENT,
    FORMAT_VERSION,
    Executable,
)
from stack.runtime.records_json import records_from_json, records_to_json
from stack.umd.operators import SemVer, VersionMismatchError, check_version

MAGIC = b"RSX\0"
HEADER = struct.Struct("<4sHHHHIQ32s")
SEGMENT_ENTRY = struct.Struct("<IIQQ")
_CHECKSUM_AT = HEADER.size - 32
_MAX_SEGMENTS = 64


class SegmentKind(enum.IntEnum):
    """Kinds of file segments (values are part of the format)."""

    CODE = 1
    PLAN = 2
    SYMBOLS = 3
    CONST = 4


def _align(value: int, alignment: int) -> int:
    return (value + alignment - 1) // alignment * alignment


def _canonical(obj: Any) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode("utf-8")


def checksum(data: bytes) -> bytes:
    """SHA-256 of ``data`` with the header's checksum field taken as zeros."""
    digest = hashlib.sha256()
    digest.update(data[:_CHECKSUM_AT])
    digest.update(b"\0" * 32)
    digest.update(data[HEADER.size :])
    return digest.digest()


def seal(data: bytes) -> bytes:
    """Return ``data`` with its checksum field recomputed (for tools that patch a file)."""
    return data[:_CHECKSUM_AT] + checksum(data) + data[HEADER.size :]


def encode_executable(exe: Executable, *, flags: int = 0) -> bytes:
    """Validate ``exe`` and lay it out; raises ExecutableFormatError if it is inconsistent."""
    exe.validate()
    code, plan, symbols = records_to_json(exe)
    return assemble(exe.version, code, plan, symbols, bytes(exe.consts), flags=flags)


def assemble(
    version: tuple[int, int, int],
    code: Any,
    plan: Any,
    symbols: Any,
    consts: bytes,
    *,
    flags: int = 0,
) -> bytes:
    """Lay out the four segments (JSON documents made canonical) under a sealed header.

    No validation: :func:`encode_executable` validates first; tools and tests use this to
    write deliberately malformed files.
    """
    payloads = [
        (SegmentKind.CODE, 8, _canonical(code)),
        (SegmentKind.PLAN, 8, _canonical(plan)),
        (SegmentKind.SYMBOLS, 8, _canonical(symbols)),
        (SegmentKind.CONST, CONST_ALIGNMENT, consts),
    ]
    cursor = HEADER.size + SEGMENT_ENTRY.size * len(payloads)
    table, body = [], bytearray()
    for kind, alignment, payload in payloads:
        offset = _align(cursor, alignment)
        body += b"\0" * (offset - cursor)
        body += payload
        table.append(SEGMENT_ENTRY.pack(kind, alignment, offset, len(payload)))
        cursor = offset + len(payload)
    major, minor, patch = version
    header = HEADER.pack(MAGIC, major, minor, patch, flags, len(payloads), cursor, b"\0" * 32)
    return seal(header + b"".join(table) + bytes(body))


def _fail(message: str, field: str, **details: Any) -> ExecutableFormatError:
    return ExecutableFormatError(message, field=field, **details)


def _read_header(data: bytes) -> tuple[tuple[int, int, int], dict[SegmentKind, bytes]]:
    if len(data) < HEADER.size:
        raise _fail(f"file is {len(data)} bytes, shorter than the header", "header")
    magic, major, minor, patch, _flags, n_seg, total, stored = HEADER.unpack_from(data)
    if magic != MAGIC:
        raise _fail(f"bad magic {magic!r}, expected {MAGIC!r}", "magic")
    try:
        check_version("executable", "format", SemVer(major, minor, patch), SemVer(*FORMAT_VERSION))
    except VersionMismatchError:
        raise _fail(
            f"format version {major}.{minor}.{patch} is not readable (this runtime reads "
            f"{FORMAT_VERSION[0]}.x)",
            "version",
            found=f"{major}.{minor}.{patch}",
        ) from None
    if not 0 < n_seg <= _MAX_SEGMENTS:
        raise _fail(f"segment count {n_seg} out of range", "segments")
    table_end = HEADER.size + SEGMENT_ENTRY.size * n_seg
    if total != len(data) or table_end > len(data):
        what = "truncated" if len(data) < max(total, table_end) else "has trailing bytes"
        raise _fail(f"file {what}: {len(data)} bytes, header says {total}", "total_size")
    if checksum(data) != stored:
        raise _fail("checksum mismatch: the file is corrupt", "checksum")
    segments: dict[SegmentKind, bytes] = {}
    for i in range(n_seg):
        kind_raw, alignment, offset, length = SEGMENT_ENTRY.unpack_from(
            data, HEADER.size + i * SEGMENT_ENTRY.size
        )
        try:
            kind = SegmentKind(kind_raw)
        except ValueError:
            raise _fail(f"unknown segment kind {kind_raw}", f"segments[{i}].kind") from None
        name = f"segments.{kind.name.lower()}"
        if kind in segments:
            raise _fail(f"segment {kind.name} appears twice", name)
        if offset < table_end or offset + length > total:
            raise _fail(
                f"segment {kind.name} [{offset}, {offset + length}) lies outside the file "
                f"[{table_end}, {total})",
                name,
            )
        if alignment == 0 or offset % alignment:
            raise _fail(f"segment {kind.name} offset {offset} not {alignment}-aligned", name)
        if kind is SegmentKind.CONST and offset % CONST_ALIGNMENT:
            raise _fail(f"const segment offset {offset} not 64-aligned", "segments.const")
        segments[kind] = data[offset : offset + length]
    missing = [k.name for k in SegmentKind if k not in segments]
    if missing:
        raise _fail(f"missing segments: {', '.join(missing)}", "segments", missing=missing)
    return (major, minor, patch), segments


def decode_executable(data: bytes) -> Executable:
    """Parse and validate; ExecutableFormatError(field=...) on the first defect found."""
    version, segments = _read_header(data)
    docs: dict[SegmentKind, Any] = {}
    for kind in (SegmentKind.CODE, SegmentKind.PLAN, SegmentKind.SYMBOLS):
        try:
            docs[kind] = json.loads(segments[kind].decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise _fail(
                f"{kind.name} segment is not valid JSON: {exc}", kind.name.lower()
            ) from None
    exe = records_from_json(
        version,
        docs[SegmentKind.CODE],
        docs[SegmentKind.PLAN],
        docs[SegmentKind.SYMBOLS],
        segments[SegmentKind.CONST],
    )
    exe.validate()
    return exe
