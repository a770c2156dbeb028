from __future__ import annotations

from pathlib import Path

import pytest

from mapper.errors import IngestError
from mapper.ingest.docs import parse_markdown, parse_markdown_text, slugify
from mapper.material import ScenarioStep
from mapper.model import Location

MINIREPO = Path(__file__).parents[1] / "fixtures" / "minirepo"


def test_front_matter_sections_and_mentions() -> None:
    page = parse_markdown(MINIREPO, "docs/compiler/passes.md")
    assert page.front_matter["component"] == "compiler.passes"
    assert page.front_matter["upstream"] == [] and page.title == "Compiler passes"
    assert [(s.anchor, s.heading, s.location.line) for s in page.sections] == [
        ("compiler-passes", "Compiler passes", 11),
        ("fusion", "Fusion", 15),
    ]
    assert page.sections[1].node_id == "doc:docs/compiler/passes.md#fusion"
    assert dict(page.sections[0].front_matter)["layer"] == "compiler"
    assert page.mentions == (
        ("compiler.passes.FusePass", Location("docs/compiler/passes.md", 13)),
        ("compiler.ir.make_node", Location("docs/compiler/passes.md", 17)),
        ("missing.symbol.Name", Location("docs/compiler/passes.md", 17)),
    )
    assert page.warnings == ()


def test_scenario_steps() -> None:
    page = parse_markdown(MINIREPO, "docs/scenarios/launch.md")
    assert page.steps == (
        ScenarioStep(
            1, "component:compiler.passes", "fuse the op", Location("docs/scenarios/launch.md", 6)
        ),
        ScenarioStep(
            2,
            "interface:compiler_runtime.launch",
            "hand over to the runtime",
            Location("docs/scenarios/launch.md", 7),
        ),
        ScenarioStep(
            3, "component:runtime.core", "launch it", Location("docs/scenarios/launch.md", 8)
        ),
    )


def test_page_without_front_matter() -> None:
    page = parse_markdown(MINIREPO, "notes/memory-release.md")
    assert page.front_matter == {} and page.title == "Releasing device memory"
    assert [s.anchor for s in page.sections] == ["releasing-device-memory"]


def test_fences_duplicate_headings_and_bad_front_matter() -> None:
    text = (
        "---\ntitle: [unclosed\n---\nintro `a.b`\n# Same\n```\n# not a heading `x.y`\n```\n# Same\n"
    )
    page = parse_markdown_text(text, "p.md")
    assert page.front_matter == {}
    assert len(page.warnings) == 1 and "invalid YAML" in page.warnings[0]
    assert [s.anchor for s in page.sections] == ["", "same", "same-1"]
    assert page.sections[0].node_id == "doc:p.md"
    assert [m for m, _ in page.mentions] == ["a.b"]
    assert slugify("Freeing memory (the fence rule)!") == "freeing-memory-the-fence-rule"


def test_non_utf8_page_raises(tmp_path: Path) -> None:
    (tmp_path / "x.md").write_bytes(b"# caf\xe9\n")
    with pytest.raises(IngestError, match="not UTF-8"):
        parse_markdown(tmp_path, "x.md")
