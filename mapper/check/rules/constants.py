"""SM601 constant-mismatch: a contract ``constants`` entry names one value set in up to three
languages (a Python IntEnum, a proto enum, a C header prefix); names and values must agree.

Names are compared upper-case with the language's prefix removed: the C prefix given in the
contract (``REFSTACK_DTYPE_``), the proto enum's name in UPPER_SNAKE (``DATA_TYPE_``) or else
the prefix all its value names share (``DT_``). A
zero-valued ``UNSPECIFIED``/``UNKNOWN``/``INVALID``/``NONE`` on any side, and C sentinels
(``COUNT``, ``MAX``, ``NUM``, ``LAST``), are allowed extras.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass

from mapper.check.facts import Facts
from mapper.check.finding import Finding, Policy, RuleInfo, Severity
from mapper.check.registry import Rule
from mapper.material import ConstantSpec
from mapper.model import Location, SymbolKind

_ZERO_EXTRAS = {"UNSPECIFIED", "UNKNOWN", "INVALID", "NONE"}
_C_SENTINELS = {"COUNT", "MAX", "NUM", "LAST"}
_PRIORITY = ("proto", "python", "c")  # the reference first: the proto is part of the map


@dataclass(frozen=True, slots=True)
class Side:
    lang: str
    where: Location  # the enum / header itself
    values: dict[str, tuple[int, Location]]


def _int(text: str | None) -> int | None:
    if text is None:
        return None
    cleaned = re.sub(r"(?<=[0-9a-fA-F])[uUlL]+\b", "", text.strip())
    try:
        value = ast.literal_eval(cleaned)
    except (ValueError, SyntaxError):
        return None
    return value if isinstance(value, int) else None


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).upper() + "_"


def _python(facts: Facts, name: str) -> Side | None:
    res = facts.definition(name)
    if res is None or res.symbol is None:
        return None
    parsed = facts.parsed(res.path)
    values = {}
    for sym in parsed.symbols if parsed else ():
        head, _, member = sym.qualname.rpartition(".")
        if head == res.name and sym.kind is SymbolKind.CONSTANT and _int(sym.value) is not None:
            values[member.upper()] = (_int(sym.value) or 0, sym.location)
    return Side("python", Location(res.path, res.symbol.location.line), values)


def _proto(facts: Facts, ref: str) -> Side | None:
    path, _, enum = ref.partition(":")
    parsed = facts.parsed(path)
    if parsed is None:
        return None
    target = next(
        (
            s
            for s in parsed.symbols
            if s.kind is SymbolKind.ENUM and (s.qualname == enum or s.qualname.endswith("." + enum))
        ),
        None,
    )
    if target is None:
        return None
    members = [
        s
        for s in parsed.symbols
        if s.kind is SymbolKind.ENUMERATOR and s.qualname.rpartition(".")[0] == target.qualname
    ]
    names = [s.qualname.rpartition(".")[2] for s in members]
    prefix = enum_prefix(target.qualname.rsplit(".", 1)[-1], names)
    values = {}
    for sym, member in zip(members, names, strict=True):
        values[member[len(prefix) :].upper()] = (_int(sym.value) or 0, sym.location)
    return Side("proto", target.location, values)


def enum_prefix(enum: str, names: list[str]) -> str:
    """The prefix every value name of a proto enum carries: the enum's name in UPPER_SNAKE
    (``DATA_TYPE_``) or, failing that, the common prefix up to an underscore (``DT_``)."""
    common = names[0] if names else ""
    for name in names:
        while not name.startswith(common):
            common = common[:-1]
    for prefix in (_snake(enum), common.rpartition("_")[0] + "_"):
        if prefix != "_" and names and all(n.startswith(prefix) and n != prefix for n in names):
            return prefix
    return ""


def _c(facts: Facts, ref: str) -> Side | None:
    path, _, prefix = ref.partition(":")
    parsed = facts.parsed(path)
    if parsed is None:
        return None
    values = {}
    for sym in parsed.symbols:
        kind_ok = sym.kind in (SymbolKind.MACRO, SymbolKind.ENUMERATOR)
        if kind_ok and sym.qualname.startswith(prefix):
            value = _int(sym.value)
            name = sym.qualname[len(prefix) :].upper()
            if value is not None and name not in _C_SENTINELS:
                values[name] = (value, sym.location)
    return Side("c", Location(path), values)


def _sides(facts: Facts, spec: ConstantSpec) -> tuple[list[Side], list[str]]:
    sides, missing = [], []
    for lang, ref, load in (
        ("proto", spec.proto, _proto),
        ("python", spec.python, _python),
        ("c", spec.c, _c),
    ):
        if not ref:
            continue
        side = load(facts, ref)
        (sides.append(side) if side is not None else missing.append(f"{lang} {ref}"))
    return sides, missing


def _mismatches(facts: Facts) -> Iterator[Finding]:
    for contract in facts.contracts:
        for spec in contract.constants:
            sides, missing = _sides(facts, spec)
            for what in missing:
                yield SM601.finding(
                    f"constants {spec.id}: {what} does not exist",
                    subject=f"{spec.id}:source:{what}",
                    map_loc=spec.location,
                    code=Location(what.split(" ", 1)[1].split(":")[0]) if "/" in what else None,
                )
            yield from _compare(spec, sides)


def _compare(spec: ConstantSpec, sides: list[Side]) -> Iterator[Finding]:
    if len(sides) < 2:
        return
    names = sorted({n for s in sides for n in s.values})
    for name in names:
        have = {s.lang: s.values[name] for s in sides if name in s.values}
        if len(have) < len(sides):
            if all(v == 0 and name in _ZERO_EXTRAS for v, _ in have.values()):
                continue
            odd = [s for s in sides if name not in s.values]
            detail = ", ".join(f"{lang} = {v}" for lang, (v, _) in have.items())
            message = f"{name} is missing in {'/'.join(s.lang for s in odd)} ({detail})"
            yield _finding(spec, name, message, odd[0].where, have, odd[0].lang)
            continue
        values = {lang: v for lang, (v, _) in have.items()}
        if len(set(values.values())) == 1:
            continue
        counts = {v: list(values.values()).count(v) for v in values.values()}
        odd_lang = next(
            (
                lang
                for lang in _PRIORITY[::-1]
                if lang in values and counts[values[lang]] == 1 and max(counts.values()) > 1
            ),
            next(lang for lang in _PRIORITY[::-1] if lang in values),
        )
        detail = ", ".join(f"{lang} = {v}" for lang, v in values.items())
        yield _finding(spec, name, f"{name} disagrees: {detail}", have[odd_lang][1], have, odd_lang)


def _finding(
    spec: ConstantSpec,
    name: str,
    message: str,
    code: Location,
    have: dict[str, tuple[int, Location]],
    odd: str,
) -> Finding:
    ref = next((lang for lang in _PRIORITY if lang in have and lang != odd), None)
    map_loc = have["proto"][1] if ref == "proto" else spec.location
    if odd == "proto":  # the map disagrees with the code: show a code side as the code location
        code = next(loc for lang, (_, loc) in have.items() if lang != "proto")
        map_loc = have["proto"][1] if "proto" in have else spec.location
    return SM601.finding(
        f"constants {spec.id}: {message}",
        subject=f"{spec.id}:{name}",
        code=code,
        map_loc=map_loc,
        fix=f"make {name} the same in every language listed by {spec.id} "
        f"({spec.location.path}); the values are ABI",
    )


SM601 = Rule(
    RuleInfo(
        "SM601",
        "constant-mismatch",
        Severity.ERROR,
        Policy.HISTORY,
        "Shared constants (an enum in the proto, a Python IntEnum, a C header) disagree.",
        "Make the name→value maps identical in every language the contract lists.",
    ),
    _mismatches,
)
RULES = (SM601,)
