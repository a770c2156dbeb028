"""The ONNX backend node tests for the supported ops, run against the stack.

Selection: every node test of ``onnx.backend.test`` whose graph uses only :data:`SUPPORTED_OPS`
(the CPU variant). :data:`EXCLUSIONS` lists, in one place, the cases left out and why; the
report gives passed / failed / excluded with each exclusion's reason, and the pass rate
``passed / (passed + failed)``. Tolerances are the runner's defaults (no overrides).
"""

from __future__ import annotations

import io
import re
import unittest
from dataclasses import dataclass
from typing import Any

#: The op set the stack commits to (issue list).
SUPPORTED_OPS: frozenset[str] = frozenset(
    [
        "Conv",
        "Gemm",
        "MatMul",
        "Add",
        "Mul",
        "Relu",
        "BatchNormalization",
        "Dropout",
        "Identity",
        "MaxPool",
        "AveragePool",
        "GlobalAveragePool",
        "Flatten",
        "Reshape",
        "Concat",
        "Softmax",
        "LayerNormalization",
        "QuantizeLinear",
        "DequantizeLinear",
        "QLinearMatMul",
        "MatMulInteger",
        "Constant",
        "ConstantOfShape",
        "Sum",
        "Transpose",
    ]
)

#: (regex on the case name, reason) — a case matching any pattern is excluded.
EXCLUSIONS: tuple[tuple[str, str], ...] = (
    (
        r"^test_(add|mul)_(int16|uint16|uint32|uint64)$",
        "element type without a device DType (the KMD runs f32, f16, f64, i8, u8, i32, i64, bool)",
    ),
    (
        r"(e4m3fn|e5m2|float4e2m1|uint4|int4|uint2|int2)",
        "float8 / float4 / int4 / int2 quantised types: no device DType",
    ),
    (r"^test_(de)?quantizelinear_u?int16$", "16-bit quantised types: no device DType"),
    (r"blocked", "blocked quantisation (block_size): the kernels quantise per tensor or per axis"),
    (r"^test_(averagepool|maxpool)_3d_", "3-D spatial pooling: the kernels are 2-D (NCHW)"),
    (
        r"^test_training_dropout(_default|_mask|$)",
        "training-mode Dropout draws a random mask: the stack is inference-only",
    ),
    (r"^test_training_dropout$", "training-mode Dropout draws a random mask"),
    (r"training_mode", "BatchNormalization training mode: the stack is inference-only"),
    (r"with_argmax", "MaxPool's Indices output: the pooling kernel computes values only"),
    (r"^test_identity_(sequence|opt)$", "sequence / optional types: the stack runs tensors only"),
)


def exclusion_reason(name: str) -> str | None:
    """The reason ``name`` is excluded, or None when it is run."""
    for pattern, reason in EXCLUSIONS:
        if re.search(pattern, name):
            return reason
    return None


def selected_cases() -> list[str]:
    """Names of the node tests whose ops are all supported."""
    from onnx.backend.test.loader import load_model_tests

    names = []
    for case in load_model_tests(kind="node"):
        if case.model is None:
            continue
        ops = {n.op_type for n in case.model.graph.node}
        if ops and ops <= SUPPORTED_OPS:
            names.append(case.name)
    return sorted(names)


@dataclass(frozen=True, slots=True)
class ConformanceReport:
    """Outcome of one conformance run."""

    passed: tuple[str, ...]
    failed: tuple[tuple[str, str], ...]
    excluded: tuple[tuple[str, str], ...]

    @property
    def pass_rate(self) -> float:
        total = len(self.passed) + len(self.failed)
        return len(self.passed) / total if total else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "passed": len(self.passed),
            "failed": len(self.failed),
            "excluded": len(self.excluded),
            "pass_rate": round(self.pass_rate, 4),
            "failures": [{"test": n, "error": e} for n, e in self.failed],
            "exclusions": [{"test": n, "reason": r} for n, r in self.excluded],
        }


class _Collect(unittest.TestResult):
    def __init__(self) -> None:
        super().__init__()
        self.ok: list[str] = []

    def addSuccess(self, test: unittest.TestCase) -> None:
        self.ok.append(test.id())


def _case_name(test_id: str) -> str:
    return re.sub(r"_cpu$", "", test_id.rsplit(".", 1)[-1])


def _first_line(text: str) -> str:
    """The informative lines of a traceback: the exception and numpy's mismatch summary."""
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    keep = [
        ln
        for ln in lines
        if re.match(r"^[\w.]*(Error|Exception)\b", ln)
        or ln.startswith(("Mismatched elements", "Max absolute difference"))
    ]
    return " | ".join(keep or lines[-1:])[:300]


def run_conformance(pattern: str | None = None) -> ConformanceReport:
    """Run the selected, non-excluded node tests (optionally only names matching ``pattern``)."""
    import onnx.backend.test

    from stack.adapter.onnx_backend import StackBackend

    names = [n for n in selected_cases() if pattern is None or re.search(pattern, n)]
    excluded = tuple((n, r) for n in names if (r := exclusion_reason(n)) is not None)
    run = [n for n in names if exclusion_reason(n) is None]
    result = _Collect()
    if run:
        bt = onnx.backend.test.BackendTest(StackBackend, __name__)
        bt.include("^(" + "|".join(re.escape(n) for n in run) + ")_cpu$")
        bt.test_suite.run(result)
    failed = [(_case_name(t.id()), _first_line(tb)) for t, tb in (*result.failures, *result.errors)]
    wanted = set(run)
    failed += [
        (_case_name(t.id()), f"skipped: {why}")
        for t, why in result.skipped
        if _case_name(t.id()) in wanted and t.id().endswith("_cpu")
    ]
    return ConformanceReport(
        passed=tuple(sorted(_case_name(t) for t in result.ok)),
        failed=tuple(sorted(failed)),
        excluded=excluded,
    )


def render_text(report: ConformanceReport) -> str:
    """A human-readable summary."""
    out = io.StringIO()
    out.write(
        f"passed {len(report.passed)}  failed {len(report.failed)}  "
        f"excluded {len(report.excluded)}  pass rate {report.pass_rate:.1%}\n"
    )
    for name, err in report.failed:
        out.write(f"FAIL {name}: {err}\n")
    for name, reason in report.excluded:
        out.write(f"EXCLUDED {name}: {reason}\n")
    return out.getvalue()
