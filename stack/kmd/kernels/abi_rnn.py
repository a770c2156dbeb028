"""RNN's, GRU's and LSTM's ABIs, registered into :data:`stack.kmd.kernels.abi.ABIS` when that
module is imported (abi.py is at its 300 lines); the conventions are
:mod:`stack.kmd.kernels.abi`'s.

ONNX's inputs in ONNX's order and names (X, W and R, then the optional B, sequence_lens and
initial_h, LSTM's initial_c and P after: one left out before a given one takes zero biases, full
lengths, a zero state or zero peepholes) and its outputs, Y then Y_h (LSTM's Y_c third), always
written; ONNX's direction and layout and the activations of each direction
(:class:`~stack.kmd.kernels.rnn.RnnActivation`) as int immediates, clip and each activation's
alpha and beta as float immediates; no grid axis (the recurrence runs whole)."""

from __future__ import annotations

from stack.kmd.kernels.abi import Imm, KernelAbi, register
from stack.kmd.kernels.ids import KernelId

_DIRECTION = Imm("direction", 0, "RnnDirection: 0 forward, 1 reverse, 2 bidirectional")
_LAYOUT = Imm("layout", 0, "0: X [S,N,I], Y [S,D,N,H]; 1: X [N,S,I], Y [N,S,D,H]")


def _recurrent(
    kernel_id: KernelId,
    outputs: tuple[str, ...],
    optional: tuple[str, ...],
    flags: tuple[Imm, ...],
    activations: tuple[tuple[int, str], ...],
    clip: str,
    doc: str,
) -> KernelAbi:
    """A recurrent op's ABI: X, W and R, the optional B, sequence_lens, initial_h then
    ``optional``; direction, layout, the op's ``flags``, then ``activation_k`` for each
    ``activations`` entry (its default code and doc); clip (``clip`` its doc) then
    ``alpha_k`` and ``beta_k`` of each activation, all 0.0."""
    codes = tuple(Imm(f"activation_{k}", code, text) for k, (code, text) in enumerate(activations))
    params = tuple(Imm(f"{p}_{k}", 0.0) for k in range(len(activations)) for p in ("alpha", "beta"))
    return KernelAbi(
        kernel_id,
        ("X", "W", "R"),
        outputs,
        optional=("B", "sequence_lens", "initial_h", *optional),
        ints=(_DIRECTION, _LAYOUT, *flags, *codes),
        floats=(Imm("clip", 0.0, clip), *params),
        doc=doc,
    )


register(
    _recurrent(
        KernelId.RNN, ("Y", "Y_h"), (), (),
        ((0, "RnnActivation of direction 0 (0 Tanh)"),
         (0, "RnnActivation of direction 1 (bidirectional's reverse)")),
        "the pre-activation bounded to [-clip, clip] (0: no clip)",
        "ONNX RNN: X, W[D,H,I], R[D,H,H], B[D,2H], sequence_lens[N] int32, initial_h "
        "(zeros when absent) -> H_t = act_d(clip(X_t W[d]^T + H_(t-1) R[d]^T + Wb[d] + Rb[d])) "
        "over each entry's first sequence_lens[b] steps (direction 1, or reverse, from the last "
        "back); Y the states at their steps (zeros past a length), Y_h the last state (zeros "
        "for a length 0); float64, rounded once.",
    )
)  # fmt: skip

# GRU beside RNN (abi.py is at its 300 lines): the same operands but W [D, 3H, I], R [D, 3H, H]
# and B [D, 6H]; linear_before_reset and two activations per direction (f then g).
register(
    _recurrent(
        KernelId.GRU, ("Y", "Y_h"), (),
        (Imm("linear_before_reset", 0, "1: r_t times (H_(t-1) Rh^T + Rbh)"),),
        ((2, "RnnActivation f of direction 0 (2 Sigmoid)"),
         (0, "RnnActivation g of direction 0 (0 Tanh)"),
         (2, "RnnActivation f of direction 1 (bidirectional's reverse)"),
         (0, "RnnActivation g of direction 1")),
        "every pre-activation bounded to [-clip, clip] (0: no clip)",
        "ONNX GRU: X, W[D,3H,I], R[D,3H,H], B[D,6H], sequence_lens[N] int32, initial_h "
        "(zeros when absent) -> z, r = f(clip(.)), h = g(clip(X_t Wh^T + (r H) Rh^T + Rbh + "
        "Wbh)) (linear_before_reset: r (H Rh^T + Rbh)), H_t = (1 - z) h + z H_(t-1) over each "
        "entry's first sequence_lens[b] steps (direction 1, or reverse, from the last back); "
        "Y the states at their steps (zeros past a length), Y_h the last state (zeros for a "
        "length 0); float64, rounded once.",
    )
)  # fmt: skip

# LSTM beside GRU: W [D, 4H, I], R [D, 4H, H], B [D, 8H], initial_c and the peepholes P [D, 3H]
# as optional inputs, Y_c a third output; input_forget and three activations per direction.
register(
    _recurrent(
        KernelId.LSTM, ("Y", "Y_h", "Y_c"), ("initial_c", "P"),
        (Imm("input_forget", 0, "1: the forget gate is 1 - the input gate"),),
        ((2, "RnnActivation f of direction 0 (2 Sigmoid)"),
         (0, "RnnActivation g of direction 0 (0 Tanh)"),
         (0, "RnnActivation h of direction 0 (0 Tanh)"),
         (2, "RnnActivation f of direction 1 (bidirectional's reverse)"),
         (0, "RnnActivation g of direction 1"),
         (0, "RnnActivation h of direction 1")),
        "every gate's pre-activation bounded to [-clip, clip] (0: no clip)",
        "ONNX LSTM: X, W[D,4H,I], R[D,4H,H] (gates i, o, f, c), B[D,8H], sequence_lens[N] "
        "int32, initial_h, initial_c, P[D,3H] (peepholes i, o, f; zeros when absent) -> i, f = "
        "f(clip(. + P C_(t-1))) (input_forget: f = 1 - i), c = g(clip(.)), C_t = f C_(t-1) + i "
        "c, o = f(clip(. + Po C_t)), H_t = o h(C_t) over each entry's first sequence_lens[b] "
        "steps (direction 1, or reverse, from the last back); Y the states at their steps "
        "(zeros past a length), Y_h and Y_c the last states (zeros for a length 0); float64, "
        "rounded once.",
    )
)  # fmt: skip
