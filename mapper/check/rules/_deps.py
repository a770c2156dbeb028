"""Cross-layer dependencies found in the code: Python imports and calls, C includes and calls.

Each dependency is resolved to the file it lands in; a dependency whose target lies in no
layer, or in the source's own layer, is not cross-layer and is dropped. Computed once per
check run and shared by SM201, SM202 and SM203.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mapper.check.facts import Facts, split_c_name
from mapper.ingest.code import ParsedFile
from mapper.ingest.contracts import declares
from mapper.model import Language

_ERROR_NAME = re.compile(r"\b([A-Z][A-Za-z0-9]*(?:Error|Exception|Fault|Timeout))\b")
_C_LANGS = (Language.C, Language.CPP, Language.CUDA)


@dataclass(frozen=True, slots=True)
class Dependency:
    kind: str  # import | call | include
    src_path: str
    src_layer: str
    line: int | None
    target: str  # Python dotted name, C function name, or header path as written
    dst_path: str
    dst_layer: str
    declared: bool

    @property
    def subject(self) -> str:
        return f"{self.src_path}->{self.target}"


def dependencies(facts: Facts) -> tuple[Dependency, ...]:
    """The first use of each (file, target): what a file depends on."""
    cached = facts.cache.get("deps")
    if cached is None:
        seen: set[tuple[str, str]] = set()
        first: list[Dependency] = []
        for dep in dependency_sites(facts):
            if (dep.src_path, dep.target) not in seen:
                seen.add((dep.src_path, dep.target))
                first.append(dep)
        cached = facts.cache["deps"] = tuple(first)
    return cached


def undeclared_adjacent(facts: Facts) -> dict[tuple[str, str], list[Dependency]]:
    """(layer, target) → the first use of ``target`` in each file of ``layer``, for each symbol
    of the layer directly below that no contract between the two declares (C includes left
    out: a header is declared through what it defines). What SM201 reports, one finding per
    key; what ``stackmap init --contracts`` drafts beside the interfaces the map discovers."""
    uses: dict[tuple[str, str], list[Dependency]] = {}
    for dep in dependencies(facts):
        gap = facts.config.layer_index(dep.dst_layer) - facts.config.layer_index(dep.src_layer)
        if gap != 1 or dep.declared or dep.kind == "include":
            continue
        uses.setdefault((dep.src_layer, dep.target), []).append(dep)
    return dict(sorted(uses.items()))


def dependency_sites(facts: Facts) -> tuple[Dependency, ...]:
    """Every use site, in file then source order: the count and places of a dependency."""
    cached = facts.cache.get("dep_sites")
    if cached is None:
        cached = facts.cache["dep_sites"] = tuple(_collect(facts))
    return cached


def _collect(facts: Facts) -> list[Dependency]:
    out: list[Dependency] = []
    for path, layer, parsed in facts.layer_files():
        out.extend(
            _python(facts, path, layer, parsed)
            if parsed.language is Language.PYTHON
            else (_cfamily(facts, path, layer, parsed))
        )
    return out


def _python(facts: Facts, path: str, layer: str, parsed: ParsedFile) -> list[Dependency]:
    """Imports, and calls through an imported module, landing in another layer's file (the
    file as the ingest resolver finds it for the map's ``imports`` edges)."""
    resolver = facts.resolver()
    bound = dict(parsed.imports)
    out: list[Dependency] = []
    refs = sorted(parsed.references, key=lambda r: (r.kind != "import", r.location.line or 0))
    for ref in refs:
        if ref.kind == "import":
            target = ref.target
        elif ref.kind == "call":
            head, _, rest = ref.target.partition(".")
            if not rest or bound.get(head) not in resolver.modules:
                continue  # only calls through an imported module add to what imports show
            rest = rest.partition("(")[0].rstrip(".")  # mod.Cls().meth: what mod provides is Cls
            target = f"{bound[head]}.{rest}"
        else:
            continue
        dst_path = resolver.module_file(target)
        dst_layer = facts.config.layer_of(dst_path) if dst_path else None
        if dst_path is None or dst_path == path or dst_layer is None or dst_layer == layer:
            continue
        declared = _declared_python(facts, layer, dst_layer, target)
        line = ref.location.line
        out.append(Dependency(ref.kind, path, layer, line, target, dst_path, dst_layer, declared))
    return out


def _declared_names(facts: Facts, upper: str, lower: str) -> tuple[set[str], set[str]]:
    """(interface symbols, exception names) the contracts from ``upper`` to ``lower`` declare."""
    key = f"declared:{upper}:{lower}"
    if key not in facts.cache:
        symbols: set[str] = set()
        errors: set[str] = set()
        for contract in facts.contract_between(upper, lower):
            for spec in contract.interfaces:
                if spec.symbol:
                    symbols.add(spec.symbol)
                    symbols.add(split_c_name(spec.symbol)[1])
                errors.update(_ERROR_NAME.findall(spec.errors or ""))
        facts.cache[key] = (symbols, errors)
    return facts.cache[key]


def _declared_python(facts: Facts, upper: str, lower: str, target: str) -> bool:
    symbols, errors = _declared_names(facts, upper, lower)
    names = {target}
    res = facts.definition(target)
    if res is not None:
        names.add(res.name)
    if target.rsplit(".", 1)[-1] in errors:
        return True
    for name in names:
        for sym in symbols:
            if declares(sym, name):
                return True
    return False


def _cfamily(facts: Facts, path: str, layer: str, parsed: ParsedFile) -> list[Dependency]:
    """Includes and calls, resolved by the ingest resolver as the map's ``imports`` and
    ``calls`` edges are; a call counts when it lands in a definition with a body."""
    resolver = facts.resolver()
    out: list[Dependency] = []
    for ref in parsed.references:
        if ref.kind == "include":
            dst_path = resolver.import_file(parsed, ref)
            hparsed = facts.parsed(dst_path) if dst_path else None
            defined = {s.qualname for s in hparsed.symbols} if hparsed else set()
        elif ref.kind == "call":
            found = resolver.call(parsed, ref)
            sym = found[0] if found else None
            if sym is None or (sym.end_line or 0) <= (sym.location.line or 0):
                continue
            dst_path, defined = sym.location.path, {ref.target}
        else:
            continue
        dst = facts.config.layer_of(dst_path) if dst_path else None
        if dst_path is None or dst is None or dst == layer:
            continue
        symbols, _ = _declared_names(facts, layer, dst)
        line = ref.location.line
        declared = bool(symbols & defined)
        out.append(Dependency(ref.kind, path, layer, line, ref.target, dst_path, dst, declared))
    return out
