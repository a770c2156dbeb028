"""``ask()`` and ``stackmap ask``: the answer record, role ordering and every kind of bad input
(each a typed error with a one-line message and exit status 2 on the command line)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mapper.agent import AskError, Intent, ask
from mapper.agent.mapview import MapView
from mapper.cli import app
from mapper.errors import StoreError, UnknownNameError

MINIREPO = Path(__file__).resolve().parents[1] / "fixtures" / "minirepo"


def test_answer_record_carries_intent_entities_citations_and_tool_calls(
    repo_view: MapView,
) -> None:
    a = ask("What breaks if I change umd_kmd.submit?", map=repo_view)
    assert a.intent is Intent.IMPACT
    assert a.entities[0].id == "interface:umd_kmd.submit"
    assert [t.tool for t in a.tool_calls] == ["impact", "node"]
    assert a.known and a.mode == "default" and a.dropped == ()
    entry = repo_view.node("interface:umd_kmd.submit")
    assert entry is not None and entry.path == "contracts/umd_kmd.yaml"
    assert f"{entry.path}:{entry.line}" in {c.where for c in a.citations}
    record = a.to_json()
    assert set(record) == {
        "question",
        "answer",
        "intent",
        "known",
        "role",
        "mode",
        "entities",
        "citations",
        "tool_calls",
        "latency_ms",
        "warnings",
        "dropped",
    }
    assert json.loads(json.dumps(record)) == record


def test_role_puts_its_layers_first(repo_view: MapView) -> None:
    question = "What breaks if I change umd_kmd.submit?"
    plain = ask(question, map=repo_view)
    for role in ("driver", "compiler"):
        a = ask(question, role=role, map=repo_view)
        assert a.role == role
        layers = repo_view.role(role).layers

        def rank(layer: str | None, layers: tuple[str, ...] = layers) -> int:
            return layers.index(layer) if layer in layers else len(layers)

        cited = [
            rank(
                repo_view.node(c.node).layer
                if c.node and repo_view.node(c.node)
                else repo_view.config.layer_of(c.path)
            )
            for c in a.citations
        ]
        assert cited == sorted(cited)
        assert [rank(e.layer) for e in a.entities] == sorted(rank(e.layer) for e in a.entities)
        assert {c.where for c in a.citations} == {c.where for c in plain.citations}
    driver = ask(question, role="driver", map=repo_view)
    assert repo_view.config.layer_of(driver.citations[0].path) in ("umd", "kmd", None)


def test_empty_question_is_refused(repo_view: MapView) -> None:
    with pytest.raises(AskError, match="empty question"):
        ask("   ", map=repo_view)


def test_a_100_kb_question_is_refused(repo_view: MapView) -> None:
    with pytest.raises(AskError, match="question too long: 102400 characters, at most 4000"):
        ask("x" * 102_400, map=repo_view)


def test_question_in_another_language_says_the_map_does_not_know(repo_view: MapView) -> None:
    a = ask("如何添加量化算子？", map=repo_view)
    assert a.intent is Intent.UNKNOWN and not a.known
    assert a.answer.startswith("The map does not know how to read this question")
    assert a.warnings == (
        "the question is not in English; the default path matches only the map's names in it",
    )


def test_code_names_in_another_language_still_link(repo_view: MapView) -> None:
    a = ask("如果我修改 umd_kmd.submit 会影响什么？", map=repo_view)
    assert a.entities[0].id == "interface:umd_kmd.submit"
    assert a.known


def test_unknown_role_lists_the_known_ones(repo_view: MapView) -> None:
    with pytest.raises(
        UnknownNameError, match="unknown role 'ops'; known: compiler, driver, runtime"
    ):
        ask("what should I read", role="ops", map=repo_view)


def test_no_map_yet_names_the_command_to_run(tmp_path: Path) -> None:
    root = tmp_path / "mini"
    shutil.copytree(MINIREPO, root, ignore=shutil.ignore_patterns(".stackmap"))
    with pytest.raises(StoreError, match=r"run `stackmap ingest .*` first"):
        ask("where is the runtime core", map=root)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["ask", ""], "error: empty question"),
        (["ask", "y" * 102_400], "error: question too long: 102400 characters"),
        (["ask", "what breaks", "--role", "ops"], "error: unknown role 'ops'; known: compiler"),
    ],
)
def test_cli_bad_input_exits_2_with_one_line(args: list[str], message: str, tmp_path: Path) -> None:
    result = CliRunner().invoke(app, [*args, "-C", str(MINIREPO)])
    assert result.exit_code == 2
    assert result.output.startswith(message)
    assert result.output.count("\n") == 1


def test_cli_no_map_exits_2_naming_ingest(tmp_path: Path) -> None:
    root = tmp_path / "mini"
    shutil.copytree(MINIREPO, root, ignore=shutil.ignore_patterns(".stackmap"))
    result = CliRunner().invoke(app, ["ask", "where is the runtime core", "-C", str(root)])
    assert result.exit_code == 2
    assert "run `stackmap ingest" in result.output


def test_another_op_is_told_the_walk_is_written_for_quantize(repo_view: MapView) -> None:
    a = ask("How would I add support for a dequantize operator?", map=repo_view)
    assert a.intent is Intent.NEW_OP
    assert a.answer.splitlines()[1] == (
        "(The map's walk is written for quantize; it names the places any new op crosses.)"
    )
    quantize = ask("What changes to add a quantize op?", map=repo_view)
    assert "written for quantize" not in quantize.answer
