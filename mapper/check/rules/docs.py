"""SM301 doc-dangling-reference and SM302 scenario-step-unresolved: the human map vs the code.

What a page names is checked to exist: front-matter ``symbols``, ``interfaces``, ``paths``,
``upstream``/``downstream`` components, and backticked names in the prose that are clearly
code: repository paths with a known extension (or a trailing ``/``), dotted Python names
rooted in one of the repository's packages, and ``<contract>.<name>`` interface ids. Bare
identifiers (``KmdDevice``) are ambiguous and not checked.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from mapper.check.facts import Facts, module_path
from mapper.check.finding import Classification, Finding, Policy, RuleInfo, Severity
from mapper.check.registry import Rule
from mapper.config import glob_regex
from mapper.ingest.docs import DocPage
from mapper.model import Location, SymbolKind

_PATH = re.compile(r"[A-Za-z0-9_][\w.\-/]*\Z")
_SUFFIXES = (
    ".py",
    ".pyi",
    ".h",
    ".hpp",
    ".c",
    ".cc",
    ".cpp",
    ".cu",
    ".cuh",
    ".proto",
    ".yaml",
    ".yml",
    ".md",
    ".toml",
    ".json",
    ".scm",
    ".sh",
    ".txt",
    ".cfg",
    ".ini",
)


def _fm_line(facts: Facts, page: DocPage, key: str, value: str) -> int:
    try:
        lines = (facts.root / page.path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return 1
    end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), len(lines))
    key_line = next((i for i in range(end) if lines[i].lstrip().startswith(f"{key}:")), None)
    start = key_line or 0
    for i in range(start, end):
        if value in lines[i]:
            return i + 1
    return (key_line or 0) + 1


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)):
        return [v for v in value if isinstance(v, str)]
    return []


def _on_disk(facts: Facts, dotted: str) -> bool:
    """A name inside an ignored (generated) module cannot be checked: ``pkg.x_pb2.Msg`` is
    accepted when ``pkg/x_pb2.py`` exists on disk but is ignored by the config."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        base = "/".join(parts[:cut])
        for rel in (f"{base}.py", f"{base}/__init__.py"):
            if (facts.root / rel).is_file():
                return rel not in facts.paths
    return False


def _check_name(facts: Facts, name: str) -> Location | bool | None:
    """True when ``name`` exists; else the location where it should be (None if unknown)."""
    text = re.sub(r"\(.*\)\Z", "", name.strip().rstrip(",.;:"))
    if not text or " " in text:
        return True
    contracts = {c.id: c for c in facts.contracts}
    head = text.split(".", 1)[0]
    if "/" in text and _PATH.match(text) and (text.endswith("/") or text.endswith(_SUFFIXES)):
        return True if (facts.root / text).exists() else Location(text.rstrip("/"))
    if head in contracts and text.count(".") == 1:
        return True if text in facts.interface_ids() else Location(contracts[head].path)
    service = facts.proto_symbol(head, SymbolKind.SERVICE) if text.count(".") == 1 else None
    if service is not None and "/" not in text:  # `Service.Rpc`
        rpc = facts.proto_symbol(text, SymbolKind.RPC)
        return True if rpc is not None else Location(service.location.path, service.location.line)
    if facts.is_python_name(text):
        if facts.definition(text) is not None or _on_disk(facts, text):
            return True
        split = module_path(facts.modules, text)
        return Location(split[1]) if split else None
    return True


def _dangling(facts: Facts) -> Iterator[Finding]:
    components = facts.components()
    for page in (p for p in facts.docs if p.front_matter):  # a page without one is off the map
        fm = page.front_matter
        layer = fm.get("layer") if isinstance(fm.get("layer"), str) else None
        # (name, front-matter key or None for a mention, line of a mention); the line of a
        # front-matter value is looked up in the page only for a finding
        names: list[tuple[str, str | None, int]] = []
        for field in ("symbols", "interfaces"):
            names += [(v, field, 1) for v in _strings(fm.get(field))]
        names += [(n, None, loc.line or 1) for n, loc in page.mentions]
        for name, key, line in names:
            where = _check_name(facts, name)
            if where is True:
                continue
            if key is not None:
                line = _fm_line(facts, page, key, name)
            found = SM301.finding(
                f"{page.path} names `{name}`, which no longer exists",
                subject=f"{page.path}:{name}",
                layer=layer,
                code=where if isinstance(where, Location) else None,
                map_loc=Location(page.path, line),
                fix=f"update or remove `{name}` in {page.path}, or restore it in the code",
            )
            is_map = isinstance(where, Location) and where.path.endswith(
                (".yaml", ".yml", ".proto")
            )
            yield found.classified(Classification.MAP_STALE) if is_map else found
        for glob in _strings(fm.get("paths")):
            pattern = glob_regex(glob)
            if any(pattern.match(p) for p in facts.paths):
                continue
            yield SM301.finding(
                f"{page.path}: paths glob {glob!r} matches no file",
                subject=f"{page.path}:paths:{glob}",
                layer=layer,
                code=Location(glob.split("*", 1)[0].rstrip("/") or "."),
                map_loc=Location(page.path, _fm_line(facts, page, "paths", glob)),
                fix=f"point `paths` of {page.path} at the component's current files",
            )
        for key in ("upstream", "downstream"):
            for comp in _strings(fm.get(key)):
                if comp in components:
                    continue
                yield SM301.finding(
                    f"{page.path}: {key} names component {comp!r}, which no page declares",
                    subject=f"{page.path}:{key}:{comp}",
                    layer=layer,
                    map_loc=Location(page.path, _fm_line(facts, page, key, comp)),
                    fix=f"write the page for {comp} (front matter `component: {comp}`), "
                    f"or fix the id in {page.path}",
                ).classified(Classification.MAP_STALE)


def _steps(facts: Facts) -> Iterator[Finding]:
    components = facts.components()
    interfaces = facts.interface_ids()
    for page in facts.docs:
        for step in page.steps:
            kind, _, name = step.target.partition(":")
            ok = (kind == "component" and name in components) or (
                kind == "interface" and name in interfaces
            )
            if ok:
                continue
            what = f"{kind} {name!r}" if name else f"{step.target!r}"
            yield SM302.finding(
                f"{page.path}: step {step.order} ({step.action}) names {what}, "
                "which is not on the map: the walk has a hole here",
                subject=f"{page.path}:step:{step.target}",
                layer=page.front_matter.get("layer") or None,
                map_loc=step.location,
                fix="name an existing component (a page's `component`) or contract interface "
                "id, or add the missing component/interface to the map",
            )


SM301 = Rule(
    RuleInfo(
        "SM301",
        "doc-dangling-reference",
        Severity.WARNING,
        Policy.HISTORY,
        "A knowledge-base page names a symbol, file, interface or component that does not exist.",
        "Update the page to the current name, or restore what it names.",
    ),
    _dangling,
)
SM302 = Rule(
    RuleInfo(
        "SM302",
        "scenario-step-unresolved",
        Severity.ERROR,
        Policy.MAP_STALE,
        "A scenario step names no existing component or interface (a hole in the walk).",
        "Name an existing component or interface, or add the missing one to the map.",
    ),
    _steps,
)
RULES = (SM301, SM302)
