"""Contract YAML files (schema: ``contracts/README.md``) as typed records.

Structural violations (not a mapping, a missing ``contract``/``upper``/``lower``, an id that is
not the file stem, an unknown layer or interface kind, a malformed signature) raise
ContractError carrying ``path:line``. Missing semantic fields (``sync``, ``synchronization``,
``memory``, ``errors``) load as None: reporting them is ``stackmap check``'s job.

Versions: a contract's ``version`` (the interface set's) must be ``major.minor.patch``; its
``schema`` (the file format's, ``1`` = ``1.0.0``) is read by the rule the reference stack uses
for modules and Executables too: another major is refused (ContractError), another minor is
read with a WARNING on logger ``mapper.contracts``, another patch silently.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from mapper.config import StackmapConfig
from mapper.errors import ContractError
from mapper.ingest import yamlines
from mapper.material import ConstantSpec, InterfaceSpec, OpenQuestion
from mapper.model import Location, Param, Signature

INTERFACE_KINDS = frozenset(
    {
        "function",
        "method",
        "class",
        "ioctl",
        "rpc",
        "message",
        "struct",
        "enum",
        "format",
        "constant",
        "module",  # a module used as a whole (imported, its members reached through it)
    }
)
SEMANTIC_FIELDS = ("sync", "synchronization", "memory", "errors")


def declares(symbol: str, name: str) -> bool:
    """Whether an interface whose symbol is ``symbol`` declares the use of the dotted ``name``:
    the same name, a member of it (a class or module interface covers its members), or a
    module or class holding it (importing the module of a declared interface)."""
    return name == symbol or name.startswith(symbol + ".") or symbol.startswith(name + ".")


#: The contract-file format this map reads.
SCHEMA_VERSION = (1, 0, 0)
_SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$")
log = logging.getLogger("mapper.contracts")


@dataclass(frozen=True, slots=True)
class ContractFile:
    id: str
    path: str
    version: str
    upper: str
    lower: str
    interfaces: tuple[InterfaceSpec, ...]
    constants: tuple[ConstantSpec, ...]
    description: str | None = None


def contract_paths(root: Path, config: StackmapConfig) -> list[str]:
    """Repository-relative paths of the contract YAML files, sorted."""
    folder = root / config.contracts
    if not folder.is_dir():
        return []
    found = [p for p in folder.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file()]
    return sorted(p.relative_to(root).as_posix() for p in found)


def load_contracts(root: Path, config: StackmapConfig) -> tuple[ContractFile, ...]:
    """Every contract file under ``config.contracts``; ContractError on the first bad one."""
    return tuple(load_contract(root, config, rel) for rel in contract_paths(root, config))


def load_contract(root: Path, config: StackmapConfig, rel_path: str) -> ContractFile:
    try:
        text = (root / rel_path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ContractError(f"cannot read contract: {exc}", path=rel_path) from exc
    return parse_contract(text, rel_path, (layer.id for layer in config.layers))


def _str(value: Any) -> str | None:
    if value is None:
        return None
    return str(value).strip()


def parse_contract(text: str, rel_path: str, layers: Iterable[str]) -> ContractFile:
    data = yamlines.load(text, path=rel_path, error=ContractError)
    if not isinstance(data, dict):
        raise ContractError("a contract is a YAML mapping", path=rel_path, line=1)
    line = yamlines.line_of(data, 1)

    def need(key: str) -> str:
        value = data.get(key)
        if not isinstance(value, str) or not value:
            raise ContractError(f"missing or non-string {key!r}", path=rel_path, line=line)
        return value

    cid, upper, lower = need("contract"), need("upper"), need("lower")
    _check_schema(data.get("schema", 1), rel_path, line)
    version = str(data.get("version", "0.0.0"))
    if _SEMVER.match(version) is None:
        raise ContractError(
            f"version {version!r} is not major.minor.patch", path=rel_path, line=line
        )
    stem = PurePosixPath(rel_path).stem
    if cid != stem:
        raise ContractError(
            f"contract id {cid!r} differs from file stem {stem!r}", path=rel_path, line=line
        )
    known = list(layers)
    for key, value in (("upper", upper), ("lower", lower)):
        if value not in known:
            raise ContractError(
                f"{key} {value!r} is not a layer; known: {', '.join(known)}",
                path=rel_path,
                line=line,
            )
    raw_ifaces = data.get("interfaces") or []
    raw_consts = data.get("constants") or []
    if not isinstance(raw_ifaces, list) or not isinstance(raw_consts, list):
        raise ContractError("interfaces and constants must be lists", path=rel_path, line=line)
    interfaces = tuple(_interface(e, cid, upper, lower, rel_path) for e in raw_ifaces)
    constants = tuple(_constant(e, cid, rel_path) for e in raw_consts)
    return ContractFile(
        cid,
        rel_path,
        version,
        upper,
        lower,
        interfaces,
        constants,
        _str(data.get("description")),
    )


def _interface(entry: Any, cid: str, upper: str, lower: str, path: str) -> InterfaceSpec:
    line = yamlines.line_of(entry)
    if not isinstance(entry, dict):
        raise ContractError("an interface is a mapping", path=path, line=line)
    iid, kind = entry.get("id"), entry.get("kind")
    if not isinstance(iid, str) or not iid:
        raise ContractError("interface without an id", path=path, line=line)
    if kind not in INTERFACE_KINDS:
        known = ", ".join(sorted(INTERFACE_KINDS))
        raise ContractError(
            f"interface {iid}: kind {kind!r} is not one of {known}", path=path, line=line
        )
    return InterfaceSpec(
        id=iid,
        contract=cid,
        kind=kind,
        symbol=_str(entry.get("symbol")),
        upper=upper,
        lower=lower,
        location=Location(path, line),
        signature=_signature(entry.get("signature"), iid, path, line),
        sync=_str(entry.get("sync")),
        synchronization=_str(entry.get("synchronization")),
        memory=_str(entry.get("memory")),
        errors=_str(entry.get("errors")),
        description=_str(entry.get("description")),
        open_questions=_questions(entry.get("open_questions"), iid, path, line),
    )


def _questions(raw: Any, iid: str, path: str, line: int | None) -> tuple[OpenQuestion, ...]:
    """An interface's ``open_questions``: ``{field, question, reason}`` items, field one of
    :data:`SEMANTIC_FIELDS`."""
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise ContractError(f"interface {iid}: open_questions must be a list", path=path, line=line)
    out = []
    for item in raw:
        where = yamlines.line_of(item, line)
        field = item.get("field") if isinstance(item, dict) else None
        if field not in SEMANTIC_FIELDS or not isinstance(item.get("question"), str):
            raise ContractError(
                f"interface {iid}: an open question needs a question and a field, one of "
                f"{', '.join(SEMANTIC_FIELDS)}",
                path=path,
                line=where,
            )
        out.append(
            OpenQuestion(
                field,
                item["question"].strip(),
                _str(item.get("reason")) or "",
                Location(path, where),
            )
        )
    return tuple(out)


def _literal(value: Any) -> str:
    if value is None:
        return "None"
    if isinstance(value, bool):
        return "True" if value else "False"
    return str(value)


def _signature(raw: Any, iid: str, path: str, line: int | None) -> Signature | None:
    if raw is None:
        return None
    if not isinstance(raw, dict) or not isinstance(raw.get("params", []), list):
        raise ContractError(f"interface {iid}: signature needs a params list", path=path, line=line)
    params: list[Param] = []
    for p in raw.get("params") or []:
        if not isinstance(p, dict) or not isinstance(p.get("name"), str):
            raise ContractError(
                f"interface {iid}: every param needs a name",
                path=path,
                line=yamlines.line_of(p, line),
            )
        default = _literal(p["default"]) if "default" in p else None
        params.append(
            Param(p["name"], _str(p.get("type")), default, str(p.get("kind", "positional")))
        )
    returns = raw.get("returns")
    return Signature(
        tuple(params), None if returns is None else _literal(returns), bool(raw.get("async", False))
    )


def _constant(entry: Any, cid: str, path: str) -> ConstantSpec:
    line = yamlines.line_of(entry)
    if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
        raise ContractError("a constant needs an id", path=path, line=line)
    return ConstantSpec(
        entry["id"],
        cid,
        Location(path, line),
        _str(entry.get("python")),
        _str(entry.get("proto")),
        _str(entry.get("c")),
    )


def _check_schema(raw: Any, rel_path: str, line: int | None) -> None:
    """Apply the version rule to a contract file's ``schema`` (an int N means N.0.0)."""
    text = f"{raw}.0.0" if isinstance(raw, int) and not isinstance(raw, bool) else str(raw)
    m = _SEMVER.match(text)
    if m is None:
        raise ContractError(f"schema {raw!r} is not a version", path=rel_path, line=line)
    found = (int(m[1]), int(m[2]), int(m[3]))
    supported = ".".join(map(str, SCHEMA_VERSION))
    if found[0] != SCHEMA_VERSION[0]:
        raise ContractError(
            f"contract schema {text} is not readable (this map reads {SCHEMA_VERSION[0]}.x)",
            path=rel_path,
            line=line,
        )
    if found[1] != SCHEMA_VERSION[1]:
        log.warning(
            "%s: contract schema %s, this map reads %s: loaded (minor versions differ)",
            rel_path, text, supported,
        )  # fmt: skip
