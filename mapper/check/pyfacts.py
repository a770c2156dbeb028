"""Two Python facts the tree-sitter records do not carry, read with :mod:`ast`:
gRPC servicer classes (their base classes) and protobuf message use (constructor keywords,
attributes read off a request).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from mapper.check.facts import Facts

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
    keywords: tuple[str, ...]
    line: int


def _tree(facts: Facts, path: str) -> ast.Module | None:
    key = f"ast:{path}"
    if key not in facts.cache:
        try:
            facts.cache[key] = ast.parse((facts.root / path).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
            facts.cache[key] = None
    return facts.cache[key]


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr}" if inner else None
    return None


def _reads(fn: ast.FunctionDef | ast.AsyncFunctionDef, param: str) -> tuple[tuple[str, int], ...]:
    out = []
    for node in ast.walk(fn):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == param
            and isinstance(node.ctx, ast.Load)
            and not node.attr.startswith("_")
            and node.attr not in MESSAGE_API
        ):
            out.append((node.attr, node.lineno))
    return tuple(sorted(set(out), key=lambda x: x[1]))


def class_bases(facts: Facts, path: str, name: str) -> list[str]:
    """The base classes of the top-level class ``name``, as written (``pkg.Base``)."""
    tree = _tree(facts, path)
    for node in tree.body if tree else []:
        if isinstance(node, ast.ClassDef) and node.name == name:
            return [d for d in (_dotted(b) for b in node.bases) if d]
    return []


def servicers(facts: Facts, path: str) -> list[Servicer]:
    tree = _tree(facts, path)
    out: list[Servicer] = []
    for node in tree.body if tree else []:
        if not isinstance(node, ast.ClassDef):
            continue
        bases = [(_dotted(b) or "").rsplit(".", 1)[-1] for b in node.bases]
        service = next(
            (
                b.removesuffix("Servicer")
                for b in bases
                if b.endswith("Servicer") and b != "Servicer"
            ),
            None,
        )
        if service is None:
            continue
        methods = []
        for item in node.body:
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                args = [a.arg for a in item.args.args]
                request = args[1] if len(args) > 1 else None
                reads = _reads(item, request) if request else ()
                methods.append(ServicerMethod(item.name, item.lineno, request, reads))
        end = node.end_lineno or node.lineno
        out.append(Servicer(path, node.name, service, node.lineno, end, tuple(methods)))
    return out


def message_uses(facts: Facts, path: str) -> list[MessageUse]:
    """Calls ``<x>_pb2.Message(field=...)`` where ``<x>_pb2`` is a name bound by an import."""
    tree = _tree(facts, path)
    if tree is None:
        return []
    modules: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if alias.name.rsplit(".", 1)[-1].endswith("_pb2"):
                    modules.add(alias.asname or alias.name.rsplit(".", 1)[-1])
    out: list[MessageUse] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = _dotted(node.func)
        if not name or "." not in name:
            continue
        head, _, message = name.partition(".")
        if head in modules and message[:1].isupper():
            keywords = tuple(k.arg for k in node.keywords if k.arg)
            out.append(MessageUse(path, message, keywords, node.lineno))
    return out
