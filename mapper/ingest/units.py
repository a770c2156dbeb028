"""Code files grouped into *units*: the nodes of :mod:`mapper.ingest.structure`'s graph.

A unit is a folder cut at the shallowest depth that splits the code into at least three; a
unit holding too large a share of the files is split into its subfolders, and a package's own
top-level files, when few, become a unit each. Pure functions of the repository-relative
paths: nothing is read from disk.
"""

from __future__ import annotations

from collections import Counter, defaultdict

OWN_FILES = 40  # a package's own files up to this many are placed one by one
SPLIT_SHARE = 0.4  # a unit with more of the files than this is split into its subfolders


def units_of(paths: list[str]) -> dict[str, str]:
    """File → unit: its folder cut at the shallowest depth (1–4) giving at least 3 units; then
    any unit holding more than :data:`SPLIT_SHARE` of the files is split into its subfolders
    (its own files stay a unit), so one big library does not become one layer."""
    best: dict[str, str] = {}
    for depth in range(1, 5):
        best = {p: _cut(p, depth) for p in paths}
        if len(set(best.values())) >= 3:
            break
    for _ in range(4):
        sizes = Counter(best.values())
        big = {u for u, n in sizes.items() if n > SPLIT_SHARE * len(paths) and n > 1}
        if not big:
            break
        split = {p: _split(p, u) for p, u in best.items()}
        changed = {p: split[p] if best[p] in big else best[p] for p in paths}
        if changed == best:
            break
        best = changed
    return best


def split_own_files(unit: dict[str, str], most: int = OWN_FILES) -> dict[str, str]:
    """A folder's own files, when subfolders of it are units too and they are few, become a
    unit each: a package's top-level modules (``tensor.py`` on top, ``helpers.py`` at the
    bottom) rarely sit on one layer."""
    names = set(unit.values())
    own: dict[str, list[str]] = defaultdict(list)
    for path, u in unit.items():
        base = u.removesuffix("/*")
        nested = u.endswith("/*") or any(o.startswith(base + "/") for o in names if o != u)
        if nested and path.rpartition("/")[0] == base:
            own[u].append(path)
    out = dict(unit)
    for files in own.values():
        if 1 < len(files) <= most:
            out.update({path: path for path in files})
    return out


def _cut(path: str, depth: int) -> str:
    return "/".join(path.split("/")[:-1][:depth]) or "."


def _split(path: str, unit: str) -> str:
    """The subfolder of ``unit`` holding ``path``, or ``unit/*`` for its own files."""
    base = "" if unit in (".", "*") else unit.removesuffix("/*")
    rest = path[len(base) + 1 :] if base else path
    if "/" not in rest:
        return f"{base}/*" if base else "*"
    return f"{base}/{rest.split('/', 1)[0]}" if base else rest.split("/", 1)[0]
