"""The chat-model path, offline: a scripted fake chat model from langchain-core whose tool calls
run the real tools on the fixture map; citations no tool returned are rejected; a configured
endpoint that is down falls back to the deterministic default with a warning."""

from __future__ import annotations

import dataclasses
import shutil
import socket
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage

from mapper.agent import Intent, ask
from mapper.agent.llm import load_llm_config, run_model
from mapper.agent.mapview import MapView
from mapper.agent.tools import Toolbox
from mapper.config import load_config
from mapper.errors import ConfigError
from mapper.ingest import ingest

MINIREPO = Path(__file__).resolve().parents[1] / "fixtures" / "minirepo"
GOOD = "Callers wait on the fence before freeing pages. [contracts/runtime_driver.yaml:21]"
FABRICATED = "The driver zeroes freed pages. [driver/mini_drv.c:3]"


class ScriptedChatModel(FakeMessagesListChatModel):
    """Replays its messages in order; tool binding is accepted (the script names the calls)."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChatModel:  # type: ignore[override]
        return self


def _script(*calls: tuple[str, dict[str, Any]], final: str) -> ScriptedChatModel:
    first = AIMessage(
        content="",
        tool_calls=[
            {"name": name, "args": args, "id": f"call-{i}", "type": "tool_call"}
            for i, (name, args) in enumerate(calls)
        ],
    )
    return ScriptedChatModel(responses=[first, AIMessage(content=final)])


def test_tool_calls_run_the_real_tools_and_a_fabricated_citation_is_rejected(
    mini_view: MapView,
) -> None:
    box = Toolbox(mini_view)
    model = _script(
        ("node", {"node_id": "runtime_driver.free_pages"}), final=f"{GOOD}\n{FABRICATED}"
    )
    body, intent, entities, cites, known, dropped = run_model(
        model, box, "Who synchronises before runtime_driver.free_pages?", None
    )
    assert [c.tool for c in box.calls] == ["node"]
    assert body == GOOD
    assert [c.where for c in cites] == ["contracts/runtime_driver.yaml:21"]
    assert dropped == [
        f"driver/mini_drv.c:3: no tool returned this citation (claim dropped: {FABRICATED})"
    ]
    assert known and intent is Intent.LOCATE
    assert entities[0].id == "interface:runtime_driver.free_pages"


def test_ask_with_a_model_reports_the_model_path(mini_view: MapView) -> None:
    model = _script(
        ("interfaces_between", {"upper": "runtime", "lower": "driver"}),
        ("search", {"query": "MINI_IOCTL_ALLOC"}),
        final=f"{GOOD}\nAllocation is an ioctl. [driver/mini_drv.h:7]",
    )
    a = ask("Which interfaces sit between the runtime and the driver?", map=mini_view, model=model)
    assert a.mode == "model"
    # one model turn's tool calls run concurrently: their order is not fixed
    assert sorted(t.tool for t in a.tool_calls) == ["interfaces_between", "search"]
    assert {c.where for c in a.citations} == {
        "contracts/runtime_driver.yaml:21",
        "driver/mini_drv.h:7",
    }
    assert a.dropped == ()


def test_a_returned_citation_that_does_not_hold_is_dropped(mini_view: MapView) -> None:
    box = Toolbox(mini_view)
    box.run("search", query="MINI_IOCTL_ALLOC")
    wrong = dataclasses.replace(box.returned[("driver/mini_drv.h", 7)], needle="mini_free_pages")
    box.returned[("driver/mini_drv.h", 7)] = wrong
    model = ScriptedChatModel(responses=[AIMessage(content="Frees pages. [driver/mini_drv.h:7]")])
    body, *_, dropped = run_model(model, box, "what frees pages", None)
    assert body == ""
    assert dropped == [
        "driver/mini_drv.h:7: does not contain 'mini_free_pages' (claim dropped: "
        "Frees pages. [driver/mini_drv.h:7])"
    ]


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_endpoint_down_answers_with_the_default_and_a_warning(tmp_path: Path) -> None:
    root = tmp_path / "mini"
    shutil.copytree(MINIREPO, root, ignore=shutil.ignore_patterns(".stackmap"))
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    with (root / "stackmap.toml").open("a", encoding="utf-8") as fh:
        fh.write(f'\n[agent]\nprovider = "openai"\nmodel = "local"\nbase_url = "{url}"\n')
    ingest(root, load_config(root), embed=False, progress=False)
    a = ask("Which interfaces sit between the runtime and the driver?", map=root)
    assert a.mode == "default" and a.known
    assert len(a.warnings) == 1
    assert a.warnings[0].startswith(f"chat model endpoint {url} unreachable (")
    assert a.warnings[0].endswith("); answered with the deterministic default")


def test_model_configuration_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "stackmap.toml").write_text('[agent]\nprovider = "gpt"\n', encoding="utf-8")
    with pytest.raises(
        ConfigError, match="unknown chat-model provider 'gpt'; known: openai, ollama"
    ):
        load_llm_config(tmp_path)
    monkeypatch.setenv("STACKMAP_LLM_PROVIDER", "ollama")
    with pytest.raises(ConfigError, match="no model name"):
        load_llm_config(tmp_path)
    monkeypatch.setenv("STACKMAP_LLM_MODEL", "qwen")
    assert load_llm_config(tmp_path) == load_llm_config(tmp_path)
    assert load_llm_config(tmp_path).model == "qwen"  # type: ignore[union-attr]
    monkeypatch.setenv("STACKMAP_LLM_PROVIDER", "none")
    assert load_llm_config(tmp_path) is None


def test_cli_endpoint_down_warns_on_stderr_and_answers(tmp_path: Path) -> None:
    import json

    from typer.testing import CliRunner

    from mapper.cli import app

    root = tmp_path / "mini"
    shutil.copytree(MINIREPO, root, ignore=shutil.ignore_patterns(".stackmap"))
    url = f"http://127.0.0.1:{_closed_port()}"
    with (root / "stackmap.toml").open("a", encoding="utf-8") as fh:
        fh.write(f'\n[agent]\nprovider = "ollama"\nmodel = "qwen"\nbase_url = "{url}"\n')
    ingest(root, load_config(root), embed=False, progress=False)
    result = CliRunner().invoke(
        app, ["ask", "What is MINI_IOCTL_ALLOC?", "-C", str(root), "--json"]
    )
    assert result.exit_code == 0
    record = json.loads(result.stdout)
    assert record["mode"] == "default" and record["known"] is True
    assert result.stderr.startswith(f"warning: chat model endpoint {url} unreachable (")
