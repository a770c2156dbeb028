"""Measure the map on a real user-space driver + kernel driver pair nobody described.

    .venv/bin/python scripts/foreign_eval.py --user DIR [--user DIR …] --kernel DIR
        [--kernel FILE …] [--python-root user] [--json PATH]

Copies the given folders into a scratch repository (``user/…`` above ``kernel/…``, one layer
each, ``user`` as a Python source root), ingests it without embeddings (timed), and reports:

- **parse warnings**: the share of the kernel's C files (and of all C/C++/CUDA files) whose
  parse left syntax errors;
- **ioctl interface recall**: the ground truth is found by plain text search, independently of
  the map — the ioctl names the kernel side dispatches (``case NAME:``, ``*_IOCTL_DEF*(NAME,
  …)`` table entries; ``DRM_IOCTL_DEF_DRV(X, …)`` names ``DRM_IOCTL_X``) that the user-space
  files name outside their own definitions. An ioctl counts as discovered when the map holds
  its definition with both an ``ioctl_use`` edge from the user layer and an ``ioctl_dispatch``
  edge from the kernel layer, each with a path:line. Recall = discovered ∩ truth / truth.
- **interface recall**: the same truth against the interfaces the map lists (``stackmap ls
  --kind interface``): an ioctl counts when ``interface:user_kernel.<NAME>`` is on the map
  with a consumer in the user layer and a provider in the kernel layer besides its definition
  (the dispatching function), each with a path:line.

``--kernel`` and ``--user`` accept files as well as folders (a header from ``include/uapi``).
Figures go to stdout as JSON (and to ``--json PATH``); progress to stderr.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from mapper.graph import MapGraph
from mapper.ingest import ingest, load_map

_C_SUFFIXES = (".c", ".h", ".cc", ".cpp", ".hpp", ".cu", ".cuh")
_CASE = re.compile(r"\bcase\s+([A-Z][A-Z0-9_]+)\s*:")
_TABLE = re.compile(r"\b(\w*IOCTL_DEF\w*)\s*\(\s*([A-Z][A-Z0-9_]+)\s*,")
_DEFINE = re.compile(r"^\s*#\s*define\s+([A-Z][A-Z0-9_]+)|^([A-Z][A-Z0-9_]+)\s*=", re.M)
_IOCTL_DEFINE = re.compile(r"#\s*define\s+([A-Z][A-Z0-9_]+)\s+\w*_IO(?:R|W|WR)?\s*\(")
_WORD = re.compile(r"\b[A-Z][A-Z0-9_]+\b")
_CONFIG = """[stackmap]
name = "foreign"
docs = []
tests = []
python_roots = ["user"]

[[layers]]
id = "user"
paths = ["user/**"]

[[layers]]
id = "kernel"
paths = ["kernel/**"]
"""


def _copy(sources: list[Path], dest: Path) -> None:
    for src in sources:
        target = dest / src.name
        if src.is_dir():
            shutil.copytree(src, target, dirs_exist_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, target)


def _texts(root: Path, suffixes: tuple[str, ...]) -> dict[str, str]:
    return {
        str(p.relative_to(root)): p.read_text(encoding="utf-8", errors="replace")
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.suffix in suffixes
    }


def ground_truth(kernel: dict[str, str], user: dict[str, str]) -> set[str]:
    """Ioctl names the kernel dispatches and the user side names (plain text search)."""
    ioctl_names: set[str] = set()
    for text in kernel.values():
        ioctl_names.update(_IOCTL_DEFINE.findall(text.replace("\\\n", " ")))
    dispatched: set[str] = set()
    for text in kernel.values():
        dispatched.update(m.group(1) for m in _CASE.finditer(text))
        for macro, name in _TABLE.findall(text):
            dispatched.add(f"DRM_IOCTL_{name}" if macro == "DRM_IOCTL_DEF_DRV" else name)
    dispatched &= ioctl_names
    named: set[str] = set()
    for text in user.values():
        defined = {a or b for a, b in _DEFINE.findall(text)}
        named.update(w for w in _WORD.findall(text) if w not in defined)
    return dispatched & named


def discovered(g: MapGraph) -> dict[str, dict[str, list[str]]]:
    """Ioctl name → its user-side use sites and kernel-side dispatch sites (path:line)."""
    found: dict[str, dict[str, list[str]]] = {}
    for src, dst, attrs in g.edges():
        binding = attrs.get("binding")
        if binding not in ("ioctl_use", "ioctl_dispatch"):
            continue
        layer = g.node(src).get("layer")
        side = "users" if binding == "ioctl_use" and layer == "user" else None
        side = "dispatchers" if binding == "ioctl_dispatch" and layer == "kernel" else side
        if side is None or not attrs.get("path"):
            continue
        name = g.node(dst)["name"].rpartition(".")[2]
        entry = found.setdefault(name, {"users": [], "dispatchers": []})
        entry[side].append(f"{attrs['path']}:{attrs['line']}")
    return {
        name: {side: sorted(set(sites)) for side, sites in entry.items()}
        for name, entry in found.items()
        if entry["users"] and entry["dispatchers"]
    }


def evaluate(user: list[Path], kernel: list[Path]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="stackmap-foreign-") as tmp:
        root = Path(tmp)
        _copy(user, root / "user")
        _copy(kernel, root / "kernel")
        (root / "stackmap.toml").write_text(_CONFIG, encoding="utf-8")
        started = time.perf_counter()
        report = ingest(root, embed=False, progress=sys.stderr.isatty())
        seconds = time.perf_counter() - started
        g = load_map(root)
        files = [a for _, a in g.nodes() if a["kind"] == "file"]
        c_files = [a for a in files if a["path"].endswith(_C_SUFFIXES)]
        kernel_c = [a for a in c_files if a["layer"] == "kernel"]
        truth = ground_truth(
            _texts(root / "kernel", _C_SUFFIXES), _texts(root / "user", (".py", *_C_SUFFIXES))
        )
        found = discovered(g)
        hit = sorted(truth & set(found))
        listed = sorted(truth & interfaces(g))
        return {
            "files": report.files,
            "ingest_seconds": round(seconds, 2),
            "kernel_c_files": len(kernel_c),
            "kernel_c_files_with_warnings": _warned(kernel_c),
            "kernel_parse_warning_rate": _rate(_warned(kernel_c), len(kernel_c)),
            "c_family_files": len(c_files),
            "c_family_parse_warning_rate": _rate(_warned(c_files), len(c_files)),
            "ioctls_truth": len(truth),
            "ioctls_discovered_both_sides": len(hit),
            "ioctl_recall": _rate(len(hit), len(truth)),
            "missed": sorted(truth - set(found)),
            "ioctl_interfaces_listed": len(listed),
            "interface_recall": _rate(len(listed), len(truth)),
            "interfaces_missed": sorted(truth - set(listed)),
            "interfaces_by_source": _sources(g),
            "discovered": {name: found[name] for name in hit},
        }


def interfaces(g: MapGraph) -> set[str]:
    """Ioctl names listed as user→kernel interfaces with both sides placed (see above)."""
    out: set[str] = set()
    for node_id, a in g.nodes():
        if a["kind"] != "interface" or a.get("layer_pair") != "user_kernel":
            continue
        users = [c for c in a.get("consumers") or () if c[1] and c[1].startswith("user/")]
        providers = [
            p
            for p in a.get("providers") or ()
            if p[1] and p[1].startswith("kernel/") and p[0] != a.get("definition")
        ]
        if users and providers:
            out.add(node_id.rpartition(".")[2])
    return out


def _sources(g: MapGraph) -> dict[str, int]:
    counts: dict[str, int] = {}
    for _, a in g.nodes():
        if a["kind"] == "interface":
            counts[str(a.get("source"))] = counts.get(str(a.get("source")), 0) + 1
    return counts


def _warned(files: list[Any]) -> int:
    return sum(1 for a in files if a["warnings"])


def _rate(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--user", type=Path, action="append", required=True)
    parser.add_argument("--kernel", type=Path, action="append", required=True)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    missing = [str(p) for p in [*args.user, *args.kernel] if not p.exists()]
    if missing:
        print(f"error: not found: {', '.join(missing)}", file=sys.stderr)
        return 2
    result = evaluate(args.user, args.kernel)
    text = json.dumps(result, indent=2, sort_keys=True)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
