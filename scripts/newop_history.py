"""Today's new-op predictor, run blind on every op this repository's history added end to end.

Each op was added on a branch merged with a subject ``Merge the <Op> op (like <similar>, …``.
For each such merge the predictor runs on a clean checkout of the branch's base (the merge's
first parent, where no layer names the op yet) modelled on that similar op
(:func:`mapper.scenarios.newop_at.predict_at`) and is scored against the merge's own change
(``base..merge``). ``--own`` lets the predictor choose the similar op itself, as
``stackmap scenario new-op OP`` without ``--like`` does. Printed: each op's recall and
precision per file, per file that existed before the change and per symbol, and the pooled
figures (found over truth, right over predicted, summed over the ops)::

    python scripts/newop_history.py
    python scripts/newop_history.py --own --json

The predictor was developed on these changes as they landed, except where its fixture was
saved before any of its rules saw the op: pooled figures say how well it fits the history,
the blind fixtures (``tests/mapper/scenarios/test_newop_prediction.py``) how well it predicts.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
_MERGE = re.compile(r"^Merge the (\w+) op \(like (\w+)[,)]")
_KINDS = ("files", "existing_files", "symbols", "code_symbols")


def merges(root: Path) -> list[tuple[str, str, str]]:
    """(op, similar op, merge commit) of every op merge, oldest first."""
    out = subprocess.run(
        ["git", "-C", str(root), "log", "--merges", "--reverse", "--format=%H %s"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    found = []
    for line in out.splitlines():
        commit, _, subject = line.partition(" ")
        match = _MERGE.match(subject)
        if match:
            found.append((match.group(1), match.group(2), commit))
    return found


def _first(root: Path, base: str, tip: str) -> str:
    """The first commit of the branch ``base..tip``."""
    out = subprocess.run(
        ["git", "-C", str(root), "rev-list", "--reverse", f"{base}..{tip}"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout.split()
    return out[0]


def _parents(root: Path, merge: str) -> tuple[str, str]:
    out = subprocess.run(
        ["git", "-C", str(root), "rev-parse", f"{merge}^1", f"{merge}^2"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout.split()
    return out[0], out[1]


def _counts(score: dict[str, Any]) -> dict[str, int]:
    """Found, truth, right and predicted of one score; for symbols ``right`` is what the
    precision (rounded to four places) gives."""
    found, missed, extra = len(score["hits"]), len(score["missed"]), len(score["extra"])
    precision = float(score["precision"])
    if precision >= 1.0:
        right = found
    elif precision <= 0.0:
        right = 0
    else:
        right = round(precision * extra / (1.0 - precision))
    return {"found": found, "truth": found + missed, "right": right, "predicted": right + extra}


class Pool:
    """Found, truth, right and predicted summed over the ops, per kind of score; each op's
    recall and precision as a row."""

    def __init__(self, kinds: tuple[str, ...]) -> None:
        self.kinds = kinds
        self.sums = {k: {"found": 0, "truth": 0, "right": 0, "predicted": 0} for k in kinds}

    def row(self, result: dict[str, Any], **head: Any) -> dict[str, Any]:
        """``head`` and each kind's recall and precision in ``result``, added to the sums."""
        row: dict[str, Any] = dict(head)
        for kind in self.kinds:
            row[kind] = {m: result[kind][m] for m in ("recall", "precision")}
            for key, value in _counts(result[kind]).items():
                self.sums[kind][key] += value
        return row

    def summary(self) -> dict[str, dict[str, Any]]:
        return {
            kind: {
                "recall": round(c["found"] / c["truth"], 4) if c["truth"] else None,
                "precision": round(c["right"] / c["predicted"], 4) if c["predicted"] else None,
                **c,
            }
            for kind, c in self.sums.items()
        }


def evaluate(root: Path, own: bool) -> dict[str, Any]:
    from mapper.scenarios.newop_at import predict_at

    rows = []
    pool = Pool(_KINDS)
    for op, like, merge in merges(root):
        base, tip = _parents(root, merge)
        print(f"newop_history: {op} (like {'its own choice' if own else like})", file=sys.stderr)
        result = predict_at(
            root,
            op,
            _first(root, base, tip),
            like=None if own else like,
            revisions=f"{base}..{merge}",
        )
        rows.append(pool.row(result, op=op, like=result["like"], merge=merge[:12]))
    return {"own_choice": own, "ops": rows, "pooled": pool.summary()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--own", action="store_true", help="let the predictor choose the op")
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args(argv)
    result = evaluate(ROOT, args.own)
    if args.json:
        print(json.dumps(result, indent=1))
        return 0
    for row in result["ops"]:
        cells = "  ".join(f"{k} {row[k]['recall']:.2f}/{row[k]['precision']:.2f}" for k in _KINDS)
        print(f"{row['op']:24} like {row['like']:16} {cells}")
    for kind, s in result["pooled"].items():
        print(f"pooled {kind}: recall {s['recall']} precision {s['precision']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
