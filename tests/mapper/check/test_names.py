"""The check's name questions go to the ingest resolver: re-exports, star imports, inherited
members, instance attributes (:func:`mapper.ingest.definitions.definition`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mapper.check.facts import collect


@pytest.fixture
def stack(clean_copy: Path) -> Path:
    (clean_copy / "fx/kmd/base.py").write_text(
        "class Base:\n    def close(self) -> None:\n        return None\n", encoding="utf-8"
    )
    device = clean_copy / "fx/kmd/device.py"
    text = device.read_text(encoding="utf-8").replace(
        "class Device:", "from fx.kmd.base import Base\n\n\nclass Device(Base):"
    )
    device.write_text(text, encoding="utf-8")
    (clean_copy / "fx/kmd/__init__.py").write_text("from fx.kmd.device import *\n")
    (clean_copy / "fx/umd/__init__.py").write_text("from fx.umd.session import Session\n")
    return clean_copy


@pytest.mark.parametrize(
    ("name", "canonical"),
    [
        ("fx.kmd.device.Device.close", "fx.kmd.base.Base.close"),  # inherited
        ("fx.kmd.Device.alloc", "fx.kmd.device.Device.alloc"),  # star re-export
        ("fx.umd.Session.submit", "fx.umd.session.Session.submit"),  # named re-export
        ("fx.umd.session.Session.device", "fx.umd.session.Session.device"),  # self.device = ...
        ("fx.kmd.dtypes.DType.F16", "fx.kmd.dtypes.DType.F16"),  # enum member
        ("fx.kmd", "fx.kmd"),  # a package
    ],
)
def test_resolves(stack: Path, name: str, canonical: str) -> None:
    found = collect(stack).definition(name)
    assert found is not None and found.name == canonical


@pytest.mark.parametrize(
    "name", ["fx.kmd.device.Device.nope", "fx.kmd.nothing", "fx.umd.Session.absent"]
)
def test_does_not_resolve(stack: Path, name: str) -> None:
    assert collect(stack).definition(name) is None


def test_python_names_are_rooted_in_the_repository(stack: Path) -> None:
    facts = collect(stack)
    assert facts.is_python_name("fx.kmd.device")
    assert not facts.is_python_name("numpy.ndarray")
    assert not facts.is_python_name("fx")  # one part: ambiguous with a plain word
