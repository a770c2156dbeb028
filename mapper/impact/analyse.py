"""``impact``: what else must change, what to rerun and what to re-read when something changes.

Plain functions over a :class:`~mapper.impact.mapview.MapView`; each returns a frozen
:class:`~mapper.impact.records.ImpactReport` whose items explain themselves hop by hop.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from mapper.impact.changes import DiffSpec, parse_range
from mapper.impact.mapview import EvidenceKind, MapView
from mapper.impact.patch import parse_patch
from mapper.impact.patch_types import PatchLimits
from mapper.impact.records import (
    Affected,
    Category,
    Effort,
    ImpactReport,
    Mode,
    RankedFile,
)
from mapper.impact.targets import Start, from_diff, from_patch, resolve
from mapper.impact.walk import WalkOptions, walk


def impact_of(
    view: MapView, root: Path, target: str, *, mode: Mode = Mode.PRECISE, depth: int | None = None
) -> ImpactReport:
    """Impact of changing one node: a node id, ``PATH:LINE``, a contract entry or a qualname.

    Raises UnknownTargetError / NoDefinitionError (both ImpactError) for a target the map
    does not hold.
    """
    return _report(view, target, resolve(view, root, target), mode, depth)


def impact_of_diff(
    view: MapView,
    root: Path,
    revisions: str | None,
    *,
    mode: Mode = Mode.PRECISE,
    depth: int | None = None,
) -> ImpactReport:
    """Impact of a revision range ``A..B`` / ``A`` (to HEAD), or of the uncommitted working
    tree when ``revisions`` is None. RevisionError for an unknown revision,
    NothingToAnalyseError for a diff touching only docs or other files."""
    spec = DiffSpec("HEAD", None) if revisions is None else parse_range(root, revisions)
    start = from_diff(view, root, view.config, spec)
    return _report(view, spec.label(), start, mode, depth)


def impact_of_patch(
    view: MapView,
    root: Path,
    text: str,
    *,
    mode: Mode = Mode.PRECISE,
    depth: int | None = None,
    limits: PatchLimits = PatchLimits(),
) -> ImpactReport:
    """Impact of a patch given as text (pasted, or read from a file): the map is its older
    side. PatchError (malformed, unsafe path, over ``limits``) for text that is not a usable
    diff, NothingToAnalyseError for a patch touching only docs or other files."""
    patch = parse_patch(text, limits)
    text = "\n".join(text.splitlines()) + "\n"  # for git apply: a browser form sends CRLF
    start = from_patch(view, root, view.config, text, patch)
    return _report(view, "patch", start, mode, depth)


def _report(
    view: MapView, target: str, start: Start, mode: Mode, depth: int | None
) -> ImpactReport:
    affected = walk(view, start.seeds, WalkOptions(mode, depth))
    files = _rank_files(affected)
    return ImpactReport(
        target,
        mode,
        start.changed,
        tuple(affected),
        tuple(files),
        _effort(view, start, affected, files),
        start.diff_paths,
    )


def _rank_files(affected: list[Affected]) -> list[RankedFile]:
    best: dict[str, Affected] = {}
    categories: dict[str, set[str]] = {}
    for item in affected:  # already ranked: the first item of a file ranks it
        if not item.path or item.category is Category.RERUN:
            continue
        best.setdefault(item.path, item)
        categories.setdefault(item.path, set()).add(item.category.value)
    return [
        RankedFile(
            path,
            item.layer,
            tuple(sorted(categories[path])),
            item.weakest,
            item.certainty,
            item.node,
        )
        for path, item in best.items()
    ]


def _effort(
    view: MapView, start: Start, affected: list[Affected], files: list[RankedFile]
) -> Effort:
    layers = {c.layer for c in start.changed if c.layer}
    layers |= {f.layer for f in files if f.layer}
    order = view.layers()
    ordered = tuple(sorted(layers, key=lambda x: order.index(x) if x in order else len(order)))
    roles = tuple(r.id for r in view.config.roles if set(r.layers) & layers)
    tests = sum(1 for a in affected if a.category in (Category.TEST, Category.RERUN))
    docs = sum(1 for a in affected if a.category in (Category.DOC, Category.CONTRACT))
    code = sum(1 for f in files if f.layer)
    return Effort(ordered, len(files), code, tests, docs, roles)


def unmatched_breaking(report: ImpactReport, diff_paths: Iterable[str]) -> list[str]:
    """Breaking changes whose contract entries and doc pages the same diff leaves untouched.

    A breaking change of a definition that some contract entry or doc page states must come
    with a change to at least one of those files; one nothing documents needs none.
    """
    touched = set(diff_paths)
    needs: dict[str, set[str]] = {}
    for item in report.of(Category.CONTRACT, Category.DOC):
        first = item.why[0]
        origin = first.source if first.forward else first.target
        if item.path and item.weakest in (EvidenceKind.CONTRACT, EvidenceKind.DOC_FRONT_MATTER):
            needs.setdefault(origin, set()).add(item.path)
    gaps: list[str] = []
    for change in report.breaking:
        if change.kind == "interface" or change.node is None:
            continue  # the contract itself changed, or the definition is gone
        paths = needs.get(change.node, set())
        if paths and not paths & touched:
            gaps.append(
                f"breaking change of {change.node} without a change to {', '.join(sorted(paths))}"
            )
    return gaps
