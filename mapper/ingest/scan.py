"""Which files of a repository the map reads, and which it skips (with the reason).

A file is read when its extension names a language the map knows and it is a contract (YAML
under the contracts folder), a doc (Markdown under a doc folder), a proto, a test (a code file
matching the test globs) or code inside a layer. Ignored globs prune whole folders. Symlinked
folders are followed once while they stay inside the repository; a link that leaves the
repository root (to ``/``, to a file elsewhere), a loop, a broken link, an unreadable, binary,
huge or undecodable file becomes a :class:`~mapper.material.Skip`. Python files are decoded by
their PEP 263 coding line; everything else must be UTF-8. Synchronous; reads each candidate
file once.
"""

from __future__ import annotations

import enum
import hashlib
import io
import os
import stat
import tokenize
from dataclasses import dataclass
from pathlib import Path

from mapper.config import StackmapConfig
from mapper.ingest.code import CODE_LANGUAGES, language_for
from mapper.material import Skip
from mapper.model import Language

MAX_BYTES = 2 * 1024 * 1024


class Category(enum.StrEnum):
    CODE = "code"
    PROTO = "proto"
    DOC = "doc"
    CONTRACT = "contract"
    TEST = "test"


@dataclass(frozen=True, slots=True)
class SourceFile:
    path: str  # repository-relative, POSIX
    category: Category
    language: Language
    digest: str  # content hash
    data: bytes


@dataclass(frozen=True, slots=True)
class ScanResult:
    files: tuple[SourceFile, ...]
    skips: tuple[Skip, ...]
    unmapped: int  # code files outside every layer, doc folder and test glob


DOC_LANGUAGES = frozenset({Language.MARKDOWN, Language.RST, Language.TEXT, Language.PDF})


def categorize(config: StackmapConfig, path: str) -> tuple[Category, Language] | None:
    language = language_for(path)
    if language is None:
        return None
    contracts = config.contracts.rstrip("/") + "/"
    if language is Language.YAML:
        return (Category.CONTRACT, language) if path.startswith(contracts) else None
    if language in DOC_LANGUAGES:
        return (Category.DOC, language) if config.is_document(path) else None
    if language is Language.PROTO:
        return Category.PROTO, language
    if language is Language.JSON:  # operator descriptors: data the code of their layer loads
        return (Category.CODE, language) if config.layer_of(path) is not None else None
    if language in CODE_LANGUAGES:
        if config.is_test(path):
            return Category.TEST, language
        if config.layer_of(path) is not None:
            return Category.CODE, language
    return None


def digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def scan(config: StackmapConfig) -> ScanResult:
    """Walk ``config.root`` in sorted order; never raises for a single bad file."""
    root = config.root
    files: list[SourceFile] = []
    skips: list[Skip] = []
    unmapped = 0
    seen_dirs: set[tuple[int, int]] = set()
    for dirpath, dirnames, filenames in os.walk(root, followlinks=True):
        rel_dir = Path(dirpath).relative_to(root).as_posix()
        prefix = "" if rel_dir == "." else rel_dir + "/"
        try:
            st = os.stat(dirpath)
        except OSError as exc:
            skips.append(Skip(prefix.rstrip("/") or ".", f"unreadable folder: {exc.strerror}"))
            dirnames[:] = []
            continue
        if (st.st_dev, st.st_ino) in seen_dirs:
            skips.append(Skip(prefix.rstrip("/"), "symlink loop (folder already visited)"))
            dirnames[:] = []
            continue
        seen_dirs.add((st.st_dev, st.st_ino))
        dirnames[:] = sorted(
            d
            for d in dirnames
            if not config.is_ignored(f"{prefix}{d}/")
            and d != ".git"
            and _inside(root, os.path.join(dirpath, d), prefix + d, skips)
        )
        for name in sorted(filenames):
            rel = prefix + name
            if config.is_ignored(rel):
                continue
            if not _inside(root, os.path.join(dirpath, name), rel, skips):
                continue
            kind = categorize(config, rel)
            if kind is None:
                if language_for(rel) in CODE_LANGUAGES:
                    unmapped += 1
                continue
            entry = _read(os.path.join(dirpath, name), rel, kind, skips)
            if entry is not None:
                files.append(entry)
    return ScanResult(tuple(files), tuple(skips), unmapped)


def _pep263(data: bytes) -> bytes | None:
    """A Python file declaring its encoding (PEP 263 coding line) re-encoded as UTF-8, so
    every later stage reads UTF-8 with the same lines; None when it declares none or lies."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        return data.decode(encoding).encode("utf-8")
    except (SyntaxError, LookupError, UnicodeDecodeError):
        return None


def _inside(root: Path, full: str, rel: str, skips: list[Skip]) -> bool:
    """False (with a skip) for a symlink whose target lies outside the repository root."""
    if not os.path.islink(full):
        return True
    target, top = os.path.realpath(full), os.path.realpath(root)
    if target == top or target.startswith(top.rstrip(os.sep) + os.sep):
        return True
    skips.append(Skip(rel, f"symlink leaves the repository (-> {target})"))
    return False


def _read(
    full: str, rel: str, kind: tuple[Category, Language], skips: list[Skip]
) -> SourceFile | None:
    try:
        st = os.stat(full)
    except OSError as exc:
        if os.path.islink(full):  # a link whose target is missing (or loops)
            skips.append(Skip(rel, "broken symlink"))
        else:
            skips.append(Skip(rel, f"unreadable: {exc.strerror or exc}"))
        return None
    if not stat.S_ISREG(st.st_mode):
        skips.append(Skip(rel, "not a regular file"))
        return None
    size = st.st_size
    if size > MAX_BYTES:
        skips.append(Skip(rel, f"huge file ({size} bytes > {MAX_BYTES})"))
        return None
    try:
        with open(full, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        skips.append(Skip(rel, f"unreadable: {exc.strerror or exc}"))
        return None
    if kind[1] is Language.PDF:  # binary by nature: read by mapper.ingest.docs_plain
        return SourceFile(rel, kind[0], kind[1], digest(data), data)
    if b"\x00" in data[:8192]:
        skips.append(Skip(rel, "binary file"))
        return None
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        recoded = _pep263(data) if kind[1] is Language.PYTHON else None
        if recoded is None:
            skips.append(Skip(rel, f"not UTF-8 text (byte {exc.start})"))
            return None
        data = recoded
    return SourceFile(rel, kind[0], kind[1], digest(data), data)
