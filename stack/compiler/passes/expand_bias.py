"""Small Gemms get their bias row as a whole constant of Y's shape.

The GEMM kernel adds C broadcast to Y (its ABI). NumPy adds an operand of Y's own shape in
one flat loop but sets up a broadcasting iterator for a row: on the transformer's
16x64 Gemms the row costs 0.8 us against 0.3 us, more than a third of each Gemm. So a Gemm
whose C is a constant row ``[N]``/``[1, N]`` and whose Y has more than one row and at most
``LIMIT`` elements gets C = the row repeated over Y's rows, a new constant
``<gemm>.bias_full`` (the sums are the same numbers, bit for bit); the row constant is dropped
by dce when nothing else reads it. It costs ``(M - 1) * N`` elements of constants per Gemm
(the transformer: 28 KB). Skipped when quantizing (the int8 pass rewrites Gemm biases itself).
"""

from __future__ import annotations

import numpy as np

from stack.compiler.ir import Graph, Node, OpType, freeze_array
from stack.compiler.options import CompileOptions
from stack.compiler.passes import register

#: The most elements of Y a Gemm's C is expanded for (16 KB of float32).
LIMIT = 4096


def _row(graph: Graph, node: Node) -> np.ndarray | None:
    """The constant row C of ``node`` when it is worth expanding, else None."""
    if node.op is not OpType.GEMM or len(node.inputs) < 3 or float(node.attr("beta", 1.0)) == 0:
        return None
    c, out = graph.constants.get(node.inputs[2]), graph.type_of(node.outputs[0])
    if c is None or out is None or len(out.shape) != 2:
        return None
    rows, n = out.shape
    if rows < 2 or rows * n > LIMIT or c.shape not in ((n,), (1, n)):
        return None
    return c


def expand_bias(graph: Graph, options: CompileOptions) -> Graph:
    """Return ``graph`` with every small Gemm's constant bias row expanded to Y's shape (see
    the module docstring)."""
    if options.quantize is not None:
        return graph
    consts = dict(graph.constants)
    nodes = []
    for node in graph.nodes:
        c = _row(graph, node)
        if c is not None:
            name = f"{node.name}.bias_full"
            out = graph.type_of(node.outputs[0])
            assert out is not None
            consts[name] = freeze_array(np.broadcast_to(c.reshape(1, -1), out.shape))
            node = Node(node.name, node.op, (*node.inputs[:2], name), node.outputs, node.attrs)
        nodes.append(node)
    if len(consts) == len(graph.constants):
        return graph
    return graph.replace(nodes=tuple(nodes), constants=consts)


register("expand_bias", expand_bias)
