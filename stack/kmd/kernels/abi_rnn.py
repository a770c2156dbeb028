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

register(
    KernelAbi(
        KernelId.RNN, ("X", "W", "R"), ("Y", "Y_h"),
        optional=("B", "sequence_lens", "initial_h"),
        ints=(
            Imm("direction", 0, "RnnDirection: 0 forward, 1 reverse, 2 bidirectional"),
            Imm("layout", 0, "0: X [S,N,I], Y [S,D,N,H]; 1: X [N,S,I], Y [N,S,D,H]"),
            Imm("activation_0", 0, "RnnActivation of direction 0 (0 Tanh)"),
            Imm("activation_1", 0, "RnnActivation of direction 1 (bidirectional's reverse)"),
        ),
        floats=(
            Imm("clip", 0.0, "the pre-activation bounded to [-clip, clip] (0: no clip)"),
            Imm("alpha_0", 0.0), Imm("beta_0", 0.0), Imm("alpha_1", 0.0), Imm("beta_1", 0.0),
        ),
        doc="ONNX RNN: X, W[D,H,I], R[D,H,H], B[D,2H], sequence_lens[N] int32, initial_h "
        "(zeros when absent) -> H_t = act_d(clip(X_t W[d]^T + H_(t-1) R[d]^T + Wb[d] + Rb[d])) "
        "over each entry's first sequence_lens[b] steps (direction 1, or reverse, from the last "
        "back); Y the states at their steps (zeros past a length), Y_h the last state (zeros "
        "for a length 0); float64, rounded once.",
    )
)  # fmt: skip

# GRU beside RNN (abi.py is at its 300 lines): the same operands but W [D, 3H, I], R [D, 3H, H]
# and B [D, 6H]; linear_before_reset and two activations per direction (f then g).
register(
    KernelAbi(
        KernelId.GRU, ("X", "W", "R"), ("Y", "Y_h"),
        optional=("B", "sequence_lens", "initial_h"),
        ints=(
            Imm("direction", 0, "RnnDirection: 0 forward, 1 reverse, 2 bidirectional"),
            Imm("layout", 0, "0: X [S,N,I], Y [S,D,N,H]; 1: X [N,S,I], Y [N,S,D,H]"),
            Imm("linear_before_reset", 0, "1: r_t times (H_(t-1) Rh^T + Rbh)"),
            Imm("activation_0", 2, "RnnActivation f of direction 0 (2 Sigmoid)"),
            Imm("activation_1", 0, "RnnActivation g of direction 0 (0 Tanh)"),
            Imm("activation_2", 2, "RnnActivation f of direction 1 (bidirectional's reverse)"),
            Imm("activation_3", 0, "RnnActivation g of direction 1"),
        ),
        floats=(
            Imm("clip", 0.0, "every pre-activation bounded to [-clip, clip] (0: no clip)"),
            Imm("alpha_0", 0.0), Imm("beta_0", 0.0), Imm("alpha_1", 0.0), Imm("beta_1", 0.0),
            Imm("alpha_2", 0.0), Imm("beta_2", 0.0), Imm("alpha_3", 0.0), Imm("beta_3", 0.0),
        ),
        doc="ONNX GRU: X, W[D,3H,I], R[D,3H,H], B[D,6H], sequence_lens[N] int32, initial_h "
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
    KernelAbi(
        KernelId.LSTM, ("X", "W", "R"), ("Y", "Y_h", "Y_c"),
        optional=("B", "sequence_lens", "initial_h", "initial_c", "P"),
        ints=(
            Imm("direction", 0, "RnnDirection: 0 forward, 1 reverse, 2 bidirectional"),
            Imm("layout", 0, "0: X [S,N,I], Y [S,D,N,H]; 1: X [N,S,I], Y [N,S,D,H]"),
            Imm("input_forget", 0, "1: the forget gate is 1 - the input gate"),
            Imm("activation_0", 2, "RnnActivation f of direction 0 (2 Sigmoid)"),
            Imm("activation_1", 0, "RnnActivation g of direction 0 (0 Tanh)"),
            Imm("activation_2", 0, "RnnActivation h of direction 0 (0 Tanh)"),
            Imm("activation_3", 2, "RnnActivation f of direction 1 (bidirectional's reverse)"),
            Imm("activation_4", 0, "RnnActivation g of direction 1"),
            Imm("activation_5", 0, "RnnActivation h of direction 1"),
        ),
        floats=(
            Imm("clip", 0.0, "every gate's pre-activation bounded to [-clip, clip] (0: no clip)"),
            Imm("alpha_0", 0.0), Imm("beta_0", 0.0), Imm("alpha_1", 0.0), Imm("beta_1", 0.0),
            Imm("alpha_2", 0.0), Imm("beta_2", 0.0), Imm("alpha_3", 0.0), Imm("beta_3", 0.0),
            Imm("alpha_4", 0.0), Imm("beta_4", 0.0), Imm("alpha_5", 0.0), Imm("beta_5", 0.0),
        ),
        doc="ONNX LSTM: X, W[D,4H,I], R[D,4H,H] (gates i, o, f, c), B[D,8H], sequence_lens[N] "
        "int32, initial_h, initial_c, P[D,3H] (peepholes i, o, f; zeros when absent) -> i, f = "
        "f(clip(. + P C_(t-1))) (input_forget: f = 1 - i), c = g(clip(.)), C_t = f C_(t-1) + i "
        "c, o = f(clip(. + Po C_t)), H_t = o h(C_t) over each entry's first sequence_lens[b] "
        "steps (direction 1, or reverse, from the last back); Y the states at their steps "
        "(zeros past a length), Y_h and Y_c the last states (zeros for a length 0); float64, "
        "rounded once.",
    )
)  # fmt: skip
