"""Conformance over every ONNX backend node test of the installed ``onnx`` package.

Every node case (``onnx.backend.test.loader.load_model_tests(kind="node")``) gets exactly one
outcome:

* **excluded** — the case needs what the device cannot represent (:data:`EXCLUSIONS`: element
  types with no device DType such as float8 / int4 / strings, sequence or optional values,
  training mode); each with its reason;
* **unsupported** — the stack refused it with a typed :class:`~stack.errors.StackError`
  (no importer, a run-time value deciding a shape, ...); counted per reason;
* **passed** — every output matches the reference under the official comparison
  (``onnx.backend.test.runner.Runner.assert_similar_outputs``, the case's rtol / atol);
* **failed** — a wrong answer, or a crash that is not a typed refusal. Must be 0.

The cases run in-process through :class:`~stack.adapter.onnx_backend.StackBackend` (one shared
runtime), the same path the unittest-based ``BackendTest`` takes, without its per-test cost.
"""

from __future__ import annotations

import functools
import io
import re
import sys
import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import onnx

from stack.errors import StackError

#: Element types the device holds (ONNX TensorProto names).
DEVICE_TYPES = frozenset({"FLOAT", "FLOAT16", "DOUBLE", "INT8", "UINT8", "INT32", "INT64", "BOOL"})

#: (regex on the case name, reason) for cases that need what no device DType or the
#: inference-only stack can represent, beyond what the value types already show.
EXCLUSIONS: tuple[tuple[str, str], ...] = (
    (r"training", "training mode (random masks, batch statistics): the stack is inference-only"),
    (
        r"(e4m3|e5m2|float4|float8|uint4|int4|uint2|int2|bfloat16)",
        "float8 / float4 / bfloat16 / int4 / int2 element types: no device DType",
    ),
)


def _type_reason(model: onnx.ModelProto) -> str | None:
    """Why the model's values cannot live on the device (None when they can)."""
    g = model.graph
    for vi in (*g.input, *g.output):
        kind = vi.type.WhichOneof("value")
        if kind != "tensor_type":
            return f"{kind} values: the device holds tensors only"
        name = onnx.TensorProto.DataType.Name(vi.type.tensor_type.elem_type)
        if name not in DEVICE_TYPES:
            return f"element type {name}: no device DType"
    for node in g.node:
        for attr in node.attribute:
            if attr.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS):
                return "control flow with subgraphs (If, Loop, Scan): the stack runs flat graphs"
    return None


def exclusion_reason(name: str, model: onnx.ModelProto | None = None) -> str | None:
    """The reason case ``name`` is excluded, or None when it is run."""
    for pattern, reason in EXCLUSIONS:
        if re.search(pattern, name):
            return reason
    return _type_reason(model) if model is not None else None


@functools.cache
def node_cases() -> tuple[Any, ...]:
    """Every node test case of the installed onnx (loaded once per process)."""
    from onnx.backend.test.loader import load_model_tests

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        cases = load_model_tests(kind="node")
    return tuple(sorted((c for c in cases if c.model is not None), key=lambda c: c.name))


def refusal_reason(err: StackError) -> str:
    """The counted reason of a typed refusal: its error class and the op it concerns."""
    op = getattr(err, "op_type", None) or err.op or ""
    if type(err).__name__ == "UnsupportedOpError" and "no importer" in str(err):
        return f"no importer for {op}"
    return f"{type(err).__name__}" + (f" ({op})" if op else "")


@dataclass(frozen=True, slots=True)
class ConformanceReport:
    """Outcome of one conformance run: each case in exactly one list."""

    passed: tuple[str, ...]
    failed: tuple[tuple[str, str], ...]
    unsupported: tuple[tuple[str, str, str], ...]  # (case, reason, message)
    excluded: tuple[tuple[str, str], ...]

    @property
    def total(self) -> int:
        return len(self.passed) + len(self.failed) + len(self.unsupported) + len(self.excluded)

    @property
    def selected(self) -> int:
        """Cases run (total minus excluded)."""
        return self.total - len(self.excluded)

    @property
    def pass_rate(self) -> float:
        """Passed over all node tests."""
        return len(self.passed) / self.total if self.total else 0.0

    def reasons(self) -> dict[str, int]:
        """Unsupported cases per reason, most frequent first."""
        return dict(Counter(r for _, r, _ in self.unsupported).most_common())

    def exclusion_counts(self) -> dict[str, int]:
        return dict(Counter(r for _, r in self.excluded).most_common())

    def to_dict(self) -> dict[str, Any]:
        return {
            "total": self.total,
            "selected": self.selected,
            "passed": len(self.passed),
            "failed": len(self.failed),
            "unsupported": len(self.unsupported),
            "excluded": len(self.excluded),
            "pass_rate": round(self.pass_rate, 4),
            "unsupported_reasons": self.reasons(),
            "exclusion_reasons": self.exclusion_counts(),
            "failures": [{"test": n, "error": e} for n, e in self.failed],
            "unsupported_cases": [
                {"test": n, "reason": r, "message": m} for n, r, m in self.unsupported
            ],
            "exclusions": [{"test": n, "reason": r} for n, r in self.excluded],
        }


def _run_case(case: Any) -> None:
    """Prepare, run every data set and compare as the official runner does (raises on any
    difference)."""
    from onnx.backend.test.runner import Runner

    from stack.adapter.onnx_backend import StackBackend

    rep = StackBackend.prepare(case.model, "CPU")
    try:
        for inputs, ref_outputs in case.data_sets:
            outputs = list(rep.run([_normalize_tensor(t) for t in inputs]))
            refs = [_normalize_tensor(t) for t in ref_outputs]
            Runner.assert_similar_outputs(refs, outputs, rtol=case.rtol, atol=case.atol)
    finally:
        rep.close()


def _normalize_tensor(t: Any) -> np.ndarray:
    """Node cases hold arrays or TensorProtos; the runner sees arrays."""
    return onnx.numpy_helper.to_array(t) if isinstance(t, onnx.TensorProto) else t


def _summary(err: BaseException) -> str:
    text = " ".join(str(err).split())
    return f"{type(err).__name__}: {text}"[:300]


def run_conformance(
    pattern: str | None = None, progress: Callable[[int, int], None] | None = None
) -> ConformanceReport:
    """Run every node case (optionally only names matching ``pattern``)."""
    cases = [c for c in node_cases() if pattern is None or re.search(pattern, c.name)]
    passed: list[str] = []
    failed: list[tuple[str, str]] = []
    unsupported: list[tuple[str, str, str]] = []
    excluded: list[tuple[str, str]] = []
    for i, case in enumerate(cases):
        if progress is not None:
            progress(i, len(cases))
        why = exclusion_reason(case.name, case.model)
        if why is not None:
            excluded.append((case.name, why))
            continue
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                _run_case(case)
        except StackError as err:
            unsupported.append((case.name, refusal_reason(err), _summary(err)))
        except Exception as err:  # noqa: BLE001 - any other exception is a failure, reported
            failed.append((case.name, _summary(err)))
        else:
            passed.append(case.name)
    return ConformanceReport(tuple(passed), tuple(failed), tuple(unsupported), tuple(excluded))


def stderr_progress(i: int, n: int) -> None:
    """Progress on stderr every 100 cases."""
    if i % 100 == 0:
        sys.stderr.write(f"conformance: {i}/{n}\n")


def render_text(report: ConformanceReport) -> str:
    """A human-readable summary: the counts, reasons, then each failure."""
    out = io.StringIO()
    out.write(
        f"total {report.total}  passed {len(report.passed)}  failed {len(report.failed)}  "
        f"unsupported {len(report.unsupported)}  excluded {len(report.excluded)}  "
        f"pass rate {report.pass_rate:.1%}\n"
    )
    for reason, count in report.reasons().items():
        out.write(f"  unsupported {count:4d}  {reason}\n")
    for reason, count in report.exclusion_counts().items():
        out.write(f"  excluded    {count:4d}  {reason}\n")
    for name, err in report.failed:
        out.write(f"FAIL {name}: {err}\n")
    return out.getvalue()
