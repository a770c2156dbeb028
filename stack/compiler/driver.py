"""The compile entry point: graph -> passes -> program -> schedule -> memory plan -> Executable."""

from __future__ import annotations

from dataclasses import dataclass

from stack.compiler.emit import emit_executable, value_types
from stack.compiler.errors import CompilerError
from stack.compiler.ir import Graph
from stack.compiler.memory_plan import MemoryPlan, check_plan, plan_memory
from stack.compiler.options import CompileOptions
from stack.compiler.passes import PassRecord, run_passes
from stack.compiler.program import Program, build_program
from stack.compiler.schedule import Schedule, schedule
from stack.compiler.verify import verify
from stack.runtime import Executable


@dataclass(frozen=True, slots=True)
class CompileResult:
    """Everything a compile produced: the Executable and the artefacts behind it."""

    executable: Executable
    graph: Graph
    program: Program
    schedule: Schedule
    plan: MemoryPlan
    passes: tuple[PassRecord, ...]

    def memory_figures(self) -> dict[str, int]:
        """naive / arena / lower-bound bytes of the intermediate tensors."""
        return {
            "naive_bytes": self.plan.naive_bytes,
            "arena_bytes": self.plan.arena_bytes,
            "lower_bound_bytes": self.plan.lower_bound_bytes,
            "const_bytes": len(self.executable.consts),
        }


def compile_graph(graph: Graph, options: CompileOptions | None = None) -> CompileResult:
    """Compile ``graph`` into an Executable.

    Synchronous and pure (no device is touched). Raises a :class:`CompilerError` subclass:
    VerifyError / ShapeMismatchError (malformed or inconsistent graph), ShapeInferenceError,
    PassError, QuantizeError, PlanError, UnsupportedDTypeError, EmitError.
    """
    options = options or CompileOptions()
    if options.alignment < 32 or options.alignment & (options.alignment - 1):
        raise CompilerError(f"alignment {options.alignment} must be a power of two >= 32")
    verify(graph)
    graph, records = run_passes(graph, options.passes, options)
    if options.quantize is not None:
        from stack.compiler.quantize import quantize_graph

        graph, more = quantize_graph(graph, options)
        records = [*records, *more]
    verify(graph, typed=True)
    prog = build_program(graph)
    sched = schedule(prog, options.streams)
    sizes = {v: t.nbytes for v, t in value_types(graph, prog).items()}
    plan = plan_memory(prog, sched, sizes, options.streams, options.alignment)
    check_plan(plan, sched)
    exe = emit_executable(
        graph, prog, sched, plan, alignment=options.alignment, metadata=dict(options.metadata)
    )
    return CompileResult(exe, graph, prog, sched, plan, tuple(records))
