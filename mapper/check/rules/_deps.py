"""Cross-layer dependencies found in the code: Python imports and calls, C includes and calls.

Each dependency is resolved to the file it lands in; a dependency whose target lies in no
layer, or in the source's own layer, is not cross-layer and is dropped. Computed once per
check run and shared by SM201, SM202 and SM203.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from posixpath import dirname, join, normpath

from mapper.check.facts import Facts, module_path, split_c_name
from mapper.check.resolve import resolve_python
from mapper.ingest.code import ParsedFile
from mapper.model import Language, SymbolKind

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
    bound = dict(parsed.imports)
    out: list[Dependency] = []
    refs = sorted(parsed.references, key=lambda r: (r.kind != "import", r.location.line or 0))
    for ref in refs:
        if ref.kind == "import":
            target = ref.target
        elif ref.kind == "call":
            head, _, rest = ref.target.partition(".")
            module = module_path(facts.modules, bound.get(head, ""))
            if not rest or module is None or module[2]:
                continue  # only calls through an imported module add to what imports show
            target = f"{bound[head]}.{rest}"
        else:
            continue
        split = module_path(facts.modules, target)
        if split is None or split[1] == path:
            continue
        dst_layer = facts.config.layer_of(split[1])
        if dst_layer is None or dst_layer == layer:
            continue
        declared = _declared_python(facts, layer, dst_layer, target)
        out.append(
            Dependency(
                ref.kind, path, layer, ref.location.line, target, split[1], dst_layer, declared
            )
        )
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
    res = resolve_python(facts, target)
    if res is not None:
        names.add(res.name)
    if target.rsplit(".", 1)[-1] in errors:
        return True
    for name in names:
        for sym in symbols:
            if name == sym or name.startswith(sym + ".") or sym.startswith(name + "."):
                return True
    return False


def _header(facts: Facts, src: str, include: str) -> str | None:
    local = normpath(join(dirname(src), include))
    if local in facts.paths:
        return local
    hits = [p for p in facts.paths if p == include or p.endswith("/" + include)]
    layers = {facts.config.layer_of(p) for p in hits}
    return hits[0] if len(layers) == 1 and hits else None


def _c_definitions(facts: Facts) -> dict[str, set[tuple[str, str]]]:
    """C function name → {(layer, path)} of the files defining it (bodies, not prototypes)."""
    if "cdefs" not in facts.cache:
        defs: dict[str, set[tuple[str, str]]] = {}
        for path, layer, parsed in facts.layer_files(*_C_LANGS):
            for sym in parsed.symbols:
                if sym.kind in (SymbolKind.FUNCTION, SymbolKind.KERNEL) and (
                    (sym.end_line or 0) > (sym.location.line or 0)
                ):
                    defs.setdefault(sym.qualname, set()).add((layer, path))
        facts.cache["cdefs"] = defs
    return facts.cache["cdefs"]


def _cfamily(facts: Facts, path: str, layer: str, parsed: ParsedFile) -> list[Dependency]:
    out: list[Dependency] = []
    for ref in parsed.references:
        if ref.kind == "include":
            header = _header(facts, path, ref.target)
            dst = facts.config.layer_of(header) if header else None
            if header is None or dst is None or dst == layer:
                continue
            symbols, _ = _declared_names(facts, layer, dst)
            hparsed = facts.parsed(header)
            defined = {s.qualname for s in hparsed.symbols} if hparsed else set()
            out.append(
                Dependency(
                    "include",
                    path,
                    layer,
                    ref.location.line,
                    ref.target,
                    header,
                    dst,
                    bool(symbols & defined),
                )
            )
        elif ref.kind == "call":
            homes = _c_definitions(facts).get(ref.target, set())
            layers = {lay for lay, _ in homes}
            if len(layers) != 1 or layer in layers:
                continue
            dst, dst_path = next(iter(homes))
            symbols, _ = _declared_names(facts, layer, dst)
            out.append(
                Dependency(
                    "call",
                    path,
                    layer,
                    ref.location.line,
                    ref.target,
                    dst_path,
                    dst,
                    ref.target in symbols,
                )
            )
    return out
