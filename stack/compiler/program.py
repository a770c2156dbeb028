"""The linear program: the graph's kernel-backed ops in order, with views resolved.

Every IR node becomes a :class:`Step` except views (Reshape, Flatten, Identity) whose source
and result both live in a lane arena: those become *aliases* (the result shares its root's
storage, no data moves). A view that reads a model input or writes a model output cannot alias
(inputs and outputs live in the IO buffer, intermediates in arenas), so it becomes a COPY. A
model output that no op writes (a folded constant, a passed-through input) also gets a COPY.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from stack.compiler.errors import EmitError
from stack.compiler.ir import VIEW_OPS, AttrValue, Graph, Node
from stack.compiler.lowering import lower_node
from stack.runtime import ExecOp, TensorRole


@dataclass(frozen=True, slots=True)
class Step:
    """One op of the program: ``op`` reads ``inputs`` and writes ``outputs`` (value names)."""

    index: int
    name: str
    op: ExecOp
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    attrs: tuple[tuple[str, AttrValue], ...]
    layout: str = ""


@dataclass(slots=True)
class Program:
    """Steps plus what each value is: its role, its storage root (aliases) and its producer."""

    steps: list[Step] = field(default_factory=list)
    roles: dict[str, TensorRole] = field(default_factory=dict)
    alias: dict[str, str] = field(default_factory=dict)
    producer: dict[str, int] = field(default_factory=dict)
    const_names: dict[str, str] = field(default_factory=dict)

    def root(self, value: str) -> str:
        """The value whose storage ``value`` uses (itself unless it is an alias)."""
        while value in self.alias:
            value = self.alias[value]
        return value

    def add(
        self,
        name: str,
        op: ExecOp,
        ins: tuple[str, ...],
        outs: tuple[str, ...],
        attrs: tuple[tuple[str, AttrValue], ...] = (),
        layout: str = "",
    ) -> None:
        index = len(self.steps)
        self.steps.append(Step(index, name, op, ins, outs, attrs, layout))
        for out in outs:
            self.producer[out] = index


def build_program(graph: Graph) -> Program:
    """Lower ``graph`` (typed, after the pass pipeline) to a :class:`Program`."""
    prog = Program()
    outputs = set(graph.outputs)
    for name in graph.inputs:
        prog.roles[name] = TensorRole.INPUT
    for name in graph.constants:
        prog.roles[name] = TensorRole.CONST
    for node in graph.nodes:
        for out in node.outputs:
            if out:
                prog.roles[out] = TensorRole.OUTPUT if out in outputs else TensorRole.INTERMEDIATE
        if node.op in VIEW_OPS:
            _view(prog, node)
            continue
        ins = _operands(node)
        op, attrs = lower_node(node)
        prog.add(
            node.name,
            op,
            ins,
            tuple(o for o in node.outputs if o),
            attrs,
            str(node.attr("layout", "")),
        )
    for out in graph.outputs:
        if out in prog.producer:
            continue
        if out in graph.inputs:
            raise EmitError(f"model output {out!r} is also a model input", node=out)
        if out not in graph.constants:
            raise EmitError(f"model output {out!r} is never written", node=out)
        const_name = f"{out}.const"
        prog.const_names[out] = const_name
        prog.roles[const_name] = TensorRole.CONST
        prog.roles[out] = TensorRole.OUTPUT
        prog.add(f"{out}.copy", ExecOp.COPY, (const_name,), (out,))
    return prog


def _operands(node: Node) -> tuple[str, ...]:
    ins = list(node.inputs)
    while ins and not ins[-1]:
        ins.pop()
    if any(not v for v in ins):
        raise EmitError("an omitted input before a present one", op=node.op.value, node=node.name)
    return tuple(ins)


def _view(prog: Program, node: Node) -> None:
    src, dst = prog.root(node.inputs[0]), node.outputs[0]
    if (
        prog.roles.get(src) is TensorRole.INTERMEDIATE
        and prog.roles[dst] is TensorRole.INTERMEDIATE
    ):
        prog.alias[dst] = src
        return
    prog.add(node.name, ExecOp.COPY, (node.inputs[0],), (dst,))
