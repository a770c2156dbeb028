"""SM101 interface-unimplemented and SM102 signature-drift: contract interfaces vs code."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from mapper.check.facts import Facts, module_path
from mapper.check.finding import Finding, Policy, RuleInfo, Severity
from mapper.check.registry import Rule
from mapper.check.rules._common import layer_home, norm_literal, norm_type
from mapper.material import InterfaceSpec
from mapper.model import EdgeKind, Location, Signature, Symbol, SymbolKind
from mapper.query import Map, open_edges

_SIGNED = ("function", "method", "rpc")


@dataclass(frozen=True, slots=True)
class Located:
    path: str
    symbol: Symbol | None
    line: int | None


def implementations(facts: Facts) -> Map:
    """The map's ``implements`` edges (and the nodes they join), read once per check run."""
    if "implements" not in facts.cache:
        facts.cache["implements"] = open_edges(facts.config, (EdgeKind.IMPLEMENTS,))
    found: Map = facts.cache["implements"]
    return found


def locate(facts: Facts, spec: InterfaceSpec) -> Located | None:
    """Where the interface is implemented: the node of its ``implements`` edge on the map
    (ingest resolved the entry's ``symbol``; see :mod:`mapper.ingest.build_contracts`), with
    the symbol as ingest parsed it; a module (a file node) has none. None when unimplemented."""
    edges = implementations(facts).implementations(f"interface:{spec.id}")
    node = implementations(facts).node(edges[0].source) if edges else None
    if node is None or node.path is None:
        return None
    qualname = node.get("qualname")
    sym = facts.symbol_in(node.path, qualname) if isinstance(qualname, str) else None
    return Located(node.path, sym, node.line)


def _expected_home(facts: Facts, spec: InterfaceSpec) -> Location | None:
    name = spec.symbol or ""
    if spec.kind == "rpc":
        proto = next(iter(facts.protos()), None)
        return Location(proto.path) if proto else None
    split = module_path(facts.modules, name) if facts.is_python_name(name) else None
    return Location(split[1]) if split else layer_home(facts, spec.lower)


def _unimplemented(facts: Facts) -> Iterator[Finding]:
    for spec in facts.interfaces():
        if not spec.symbol or locate(facts, spec) is not None:
            continue
        yield SM101.finding(
            f"interface {spec.id} names {spec.symbol!r} ({spec.kind}), which no code defines",
            subject=spec.id,
            layer=spec.lower,
            code=_expected_home(facts, spec),
            map_loc=spec.location,
            map_end=facts.span_end(spec),
            fix=f"implement {spec.symbol} in layer {spec.lower}, or point the contract "
            f"entry {spec.id} at the symbol that implements it now",
        )


def compare(contract: Signature, code: Signature, *, rpc: bool = False) -> list[str]:
    """Human-readable differences between a contract signature and the code's."""
    if rpc:
        return _compare_rpc(contract, code)
    diffs: list[str] = []
    want, have = contract.params, code.params
    for i in range(max(len(want), len(have))):
        w = want[i] if i < len(want) else None
        h = have[i] if i < len(have) else None
        if w is None and h is not None:
            diffs.append(f"the code has an extra parameter {h.name!r}")
            continue
        if h is None and w is not None:
            diffs.append(f"parameter {w.name!r} is missing in the code")
            continue
        assert w is not None and h is not None
        if w.name != h.name:
            diffs.append(f"parameter {i + 1} is {h.name!r} in the code, {w.name!r} in the contract")
        if w.type is not None and norm_type(w.type) != norm_type(h.type):
            diffs.append(
                f"{w.name}: type {h.type or 'unannotated'} in the code, {w.type} in the contract"
            )
        if norm_literal(w.default) != norm_literal(h.default):
            diffs.append(
                f"{w.name}: default {h.default or 'none'} in the code, "
                f"{w.default or 'none'} in the contract"
            )
        if w.kind != "positional" and w.kind != h.kind:
            diffs.append(f"{w.name}: {h.kind} in the code, {w.kind} in the contract")
    if contract.returns is not None and norm_type(contract.returns) != norm_type(code.returns):
        diffs.append(
            f"returns {code.returns or 'unannotated'} in the code, "
            f"{contract.returns} in the contract"
        )
    if contract.is_async != code.is_async:
        diffs.append(
            f"{'async' if code.is_async else 'sync'} def in the code, "
            f"{'async' if contract.is_async else 'sync'} in the contract"
        )
    return diffs


def _short(name: str | None) -> str | None:
    if name is None:
        return None
    words = name.split()
    return " ".join([*words[:-1], words[-1].rsplit(".", 1)[-1]]) if words else name


def _compare_rpc(contract: Signature, code: Signature) -> list[str]:
    diffs: list[str] = []
    want = contract.params[0].type if contract.params else None
    have = code.params[0].type if code.params else None
    if want is not None and _short(want) != _short(have):
        diffs.append(f"request type {have} in the proto, {want} in the contract")
    if contract.returns is not None and _short(contract.returns) != _short(code.returns):
        diffs.append(
            f"response type {code.returns} in the proto, {contract.returns} in the contract"
        )
    return diffs


def _drift(facts: Facts) -> Iterator[Finding]:
    for spec in facts.interfaces():
        if spec.signature is None or spec.kind not in _SIGNED or not spec.symbol:
            continue
        found = locate(facts, spec)
        if found is None or found.symbol is None or found.symbol.signature is None:
            continue
        rpc = found.symbol.kind is SymbolKind.RPC
        diffs = compare(spec.signature, found.symbol.signature, rpc=rpc)
        if not diffs:
            continue
        end = found.line if rpc else _header_end(facts, found.path, found.line)
        yield SM102.finding(
            f"{spec.id} ({spec.symbol}): " + "; ".join(diffs),
            subject=spec.id,
            layer=spec.lower,
            code=Location(found.path, found.line),
            code_end=end,
            map_loc=spec.location,
            map_end=facts.span_end(spec),
            fix=f"make {spec.symbol} match the contract, or update {spec.id} in "
            f"{spec.location.path} (and its knowledge-base page) in the same commit",
        )


SM101 = Rule(
    RuleInfo(
        "SM101",
        "interface-unimplemented",
        Severity.ERROR,
        Policy.HISTORY,
        "A contract interface names a symbol that no code defines.",
        "Implement the symbol, or point the contract entry at the symbol that implements it.",
    ),
    _unimplemented,
)
SM102 = Rule(
    RuleInfo(
        "SM102",
        "signature-drift",
        Severity.ERROR,
        Policy.HISTORY,
        "An implemented interface's signature (parameters, types, defaults, return, "
        "sync/async) differs from its contract.",
        "Change the code or the contract (and its doc page) so both say the same signature.",
    ),
    _drift,
)
RULES = (SM101, SM102)


def _header_end(facts: Facts, path: str, line: int | None) -> int | None:
    """Last line of a ``def`` header starting at ``line`` (parentheses balanced, ends in ':');
    read from the file only for a finding being reported."""
    if line is None:
        return None
    try:
        lines = (facts.root / path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return line
    depth = 0
    for i in range(line - 1, min(len(lines), line + 60)):
        text = lines[i].split("#", 1)[0]
        depth += text.count("(") + text.count("[") - text.count(")") - text.count("]")
        if depth <= 0 and text.rstrip().endswith(":"):
            return i + 1
    return line
