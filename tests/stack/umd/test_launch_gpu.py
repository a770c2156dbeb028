"""Stage 4 on a GPU for GEMM and CONV2D: the library by default, the tuned block's tiled launch
where the tuning database has one, and the block sizes a device can run (pure: no GPU)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from stack.kmd import DType, KernelId, decode_blob
from stack.kmd.blob import LaunchConfig
from stack.kmd.kernels.gpu_tiles import LIBRARY_LAUNCH
from stack.kmd.opmod import DeviceCapabilities, cuda_capabilities_from_attributes
from stack.umd.launch_gpu import block_candidates, launch_gpu, tileable
from stack.umd.ops import OpKind, OpRequest, TensorDesc
from stack.umd.pipeline import Pipeline
from stack.umd.plan import KernelCall, Operand
from stack.umd.program import BlobTemplate
from stack.umd.templates import default_templates
from stack.umd.tuner import make_call
from stack.umd.tuning import TuningDatabase, TuningRecord, device_key, shape_class


def _launch(tpl: BlobTemplate) -> LaunchConfig:
    return decode_blob(tpl.data).launch


def _gpu(threads: int = 1024, shared: int = 48 * 1024) -> DeviceCapabilities:
    attrs = {
        "ComputeCapabilityMajor": 9,
        "ComputeCapabilityMinor": 0,
        "MultiProcessorCount": 132,
        "MaxThreadsPerBlock": threads,
        "WarpSize": 32,
        "MaxSharedMemoryPerBlock": shared,
    }
    return cuda_capabilities_from_attributes(attrs, name="NVIDIA Test", memory_bytes=1 << 34)


def test_gemm_and_conv_encode_the_library_untuned_and_the_tiled_grid_for_a_block() -> None:
    gemm = make_call(KernelId.GEMM, ((100, 64), (64, 70)))
    tpl = default_templates().get(KernelId.GEMM)
    assert _launch(tpl.instantiate(gemm, "cupy")) == LIBRARY_LAUNCH
    tiled = _launch(tpl.instantiate(gemm, "cupy", block=16))
    assert tiled == LaunchConfig((5, 7, 1), (16, 16, 1), 2048)
    conv = make_call(KernelId.CONV2D, ((2, 8, 10, 12), (6, 8, 3, 3)))  # out 2x6x10x12
    grouped = replace(conv, attrs={**conv.attrs, "group": 2})
    launch = _launch(default_templates().get(KernelId.CONV2D).instantiate(grouped, "cupy", block=8))
    # rows: 3 channels per group; cols: 120 pixels; z: 2 images x 2 groups
    assert launch == LaunchConfig((15, 1, 4), (8, 8, 1), 512)
    # the CPU target never reads the block
    assert _launch(tpl.instantiate(gemm, "numpy", 2, block=16)).block[1] == 1


def test_calls_the_tiled_kernel_cannot_take_stay_on_the_library() -> None:
    conv = make_call(KernelId.CONV2D, ((1, 4, 8, 8), (4, 4, 3, 3)))
    pooled = replace(conv, attrs={**conv.attrs, "pool_h": 2, "pool_w": 2})
    nhwc = replace(conv, attrs={**conv.attrs, "layout": 1})
    f16 = KernelCall(
        KernelId.GEMM,
        tuple(
            Operand(op.ref, op.shape, DType.F16)
            for op in make_call(KernelId.GEMM, ((8, 8), (8, 8))).params
        ),
        2,
        {},
    )
    tall = make_call(KernelId.GEMM, ((70000 * 8, 4), (4, 4)))  # grid y 70000 > 65535
    assert [tileable(c) for c in (conv, pooled, f16, tall, nhwc)] == [
        True, False, False, True, False
    ]  # fmt: skip
    assert [launch_gpu(c, 8) for c in (pooled, f16, tall, nhwc)] == [LIBRARY_LAUNCH] * 4
    assert launch_gpu(conv, 8).block == (8, 8, 1)
    assert launch_gpu(conv, None) == launch_gpu(conv, 0) == LIBRARY_LAUNCH


def test_block_candidates_are_those_the_device_can_run_each_other_with_its_reason() -> None:
    call = make_call(KernelId.GEMM, ((256, 256), (256, 256)))
    valid, invalid = block_candidates(call, (8, 16, 32, 64), _gpu())
    assert valid == (
        ({"block": 0}, True),
        ({"block": 8}, False),
        ({"block": 16}, False),
        ({"block": 32}, False),
    )
    assert invalid == (({"block": 64}, "64x64 threads exceed 1024 per block"),)
    valid, invalid = block_candidates(call, (8, 16, 32), _gpu(threads=256, shared=1024))
    assert [c["block"] for c, _ in valid] == [0, 8]
    assert invalid == (
        ({"block": 16}, "2048 bytes of shared memory exceed 1024 per block"),
        ({"block": 32}, "32x32 threads exceed 256 per block"),
    )


def _gemm_request(m: int, k: int, n: int) -> OpRequest:
    f = DType.F32
    return OpRequest.make(
        OpKind.GEMM,
        [TensorDesc(0, (m, k), f), TensorDesc(0, (k, n), f)],
        [TensorDesc(0, (m, n), f)],
    )


def test_the_umd_encodes_the_block_tuned_for_its_gpu_model_only(tmp_path: Path) -> None:
    caps = _gpu()
    assert device_key("cupy", 1, caps) == "cupy:NVIDIA Test:sm90"
    assert device_key("numpy", 2, None) == "numpy:threads=2"
    db = TuningDatabase(tmp_path / "t.json")
    call = make_call(KernelId.GEMM, ((256, 512), (512, 256)))
    db.put(
        TuningRecord("GEMM", shape_class(call), device_key("cupy", 1, caps), {"block": 32}, 1e-4)
    )
    db.save()
    reread = TuningDatabase(tmp_path / "t.json")
    assert dict(reread.records()[0].params) == {"block": 32}
    pipe = Pipeline(target="cupy", tuning=reread, capabilities=caps)
    prog = pipe.compile(_gemm_request(256, 512, 256))
    assert decode_blob(prog.blobs[prog.primary].data).launch == LaunchConfig(
        (8, 8, 1), (32, 32, 1), 8192
    )
    other_model = replace(caps, device="cupy:0:NVIDIA Other")
    for pipeline, req in (
        (
            Pipeline(target="cupy", tuning=reread, capabilities=other_model),
            _gemm_request(256, 512, 256),
        ),
        (pipe, _gemm_request(1024, 512, 256)),  # another shape class
    ):
        prog = pipeline.compile(req)
        assert decode_blob(prog.blobs[prog.primary].data).launch == LIBRARY_LAUNCH
