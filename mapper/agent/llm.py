"""The chat-model path: a langchain 1.x agent over the map's tools, its citations validated.

Configured by ``[agent]`` in ``stackmap.toml`` or by the environment, which wins::

    [agent]
    provider = "openai"                    # any OpenAI-compatible endpoint (vLLM, llama.cpp)
    model = "qwen2.5-7b-instruct"          # or provider = "ollama"
    base_url = "http://127.0.0.1:8080/v1"  # STACKMAP_LLM_BASE_URL; the key: STACKMAP_LLM_API_KEY
    timeout_s = 30

(``STACKMAP_LLM_PROVIDER`` / ``STACKMAP_LLM_MODEL`` likewise; ``STACKMAP_LLM_PROVIDER=none``
turns a configured model off.) The provider packages come with ``pip install '.[llm]'``.

Behaviour when the model cannot be used — endpoint down, provider package missing, the
endpoint failing mid-answer: the deterministic default answers, and the answer carries a
warning naming the endpoint and the reason. A wrong configuration (unknown provider, no model
name) is a ConfigError.

The model sees the question and the tools; it must cite ``[path:line]`` exactly as tools
returned them. Its answer is split into claims (lines); a claim citing a place no tool
returned, or a place that does not hold what it claims, is dropped and listed in ``dropped``.
"""

from __future__ import annotations

import os
import re
import tomllib
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

from mapper.agent.entities import link
from mapper.agent.intent import classify
from mapper.agent.records import Citation, Entity, Intent
from mapper.agent.tools import Toolbox
from mapper.config import CONFIG_FILE, RoleConfig
from mapper.errors import ConfigError

PROVIDERS = ("openai", "ollama")
_CITE = re.compile(r"\[([^\[\]\s]+):(\d+)\]")

SYSTEM_PROMPT = """You answer questions about a software stack's map (layers, components,
interfaces, scenarios) using only the tools. Call tools to find the facts, then answer briefly.
After every claim put the citation the tools returned for it, exactly as [path:line]. Never cite
a place no tool returned. If the tools do not hold the answer, say "The map does not know"."""


@dataclass(frozen=True, slots=True)
class LLMConfig:
    provider: str
    model: str
    base_url: str | None = None
    api_key: str | None = None
    timeout_s: float = 30.0

    @property
    def probe_url(self) -> str | None:
        if not self.base_url:
            return None
        base = self.base_url.rstrip("/")
        return f"{base}/api/tags" if self.provider == "ollama" else f"{base}/models"


def load_llm_config(root: Any) -> LLMConfig | None:
    """The configured chat model, or None when none is; ConfigError for a bad one."""
    table: dict[str, Any] = {}
    path = root / CONFIG_FILE
    if path.is_file():
        try:
            table = dict(tomllib.loads(path.read_text(encoding="utf-8")).get("agent") or {})
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise ConfigError(f"unreadable {CONFIG_FILE}: {exc}", path=str(path)) from exc
    env = {
        k: os.environ.get(f"STACKMAP_LLM_{k.upper()}")
        for k in ("provider", "model", "base_url", "api_key", "timeout_s")
    }
    merged = {**table, **{k: v for k, v in env.items() if v}}
    provider = merged.get("provider")
    if not provider or provider == "none":
        return None
    if provider not in PROVIDERS:
        raise ConfigError(
            f"unknown chat-model provider {provider!r}; known: {', '.join(PROVIDERS)}",
            provider=provider,
        )
    if not merged.get("model"):
        raise ConfigError(
            "a chat-model provider is set but no model name (agent.model or STACKMAP_LLM_MODEL)"
        )
    try:
        timeout = float(merged.get("timeout_s", 30.0))
    except ValueError as exc:
        raise ConfigError(f"agent.timeout_s is not a number: {merged['timeout_s']!r}") from exc
    return LLMConfig(
        str(provider), str(merged["model"]), merged.get("base_url"), merged.get("api_key"), timeout
    )


def unreachable(cfg: LLMConfig) -> str | None:
    """Why the endpoint cannot be reached (None when it answers, or has no URL to probe)."""
    url = cfg.probe_url
    if url is None:
        return None
    try:
        with urllib.request.urlopen(url, timeout=min(cfg.timeout_s, 3.0)):
            return None
    except urllib.error.HTTPError:
        return None  # it answered: a status code is an answer
    except (urllib.error.URLError, OSError, ValueError) as exc:
        return str(getattr(exc, "reason", exc))


def chat_model(cfg: LLMConfig) -> Any:
    """The provider's langchain chat model; ImportError when its package is not installed."""
    if cfg.provider == "ollama":
        from langchain_ollama import ChatOllama

        return ChatOllama(
            model=cfg.model, base_url=cfg.base_url, client_kwargs={"timeout": cfg.timeout_s}
        )
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(
        model=cfg.model,
        base_url=cfg.base_url,
        api_key=cfg.api_key or "none",
        timeout=cfg.timeout_s,
        max_retries=0,
    )


def _failures() -> tuple[type[BaseException], ...]:
    """Exceptions that mean "the endpoint failed", from whichever client libraries exist."""
    found: list[type[BaseException]] = [OSError, TimeoutError]
    try:
        import httpx

        found.append(httpx.HTTPError)
    except ImportError:
        pass
    try:
        import openai

        found.append(openai.APIError)
    except ImportError:
        pass
    return tuple(found)


Modelled = tuple[str, Intent, list[Entity], list[Citation], bool, list[str]]


def run_model(model: Any, box: Toolbox, question: str, role: RoleConfig | None) -> Modelled:
    """Let ``model`` answer through the tools; keep only claims whose citations hold."""
    from langchain.agents import create_agent
    from langchain_core.messages import AIMessage, HumanMessage

    from mapper.agent.citations import validate
    from mapper.agent.lctools import as_tools

    prompt = SYSTEM_PROMPT
    if role is not None:
        prompt += f"\nThe reader is a {role.name}; put layers {', '.join(role.layers)} first."
    agent = create_agent(model, as_tools(box), system_prompt=prompt)
    state = agent.invoke({"messages": [HumanMessage(question)]}, {"recursion_limit": 16})
    final = next((m for m in reversed(state["messages"]) if isinstance(m, AIMessage)), None)
    text = str(final.content) if final is not None else ""
    kept_lines: list[str] = []
    cites: dict[tuple[str, int], Citation] = {}
    dropped: list[str] = []
    for line in text.splitlines():
        problems = []
        found = []
        for path, number in _CITE.findall(line):
            c = box.returned.get((path, int(number)))
            if c is None:
                problems.append(f"{path}:{number}: no tool returned this citation")
            elif (why := validate(box.view.root, c)) is not None:
                problems.append(why)
            else:
                found.append(c)
        if problems:
            dropped.extend(f"{p} (claim dropped: {line.strip()[:120]})" for p in problems)
            continue
        kept_lines.append(line)
        cites.update({(c.path, c.line): c for c in found})
    intent, _ = classify(question)
    body = "\n".join(kept_lines).strip()
    known = bool(cites) and "the map does not know" not in body.lower()
    return body, intent, link(box.view, question), list(cites.values()), known, dropped


def model_answer(
    box: Toolbox, question: str, role: RoleConfig | None, warnings: list[str], model: Any = None
) -> Modelled | None:
    """The model's answer, or None (with a warning when one was configured but failed).

    ``model``: a langchain chat model to use instead of the configured one."""
    where = "the given chat model"
    if model is None:
        cfg = load_llm_config(box.view.root)
        if cfg is None:
            return None
        where = cfg.base_url or cfg.provider
        reason = unreachable(cfg)
        if reason is not None:
            warnings.append(
                f"chat model endpoint {where} unreachable ({reason}); answered "
                "with the deterministic default"
            )
            return None
        try:
            model = chat_model(cfg)
        except ImportError as exc:
            warnings.append(
                f"chat model provider {cfg.provider!r} not installed ({exc.name}; "
                "pip install '.[llm]'); answered with the deterministic default"
            )
            return None
    calls_before = len(box.calls)
    try:
        return run_model(model, box, question, role)
    except _failures() as exc:
        del box.calls[calls_before:]
        warnings.append(
            f"chat model endpoint {where} failed ({type(exc).__name__}: {exc}); "
            "answered with the deterministic default"
        )
        return None
