"""The agent's evaluation: question sets in YAML (``mapper/agent/evalsets/``), scored.

A set names the repository it asks about (``root``, relative to the repository holding the
set) and its questions; each question lists its intent, whether the map knows the answer, the
facts the answer must contain and the citations it must include (a path, and text the cited
line must hold). :func:`run_set` builds a fresh map of the set's root in a temporary store
(no embeddings: deterministic and quick), asks every question through :func:`ask`, and scores
it: one point per fact, per required citation, for the intent and for ``known``; the score is
the share of points. Every citation of every answer is re-checked against the files; one that
does not hold is counted as fabricated. Synchronous.
"""

from __future__ import annotations

import dataclasses
import tempfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from mapper.agent.ask import ask
from mapper.agent.citations import read_lines, validate, window
from mapper.agent.mapview import open_view
from mapper.agent.records import Answer
from mapper.config import load_config
from mapper.errors import MapperError

AXES = ("layer", "component", "interface", "scenario")
ROLES = ("compiler", "runtime", "driver")


class EvalSetError(MapperError):
    """An evaluation set does not follow the schema."""


@dataclass(frozen=True, slots=True)
class Required:
    paths: tuple[str, ...]  # any of these
    contains: str


@dataclass(frozen=True, slots=True)
class Question:
    id: str
    question: str
    axis: str
    role: str
    intents: tuple[str, ...]
    known: bool
    facts: tuple[tuple[str, ...], ...]  # each fact: its alternatives
    citations: tuple[Required, ...]


@dataclass(frozen=True, slots=True)
class EvalSet:
    name: str
    root: Path
    questions: tuple[Question, ...]


@dataclass(frozen=True, slots=True)
class Scored:
    question: Question
    answer: Answer
    missing: tuple[str, ...]
    fabricated: tuple[str, ...]
    points: int
    total: int

    @property
    def score(self) -> float:
        return self.points / self.total if self.total else 1.0

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.question.id,
            "question": self.question.question,
            "axis": self.question.axis,
            "role": self.question.role,
            "score": round(self.score, 4),
            "missing": list(self.missing),
            "fabricated": list(self.fabricated),
            "intent": self.answer.intent.value,
            "known": self.answer.known,
            "citations": len(self.answer.citations),
            "latency_ms": round(self.answer.latency_ms, 2),
        }


def _strs(value: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in value) if isinstance(value, list) else (str(value),)


def load_set(path: Path, repo: Path) -> EvalSet:
    """Read one set; EvalSetError naming the question and field that are wrong."""
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
        questions = []
        for q in raw["questions"]:
            if q["axis"] not in AXES:
                raise EvalSetError(f"{q['id']}: axis {q['axis']!r} not in {AXES}", path=str(path))
            questions.append(
                Question(
                    id=str(q["id"]),
                    question=str(q["question"]),
                    axis=q["axis"],
                    role=str(q["role"]),
                    intents=_strs(q["intent"]),
                    known=bool(q.get("known", True)),
                    facts=tuple(_strs(f) for f in q.get("facts") or ()),
                    citations=tuple(
                        Required(_strs(c["path"]), str(c["contains"]))
                        for c in q.get("citations") or ()
                    ),
                )
            )
        return EvalSet(str(raw["name"]), (repo / raw["root"]).resolve(), tuple(questions))
    except (OSError, yaml.YAMLError, KeyError, TypeError) as exc:
        raise EvalSetError(f"unreadable evaluation set: {exc!r}", path=str(path)) from exc


#: The shipped sets: this repository's reference stack first, then the second stack.
SETS = ("refstack.yaml", "minirepo.yaml", "kfd.yaml")


def default_sets() -> list[Path]:
    folder = resources.files("mapper.agent").joinpath("evalsets")
    return [Path(str(folder.joinpath(name))) for name in SETS]


def score(q: Question, a: Answer, root: Path) -> Scored:
    text = a.answer.lower()
    missing: list[str] = []
    for alternatives in q.facts:
        if not any(alt.lower() in text for alt in alternatives):
            missing.append("fact: " + " | ".join(alternatives))
    for req in q.citations:
        if not any(
            c.path in req.paths and _holds(root, c.path, c.line, req.contains) for c in a.citations
        ):
            missing.append(f"citation: {' | '.join(req.paths)} ∋ {req.contains}")
    if a.intent.value not in q.intents:
        missing.append(f"intent: {a.intent.value} not in {list(q.intents)}")
    if a.known != q.known:
        missing.append(f"known: {a.known} != {q.known}")
    total = len(q.facts) + len(q.citations) + 2
    fabricated = tuple(f"{c.where}: {p}" for c in a.citations if (p := validate(root, c)))
    return Scored(q, a, tuple(missing), fabricated, total - len(missing), total)


def _holds(root: Path, path: str, line: int, text: str) -> bool:
    lines = read_lines(root, path)
    return bool(lines) and text.lower() in "\n".join(window(lines or (), path, line)).lower()


def run_set(evalset: EvalSet) -> list[Scored]:
    """Ingest the set's root into a temporary store, then ask and score every question."""
    from mapper.ingest import ingest

    config = load_config(evalset.root)
    with tempfile.TemporaryDirectory(prefix="stackmap-eval-") as tmp:
        config = dataclasses.replace(config, store=str(Path(tmp) / "store"))
        ingest(evalset.root, config, embed=False, progress=False)
        view = open_view(evalset.root, config)
        roles = {r.id for r in config.roles}
        return [
            score(
                q, ask(q.question, role=q.role if q.role in roles else None, map=view), evalset.root
            )
            for q in evalset.questions
        ]


def summary(results: dict[str, list[Scored]]) -> dict[str, Any]:
    every = [s for rows in results.values() for s in rows]
    overall = sum(s.score for s in every) / len(every) if every else 0.0
    return {
        "score": round(overall, 4),
        "questions": len(every),
        "passed": sum(1 for s in every if not s.missing),
        "fabricated": sum(len(s.fabricated) for s in every),
        "sets": {
            name: {
                "score": round(sum(s.score for s in rows) / len(rows), 4) if rows else 0.0,
                "questions": [s.to_json() for s in rows],
            }
            for name, rows in results.items()
        },
    }
