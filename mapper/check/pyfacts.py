"""gRPC facts of a Python file, from what ingest parsed (:mod:`mapper.ingest._python_grpc`):
servicer classes with the request attributes their methods read, and protobuf message use
(constructor keywords). Nothing is parsed again.
"""

from __future__ import annotations

from dataclasses import dataclass

from mapper.ingest._python_grpc import servicer_requests
from mapper.ingest.code import ParsedFile
from mapper.model import SymbolKind

#: Methods and attributes every protobuf message has; reading them is not a field access.
MESSAGE_API = frozenset(
    {
        "ByteSize",
        "Clear",
        "ClearField",
        "CopyFrom",
        "DESCRIPTOR",
        "DiscardUnknownFields",
        "Extensions",
        "FindInitializationErrors",
        "HasExtension",
        "HasField",
        "IsInitialized",
        "ListFields",
        "MergeFrom",
        "MergeFromString",
        "ParseFromString",
        "SerializePartialToString",
        "SerializeToString",
        "SetInParent",
        "UnknownFields",
        "WhichOneof",
    }
)


@dataclass(frozen=True, slots=True)
class ServicerMethod:
    name: str
    line: int
    request: str | None  # name of the request parameter
    reads: tuple[tuple[str, int], ...]  # (attribute, line) read directly off the request


@dataclass(frozen=True, slots=True)
class Servicer:
    path: str
    name: str
    service: str  # "InstructionTranslator" for a base "...InstructionTranslatorServicer"
    line: int
    end_line: int
    methods: tuple[ServicerMethod, ...]


@dataclass(frozen=True, slots=True)
class MessageUse:
    path: str
    message: str  # "TensorDesc" or "Outer.Inner"
    keyword: str
    line: int


def class_bases(parsed: ParsedFile, qualname: str) -> list[str]:
    """The base classes of the class ``qualname``, as written (``pkg.Base``)."""
    return next((list(written) for cls, written in parsed.bases if cls == qualname), [])


def _service(written: tuple[str, ...]) -> str | None:
    names = [b.rsplit(".", 1)[-1] for b in written]
    found = (
        b.removesuffix("Servicer") for b in names if b.endswith("Servicer") and b != "Servicer"
    )
    return next(found, None)


def servicers(parsed: ParsedFile) -> list[Servicer]:
    """The file's top-level classes deriving from a ``<Service>Servicer``, with their methods
    and the request attributes each reads (private names and the message API left out)."""
    reads: dict[str, list[tuple[str, int]]] = {}
    static: set[str] = set()
    for ref in parsed.references:
        if ref.kind == "request_read" and ref.scope and ref.target not in MESSAGE_API:
            reads.setdefault(ref.scope, []).append((ref.target, ref.location.line or 0))
        elif ref.kind == "decorator" and ref.target == "staticmethod" and ref.scope:
            static.add(ref.scope)
    module = parsed.module or ""
    requests = servicer_requests(module, parsed.symbols, parsed.bases, static)
    symbols = {s.qualname: s for s in parsed.symbols}
    out: list[Servicer] = []
    for cls, written in parsed.bases:
        service = _service(written)
        sym = symbols.get(cls)
        if service is None or sym is None or cls.rpartition(".")[0] != module:
            continue
        methods = []
        for method in parsed.symbols:
            if method.kind is not SymbolKind.METHOD or method.qualname.rpartition(".")[0] != cls:
                continue
            found = [
                read
                for scope, items in reads.items()
                if scope == method.qualname or scope.startswith(method.qualname + ".")
                for read in items
            ]
            unique = tuple(sorted(set(found), key=lambda x: (x[1], x[0])))
            name, line = method.qualname.rpartition(".")[2], method.location.line or 0
            methods.append(ServicerMethod(name, line, requests.get(method.qualname), unique))
        line = sym.location.line or 0
        end = sym.end_line or line
        out.append(
            Servicer(parsed.path, cls.rpartition(".")[2], service, line, end, tuple(methods))
        )
    return out


def message_uses(parsed: ParsedFile) -> list[MessageUse]:
    """Keywords of calls ``<x>_pb2.Message(field=...)``, ``<x>_pb2`` a name bound by an import."""
    out = []
    for ref in parsed.references:
        if ref.kind == "message_field":
            message, _, keyword = ref.target.partition(" ")
            out.append(MessageUse(parsed.path, message, keyword, ref.location.line or 0))
    return out
