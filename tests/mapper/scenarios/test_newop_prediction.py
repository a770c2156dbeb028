"""Saved predictions for new ops on the reference stack, each taken before its op existed.

Each fixture is ``stackmap scenario new-op OP --like LIKE --json`` at the commit it names
(``saved_at``), when no layer had the op:

- ``fixtures/new_op_instancenormalization.json``: InstanceNormalization like layernorm;
- ``fixtures/new_op_convtranspose.json``: ConvTranspose like conv2d (the like-op is spelt
  ``Conv``/``CONV`` in the adapter and compiler and ``CONV2D`` below; the map joins them);
- ``fixtures/new_op_scatternd.json``: ScatterND like gather_nd (``GatherND`` / ``GATHER_ND``;
  the prediction names it ``gathernd``, the spelling the map joins them under);
- ``fixtures/new_op_scatterelements.json``: ScatterElements like scatter_nd (``scatternd``);
- ``fixtures/new_op_maxunpool.json``: MaxUnpool like maxpool (``MaxPool`` / ``MAXPOOL``);
- ``fixtures/new_op_globallppool.json``: GlobalLpPool like globalavgpool
  (``GlobalAveragePool`` / ``GLOBALAVGPOOL``);
- ``fixtures/new_op_maxroipool.json``: MaxRoiPool like maxpool (``MaxPool`` / ``MAXPOOL``);
- ``fixtures/new_op_roialign.json``: RoiAlign like maxroipool (``MaxRoiPool`` / ``MAXROIPOOL``);
- ``fixtures/new_op_reversesequence.json``: ReverseSequence like gatherelements
  (``GatherElements`` / ``GATHER_ELEMENTS``);
- ``fixtures/new_op_gridsample.json``: GridSample like roialign (``RoiAlign`` / ``ROIALIGN``);
- ``fixtures/new_op_tensorscatter.json``: TensorScatter like scatterelements
  (``ScatterElements`` / ``SCATTER_ELEMENTS``);
- ``fixtures/new_op_convinteger.json``: ConvInteger like matmulinteger (``MatMulInteger`` /
  ``MATMUL_INTEGER``, whose kernel is ``GEMM_I8``);
- ``fixtures/new_op_qlinearconv.json``: QLinearConv like conv2d, the similar op the predictor
  chose itself (no ``--like``);
- ``fixtures/new_op_bitcast.json``: BitCast like cast (``Cast`` / ``CAST``), the predictor's
  own choice again;
- ``fixtures/new_op_det.json``: Det like matmul (``MatMul`` / ``MATMUL``: a batched op over
  the trailing matrices; the predictor's own choice was relu);
- ``fixtures/new_op_negativeloglikelihoodloss.json``: NegativeLogLikelihoodLoss like
  gatherelements (``GatherElements`` / ``GATHER_ELEMENTS``: it picks each sample's class
  along axis 1; the predictor's own choice, scatterelements, was a weak match);
- ``fixtures/new_op_softmaxcrossentropyloss.json``: SoftmaxCrossEntropyLoss like
  negativeloglikelihoodloss (its loss of the log-softmax; the predictor's own choice was
  softmax);
- ``fixtures/new_op_rotaryembedding.json``: RotaryEmbedding like layernorm (``LayerNorm`` /
  ``LAYERNORM``: X with per-position tensors beside it, Y shaped as X, computed along the last
  axis; the predictor's own choice, globalavgpool, was a weak match);
- ``fixtures/new_op_einsum.json``: Einsum like matmul (``MatMul`` / ``MATMUL``: a contraction
  over the operands' axes, of which MatMul is one case; the predictor's own choice, expand, was
  a weak match);
- ``fixtures/new_op_swiglu.json``: SwiGLU like mul (``Mul`` / ``MUL``: an elementwise product
  of two inputs of one shape, the gate passed through Swish first; the predictor's own choice,
  matmul, shares Mul's inputs and types but is a contraction);
- ``fixtures/new_op_causalconvwithstate.json``: CausalConvWithState like conv2d (``Conv`` /
  ``CONV2D``: a convolution, here depthwise over one axis with the state of earlier steps
  before the input; the predictor's own choice, bitcast (0.20), is no convolution);
- ``fixtures/new_op_dft.json``: DFT like cumsum (``CumSum`` / ``CUMSUM``: a transform along
  one axis that the model gives as an input, with two integer flags; the predictor's own
  choice, softmax (0.24), works along an axis too but has it as an attribute);
- ``fixtures/new_op_stft.json``: STFT like dft (``DFT``: a DFT of each frame of the signal;
  the predictor's own choice too);
- ``fixtures/new_op_attention.json``: Attention like rotaryembedding (``RotaryEmbedding``: a
  transformer op of opset 23 over 4-D or 3-D inputs with head counts as attributes, output
  shaped as its query; the predictor's own choice, layernorm (0.15), was a weak match);
- ``fixtures/new_op_rnn.json``: RNN like causalconvwithstate (``CausalConvWithState``: a
  step over a sequence carrying a state, with optional bias and initial state, an activation
  attribute and the final state as a second output; the predictor's own choice, conv2d, was a
  weak match);
- ``fixtures/new_op_linearattention.json``: LinearAttention like attention (``Attention``: query,
  key and value with head counts as attributes; the predictor's own choice too);
- ``fixtures/new_op_gru.json``: GRU like rnn (``RNN``: the same inputs, outputs and attributes
  with gates; the predictor's own choice too);
- ``fixtures/new_op_lstm.json``: LSTM like rnn (``RNN``: its inputs and attributes with a cell
  state and peepholes beside; the predictor's own choice, gru close behind).

Once a change adds the op end to end (down to a KMD kernel: a decomposition into existing ops
in the adapter is another kind of change), the comparison runs against everything since that
commit (files whose changed lines spell the op, definitions added whose names spell it): every
vocabulary the prediction says must gain a value did gain one. Recall and precision against
the goal (0.9 / 0.7) are figures, printed by ``stackmap eval new-op FIXTURE --diff
SAVED_AT..HEAD --json``, not assertions.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from mapper.scenarios.newop_eval import compare_prediction

REPO = Path(__file__).resolve().parents[3]
FIXTURES = Path(__file__).parent / "fixtures"
SAVED = {  # fixture → (op, like, the spelling git grep looks for)
    "new_op_instancenormalization.json": ("InstanceNormalization", "layernorm", "instancenorm"),
    "new_op_convtranspose.json": ("ConvTranspose", "conv2d", "conv_\\?transpose"),
    "new_op_scatternd.json": ("ScatterND", "gathernd", "scatter_\\?nd"),
    "new_op_scatterelements.json": ("ScatterElements", "scatternd", "scatter_\\?elements"),
    "new_op_maxunpool.json": ("MaxUnpool", "maxpool", "max_\\?unpool"),
    "new_op_globallppool.json": ("GlobalLpPool", "globalavgpool", "global_\\?lp_\\?pool"),
    "new_op_maxroipool.json": ("MaxRoiPool", "maxpool", "max_\\?roi_\\?pool"),
    "new_op_roialign.json": ("RoiAlign", "maxroipool", "roi_\\?align"),
    "new_op_reversesequence.json": ("ReverseSequence", "gatherelements", "reverse_\\?sequence"),
    "new_op_gridsample.json": ("GridSample", "roialign", "grid_\\?sample"),
    "new_op_tensorscatter.json": ("TensorScatter", "scatterelements", "tensor_\\?scatter"),
    # [^(]: ConvTranspose's kernel docstring writes its algorithm as a call of the op's name
    "new_op_col2im.json": ("Col2Im", "conv2d", "col_\\?2_\\?im[^(]"),
    "new_op_affinegrid.json": ("AffineGrid", "gridsample", "affine_\\?grid"),
    "new_op_deformconv.json": ("DeformConv", "conv2d", "deform_\\?conv"),
    "new_op_centercroppad.json": ("CenterCropPad", "pad", "center_\\?crop_\\?pad"),
    "new_op_dynamicquantizelinear.json": (
        "DynamicQuantizeLinear",
        "quantize",
        "dynamic_\\?quantize",
    ),
    "new_op_convinteger.json": ("ConvInteger", "matmulinteger", "conv_\\?integer"),
    "new_op_qlinearconv.json": ("QLinearConv", "conv2d", "qlinear_\\?conv"),
    "new_op_bitcast.json": ("BitCast", "cast", "bit_\\?cast"),
    # the op's name is a short word: only where it stands alone or between underscores
    "new_op_det.json": ("Det", "matmul", "\\(^\\|[^a-z]\\)det\\([^a-z]\\|$\\)"),
    "new_op_negativeloglikelihoodloss.json": (
        "NegativeLogLikelihoodLoss",
        "gatherelements",
        "negative_\\?log_\\?likelihood_\\?loss",
    ),
    "new_op_softmaxcrossentropyloss.json": (
        "SoftmaxCrossEntropyLoss",
        "negativeloglikelihoodloss",
        "softmax_\\?cross_\\?entropy_\\?loss",
    ),
    "new_op_rotaryembedding.json": ("RotaryEmbedding", "layernorm", "rotary_\\?embedding"),
    # NumPy's einsum (np.einsum) is called before the op exists: only where no dot precedes it
    "new_op_einsum.json": ("Einsum", "matmul", "\\(^\\|[^.a-z]\\)einsum"),
    "new_op_swiglu.json": ("SwiGLU", "mul", "swi_\\?glu"),
    "new_op_causalconvwithstate.json": (
        "CausalConvWithState",
        "conv2d",
        "causal_\\?conv_\\?with_\\?state",
    ),
    # the op's name is a short word: only where it stands alone or between underscores
    "new_op_dft.json": ("DFT", "cumsum", "\\(^\\|[^a-z]\\)dft\\([^a-z]\\|$\\)"),
    "new_op_stft.json": ("STFT", "dft", "\\(^\\|[^a-z]\\)stft\\([^a-z]\\|$\\)"),
    # attention is a word of the transformer docs: only where no letter or space is beside it
    "new_op_attention.json": (
        "Attention",
        "rotaryembedding",
        "\\(^\\|[^a-z ]\\)attention\\([^a-z ]\\|$\\)",
    ),
    "new_op_rnn.json": ("RNN", "causalconvwithstate", "\\(^\\|[^a-z]\\)rnn\\([^a-z]\\|$\\)"),
    "new_op_linearattention.json": ("LinearAttention", "attention", "linear_\\?attention"),
    # the op's name is a short word: only where it stands alone or between underscores
    "new_op_gru.json": ("GRU", "rnn", "\\(^\\|[^a-z]\\)gru\\([^a-z]\\|$\\)"),
    "new_op_lstm.json": ("LSTM", "rnn", "\\(^\\|[^a-z]\\)lstm\\([^a-z]\\|$\\)"),
}


def _mentions(rev: str, spelling: str) -> list[str]:
    proc = subprocess.run(
        ["git", "-C", str(REPO), "grep", "-il", spelling, rev, "--", "stack", "contracts"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return proc.stdout.split()


@pytest.mark.parametrize("fixture", sorted(SAVED))
def test_prediction_was_saved_before_the_op_existed(fixture: str) -> None:
    op, like, spelling = SAVED[fixture]
    saved = json.loads((FIXTURES / fixture).read_text(encoding="utf-8"))
    assert (saved["op"], saved["like"]) == (op, like)
    assert _mentions(saved["saved_at"], spelling) == []
    assert {plan["layer"] for plan in saved["layers"]} == {
        "adapter",
        "compiler",
        "runtime",
        "umd",
        "kmd",
    }
    for plan in saved["layers"]:
        for point in plan["points"]:
            assert point["path"] and point["line"] and point["why"], point


def test_convtranspose_prediction_reaches_every_layer() -> None:
    """The like-op is spelt differently above and below the Executable: the prediction still
    has change points in all five layers."""
    saved = json.loads((FIXTURES / "new_op_convtranspose.json").read_text(encoding="utf-8"))
    empty = [plan["layer"] for plan in saved["layers"] if not plan["points"]]
    assert empty == []


@pytest.mark.parametrize("fixture", sorted(SAVED))
def test_prediction_against_the_real_change(fixture: str) -> None:
    op, _, spelling = SAVED[fixture]
    saved = json.loads((FIXTURES / fixture).read_text(encoding="utf-8"))
    mentions = _mentions("HEAD", spelling)
    if not mentions:
        pytest.skip(f"{op} has not been added yet; the comparison runs once it is")
    if not any(path.startswith("HEAD:stack/kmd/") for path in mentions):
        pytest.skip(
            f"{op} exists only as a decomposition above the KMD "
            f"({', '.join(p.removeprefix('HEAD:') for p in mentions)}); the comparison needs "
            "the op added end to end"
        )
    result = compare_prediction(saved, REPO, f"{saved['saved_at']}..HEAD")
    vocabularies = {
        point["path"]
        for plan in saved["layers"]
        for point in plan["points"]
        if point["kind"] == "vocabulary"
    } | {p["path"] for p in saved["outside_layers"] if p["kind"] == "vocabulary"}
    assert len(vocabularies) == 6  # the op's values in six vocabularies, in every language
    assert sorted(vocabularies - set(result["files"]["hits"])) == [], result["files"]
