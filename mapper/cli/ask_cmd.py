"""``stackmap ask`` and ``stackmap eval ask``: questions to the map, and their evaluation."""

from __future__ import annotations

from pathlib import Path

import typer

from mapper.cli._common import emit_json, fail
from mapper.cli.eval_cmd import eval_app
from mapper.errors import MapperError


def register(app: typer.Typer) -> None:
    app.command("ask")(ask)


ROOT = typer.Option(Path("."), "--root", "-C", help="Repository root.")


def ask(
    question: str = typer.Argument(
        ..., help='A question in words, e.g. "what changes to add a quantize op".'
    ),
    root: Path = ROOT,
    role: str | None = typer.Option(None, "--role", help="A role id: its layers come first."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Answer a question from the map, citing its sources."""
    from mapper.agent import ask as run

    try:
        answer = run(question, role=role, map=root)
    except MapperError as exc:
        fail(exc, as_json=as_json)
    for warning in answer.warnings:
        typer.echo(f"warning: {warning}", err=True)
    if as_json:
        emit_json(answer.to_json())
        return
    typer.echo(answer.answer)
    typer.echo("")
    entities = ", ".join(e.id for e in answer.entities) or "none"
    typer.echo(f"intent: {answer.intent.value} ({answer.mode}); entities: {entities}")
    typer.echo("citations:")
    for c in answer.citations:
        typer.echo(f"  {c.where}  {c.kind.value}: {c.label}")
    for d in answer.dropped:
        typer.echo(f"  dropped: {d}")
    calls = ", ".join(t.tool for t in answer.tool_calls)
    typer.echo(f"tools: {len(answer.tool_calls)} calls ({calls}); {answer.latency_ms:.1f} ms")


@eval_app.command("ask")
def eval_ask(
    root: Path = ROOT,
    sets: list[Path] = typer.Option(
        [], "--set", help="Evaluation set YAML (repeatable; default: the shipped sets)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Score the deterministic default on the evaluation sets (fresh maps, no embeddings)."""
    from mapper.agent.evaluate import default_sets, load_set, run_set, summary

    try:
        results = {}
        for path in sets or default_sets():
            evalset = load_set(path, root.resolve())
            typer.echo(f"evaluating {evalset.name} ({len(evalset.questions)} questions)", err=True)
            results[evalset.name] = run_set(evalset)
    except MapperError as exc:
        fail(exc, as_json=as_json)
    report = summary(results)
    if as_json:
        emit_json(report)
        return
    for name, data in report["sets"].items():
        for q in data["questions"]:
            mark = "ok  " if not q["missing"] else "MISS"
            typer.echo(f"{mark} {q['score']:.2f} {name}/{q['id']}: {q['question']}")
            for m in q["missing"]:
                typer.echo(f"       {m}")
    typer.echo(
        f"score {report['score']:.3f} ({report['passed']}/{report['questions']} complete), "
        f"fabricated citations {report['fabricated']}"
    )
