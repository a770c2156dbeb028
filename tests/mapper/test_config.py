from __future__ import annotations

from pathlib import Path

import pytest

from mapper.config import glob_regex, load_config
from mapper.errors import ConfigError

MINIREPO = Path(__file__).parent / "fixtures" / "minirepo"
REPO = Path(__file__).resolve().parents[2]


def test_minirepo_config() -> None:
    cfg = load_config(MINIREPO)
    assert [layer.id for layer in cfg.layers] == ["compiler", "runtime", "driver"]
    assert cfg.layer_of("kernels/add.cu") == "runtime"
    assert cfg.layer_of("driver/mini_drv.h") == "driver"
    assert cfg.layer_of("notes/lunch.md") is None
    assert cfg.layer_index("driver") == 2
    assert cfg.roles[0].layers == ("compiler", "runtime")
    assert cfg.is_doc("notes/lunch.md") and not cfg.is_doc("driver/mini_drv.h")
    assert cfg.is_ignored("build/x.o") and cfg.is_ignored(".stackmap/current")
    with pytest.raises(ConfigError, match="known: compiler, runtime, driver"):
        cfg.layer_index("hal")


def test_this_repository_config() -> None:
    cfg = load_config(REPO)
    assert cfg.layers[0].id == "adapter"
    assert cfg.layer_of("stack/kmd/memory.py") == "kmd"
    assert cfg.is_ignored("tests/mapper/fixtures/minirepo/compiler/ir.py")


@pytest.mark.parametrize(
    ("pattern", "path", "hit"),
    [
        ("a/**", "a/b/c.py", True),
        ("a/**", "ab/c.py", False),
        ("**/x.py", "x.py", True),
        ("**/x.py", "d/e/x.py", True),
        ("*.py", "d/x.py", False),
        ("a/?.c", "a/b.c", True),
    ],
)
def test_glob(pattern: str, path: str, hit: bool) -> None:
    assert bool(glob_regex(pattern).match(path)) is hit


def test_pyproject_table(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.stackmap]\nname = "p"\n[[tool.stackmap.layers]]\nid = "hal"\npaths = ["hal/**"]\n'
    )
    cfg = load_config(tmp_path)
    assert cfg.name == "p" and cfg.layer_of("hal/x.c") == "hal"


def test_layering_is_strict_or_relaxed(tmp_path: Path) -> None:
    (tmp_path / "stackmap.toml").write_text('[stackmap]\nname = "x"\n')
    assert load_config(tmp_path).layering == "strict"
    (tmp_path / "stackmap.toml").write_text('[stackmap]\nname = "x"\nlayering = "loose"\n')
    with pytest.raises(
        ConfigError, match=r"layering must be one of \['strict', 'relaxed'\]"
    ) as info:
        load_config(tmp_path)
    assert info.value.line == 3


def test_missing_and_bad_config(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="stackmap init"):
        load_config(tmp_path)
    (tmp_path / "stackmap.toml").write_text("[stackmap\n")
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path)
    assert info.value.path is not None and info.value.path.endswith("stackmap.toml")
