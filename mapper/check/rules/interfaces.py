"""SM101 interface-unimplemented and SM102 signature-drift: contract interfaces vs code."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from mapper.check.facts import Facts, module_path
from mapper.check.finding import Finding, Policy, RuleInfo, Severity
from mapper.check.registry import Rule
from mapper.check.resolve import header_end, is_python_name, resolve_python
from mapper.check.rules._common import layer_home, norm_literal, norm_type
from mapper.material import InterfaceSpec
from mapper.model import Location, Signature, Symbol, SymbolKind

_SIGNED = ("function", "method", "rpc")


@dataclass(frozen=True, slots=True)
class Located:
    path: str
    symbol: Symbol | None
    line: int | None
    end_line: int | None


def locate(facts: Facts, spec: InterfaceSpec) -> Located | None:
    """Where the interface's symbol is defined: Python, proto (rpc/message/enum) or C."""
    name = spec.symbol or ""
    if spec.kind == "rpc" or (spec.kind in ("message", "enum") and "::" not in name):
        kinds = {
            "rpc": (SymbolKind.RPC,),
            "message": (SymbolKind.MESSAGE,),
            "enum": (SymbolKind.ENUM,),
        }[spec.kind]
        sym = facts.proto_symbol(name, *kinds)
        if sym is not None:
            return Located(sym.location.path, sym, sym.location.line, sym.end_line)
        if spec.kind == "rpc":
            return None
    if is_python_name(facts, name):
        res = resolve_python(facts, name)
        return None if res is None else Located(res.path, res.symbol, res.line, res.end_line)
    found = facts.c_symbols(name)
    if found:
        best = max(found, key=lambda s: (s.end_line or 0) - (s.location.line or 0))
        return Located(best.location.path, best, best.location.line, best.end_line)
    return None


def _expected_home(facts: Facts, spec: InterfaceSpec) -> Location | None:
    name = spec.symbol or ""
    if spec.kind == "rpc":
        proto = next(iter(facts.protos()), None)
        return Location(proto.path) if proto else None
    split = module_path(facts.modules, name) if is_python_name(facts, name) else None
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
        end = found.line if rpc else header_end(facts, found.path, found.line)
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
