"""A saved new-op prediction against the change that really added the op (the toy stack)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from mapper.impact import MapView
from mapper.scenarios.newop import walk_new_op
from mapper.scenarios.newop_eval import compare_prediction

STACKMAP = Path(sys.executable).parent / "stackmap"
ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "f",
    "GIT_AUTHOR_EMAIL": "f@example.invalid",
    "GIT_COMMITTER_NAME": "f",
    "GIT_COMMITTER_EMAIL": "f@example.invalid",
    "GIT_CONFIG_GLOBAL": os.devnull,
}
EDITS = {  # the real change: GELU in the front end and the back end, a test and a doc line
    "toy/front/ops.py": [
        ('    RELU = "Relu"\n', '    RELU = "Relu"\n    GELU = "Gelu"\n'),
        (
            "def import_add(x):",
            "def import_gelu(x):\n    return plan(OpType.GELU, x)\n\n\ndef import_add(x):",
        ),
    ],
    "toy/back/kernels.py": [
        ("    RELU = 4\n", "    RELU = 4\n    GELU = 5\n"),
        ("def add(x, y):", "def gelu(x):\n    return x\n\n\ndef add(x, y):"),
        (
            "        raise DeviceError(x)\n",
            "        raise DeviceError(x)\n    if x == KernelId.GELU:\n        return gelu(x)\n",
        ),
    ],
    "tests/test_kernels.py": [
        ("from toy.back.kernels import relu\n", "from toy.back.kernels import gelu, relu\n"),
        (
            "    assert relu(-1) == 0\n",
            "    assert relu(-1) == 0\n\n\ndef test_gelu_clamps():\n    assert gelu(1) == 1\n",
        ),
    ],
    "toy/mid/plan.py": [("    COPY = 4\n", "    COPY = 4\n    SCALE = 5\n")],
}


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=ENV)


def test_prediction_scored_against_the_real_change(
    toy: Path, toy_view: MapView, tmp_path: Path
) -> None:
    prediction = walk_new_op(toy_view, "gelu").to_json()  # saved before the op exists
    saved = tmp_path / "gelu.json"
    saved.write_text(json.dumps(prediction), encoding="utf-8")
    repo = tmp_path / "toy"
    shutil.copytree(toy, repo, ignore=shutil.ignore_patterns(".stackmap"))
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "before")
    for path, edits in EDITS.items():
        text = (repo / path).read_text(encoding="utf-8")
        for old, new in edits:
            assert old in text
            text = text.replace(old, new, 1)
        (repo / path).write_text(text, encoding="utf-8")
    (repo / "tools").mkdir()  # the change's own tooling: outside the stack the map describes
    (repo / "tools" / "gen.py").write_text('OPS = ["Relu", "Gelu"]\n', encoding="utf-8")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qam", "gelu")
    result = compare_prediction(prediction, repo, "HEAD~1..HEAD")
    assert result["files"] == {  # toy/mid/plan.py changed too, but not for GELU
        "recall": 1.0,
        "precision": 0.75,
        "hits": ["tests/test_kernels.py", "toy/back/kernels.py", "toy/front/ops.py"],
        "missed": [],
        "extra": ["docs/back.md"],
    }
    assert result["unmapped_files"] == ["tools/gen.py"]  # in no layer, doc, contract or test
    assert result["new_files"] == []  # every file the change touched existed before it
    assert result["existing_files"] == result["files"]
    added = [
        "tests.test_kernels.test_gelu_clamps",
        "toy.back.kernels.KernelId.GELU",
        "toy.back.kernels.gelu",
        "toy.front.ops.OpType.GELU",
        "toy.front.ops.import_gelu",
    ]
    assert result["new_symbols"] == {
        "recall": 1.0,
        "precision": 1.0,
        "hits": added,
        "missed": [],
        "extra": [],
    }
    assert result["symbols"] == {  # launch gained a line for GELU: extended, not predicted
        "recall": 0.8333,
        "precision": 1.0,
        "hits": added,
        "missed": ["toy.back.kernels.launch"],
        "extra": [],
    }
    assert result["code_symbols"] == {  # the test's name is its author's choice: left out
        "recall": 0.8,
        "precision": 1.0,
        "hits": [s for s in added if not s.startswith("tests.")],
        "missed": ["toy.back.kernels.launch"],
        "extra": [],
    }
    cli = subprocess.run(
        [
            str(STACKMAP),
            "eval",
            "new-op",
            str(saved),
            "--diff",
            "HEAD~1..HEAD",
            "--root",
            str(repo),
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert cli.returncode == 0, cli.stderr
    assert json.loads(cli.stdout)["new_symbols"]["recall"] == 1.0
    at = subprocess.run(  # today's predictor, blind, on a clean checkout of the parent
        [str(STACKMAP), "eval", "new-op", "gelu", "--at", "HEAD", "--root", str(repo), "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert at.returncode == 0, at.stderr
    blind = json.loads(at.stdout)
    assert blind["prediction"]["files"] == prediction["files"]
    assert (blind["files"], blind["symbols"]) == (result["files"], result["symbols"])
    assert blind["at"]["revision"] == "HEAD"


def _one_commit(toy: Path, tmp_path: Path) -> Path:
    """The toy stack as a repository with one commit."""
    repo = tmp_path / "toy"
    shutil.copytree(toy, repo, ignore=shutil.ignore_patterns(".stackmap"))
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "first")
    return repo


def _eval_at_head(repo: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(STACKMAP), "eval", "new-op", "gelu", "--at", "HEAD", "--root", str(repo)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_eval_new_op_at_an_unknown_revision_is_one_line(toy: Path, tmp_path: Path) -> None:
    cli = _eval_at_head(_one_commit(toy, tmp_path))
    assert cli.returncode == 2
    assert cli.stderr.strip().splitlines() == [
        "error: unknown revision or one without a parent: 'HEAD'"
    ]


def test_eval_new_op_on_a_change_without_the_op_is_one_line(toy: Path, tmp_path: Path) -> None:
    """A commit that does not add the op leaves nothing to score: an error, not recall 1.0."""
    repo = _one_commit(toy, tmp_path)
    plan = repo / "toy" / "mid" / "plan.py"
    plan.write_text(plan.read_text(encoding="utf-8") + "\n# no op here\n", encoding="utf-8")
    _git(repo, "commit", "-q", "-am", "second")
    cli = _eval_at_head(repo)
    assert cli.returncode == 2
    parent = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "HEAD^"], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert cli.stderr.strip().splitlines()[-1:] == [
        f"error: {parent[:12]}..HEAD changes no mapped file that names gelu: nothing to score the "
        "prediction against (--at names the commit that added the op)"
    ]


def test_the_evaluations_own_bookkeeping_is_no_change_for_the_op(
    toy: Path, toy_view: MapView, tmp_path: Path
) -> None:
    """A list of saved predictions gaining the new one's entry names the saved file, which the
    map ignores and is named after the op: bookkeeping, not a place the op reached, and so is
    the comment above the entry, in the same run of lines. A line spelling the op in another
    file, naming no such file, still counts, as does one after a blank line."""
    prediction = walk_new_op(toy_view, "gelu").to_json()
    repo = _one_commit(toy, tmp_path)
    config = repo / "stackmap.toml"
    config.write_text(
        config.read_text(encoding="utf-8").replace(
            'tests = ["tests/**"]', 'tests = ["tests/**"]\nignore = ["tests/**/fixtures/**"]'
        ),
        encoding="utf-8",
    )
    _git(repo, "commit", "-qam", "ignore fixtures")
    (repo / "tests" / "fixtures").mkdir()
    (repo / "tests" / "fixtures" / "new_op_gelu.json").write_text(
        '{"op": "gelu"}\n', encoding="utf-8"
    )
    (repo / "tests" / "test_saved.py").write_text(
        "SAVED = {\n    # gelu like relu, saved blind\n"
        '    "new_op_gelu.json": ("gelu", "relu"),\n}\n',
        encoding="utf-8",
    )
    ops = repo / "toy" / "front" / "ops.py"
    text = ops.read_text(encoding="utf-8")
    ops.write_text(text.replace('    RELU = "Relu"\n', '    RELU = "Relu"\n    GELU = "Gelu"\n'))
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "gelu")
    result = compare_prediction(prediction, repo, "HEAD~1..HEAD")
    assert result["bookkeeping"] == ["new_op_gelu.json"]
    assert result["ignored_files"] == ["tests/fixtures/new_op_gelu.json"]
    assert result["files"]["hits"] == ["toy/front/ops.py"]
    assert result["files"]["missed"] == []
    assert result["symbols"]["hits"] == ["toy.front.ops.OpType.GELU"]
    assert result["symbols"]["missed"] == []
    saved = repo / "tests" / "test_saved.py"
    saved.write_text(saved.read_text(encoding="utf-8") + "\n# gelu is scored\n", encoding="utf-8")
    _git(repo, "commit", "-qam", "a note on gelu")
    later = compare_prediction(prediction, repo, "HEAD~2..HEAD")
    assert later["files"]["missed"] == ["tests/test_saved.py"]  # after the blank line
