"""``stackmap eval impact`` on a fixture history with one signature change and its call site.

Besides the call site, the commit edits a page and a file in ways that name ``submit`` without
updating a use of it: the word in prose, and a call written into a file that never used it.
Both are ``related`` (the word is in their changed lines) and neither is a ``call_sites``.
The ``resolved`` truth keeps the call site: Jedi resolves it to the changed method.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from mapper.impact.evaluate import evaluate


def test_one_case_scored_beside_both_baselines(
    stack: Path,
    tmp_path: Path,
    edit: Callable[[Path, str, str, str], None],
    commit: Callable[[Path, str], None],
) -> None:
    repo = tmp_path / "stack"
    shutil.copytree(stack, repo)
    edit(
        repo,
        "fx/umd/session.py",
        "def submit(self, blob: bytes, *, wait: bool = False)",
        "def submit(self, blob: bytes, *, wait: bool)",
    )
    edit(
        repo,
        "fx/runtime/engine.py",
        "self.session.submit(blob, wait=True)",
        "self.session.submit(blob, wait=False)",
    )
    edit(repo, "knowledge_base/kmd/device.md", "# KMD device memory", "# KMD memory")
    edit(
        repo,
        "knowledge_base/umd/session.md",
        "Clients reach the UMD",
        "Each submit waits only when asked. Clients reach the UMD",
    )
    edit(
        repo,
        "fx/kmd/device.py",
        '"""Device memory."""',
        '"""Device memory: submit(blob) fills it."""',
    )
    commit(repo, "submit: wait is required")
    lines: list[str] = []
    result = evaluate(repo, 5, progress=lines.append)
    assert result["cases"] == 1 and result["skipped"] == []
    case = result["per_commit"][0]
    assert case["symbol"] == "fx.umd.session.Session.submit"
    assert lines == [f"{case['commit']} fx.umd.session.Session.submit"]
    assert case["truth"] == {
        "all": [
            "fx/kmd/device.py",
            "fx/runtime/engine.py",
            "fx/umd/session.py",
            "knowledge_base/kmd/device.md",
            "knowledge_base/umd/session.md",
        ],
        "related": [
            "fx/kmd/device.py",
            "fx/runtime/engine.py",
            "fx/umd/session.py",
            "knowledge_base/umd/session.md",
        ],
        "call_sites": ["fx/runtime/engine.py", "fx/umd/session.py"],
        "resolved": ["fx/runtime/engine.py", "fx/umd/session.py"],
    }
    # Jedi follows self.session to the Session the engine constructs: the call is the changed
    # method's (the definition's own file is kept without asking)
    assert case["jedi"] == {
        "fx/runtime/engine.py": {
            "calls": 2,
            "matched": ["fx.umd.session.Session.submit"],
            "other": [],
            "unknown": 0,
            "kept": True,
        }
    }
    assert case["predicted"]["name"] == [
        "contracts/runtime_umd.yaml",
        "fx/runtime/engine.py",
        "fx/umd/session.py",
        "knowledge_base/runtime/engine.md",
        "knowledge_base/scenarios/submit.md",
        "knowledge_base/umd/session.md",
    ]
    assert case["predicted"]["imports"] == ["fx/runtime/engine.py", "fx/umd/session.py"]
    assert case["scores"]["related"]["precise"]["truth"] == 4
    related = case["scores"]["call_sites"]
    assert related["precise"] == {
        "recall": 1.0,
        "precision": round(2 / 7, 4),
        "tp": 2,
        "predicted": 7,
        "truth": 2,
    }
    assert related["imports"]["recall"] == 1.0 and related["imports"]["precision"] == 1.0
    assert result["overall"]["call_sites"]["precise"]["micro"]["recall"] == 1.0
    assert case["change"] == "call_shape"  # the default of wait removed: calls must follow
    by_change = result["overall"]["by_change"]
    assert (by_change["call_shape"]["cases"], by_change["types_only"]["cases"]) == (1, 0)
    assert by_change["call_shape"]["precise"] == case["scores"]["resolved"]["precise"]
    # the text output: one line per truth and method, from the same figures
    stackmap = Path(sys.executable).with_name("stackmap")
    proc = subprocess.run(
        [str(stackmap), "eval", "impact", str(repo), "--commits", "5"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("1 case(s) in ")
    assert len(lines) == 1 + 4 * 4
    assert lines[1 + 2 * 4] == "  truth=call_sites precise      recall 1.00  precision 0.29"
    assert lines[1 + 3 * 4] == "  truth=resolved   precise      recall 1.00  precision 0.29"
