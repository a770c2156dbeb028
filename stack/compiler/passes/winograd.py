"""Convolution algorithm choice: 3x3 convolutions that pay for it run Winograd F(2x2, 3x3).

A Conv is given ``algorithm=1`` and its weights are replaced by the Winograd weights
``U[a, b, m, c] = (G g[m, c] G^T)[a, b]`` (a new constant ``<conv>.winograd`` of shape
[4, 4, M, C], computed here once in float64 and stored in the weights' dtype) when:

* the kernel is 3x3 with stride 1, dilation 1 and group 1, with no fused max pool;
* the weights are a float32/float64 constant;
* both M and C are at least ``MIN_CHANNELS`` and the output has at least ``MIN_PIXELS``
  pixels. The input and output transforms cost in proportion to C and M while the products
  cost M * C, so narrow convolutions lose: 64x56x56 took 2.44 ms against 2.03 ms direct on one
  thread. Small planes lose too: the 16 products read 16/9 times the direct weights for few
  columns, so BLAS spends its time packing weights. Within ResNet-50, with the weights out of
  cache, 512x7x7 took 3.64 ms against 3.45 ms direct. In the same runs 256x14x14 took 1.80
  against 1.99 ms and 128x28x28 1.96 against 2.07 ms;
* the compile does not quantize (the int8 pass rewrites Conv weights itself).

The device runs the transformed convolution (the CONV2D ABI's ``algorithm`` immediate); the
Executable records the choice as the op's ``algorithm`` attribute.
"""

from __future__ import annotations

import numpy as np

from stack.compiler.ir import Graph, Node, OpType, TensorType, freeze_array
from stack.compiler.options import CompileOptions
from stack.compiler.passes import register

#: The ``algorithm`` attribute: 0 (or absent) direct, 1 Winograd F(2x2, 3x3).
WINOGRAD_2X2_3X3 = 1
#: The smallest M and C converted, and the fewest output pixels (see the module docstring).
MIN_CHANNELS = 128
MIN_PIXELS = 14 * 14
#: F(2x2, 3x3)'s weight transform.
G = np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0.0, 0.0, 1.0]])


def winograd_weights(w: np.ndarray) -> np.ndarray:
    """U[4, 4, M, C] = G g G^T for every 3x3 kernel g = w[m, c] (float64 math, w's dtype)."""
    if w.ndim != 4 or w.shape[2:] != (3, 3):
        raise ValueError(f"Winograd F(2x2,3x3) weights need [M, C, 3, 3], got {w.shape}")
    u = np.einsum("ai,mcij,bj->abmc", G, w.astype(np.float64), G)
    return np.ascontiguousarray(u, dtype=w.dtype)


def _eligible(node: Node, w: np.ndarray | None, out: TensorType | None) -> bool:
    if node.op is not OpType.CONV or w is None or node.attr("algorithm", 0):
        return False
    if w.dtype not in (np.float32, np.float64) or w.ndim != 4 or w.shape[2:] != (3, 3):
        return False
    if min(w.shape[0], w.shape[1]) < MIN_CHANNELS or node.attr("pool_kernel") is not None:
        return False
    if out is None or len(out.shape) != 4 or out.shape[2] * out.shape[3] < MIN_PIXELS:
        return False
    plain = tuple(node.attr("strides", (1, 1))) + tuple(node.attr("dilations", (1, 1)))
    return plain == (1, 1, 1, 1) and int(node.attr("group", 1)) == 1


def choose_algorithm(graph: Graph, options: CompileOptions) -> Graph:
    """Return ``graph`` with every eligible Conv on Winograd weights (see the module
    docstring)."""
    if options.quantize is not None:
        return graph
    consts = dict(graph.constants)
    nodes = []
    changed = False
    for node in graph.nodes:
        w = graph.constants.get(node.input(1)) if node.op is OpType.CONV else None
        if _eligible(node, w, graph.type_of(node.outputs[0])):
            assert w is not None
            name = f"{node.name}.winograd"
            consts[name] = freeze_array(winograd_weights(w))
            inputs = (node.inputs[0], name, *node.inputs[2:])
            node = Node(node.name, node.op, inputs, node.outputs, node.attrs)
            node = node.with_attrs(algorithm=WINOGRAD_2X2_3X3)
            changed = True
        nodes.append(node)
    if not changed:
        return graph
    return graph.replace(nodes=tuple(nodes), constants=consts)


register("winograd", choose_algorithm)
