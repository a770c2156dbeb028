"""What a revision range (or the working tree) changed: lines per file, and the interface
changes among them, classified as ``stackmap diff`` classifies them.

Only the files the diff names are read, both sides taken from git (the working tree for the
newer side of ``--worktree``); the classification reuses :mod:`mapper.versions`' surface items
and :func:`~mapper.versions.compare_surfaces`, so ``impact`` and ``diff`` never disagree.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from mapper.check.errors import RevisionError
from mapper.config import StackmapConfig
from mapper.errors import MapperError
from mapper.impact.patch import parse_patch
from mapper.impact.patch_types import FileChange, Patch
from mapper.ingest.code import CODE_LANGUAGES, language_for, parse_file
from mapper.ingest.contracts import parse_contract
from mapper.model import Language
from mapper.versions.compare import Change, compare_surfaces
from mapper.versions.surface import Item, code_items, interface_item, proto_items


@dataclass(frozen=True, slots=True)
class DiffSpec:
    """A revision range: ``new`` None means the working tree."""

    old: str
    new: str | None

    def label(self) -> str:
        return f"{self.old}..{self.new or 'worktree'}"


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(
            ["git", "-C", str(root), *args], capture_output=True, timeout=120, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise RevisionError(f"git could not run: {exc}") from exc


def verify_revision(root: Path, rev: str) -> str:
    """The commit id of ``rev``; RevisionError naming it when git cannot resolve it."""
    proc = _git(root, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
    if proc.returncode != 0 or not proc.stdout.strip():
        raise RevisionError(f"unknown revision {rev!r}", revision=rev)
    return proc.stdout.decode().strip()


def parse_range(root: Path, text: str) -> DiffSpec:
    """``A..B`` or ``A`` (meaning ``A..HEAD``), both verified."""
    old, sep, new = text.partition("..")
    old, new = old.strip(), (new.strip() if sep else "HEAD")
    if not old or not new:
        raise RevisionError(f"bad revision range {text!r}; expected REV or REV..REV", revision=text)
    verify_revision(root, old)
    verify_revision(root, new)
    return DiffSpec(old, new)


def changed_files(root: Path, spec: DiffSpec) -> list[FileChange]:
    """Files changed from ``spec.old`` to ``spec.new`` with their changed line ranges."""
    args = ["diff", "-U0", "--no-color", "--no-renames", "--no-ext-diff", spec.old]
    if spec.new is not None:
        args.append(spec.new)
    proc = _git(root, *args)
    if proc.returncode != 0:
        lines = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise RevisionError(f"git diff failed: {lines[-1] if lines else '?'}", revision=spec.old)
    return list(parse_patch(proc.stdout.decode("utf-8", "replace"), limits=None).files)


def _materialise(root: Path, rev: str | None, paths: list[str], dest: Path) -> None:
    for path in paths:
        if rev is None:
            source = root / path
            if not source.is_file():
                continue
            data = source.read_bytes()
        else:
            proc = _git(root, "show", f"{rev}:{path}")
            if proc.returncode != 0:
                continue  # absent on this side
            data = proc.stdout
        target = dest / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


def _items(tree: Path, config: StackmapConfig, paths: list[str]) -> dict[str, Item]:
    items: list[Item] = []
    layers = [layer.id for layer in config.layers]
    contracts = config.contracts.rstrip("/") + "/"
    for path in paths:
        file = tree / path
        if not file.is_file():
            continue
        language = language_for(path)
        try:
            if path.startswith(contracts) and path.endswith((".yaml", ".yml")):
                contract = parse_contract(file.read_text(encoding="utf-8"), path, layers)
                items.extend(interface_item(spec) for spec in contract.interfaces)
            elif language is Language.PROTO:
                items.extend(proto_items(parse_file(tree, path)))
            elif language in CODE_LANGUAGES and config.layer_of(path) is not None:
                items.extend(code_items(parse_file(tree, path), tree))
        except (MapperError, OSError, UnicodeDecodeError):
            continue  # an unreadable side contributes no items; its lines still count
    return {item.key: item for item in items}


def classify(
    root: Path, config: StackmapConfig, spec: DiffSpec, files: list[FileChange]
) -> list[Change]:
    """Interface changes among ``files`` (breaking first), as ``stackmap diff`` reports them."""
    paths = [f.path for f in files]
    with tempfile.TemporaryDirectory(prefix="stackmap-impact-") as tmp:
        a, b = Path(tmp) / "a", Path(tmp) / "b"
        a.mkdir()
        b.mkdir()
        _materialise(root, spec.old, paths, a)
        _materialise(root, spec.new, paths, b)
        return compare_surfaces(_items(a, config, paths), _items(b, config, paths))


def classify_patch(
    root: Path, config: StackmapConfig, text: str, patch: Patch
) -> list[Change] | None:
    """Interface changes a pasted patch makes to the working tree, or None when it does not
    apply there (``git apply`` on copies of the files it names; the tree is never touched)."""
    old_paths = [f.old_path or f.path for f in patch.files]
    new_paths = [f.path for f in patch.files]
    with tempfile.TemporaryDirectory(prefix="stackmap-patch-") as tmp:
        a, b = Path(tmp) / "a", Path(tmp) / "b"
        a.mkdir()
        b.mkdir()
        _materialise(root, None, old_paths, a)
        _materialise(root, None, old_paths, b)
        strip = "-p1" if patch.prefixed else "-p0"
        args = ["apply", "--unidiff-zero", "--whitespace=nowarn", strip, "-"]
        try:
            proc = subprocess.run(
                ["git", "-C", str(b), *args],
                input=text.encode("utf-8"),
                capture_output=True,
                timeout=120,
                check=False,
                env={**os.environ, "GIT_CEILING_DIRECTORIES": tmp},
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
        if proc.returncode != 0:
            return None
        return compare_surfaces(_items(a, config, old_paths), _items(b, config, new_paths))


def added_definitions(root: Path, spec: DiffSpec, files: list[FileChange]) -> list[tuple[str, str]]:
    """(path, qualname) of every definition the newer side of the diff has and the older one
    lacks, in code and proto files (tests included)."""
    paths = [f.path for f in files if language_for(f.path) in (*CODE_LANGUAGES, Language.PROTO)]
    with tempfile.TemporaryDirectory(prefix="stackmap-added-") as tmp:
        sides = []
        for name, rev in (("a", spec.old), ("b", spec.new)):
            tree = Path(tmp) / name
            tree.mkdir()
            _materialise(root, rev, paths, tree)
            found: set[tuple[str, str]] = set()
            for path in paths:
                if not (tree / path).is_file():
                    continue
                try:
                    parsed = parse_file(tree, path)
                except MapperError:
                    continue
                found.update((path, s.qualname) for s in parsed.symbols)
            sides.append(found)
    return sorted(sides[1] - sides[0])
