"""Proto files through protoc (the one bundled in grpcio-tools) and its descriptors.

``parse_proto`` compiles one ``.proto`` into a FileDescriptorSet with source info in a
temporary directory and reads services, rpcs, messages (nested too), fields and enums with
their values from it. Line numbers come from the descriptor's SourceCodeInfo. A file protoc
rejects yields no symbols and a warning carrying protoc's message; an unreadable file raises
IngestError. Synchronous; protoc runs in-process (its stderr is captured for the warning).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from importlib import resources
from pathlib import Path, PurePosixPath

from google.protobuf import descriptor_pb2
from grpc_tools import protoc

from mapper.errors import IngestError
from mapper.ingest.code import ParsedFile, read_text_file
from mapper.model import Language, Location, Param, Reference, Signature, Symbol, SymbolKind

# descriptor field numbers used in SourceCodeInfo paths
_MESSAGE, _ENUM, _SERVICE = 4, 5, 6
_FIELD, _NESTED, _NESTED_ENUM, _VALUE, _METHOD = 2, 3, 4, 2, 2

_LABELS = {
    descriptor_pb2.FieldDescriptorProto.LABEL_REPEATED: "repeated ",
}


def _well_known_include() -> str:
    return str(resources.files("grpc_tools").joinpath("_proto"))


@contextlib.contextmanager
def _captured_stderr(sink: Path) -> Iterator[None]:
    saved = os.dup(2)
    with sink.open("wb") as fh:
        os.dup2(fh.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)


def _compile(root: Path, rel_path: str) -> tuple[descriptor_pb2.FileDescriptorProto | None, str]:
    parent = str(PurePosixPath(rel_path).parent)
    attempts = [
        (str((root / parent).resolve()), PurePosixPath(rel_path).name),
        (str(root.resolve()), rel_path),
    ]
    message = ""
    with tempfile.TemporaryDirectory(prefix="stackmap-protoc-") as tmp:
        out, err = Path(tmp) / "set.pb", Path(tmp) / "stderr.txt"
        for include, name in attempts:
            argv = [
                "protoc",
                f"-I{include}",
                f"-I{_well_known_include()}",
                f"--descriptor_set_out={out}",
                "--include_source_info",
                name,
            ]
            with _captured_stderr(err):
                code = protoc.main(argv)
            message = err.read_text(encoding="utf-8", errors="replace").strip()
            if code == 0 and out.is_file():
                fds = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())
                return (fds.file[-1] if fds.file else None), message
    return None, message or "protoc failed"


def parse_proto(root: Path, rel_path: str) -> ParsedFile:
    """Services, rpcs (``pkg.Service.Rpc``), messages, fields, enums and values of one proto."""
    source = read_text_file(root, rel_path)  # IngestError when unreadable / binary / not UTF-8
    loc = source.count(b"\n")
    try:
        fd, message = _compile(root, rel_path)
    except OSError as exc:
        raise IngestError(f"protoc could not run: {exc}", path=rel_path) from exc
    if fd is None:
        first = message.splitlines()[0] if message else "protoc failed"
        return ParsedFile(rel_path, Language.PROTO, (), (), (f"{rel_path}: {first}",), loc=loc)
    lines = {
        tuple(loc_.path): loc_.span[0] + 1 for loc_ in fd.source_code_info.location if loc_.span
    }
    symbols: list[Symbol] = []
    pkg = fd.package

    def add(qual: str, kind: SymbolKind, path: tuple[int, ...], **kw: object) -> None:
        where = Location(rel_path, lines.get(path))
        symbols.append(Symbol(qual, kind, Language.PROTO, where, **kw))  # type: ignore[arg-type]

    def enum(prefix: str, e: descriptor_pb2.EnumDescriptorProto, path: tuple[int, ...]) -> None:
        qual = f"{prefix}.{e.name}" if prefix else e.name
        add(qual, SymbolKind.ENUM, path)
        for i, v in enumerate(e.value):
            add(f"{qual}.{v.name}", SymbolKind.ENUMERATOR, (*path, _VALUE, i), value=str(v.number))

    def message_(prefix: str, m: descriptor_pb2.DescriptorProto, path: tuple[int, ...]) -> None:
        qual = f"{prefix}.{m.name}" if prefix else m.name
        add(qual, SymbolKind.MESSAGE, path)
        for i, f in enumerate(m.field):
            ftype = _field_type(f)
            add(
                f"{qual}.{f.name}",
                SymbolKind.FIELD,
                (*path, _FIELD, i),
                value=str(f.number),
                signature=Signature((), ftype),
            )
        for i, nested in enumerate(m.nested_type):
            if not nested.options.map_entry:
                message_(qual, nested, (*path, _NESTED, i))
        for i, e in enumerate(m.enum_type):
            enum(qual, e, (*path, _NESTED_ENUM, i))

    for i, m in enumerate(fd.message_type):
        message_(pkg, m, (_MESSAGE, i))
    for i, e in enumerate(fd.enum_type):
        enum(pkg, e, (_ENUM, i))
    for i, s in enumerate(fd.service):
        squal = f"{pkg}.{s.name}" if pkg else s.name
        add(squal, SymbolKind.SERVICE, (_SERVICE, i))
        for j, rpc in enumerate(s.method):
            req = ("stream " if rpc.client_streaming else "") + rpc.input_type.lstrip(".")
            rsp = ("stream " if rpc.server_streaming else "") + rpc.output_type.lstrip(".")
            sig = Signature((Param("request", req),), rsp)
            add(f"{squal}.{rpc.name}", SymbolKind.RPC, (_SERVICE, i, _METHOD, j), signature=sig)
    refs = tuple(
        Reference("import", dep, Location(rel_path, None), None, Language.PROTO)
        for dep in fd.dependency
    )
    return ParsedFile(rel_path, Language.PROTO, tuple(symbols), refs, (), loc=loc)


def _field_type(f: descriptor_pb2.FieldDescriptorProto) -> str:
    if f.type_name:
        name = f.type_name.lstrip(".")
    else:
        name = descriptor_pb2.FieldDescriptorProto.Type.Name(f.type)[5:].lower()
    return _LABELS.get(f.label, "") + name
