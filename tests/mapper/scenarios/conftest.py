"""Scenario fixtures: a three-layer toy stack with deliberate holes (the middle layer's op
vocabulary lacks RELU and its op path calls nothing below; one back-end error is never raised,
none is reported by a contract), and this repository's own map."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from mapper.config import load_config
from mapper.impact import MapView, open_view
from mapper.ingest import ingest

REPO = Path(__file__).resolve().parents[3]
CONFIG = """[stackmap]
name = "toy"
contracts = "contracts"
docs = ["docs"]
tests = ["tests/**"]

[[layers]]
id = "front"
name = "Front end"
paths = ["toy/front/**"]
description = "Imports models."

[[layers]]
id = "mid"
name = "Middle"
paths = ["toy/mid/**"]
description = "Plans work."

[[layers]]
id = "back"
name = "Back end"
paths = ["toy/back/**"]
description = "Runs kernels."
"""
FILES = {
    "toy/__init__.py": "",
    "toy/front/__init__.py": "",
    "toy/front/ops.py": (
        "import enum\n\nfrom toy.mid.plan import plan\n\n\n"
        "class OpType(enum.Enum):\n"
        '    ADD = "Add"\n    MUL = "Mul"\n    SUB = "Sub"\n    RELU = "Relu"\n\n\n'
        "def import_relu(x):\n    return plan(OpType.RELU, x)\n\n\n"
        "def import_add(x):\n    return plan(OpType.ADD, x)\n"
    ),
    "toy/mid/__init__.py": "",
    "toy/mid/plan.py": (
        "import enum\n\nfrom toy.back.kernels import launch\n\n\n"
        "class Step(enum.Enum):\n    ADD = 1\n    MUL = 2\n    SUB = 3\n    COPY = 4\n\n\n"
        "def plan(op, x):\n    return [op, x]\n\n\n"
        "def retry_launch(x):\n    return launch(x)\n"
    ),
    "toy/back/__init__.py": "",
    "toy/back/errors.py": (
        "class DeviceError(Exception):\n    pass\n\n\nclass LostError(Exception):\n    pass\n"
    ),
    "toy/back/kernels.py": (
        "import enum\n\nfrom toy.back.errors import DeviceError\n\n\n"
        "class KernelId(enum.IntEnum):\n    ADD = 1\n    MUL = 2\n    SUB = 3\n    RELU = 4\n\n\n"
        "def relu(x):\n    return max(x, 0)\n\n\n"
        "def add(x, y):\n    return x + y\n\n\n"
        "def launch(x):\n    if x < 0:\n        raise DeviceError(x)\n    return x\n"
    ),
    "tests/test_kernels.py": (
        "from toy.back.kernels import relu\n\n\ndef test_relu_clamps():\n    assert relu(-1) == 0\n"
    ),
    "docs/scenarios/new-op-relu.md": (
        "---\ntitle: Adding an op like ReLU\nscenario: new-op-relu\nsteps:\n"
        "  - {component: front.ops, action: an importer and an OpType value}\n"
        "  - {component: mid.plan, action: a planning step}\n"
        "  - {component: back.gone, action: a kernel in a module that was removed}\n"
        "---\n\n# Adding an op like ReLU\n"
    ),
    "docs/back.md": (
        "---\ntitle: Back end kernels\nlayer: back\ncomponent: back.kernels\n"
        "paths: [toy/back/kernels.py]\n---\n\n# Back end kernels\n\n"
        "`toy.back.kernels.relu` clamps at zero.\n"
    ),
}


@pytest.fixture(scope="module")
def toy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("toy")
    (root / "stackmap.toml").write_text(CONFIG, encoding="utf-8")
    for path, text in FILES.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    ingest(root, embed=False, progress=False)
    return root


@pytest.fixture(scope="module")
def toy_view(toy: Path) -> MapView:
    return open_view(toy)


@pytest.fixture(scope="module")
def repo_view(tmp_path_factory: pytest.TempPathFactory) -> MapView:
    """This repository's map, ingested without embeddings into a private store."""
    store = tmp_path_factory.mktemp("store")
    config = dataclasses.replace(load_config(REPO), store=str(store))
    ingest(REPO, config, embed=False, progress=False)
    return open_view(REPO, config)
