"""Role views over the miniature repository: boundary interfaces with providers and
consumers, scenarios crossing the role's layers, and breaking changes in those layers."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mapper.cli import app
from mapper.config import RoleConfig, load_config
from mapper.errors import UnknownNameError
from mapper.ingest import ingest
from mapper.ingest.store import Store
from mapper.query import open_map, read_map
from mapper.roles import role_view

GIT_ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_SYSTEM": os.devnull,
}


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, env=GIT_ENV, check=True
    ).stdout.strip()


@pytest.fixture
def mini_git(minirepo: Path) -> Path:
    (minirepo / ".gitignore").write_text(".stackmap/\n", encoding="utf-8")
    git(minirepo, "init", "-q", "-b", "main")
    git(minirepo, "add", "-A")
    git(minirepo, "commit", "-q", "-m", "one")
    ingest(minirepo, embed=False, progress=False)
    return minirepo


def test_compiler_role_sees_its_boundaries_and_scenario(mini_git: Path) -> None:
    view = role_view(mini_git, "compiler", open_map(mini_git), findings=())
    assert [layer.id for layer in view.layers] == ["compiler", "runtime"]
    assert [i.id for i in view.interfaces] == [
        "interface:compiler_runtime.launch",
        "interface:runtime_driver.alloc_pages",
        "interface:runtime_driver.alloc_rpc",
        "interface:runtime_driver.free_pages",
    ]
    launch = view.interfaces[0]
    assert (launch.upper, launch.lower, launch.sync) == ("compiler", "runtime", "async")
    assert "layer:runtime" in [p.id for p in launch.providers]
    assert "layer:compiler" in [p.id for p in launch.consumers]
    assert {p.evidence for p in launch.providers if p.kind == "layer"} == {"contract"}
    assert [s.id for s in view.scenarios] == ["scenario:launch-fused"]
    assert [st.in_role for st in view.scenarios[0].steps] == [True, True, True]
    assert view.changes == () and view.changes_error is None


def test_a_role_outside_the_scenario_does_not_list_it(mini_git: Path) -> None:
    config = load_config(mini_git)
    config = dataclasses.replace(
        config, roles=(*config.roles, RoleConfig("driver", "Driver", ("driver",), ()))
    )
    store = Store(config.store_path)
    m = read_map(store.map_path(), config, store.current_version() or 0)
    view = role_view(mini_git, "driver", m, findings=())
    assert [i.id for i in view.interfaces] == [
        "interface:runtime_driver.alloc_pages",
        "interface:runtime_driver.alloc_rpc",
        "interface:runtime_driver.free_pages",
    ]
    assert view.scenarios == ()


def test_breaking_changes_are_listed_for_the_layer_they_touch(mini_git: Path) -> None:
    base = git(mini_git, "rev-parse", "HEAD")
    passes = mini_git / "compiler" / "passes.py"
    text = passes.read_text(encoding="utf-8")
    passes.write_text(text.replace("keep: bool = False", "keep: bool"), encoding="utf-8")
    git(mini_git, "commit", "-q", "-am", "two")
    view = role_view(mini_git, "compiler", open_map(mini_git), findings=())
    assert view.changes_since == base  # two commits: "recent" reaches the first one
    assert [(c["layer"], c["name"]) for c in view.changes] == [
        ("compiler", "compiler.passes.FusePass.fuse_pair")
    ]


def test_unknown_role_lists_the_known_ones(mini_git: Path) -> None:
    with pytest.raises(UnknownNameError, match="known: compiler"):
        role_view(mini_git, "manager", open_map(mini_git), findings=())


def test_role_command_json_and_text(mini_git: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["role", "compiler", "--root", str(mini_git), "--json"])
    assert result.exit_code == 0, result.output
    body = json.loads(result.stdout)
    assert body["role"]["id"] == "compiler"
    assert len(body["interfaces"]) == 4
    text = runner.invoke(app, ["role", "compiler", "--root", str(mini_git)])
    assert text.exit_code == 0
    assert "interfaces at the boundaries (4)" in text.stdout
    assert "scenarios crossing these layers (1)" in text.stdout


def test_role_command_errors_exit_2(mini_git: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    bad = runner.invoke(app, ["role", "manager", "--root", str(mini_git)])
    assert bad.exit_code == 2
    assert "unknown role 'manager'; known: compiler" in bad.output
    (tmp_path / "stackmap.toml").write_text(
        (mini_git / "stackmap.toml").read_text(encoding="utf-8"), encoding="utf-8"
    )
    missing = runner.invoke(app, ["role", "compiler", "--root", str(tmp_path)])
    assert missing.exit_code == 2
    assert "run `stackmap ingest`" in missing.output
