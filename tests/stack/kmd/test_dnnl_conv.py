"""CONV2D through oneDNN: what the NumPy kernel computes (within float32 rounding) for the
epilogues, strides, pads, dilations, the fused max pool and Winograd weights, at one and two
threads, replayed and on new inputs; the NumPy path where oneDNN cannot be loaded or does not
cover a launch; failures as typed errors."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import numpy as np
import pytest

from stack.kmd.kernels import (
    conv,
    conv_nhwc,
    conv_np,
    dnnl,
    dnnl_conv,
    numpy_backend,
    parallel,
    prepared_conv,
    registry,
)
from stack.kmd.kernels.parallel import WorkerPool

RNG = np.random.default_rng(17)
needs_dnnl = pytest.mark.skipif(
    dnnl.library() is None, reason=f"oneDNN not loadable here: {dnnl.unavailable()}"
)

#: (C, H, W, M, kernel, stride, pads, dilation, pool immediates or None)
GEOMETRIES = [
    (16, 16, 16, 32, 3, 1, 1, 1, None),
    (3, 32, 32, 16, 7, 2, 3, 1, (3, 3, 2, 2, 1, 1, 1, 1)),  # ResNet-50's stem, padded pool
    (3, 32, 32, 16, 3, 1, 1, 1, (2, 2, 2, 2, 0, 0, 0, 0)),  # the CNN's stem
    (24, 9, 11, 40, 3, 2, 1, 1, None),
    (8, 12, 12, 8, 3, 1, 2, 2, None),  # dilated
    (256, 7, 7, 512, 1, 1, 0, 1, None),  # 1x1 on small planes
    (128, 14, 14, 256, 1, 2, 0, 1, None),
]
#: (bias, residual, relu)
EPILOGUES = [(True, True, True), (True, False, True), (False, True, False), (False, False, False)]
CASES = [(g, e) for g in GEOMETRIES for e in EPILOGUES if g[8] is None or not e[1]]


@pytest.fixture(autouse=True)
def _untiled() -> Iterator[None]:
    before = parallel.tiles()
    parallel.bind_tiles(1)
    yield
    parallel.bind_tiles(before)


def _f(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def _launch(geometry: tuple, epilogue: tuple) -> tuple[list[np.ndarray], tuple, tuple]:
    c, h, w, m, k, s, pad, dil, pooled = geometry
    bias, residual, relu = epilogue
    ints: tuple[int, ...] = (s, s, pad, pad, pad, pad, dil, dil, 1, int(relu))
    oh, ow = conv.conv_hw((1, c, h, w), (m, c, k, k), ints)
    y_hw = (oh, ow)
    if pooled is not None:
        ints += pooled
        y_hw = ((oh + 2 * pooled[4] - pooled[0]) // pooled[2] + 1,
                (ow + 2 * pooled[5] - pooled[1]) // pooled[3] + 1)  # fmt: skip
    ins = [_f(1, c, h, w), _f(m, c, k, k)]
    if bias or residual:
        ins.append(_f(m))
    if residual:
        ins.append(_f(1, m, oh, ow))
    return ins, (1, m, *y_hw), ints


def _close(got: np.ndarray, want: np.ndarray) -> None:
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * float(np.abs(want).max()))


@needs_dnnl
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize(("geometry", "epilogue"), CASES)
def test_a_onednn_convolution_computes_what_the_numpy_kernel_computes(
    geometry: tuple, epilogue: tuple, threads: int
) -> None:
    ins, shape, ints = _launch(geometry, epilogue)
    want = np.empty(shape, np.float32)
    conv_np.conv2d(ins, [want], ints, ())
    got = np.full(shape, np.nan, np.float32)
    pool = WorkerPool(threads)
    previous = parallel.bind(pool)
    try:
        run = dnnl_conv.conv2d(ins, [got], ints, ())
        assert run is not None and run.owners  # type: ignore[attr-defined]
        for _ in range(2):  # replayed: the same result each time
            run()
            _close(got, want)
        ins[0][...] = _f(*ins[0].shape)  # a new input in the same memory
        if len(ins) > 3:
            ins[3][...] = _f(*ins[3].shape)
        conv_np.conv2d(ins, [want], ints, ())
        run()
        _close(got, want)
    finally:
        parallel.bind(previous)
        pool.close()


@needs_dnnl
def test_winograd_weights_are_turned_back_into_the_kernel_they_came_from() -> None:
    ins, shape, ints = _launch(GEOMETRIES[0], (True, True, True))
    g = np.array([[1, 0, 0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0, 0, 1]])
    u = np.einsum("ai,mcij,bj->abmc", g, ins[1].astype(np.float64), g).astype(np.float32)
    winograd_ints = (*ints, 0, 0, 1, 1, 0, 0, 0, 0, 1)
    np.testing.assert_allclose(dnnl_conv.weights(u, winograd_ints), ins[1], atol=1e-6)
    want, got = np.empty(shape, np.float32), np.empty(shape, np.float32)
    conv_np.conv2d(ins, [want], ints, ())
    run = dnnl_conv.conv2d([ins[0], u, *ins[2:]], [got], winograd_ints, ())
    assert run is not None
    run()
    _close(got, want)


def test_without_onednn_the_numpy_path_runs_unchanged(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dnnl, "_load", lambda: (None, "cannot load oneDNN: test"))
    assert dnnl.library() is None and dnnl.unavailable() == "cannot load oneDNN: test"
    ins, shape, ints = _launch(GEOMETRIES[0], (True, True, True))
    want, got = np.empty(shape, np.float32), np.empty(shape, np.float32)
    conv_np.conv2d(ins, [want], ints, ())
    run = dnnl_conv.conv2d(ins, [got], ints, ())
    assert run is not None and not hasattr(run, "owners")  # prepared_conv's closure
    run()
    np.testing.assert_array_equal(got, want)
    parallel.bind_tiles(2)  # a tiled launch is left to the kernel, which splits it
    assert dnnl_conv.conv2d(ins, [got], ints, ()) is None


def test_a_missing_library_is_reported_not_raised(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(dnnl.ENV, "/nonexistent/libdnnl.so.3")
    dnnl._load.cache_clear()
    try:
        assert dnnl.library() is None
        reason = dnnl.unavailable()
        assert reason is not None and "/nonexistent/libdnnl.so.3" in reason
    finally:
        monkeypatch.delenv(dnnl.ENV)
        dnnl._load.cache_clear()


@needs_dnnl
def test_launches_onednn_does_not_cover_take_the_numpy_path() -> None:
    ins, shape, ints = _launch(GEOMETRIES[0], (True, False, True))
    y = np.empty(shape, np.float32)
    doubles = [a.astype(np.float64) for a in ins]
    run = dnnl_conv.conv2d(doubles, [np.empty(shape, np.float64)], ints, ())
    assert run is not None and not hasattr(run, "owners")
    grouped = (*ints[:8], 2, 1)
    assert dnnl_conv.conv2d([ins[0], _f(32, 8, 3, 3), ins[2]], [y], grouped, ()) is None
    batch = [np.empty((2, *shape[1:]), np.float32)]
    assert dnnl_conv.conv2d([_f(2, 16, 16, 16), *ins[1:]], batch, ints, ()) is None


@needs_dnnl
@pytest.mark.parametrize("stride", [1, 2])
@pytest.mark.parametrize("channels", [16, 4])
def test_pointwise_convolutions_of_large_planes_or_little_work_stay_on_the_numpy_path(
    stride: int, channels: int
) -> None:
    """A 1x1 convolution is a GEMM on NCHW X already: on a plane larger than POINTWISE_PLANE
    oneDNN's three reorders cost about what it saves, and on a tiny one its calls cost more."""
    size = 30 if channels == 16 else 4
    geometry = (channels, size * stride, size, 2 * channels, 1, stride, 0, 1, None)
    ins, shape, ints = _launch(geometry, (True, True, True))
    plane = shape[2] * shape[3]
    assert plane > dnnl_conv.POINTWISE_PLANE or plane * channels * 2 * channels < (
        dnnl_conv.POINTWISE_MACS
    )
    want, got = np.empty(shape, np.float32), np.empty(shape, np.float32)
    conv_np.conv2d(ins, [want], ints, ())
    run = dnnl_conv.conv2d(ins, [got], ints, ())
    assert run is not None and not hasattr(run, "owners")
    run()
    np.testing.assert_array_equal(got, want)


@needs_dnnl
def test_each_thread_runs_primitives_on_a_stream_of_its_own() -> None:
    lib = dnnl.library()
    assert lib is not None
    mine = lib.stream().value
    assert lib.stream().value == mine
    other: list[int | None] = []
    thread = threading.Thread(target=lambda: other.append(lib.stream().value))
    thread.start()
    thread.join()
    assert other[0] not in (None, mine)


@needs_dnnl
def test_a_failed_onednn_call_raises_a_typed_error() -> None:
    lib = dnnl.library()
    assert lib is not None
    with pytest.raises(dnnl.DnnlError) as caught:  # W's channels disagree with X's
        dnnl_conv.conv_pd(lib, (1, 16, 8, 8), (32, 8, 3, 3), (1, 32, 6, 6), (1,) * 8 + (0,) * 2,
                           bias=False, residual=False)  # fmt: skip
    assert caught.value.call == "dnnl_convolution_forward_primitive_desc_create"
    assert caught.value.status == "invalid_arguments"
    assert caught.value.layer == "kmd"


def test_the_backend_prepares_conv2d_launches_tiled_ones_included() -> None:
    registry.known_backends()
    fn = registry.kernel(numpy_backend.NAME, numpy_backend.ids.KernelId.CONV2D)
    assert registry.preparer(fn) is conv_nhwc.conv2d  # NCHW launches: dnnl_conv.conv2d
    assert registry.prepares_tiled(conv_nhwc.conv2d)
    assert not registry.prepares_tiled(prepared_conv.conv2d)
