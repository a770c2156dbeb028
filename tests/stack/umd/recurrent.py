"""The scaffolding the RNN, GRU and LSTM translator tests share: a request's operands for a
number of gates (:func:`recurrent_ins`, :func:`recurrent_outs`), the one blob a request
compiles to (:func:`one_blob`), the check that every float request is one blob on its operands
(:func:`assert_one_blob_on_the_operands`) and the layout-1 request with an NHWC Y
(:func:`layout_1_main_blob`)."""

from __future__ import annotations

from typing import Any

from stack.kmd.blob import decode
from stack.kmd.kernels.ids import KernelId
from stack.kmd.kernels.rnn import RnnDirection
from stack.umd import DType, Layout, OpKind, OpRequest, TensorDesc
from stack.umd.pipeline import Pipeline
from tests.stack.umd.descs import I32, F, T


def recurrent_ins(gates: int, dtype: DType = F, d: int = 1, n_in: int = 3) -> list[TensorDesc]:
    """The first ``n_in`` of X [4, 2, 3], W [d, 5*gates, 3], R [d, 5*gates, 5], B
    [d, 10*gates], sequence_lens [2] int32, initial_h [d, 2, 5], initial_c [d, 2, 5] and P
    [d, 15] (hidden size 5)."""
    shapes = [(4, 2, 3), (d, 5 * gates, 3), (d, 5 * gates, 5), (d, 10 * gates), (2,),
              (d, 2, 5), (d, 2, 5), (d, 15)]  # fmt: skip
    return [T(s, I32 if k == 4 else dtype) for k, s in enumerate(shapes[:n_in])]


def recurrent_outs(n_out: int, dtype: DType = F, d: int = 1) -> list[TensorDesc]:
    """Y [4, d, 2, 5], then ``n_out - 1`` states [d, 2, 5]."""
    return [T((4, d, 2, 5), dtype), *(T((d, 2, 5), dtype) for _ in range(n_out - 1))]


def one_blob(req: OpRequest) -> Any:
    """The one blob ``req`` compiles to, decoded with its operands at their addresses."""
    addrs = tuple(t.addr for t in (*req.inputs, *req.outputs))
    (blob,) = [decode(x) for x in Pipeline().compile(req).patch(addrs)]
    return blob


def assert_one_blob_on_the_operands(
    op: OpKind,
    kernel: KernelId,
    ins: list[TensorDesc],
    outs: list[TensorDesc],
    direction: RnnDirection,
    ints: tuple[int, ...],
    floats: tuple[float, ...],
) -> None:
    """``op`` in ``direction`` compiles to one ``kernel`` blob with no scratch, the immediates
    ``ints`` and ``floats``, and the operands as its params in order."""
    prog = Pipeline().compile(OpRequest.make(op, ins, outs, direction=direction.name.lower()))
    assert prog.scratch == ()
    (blob,) = [decode(x) for x in prog.patch(tuple(t.addr for t in (*ins, *outs)))]
    assert blob.kernel_id is kernel and blob.ints == ints
    assert blob.floats == floats
    assert [(p.addr, p.dtype, p.shape) for p in blob.params] == [
        (t.addr, t.dtype, t.shape) for t in (*ins, *outs)
    ]


def layout_1_main_blob(op: OpKind, gates: int, n_out: int) -> Any:
    """The kernel's blob for ``op`` with layout 1, X [2, 4, 3] and Y (2, 4, 1, 5) stored NHWC,
    once asserted that Y is written in its logical order to the one scratch (params[6]) and
    transposed after."""
    ins = [T((2, 4, 3)), T((1, 5 * gates, 3)), T((1, 5 * gates, 5)), T((1, 10 * gates)),
           T((2,), I32), T((2, 1, 5))]  # fmt: skip
    outs = [T((2, 1, 5, 4), layout=Layout.NHWC), *(T((2, 1, 5)) for _ in range(n_out - 1))]
    prog = Pipeline().compile(OpRequest.make(op, ins, outs, layout=1))
    assert prog.scratch == (2 * 4 * 1 * 5 * 4,)
    s0 = 0xA0000
    main, post = (decode(b) for b in prog.patch((*(t.addr for t in (*ins, *outs)), s0)))
    assert main.params[6].addr == s0 and main.params[6].shape == (2, 4, 1, 5)
    assert post.kernel_id is KernelId.TRANSPOSE and post.ints == (0, 2, 3, 1)
    return main
