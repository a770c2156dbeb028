"""From what the user names (a node id, ``PATH:LINE``, a contract entry, a diff) to the changed
nodes the walk starts from."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from mapper.config import StackmapConfig
from mapper.errors import MapperError
from mapper.impact.changes import DiffSpec, FileChange, changed_files, classify, classify_patch
from mapper.impact.mapview import MapView, Node
from mapper.impact.patch_types import Patch
from mapper.impact.records import Changed
from mapper.ingest.code import CODE_LANGUAGES, language_for
from mapper.model import Language, NodeKind
from mapper.versions.compare import Change

_PATH_LINE = re.compile(r"^(?P<path>[^:]+):(?P<line>\d+)$")
_KINDS = tuple(f"{k.value}:" for k in NodeKind)


class ImpactError(MapperError):
    """Impact could not run on what it was given (exit status 2)."""


class UnknownTargetError(ImpactError):
    """The target names no node on the map."""


class NoDefinitionError(ImpactError):
    """``PATH:LINE`` points at a line inside no definition."""


class NothingToAnalyseError(ImpactError):
    """The diff touches no code, proto or contract file (only docs or other files)."""


@dataclass(frozen=True, slots=True)
class Start:
    """What a walk starts from: the changed nodes and the description of each change."""

    seeds: tuple[Node, ...]
    changed: tuple[Changed, ...]
    diff_paths: tuple[str, ...] = ()  # every file of the diff (empty for a named target)


def _changed(node: Node, impact: str = "unclassified", messages: Iterable[str] = ()) -> Changed:
    return Changed(
        node.id,
        node.name,
        node.kind.value,
        node.path,
        node.line,
        node.layer,
        impact,
        tuple(messages),
    )


def resolve(view: MapView, root: Path, text: str) -> Start:
    """The node a target names: a node id, ``PATH:LINE``, a contract entry or a qualname."""
    text = text.strip()
    if text.startswith(_KINDS):
        node = view.node(text)
        if node is None:
            raise UnknownTargetError(_unknown(view, text), target=text)
        return Start((node,), (_changed(node),))
    match = _PATH_LINE.match(text)
    if match:
        path = _relative(root, match["path"])
        line = int(match["line"])
        if view.node(f"file:{path}") is None:
            raise UnknownTargetError(f"no file {path!r} on the map", path=path, line=line)
        found = [n for n in view.definitions_at(path, line) if n.kind is not NodeKind.FILE]
        if not found:
            raise NoDefinitionError("no definition spans this line", path=path, line=line)
        return Start((found[0],), (_changed(found[0]),))
    for candidate in (f"interface:{text}", f"symbol:{text}", f"symbol:proto:{text}"):
        node = view.node(candidate)
        if node is not None:
            return Start((node,), (_changed(node),))
    raise UnknownTargetError(_unknown(view, text), target=text)


def _relative(root: Path, path: str) -> str:
    candidate = Path(path)
    if candidate.is_absolute():
        try:
            return candidate.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            return candidate.as_posix()
    return candidate.as_posix().removeprefix("./")


def _unknown(view: MapView, text: str) -> str:
    tail = text.rpartition(":")[2].rpartition(".")[2]
    near = sorted(n.id for n in view.nodes() if tail and n.id.endswith(("." + tail, ":" + tail)))
    hint = f"; did you mean {', '.join(near[:5])}?" if near else ""
    return f"no node {text!r} on the map{hint}"


def analysable(config: StackmapConfig, path: str) -> bool:
    language = language_for(path)
    if language in CODE_LANGUAGES or language is Language.PROTO:
        return True
    contracts = config.contracts.rstrip("/") + "/"
    return path.startswith(contracts) and path.endswith((".yaml", ".yml"))


def _innermost(view: MapView, path: str, ranges: Iterable[tuple[int, int]]) -> list[Node]:
    """Per changed range, the definitions it touches that enclose no other touched one."""
    out: dict[str, Node] = {}
    for lo, hi in ranges:
        hits = [n for n in view.nodes_touched(path, [(lo, hi)]) if n.kind is not NodeKind.FILE]
        spans = {n.id: (n.line or 0, n.get("end_line") or n.line or 0) for n in hits}
        for n in hits:
            a, b = spans[n.id]
            inner = any(
                m.id != n.id
                and a <= spans[m.id][0]
                and spans[m.id][1] <= b
                and spans[m.id] != (a, b)
                for m in hits
            )
            if not inner:
                out.setdefault(n.id, n)
    return list(out.values())


def _node_of_change(view: MapView, change: Change) -> Node | None:
    name, kind = change.name, change.kind
    candidates = {
        "interface": [f"interface:{name}"],
        "python": [f"symbol:{name}"],
    }.get(kind)
    if candidates is None:
        candidates = [f"symbol:proto:{name}", f"symbol:c:{change.location.path}:{name}"]
    return next((n for n in map(view.node, candidates) if n is not None), None)


def from_diff(view: MapView, root: Path, config: StackmapConfig, spec: DiffSpec) -> Start:
    """The changed definitions of a revision range (or the working tree), classified."""
    files = changed_files(root, spec)
    what = f"the diff {spec.label()}"
    code = _analysable(config, files, what, spec.label())
    changes = classify(root, config, spec, code)
    return _start(view, config, files, code, changes, what=what, revision=spec.label())


def from_patch(view: MapView, root: Path, config: StackmapConfig, text: str, patch: Patch) -> Start:
    """The definitions a pasted patch changes. The map is the patch's older side: ranges are
    read there, and the patch is classified by applying it to copies of the working tree's
    files (left unclassified, with a note, when it does not apply)."""
    files = list(patch.files)
    code = _analysable(config, files, "the patch", None)
    changes = classify_patch(root, config, text, patch)
    note = () if changes is not None else (NOT_APPLIED,)
    return _start(
        view, config, files, code, changes or [], what="the patch", old_side=True, note=note
    )


NOT_APPLIED = "the patch does not apply to the working tree: changes not classified"


def _analysable(
    config: StackmapConfig, files: list[FileChange], what: str, revision: str | None
) -> list[FileChange]:
    code = [f for f in files if analysable(config, f.path)]
    if not code:
        touched = ", ".join(f.path for f in files[:5]) or "nothing"
        raise NothingToAnalyseError(
            f"{what} touches no code, proto or contract file ({touched})", revision=revision
        )
    return code


def _start(
    view: MapView,
    config: StackmapConfig,
    files: list[FileChange],
    code: list[FileChange],
    changes: list[Change],
    *,
    what: str,
    revision: str | None = None,
    old_side: bool = False,
    note: tuple[str, ...] = (),
) -> Start:
    by_node: dict[str, list[Change]] = {}
    removed: list[Changed] = []
    for change in changes:
        node = _node_of_change(view, change)
        if node is None:
            where = change.location
            removed.append(
                Changed(
                    None,
                    change.name,
                    change.kind,
                    where.path,
                    where.line,
                    config.layer_of(where.path),
                    change.impact.value,
                    (change.message,),
                )
            )
        else:
            by_node.setdefault(node.id, []).append(change)
    seeds: dict[str, Node] = {}
    absent = "added" if old_side else "deleted"  # the side the map does not hold
    for fc in code:
        if fc.status == absent:
            continue
        path = (fc.old_path or fc.path) if old_side else fc.path
        hit = _innermost(view, path, fc.old if old_side else fc.new)
        for defined in hit:
            seeds.setdefault(defined.id, defined)
        file = view.node(f"file:{path}") if not hit else None
        if file is not None:
            seeds.setdefault(file.id, file)
    for node_id in by_node:
        found = view.node(node_id)
        if found is not None:
            seeds.setdefault(node_id, found)
    if not seeds and not removed:
        raise NothingToAnalyseError(
            f"{what} touches no definition on the map ({', '.join(f.path for f in code[:5])})",
            revision=revision,
        )
    changed = [_described(node, by_node.get(node.id, []), note) for node in seeds.values()]
    order = {"breaking": 0, "compatible": 1, "modified": 2}
    changed.sort(key=lambda c: (order.get(c.impact, 3), c.path or "", c.line or 0))
    return Start(tuple(seeds.values()), (*removed, *changed), tuple(f.path for f in files))


def _described(node: Node, changes: list[Change], note: tuple[str, ...] = ()) -> Changed:
    if not changes:
        return _changed(node, "modified", note)
    impact = "breaking" if any(c.impact.value == "breaking" for c in changes) else "compatible"
    return _changed(node, impact, (c.message for c in changes))


__all__ = [
    "FileChange",
    "ImpactError",
    "NoDefinitionError",
    "NothingToAnalyseError",
    "Start",
    "UnknownTargetError",
    "from_diff",
    "from_patch",
    "resolve",
]
