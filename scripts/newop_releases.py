"""Today's new-op predictor, run blind on the ops a real project added between its releases.

The repository is a history of releases (``scripts/sdist_history.py``: one commit per
release). An op is a value of one C enum, found by its prefix in one header (ggml's
``GGML_OP_`` in ``include/ggml.h``): each value a release's header lists and its parent's does
not is an op that release added. For each, the predictor runs on a clean checkout of the
parent release (:func:`mapper.scenarios.newop_at.predict_at`), modelled on the op it chooses
itself (or, with ``--like-previous``, on the op the enum lists just before the new one, the
neighbour its author most likely copied), and is scored against the release's change: the
files whose changed lines spell the op and the definitions added whose names spell it.
Printed: each op's recall and precision per file, per existing file and per code symbol, and
the pooled figures::

    python scripts/sdist_history.py llama_cpp_python 0.3.33 0.3.34 0.3.35 \\
        --dest /tmp/ggml-history --subdir vendor/llama.cpp/ggml \\
        --config scripts/ggml.stackmap.toml
    python scripts/newop_releases.py /tmp/ggml-history --json

Nobody here wrote these changes, and none was seen before its prediction: what the figures
say is how well the predictor carries to a stack it was not developed on. A release may add an
op to some backends only (the CPU first, others later): the similar op's footprint reaches
every backend it runs on, so precision there says how far the release went, not only how
well the predictor did.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from newop_history import Pool

_KINDS = ("files", "existing_files", "code_symbols")


def _git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=True, timeout=60
    ).stdout


def values(root: Path, rev: str, header: str, prefix: str) -> list[str]:
    """The enumerators of ``header`` at ``rev`` named ``PREFIX…``, in their order (a value
    defined on a line of its own: ``GGML_OP_ADD,`` or ``GGML_OP_NONE = 0,``)."""
    line = re.compile(rf"^\s*({re.escape(prefix)}\w+)\s*(?:=[^,]*)?,?\s*(?://.*)?$")
    try:
        text = _git(root, "show", f"{rev}:{header}")
    except subprocess.CalledProcessError:
        return []
    found = [m.group(1) for m in map(line.match, text.splitlines()) if m]
    return list(dict.fromkeys(found))


def added_ops(root: Path, header: str, prefix: str) -> list[tuple[str, str, str | None, str]]:
    """(op, release commit, the value listed before it, the release's subject) for each value
    a release added, oldest first."""
    out = []
    for line in _git(root, "log", "--reverse", "--format=%H|%P|%s").splitlines():
        commit, parent, subject = line.split("|", 2)
        if not parent or " " in parent:
            continue  # the first release, or a merge
        before = set(values(root, parent, header, prefix))
        listed = values(root, commit, header, prefix)
        for i, value in enumerate(listed):
            if value not in before and before:
                previous = next((v for v in reversed(listed[:i]) if v in before), None)
                like = previous.removeprefix(prefix).lower() if previous else None
                out.append((value.removeprefix(prefix).lower(), commit, like, subject))
    return out


def evaluate(root: Path, header: str, prefix: str, like_previous: bool) -> dict[str, Any]:
    from mapper.scenarios.newop_at import predict_at

    rows = []
    pool = Pool(_KINDS)
    for op, commit, previous, subject in added_ops(root, header, prefix):
        print(f"newop_releases: {op} ({subject})", file=sys.stderr)
        result = predict_at(root, op, commit, like=previous if like_previous else None)
        rows.append(pool.row(result, op=op, release=subject, like=result["like"]))
    return {"like_previous": like_previous, "ops": rows, "pooled": pool.summary()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", type=Path, help="a history of releases")
    parser.add_argument("--header", default="include/ggml.h", help="the header of the op enum")
    parser.add_argument("--prefix", default="GGML_OP_", help="the op enum's value prefix")
    parser.add_argument(
        "--like-previous", action="store_true", help="model each op on the value before it"
    )
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args(argv)
    result = evaluate(args.root.resolve(), args.header, args.prefix, args.like_previous)
    if args.json:
        print(json.dumps(result, indent=1))
        return 0
    for row in result["ops"]:
        cells = "  ".join(f"{k} {row[k]['recall']:.2f}/{row[k]['precision']:.2f}" for k in _KINDS)
        print(f"{row['op']:20} {row['release']:26} like {row['like']:16} {cells}")
    for kind, s in result["pooled"].items():
        print(f"pooled {kind}: recall {s['recall']} precision {s['precision']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
