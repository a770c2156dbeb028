"""BatchNorm folding: ``Conv -> BatchNormalization`` with constant parameters becomes one Conv.

``W' = W * s[:, None, None, None]`` and ``B' = (B - mean) * s + beta`` with
``s = gamma / sqrt(var + eps)``, computed in float64 and stored in the weights' dtype. The
Conv's output must feed only the BatchNorm (otherwise the unnormalised value is still needed).
"""

from __future__ import annotations

import numpy as np

from stack.compiler.ir import Graph, Node, OpType, freeze_array
from stack.compiler.options import CompileOptions
from stack.compiler.passes import register
from stack.compiler.passes._match import rewrite, sole_consumer


def fold_batchnorm(graph: Graph, options: CompileOptions) -> Graph:
    """Return ``graph`` with every foldable Conv+BatchNorm pair merged."""
    users = graph.consumers()
    consts = dict(graph.constants)
    replaced: dict[str, Node] = {}
    dropped: set[str] = set()
    for conv in graph.nodes:
        if conv.op is not OpType.CONV or conv.name in replaced:
            continue
        bn = sole_consumer(graph, users, conv.outputs[0])
        if bn is None or bn.op is not OpType.BATCHNORM or bn.inputs[0] != conv.outputs[0]:
            continue
        params = [*bn.inputs[1:5], conv.inputs[1]]
        if not all(p in consts for p in params) or (conv.input(2) and conv.input(2) not in consts):
            continue
        gamma, beta, mean, var = (consts[p].astype(np.float64) for p in bn.inputs[1:5])
        w = consts[conv.inputs[1]]
        scale = gamma / np.sqrt(var + float(bn.attr("epsilon", 1e-5)))
        bias = consts[conv.input(2)].astype(np.float64) if conv.input(2) else np.zeros_like(mean)
        w_name, b_name = f"{conv.name}.bn_weight", f"{conv.name}.bn_bias"
        consts[w_name] = freeze_array(
            (w.astype(np.float64) * scale[:, None, None, None]).astype(w.dtype)
        )
        consts[b_name] = freeze_array(((bias - mean) * scale + beta).astype(w.dtype))
        replaced[conv.name] = Node(
            conv.name, OpType.CONV, (conv.inputs[0], w_name, b_name), bn.outputs[:1], conv.attrs
        )
        dropped.add(bn.name)
    if not replaced:
        return graph
    return graph.replace(nodes=rewrite(graph, replaced, dropped), constants=consts)


register("fold_batchnorm", fold_batchnorm)
