from __future__ import annotations

import tomllib
from pathlib import Path

from mapper.config import load_config
from mapper.ingest.propose import propose

REPO = Path(__file__).resolve().parents[3]


def test_proposal_for_this_repository_matches_its_config() -> None:
    proposed = tomllib.loads(propose(REPO))
    actual = load_config(REPO)
    assert [(la["id"], la["paths"]) for la in proposed["layers"]] == [
        (layer.id, list(layer.paths)) for layer in actual.layers
    ]
    assert proposed["stackmap"]["docs"] == ["knowledge_base"]
    assert proposed["stackmap"]["contracts"] == "contracts"
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
