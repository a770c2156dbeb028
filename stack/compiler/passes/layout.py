"""Layout assignment: pin the memory layout of every 4-D activation the conv family touches.

The kernels run NCHW, so Conv, DeformConv, ConvInteger, QLinearConv, pooling and BatchNorm
nodes get ``layout="NCHW"``; a node of that family whose input is not 4-D is refused here rather
than at run time. The emitter records the per-node layouts in the Executable's metadata (the UMD
request carries no layout attribute).
"""

from __future__ import annotations

from stack.compiler.errors import VerifyError
from stack.compiler.ir import Graph, OpType
from stack.compiler.options import CompileOptions
from stack.compiler.passes import register

NCHW_OPS = frozenset(
    {
        OpType.CONV,
        OpType.DEFORM_CONV,
        OpType.CONV_INTEGER,
        OpType.QLINEARCONV,
        OpType.MAXPOOL,
        OpType.AVGPOOL,
        OpType.GLOBALAVGPOOL,
        OpType.GLOBALLPPOOL,
        OpType.MAXROIPOOL,
        OpType.ROIALIGN,
        OpType.BATCHNORM,
    }
)


def assign_layout(graph: Graph, options: CompileOptions) -> Graph:
    """Return ``graph`` with ``layout`` attributes on layout-sensitive nodes."""
    nodes = []
    for node in graph.nodes:
        if node.op in NCHW_OPS:
            t = graph.type_of(node.inputs[0])
            if node.op is not OpType.BATCHNORM and (t is None or len(t.shape) != 4):
                raise VerifyError(
                    f"{node.op.value} needs a 4-D NCHW input, got {t}",
                    check="layout",
                    op=node.op.value,
                    node=node.name,
                )
            node = node.with_attrs(layout="NCHW")
        nodes.append(node)
    return graph.replace(nodes=tuple(nodes))


register("layout", assign_layout)
