"""The rules reference page documents every registered rule: id, name, severity, policy,
an example and a fix; the registry refuses duplicates and names the known rules."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mapper.check import registry
from mapper.check.rules import register_all
from mapper.errors import UnknownNameError

PAGE = Path(__file__).parents[3] / "knowledge_base" / "reference" / "check-rules.md"


def _sections() -> dict[str, str]:
    text = PAGE.read_text(encoding="utf-8")
    parts = re.split(r"^### (SM\d{3})\s*$", text, flags=re.MULTILINE)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts) - 1, 2)}


def test_every_rule_is_documented_with_example_and_fix() -> None:
    register_all()
    sections = _sections()
    rules = registry.all_rules()
    assert set(sections) == {r.info.id for r in rules}
    for rule in rules:
        body = sections[rule.info.id]
        head = body.strip().splitlines()[0]
        assert f"`{rule.info.name}`" in head
        assert rule.info.severity.value in head
        assert f"policy: {rule.info.policy.value}" in head
        assert "```" in body, f"{rule.info.id} has no example"
        assert "\nFix: " in body, f"{rule.info.id} has no fix"


def test_page_has_front_matter_with_title() -> None:
    text = PAGE.read_text(encoding="utf-8")
    assert text.startswith("---\ntitle: ")


def test_registry_lookup_by_id_and_name() -> None:
    register_all()
    assert registry.get("sm102") is registry.get("signature-drift")
    with pytest.raises(UnknownNameError) as err:
        registry.get("no-such-rule")
    assert "SM601 (constant-mismatch)" in str(err.value)
    with pytest.raises(ValueError):
        registry.register(registry.get("SM101"))
    assert [r.info.id for r in registry.select(["layer-skip", "SM201"])] == ["SM201", "SM203"]
