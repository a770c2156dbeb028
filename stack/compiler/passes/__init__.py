"""Graph passes: a registry with explicit ``register()`` and a pipeline runner.

A pass is a function ``(graph, options) -> graph`` that returns a new graph. The runner calls
the verifier after each pass (``CompileOptions.verify_each``) so that a broken pass is caught
at the pass that broke the graph, not several passes later.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from stack.compiler.errors import PassError
from stack.compiler.ir import Graph
from stack.compiler.options import CompileOptions
from stack.compiler.verify import verify

PassFn = Callable[[Graph, CompileOptions], Graph]


@dataclass(frozen=True, slots=True)
class PassRecord:
    """What one pass did: its name, node counts before/after, and its wall time."""

    name: str
    nodes_before: int
    nodes_after: int
    seconds: float


_PASSES: dict[str, PassFn] = {}
_LOADED = False


def register(name: str, fn: PassFn) -> None:
    """Register pass ``fn`` under ``name`` (re-registering replaces it)."""
    _PASSES[name] = fn


def get_pass(name: str) -> PassFn:
    """The pass called ``name``; PassError listing the known ones when unknown."""
    _load_builtin()
    try:
        return _PASSES[name]
    except KeyError:
        known = ", ".join(sorted(_PASSES))
        raise PassError(f"unknown pass {name!r}; known: {known}", pass_name=name) from None


def known_passes() -> list[str]:
    """Names of every registered pass."""
    _load_builtin()
    return sorted(_PASSES)


def run_passes(
    graph: Graph, names: Sequence[str], options: CompileOptions
) -> tuple[Graph, list[PassRecord]]:
    """Run the passes ``names`` in order; verify after each when the options say so."""
    records: list[PassRecord] = []
    typed = False
    for name in names:
        fn = get_pass(name)
        start = time.perf_counter()
        before = len(graph.nodes)
        graph = fn(graph, options)
        typed = typed or name == "infer_shapes"
        if options.verify_each:
            verify(graph, typed=typed)
        records.append(PassRecord(name, before, len(graph.nodes), time.perf_counter() - start))
    return graph, records


def _load_builtin() -> None:
    """Import the built-in pass modules once (a test importing one pass module first must not
    hide the others)."""
    global _LOADED
    if _LOADED:
        return
    _LOADED = True
    from stack.compiler.passes import (  # noqa: F401  (modules register themselves)
        dce,
        expand_bias,
        fold_batchnorm,
        fold_constants,
        fold_ln_shift,
        fuse,
        infer_shapes,
        layout,
        lower,
        winograd,
    )
