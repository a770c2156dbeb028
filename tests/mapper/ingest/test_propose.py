from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

from mapper.config import load_config
from mapper.ingest.propose import propose
from tests.mapper.conftest import FIXTURES

FOREIGN = FIXTURES / "foreign"

REPO = Path(__file__).resolve().parents[3]


def test_proposal_for_this_repository_matches_its_config() -> None:
    proposed = tomllib.loads(propose(REPO))
    actual = load_config(REPO)
    assert [(la["id"], la["paths"]) for la in proposed["layers"]] == [
        (layer.id, list(layer.paths)) for layer in actual.layers
    ]
    assert proposed["stackmap"]["docs"] == ["knowledge_base"]
    assert proposed["stackmap"]["contracts"] == "contracts"
    assert "layering" not in proposed["stackmap"]  # layers by name: strict, the default
    # descriptions come from the layer pages of the knowledge base when they exist
    kmd_page = REPO / "knowledge_base" / "layers" / "kmd.md"
    if kmd_page.is_file():
        first = proposed["layers"][-1]["description"]
        assert first[:40] in " ".join(kmd_page.read_text(encoding="utf-8").split())


def test_nested_and_non_code_folders_are_not_layers(tmp_path: Path) -> None:
    for folder in ("driver/kernels", "docs/compiler", "tests/runtime", "compiler"):
        (tmp_path / folder).mkdir(parents=True)
    proposed = tomllib.loads(propose(tmp_path))
    assert [(la["id"], la["paths"]) for la in proposed["layers"]] == [
        ("compiler", ["compiler/**"]),
        ("kmd", ["driver/**"]),
    ]


def test_layers_from_structure_when_folder_names_say_little(tmp_path: Path) -> None:
    root = tmp_path / "kfd"
    shutil.copytree(FOREIGN / "kfd", root)
    (root / "stackmap.toml").unlink()
    text = propose(root)
    proposed = tomllib.loads(text)
    assert proposed["stackmap"]["python_roots"] == ["user"]
    assert proposed["stackmap"]["layering"] == "relaxed"  # ranked layers: skips are allowed
    assert [(la["id"], la["paths"]) for la in proposed["layers"]] == [
        ("user_tinygrad_runtime", ["user/tinygrad/runtime/*"]),
        ("kmd", ["kernel/drivers/**"]),
        ("layer", ["kernel/include/**", "user/tinygrad/runtime/autogen/**"]),
    ]
    evidence = [line for line in text.splitlines() if line.startswith("# ") and " uses " in line]
    ops = "user/tinygrad/runtime/ops_amd.py:14"
    assert evidence == [
        f"# user/tinygrad/runtime/* uses kernel/drivers: 2 edge(s) (ioctl), e.g. {ops} (ioctl)",
        "# kernel/drivers uses kernel/include: 1 edge(s) (include),"
        " e.g. kernel/drivers/gpu/drm/amd/amdkfd/kfd_chardev.c:25 (include)",
        f"# user/tinygrad/runtime/* uses kernel/include: 2 edge(s) (ioctl), e.g. {ops} (ioctl)",
        "# user/tinygrad/runtime/* uses user/tinygrad/runtime/autogen: 3 edge(s) (call, import),"
        " e.g. user/tinygrad/runtime/ops_amd.py:5 (import)",
    ]
    (root / "stackmap.toml").write_text(text)
    config = load_config(root)
    assert [layer.id for layer in config.layers] == ["user_tinygrad_runtime", "kmd", "layer"]
    assert config.layer_of("user/tinygrad/runtime/autogen/kfd.py") == "layer"
    assert config.layer_of("user/tinygrad/runtime/ops_amd.py") == "user_tinygrad_runtime"


def test_folder_names_the_code_contradicts_give_way_to_structure(tmp_path: Path) -> None:
    files = {  # "runtime" calls up into "compiler": the names do not fit the code
        "compiler/passes.py": "def fuse():\n    return 1\n",
        "runtime/executor.py": "from compiler.passes import fuse\n\ndef run():\n    fuse()\n",
        "kernels/k.py": "def k():\n    return 0\n",
        "app/main.py": "from runtime.executor import run\n\ndef main():\n    run()\n",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    proposed = tomllib.loads(propose(tmp_path))
    assert [la["paths"] for la in proposed["layers"]] == [
        ["app/**"],
        ["runtime/**"],
        ["compiler/**", "kernels/**"],
    ]


def test_cycles_are_broken_at_their_lightest_use_not_merged(tmp_path: Path) -> None:
    files = {
        "app/main.py": "from core import api\n\ndef main():\n    return api.run()\n",
        "core/api.py": "from typing import TYPE_CHECKING\n\nfrom base import util\n\n"
        "if TYPE_CHECKING:\n    from app import main\n\n"
        "def run():\n    from app.main import main as again\n"
        "    return util.helper() + util.helper()\n",
        "core/more.py": "from base.util import helper\n\ndef more():\n    return helper()\n",
        "base/util.py": "def helper():\n    return 1\n",
        "base/hooks.py": "from core.api import run\n\ndef hook():\n    return run()\n",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    text = propose(tmp_path)
    assert [la["paths"] for la in tomllib.loads(text)["layers"]] == [
        ["app/**"],
        ["core/**"],
        ["base/**"],
    ]
    notes = [line for line in text.splitlines() if line.startswith(("# these", "# set aside"))]
    assert notes == [
        "# these depend on each other: base, core",
        "# set aside as against the grain: base uses core: 2 edge(s) (call, import), "
        "e.g. base/hooks.py:1 (import)",
    ]


def test_folders_named_as_generated_code_are_proposed_as_generated(tmp_path: Path) -> None:
    files = {
        "pkg/runtime/ops.py": "from pkg.runtime.autogen import kfd\n\ndef go():\n    kfd.f()\n",
        "pkg/runtime/autogen/kfd.py": "def f():\n    return 1\n",
        "pkg/core/base.py": "def g():\n    return 2\n",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    proposed = tomllib.loads(propose(tmp_path))
    assert proposed["stackmap"]["generated"] == ["pkg/runtime/autogen/**"]
