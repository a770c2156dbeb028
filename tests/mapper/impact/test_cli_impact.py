"""``stackmap impact`` from the command line: diffs, the working tree, formats, bad input."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from mapper.ingest import ingest

STACKMAP = Path(sys.executable).parent / "stackmap"
Edit = Callable[[Path, str, str, str], None]
Commit = Callable[[Path, str], None]


def run(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(STACKMAP), "impact", "--root", str(repo), *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def repo(stack: Path, tmp_path: Path) -> Path:
    """A private copy of the fixture repository (history and map included)."""
    dest = tmp_path / "stack"
    shutil.copytree(stack, dest)
    return dest


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["symbol:fx.nowhere"], "error: no node 'symbol:fx.nowhere' on the map"),
        (["fx/kmd/device.py:1"], "error: fx/kmd/device.py:1: no definition spans this line"),
        (["--diff", "v0..HEAD"], "error: unknown revision 'v0'"),
        ([], "error: give exactly one of TARGET, --diff REV[..REV], --worktree or --patch FILE|-"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(stack: Path, args: list[str], message: str) -> None:
    proc = run(stack, *args)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [message]
    assert proc.stdout == ""


def test_a_docs_only_diff_is_refused(repo: Path, edit: Edit, commit: Commit) -> None:
    edit(repo, "knowledge_base/kmd/device.md", "# KMD device memory", "# KMD device memory (v2)")
    commit(repo, "docs")
    proc = run(repo, "--diff", "HEAD~1..HEAD")
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        "error: the diff HEAD~1..HEAD touches no code, proto or contract file "
        "(knowledge_base/kmd/device.md)"
    )


def test_breaking_diff_without_contract_change_fails_in_ci(
    repo: Path, edit: Edit, commit: Commit
) -> None:
    edit(repo, "fx/kmd/device.py", "align: int = 256) -> int:", "align: int, pad: int) -> int:")
    edit(
        repo,
        "fx/umd/session.py",
        "self.device.alloc(len(blob))",
        "self.device.alloc(len(blob), 256, 0)",
    )
    commit(repo, "alloc takes its alignment and padding")
    ingest(repo, embed=False, progress=False)
    proc = run(repo, "--diff", "HEAD~1..HEAD", "--json", "--fail-on-unmatched-breaking")
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)
    alloc = next(c for c in data["changed"] if c["node"] == "symbol:fx.kmd.device.Device.alloc")
    assert alloc["impact"] == "breaking"
    assert alloc["how"] == [
        "python fx.kmd.device.Device.alloc: new required parameter 'pad'",
        "python fx.kmd.device.Device.alloc: parameter 'align' lost its default 256",
    ]
    assert data["unmatched_breaking"] == [
        "breaking change of symbol:fx.kmd.device.Device.alloc without a change to "
        "contracts/umd_kmd.yaml, knowledge_base/kmd/device.md, knowledge_base/umd/session.md"
    ]
    assert data["diff_files"] == ["fx/kmd/device.py", "fx/umd/session.py"]
    markdown = run(repo, "--diff", "HEAD~1..HEAD", "--format", "markdown")
    assert markdown.returncode == 0
    assert markdown.stdout.startswith("## Impact of `HEAD~1..HEAD` (precise)\n")
    assert "> breaking change of symbol:fx.kmd.device.Device.alloc without a change" in (
        markdown.stdout
    )


def test_breaking_diff_with_its_contract_change_passes(
    repo: Path, edit: Edit, commit: Commit
) -> None:
    edit(repo, "fx/kmd/device.py", "align: int = 256) -> int:", "align: int) -> int:")
    edit(
        repo,
        "contracts/umd_kmd.yaml",
        "{name: align, type: int, default: 256}",
        "{name: align, type: int}",
    )
    commit(repo, "alloc: the alignment is required")
    ingest(repo, embed=False, progress=False)
    proc = run(repo, "--diff", "HEAD~1", "--json", "--fail-on-unmatched-breaking")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    impacts = {c["node"]: c["impact"] for c in data["changed"]}
    assert impacts["symbol:fx.kmd.device.Device.alloc"] == "breaking"
    assert impacts["interface:umd_kmd.alloc"] == "breaking"
    assert data["unmatched_breaking"] == []


def test_worktree_change_is_classified(repo: Path, edit: Edit) -> None:
    edit(
        repo,
        "fx/kmd/device.py",
        "def free(self, va: int) -> None:",
        "def free(self, va: int, sync: bool = True) -> None:",
    )
    ingest(repo, embed=False, progress=False)
    proc = run(repo, "--worktree", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert [(c["node"], c["impact"], c["how"]) for c in data["changed"]] == [
        (
            "symbol:fx.kmd.device.Device.free",
            "compatible",
            ["python fx.kmd.device.Device.free: new optional parameter 'sync'"],
        )
    ]
    assert [f["path"] for f in data["files"]][:2] == ["fx/kmd/device.py", "fx/umd/session.py"]
    text = run(repo, "--worktree")
    assert "compatible   symbol:fx.kmd.device.Device.free  fx/kmd/device.py:8" in text.stdout


def test_bench_prints_figures_for_every_interface_and_a_diff(
    repo: Path, edit: Edit, commit: Commit
) -> None:
    edit(repo, "fx/kmd/device.py", "return nbytes + align", "return align + nbytes")
    edit(repo, "fx/umd/session.py", "return va\n", "return int(va)\n")
    commit(repo, "two files")
    ingest(repo, embed=False, progress=False)
    proc = subprocess.run(
        [str(STACKMAP), "bench", "impact", str(repo), "--json", "--repeat", "2", "--files", "2"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["interfaces"] == 9 and data["repeat"] == 2
    assert (data["diff_range"], data["diff_files"]) == ("HEAD~1..HEAD", 2)
    for key in ("interface_p50_ms", "interface_p95_ms", "diff_best_s", "map_load_s"):
        assert data[key] > 0


def git(repo: Path, *args: str) -> str:
    proc = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, timeout=60, check=True
    )
    return proc.stdout


def _patch_of(repo: Path, edit: Edit, path: str, old: str, new: str) -> str:
    """The diff of one edit, the edit then undone: the map stays the patch's older side."""
    edit(repo, path, old, new)
    text = git(repo, "diff")
    git(repo, "checkout", "--", path)
    return text


def test_a_pasted_patch_is_classified_against_the_map(
    repo: Path, edit: Edit, tmp_path: Path
) -> None:
    text = _patch_of(
        repo, edit, "fx/kmd/device.py", "align: int = 256) -> int:", "align: int) -> int:"
    )
    patch = tmp_path / "change.diff"
    patch.write_text(text, encoding="utf-8")
    proc = run(repo, "--patch", str(patch), "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["target"] == "patch"
    assert [(c["node"], c["impact"], c["how"]) for c in data["changed"]] == [
        (
            "symbol:fx.kmd.device.Device.alloc",
            "breaking",
            ["python fx.kmd.device.Device.alloc: parameter 'align' lost its default 256"],
        )
    ]
    assert data["diff_files"] == ["fx/kmd/device.py"]
    caller = next(
        a for a in data["affected"] if a["node"] == "symbol:fx.umd.session.Session.submit"
    )
    assert caller["why"][0]["from"] == "symbol:fx.umd.session.Session.submit"
    stdin = subprocess.run(
        [str(STACKMAP), "impact", "--root", str(repo), "--patch", "-", "--json"],
        input=text,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert stdin.returncode == 0, stdin.stderr
    assert json.loads(stdin.stdout) == data


def test_a_patch_that_does_not_apply_is_still_mapped_unclassified(
    repo: Path, tmp_path: Path
) -> None:
    patch = tmp_path / "stale.diff"
    patch.write_text(
        "--- a/fx/kmd/device.py\n+++ b/fx/kmd/device.py\n@@ -8 +8 @@\n-not this line\n+x\n",
        encoding="utf-8",
    )
    proc = run(repo, "--patch", str(patch), "--json")
    assert proc.returncode == 0, proc.stderr
    changed = json.loads(proc.stdout)["changed"]
    assert [(c["node"], c["impact"], c["how"]) for c in changed] == [
        (
            "symbol:fx.kmd.device.Device.free",
            "modified",
            ["the patch does not apply to the working tree: changes not classified"],
        )
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "hello\n",
            "error: no file header found: expected `diff --git a/… b/…` or "
            "`--- a/…` / `+++ b/…` lines",
        ),
        (
            "--- a/fx/kmd/device.py\n+++ b/fx/kmd/device.py\n@@ -1,2 +1,2 @@\n-a\n+b\n",
            "error: patch line 3: hunk ends early: 1 old and 1 new lines missing",
        ),
        (
            "--- a/../x.py\n+++ b/../x.py\n@@ -1 +1 @@\n-a\n+b\n",
            "error: patch line 1: path '../x.py' leaves the repository; paths must be relative, "
            "without '..'",
        ),
        (
            "--- a/knowledge_base/kmd/device.md\n+++ b/knowledge_base/kmd/device.md\n"
            "@@ -1 +1 @@\n-# KMD device memory\n+# KMD device memory (v2)\n",
            "error: the patch touches no code, proto or contract file "
            "(knowledge_base/kmd/device.md)",
        ),
        (
            "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+" + "b" * 1_000_001 + "\n",
            "error: the patch is 1000001 bytes; at most 1000000 are read",
        ),
    ],
)
def test_a_bad_patch_is_one_line_and_exit_2(
    stack: Path, tmp_path: Path, text: str, message: str
) -> None:
    patch = tmp_path / "bad.diff"
    patch.write_text(text, encoding="utf-8")
    proc = run(stack, "--patch", str(patch))
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr.strip().splitlines() == [message]
