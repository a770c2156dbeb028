"""Stage 4 on a GPU for the kernels whose block is the tile (GEMM, CONV2D).

The KMD reads such a launch as :mod:`stack.kmd.kernels.gpu_tiles` says: block 0 is the library
path (cuBLAS), block T the T x T tiled hand kernel with the grid over the output. Without a
tuned block the UMD encodes the library; with one (``refstack tune`` on the GPU, kept in the
tuning database) the tiled launch — unless the call cannot take it (not float32, a fused max
pool, a grid beyond CUDA's limits), which stays on the library.
"""

from __future__ import annotations

from stack.kmd.blob import LaunchConfig
from stack.kmd.dtypes import DType
from stack.kmd.kernels.gpu_tiles import (
    LIBRARY,
    LIBRARY_LAUNCH,
    MAX_GRID_YZ,
    TILED,
    tiled_launch,
    unfit,
)
from stack.kmd.kernels.ids import KernelId
from stack.umd.operators import DeviceCapabilities
from stack.umd.plan import KernelCall

__all__ = ["TILED", "block_candidates", "launch_gpu", "tileable"]


def _group(call: KernelCall) -> int:
    return int(call.attrs.get("group", 1))  # type: ignore[arg-type]


def tileable(call: KernelCall) -> bool:
    """Whether ``call`` may run the tiled kernel at all (float32 operands, no fused pool; a
    CONV2D in NCHW: an NHWC one, layout 1, runs the library path on transposed copies)."""
    if call.kernel_id not in TILED or any(p.dtype is not DType.F32 for p in call.params):
        return False
    if call.kernel_id is KernelId.CONV2D:
        pool_h = int(call.attrs.get("pool_h", 0))  # type: ignore[arg-type]
        plain = not call.attrs.get("algorithm", 0) and not call.attrs.get("layout", 0)
        return pool_h <= 0 and plain  # Winograd, NHWC: library path
    return len(call.outs[0].shape) == 2


def launch_gpu(call: KernelCall, block: int | None = None) -> LaunchConfig:
    """The GPU launch of a GEMM / CONV2D call: tiled with ``block`` when given and the call is
    tileable, else the library launch."""
    if not block or block == LIBRARY or not tileable(call):
        return LIBRARY_LAUNCH
    launch = tiled_launch(call.kernel_id, call.outs[0].shape, block, _group(call))
    if max(launch.grid[1], launch.grid[2]) > MAX_GRID_YZ:
        return LIBRARY_LAUNCH
    return launch


def block_candidates(
    call: KernelCall, values: tuple[int, ...], caps: DeviceCapabilities
) -> tuple[tuple[tuple[dict[str, int], bool], ...], tuple[tuple[dict[str, int], str], ...]]:
    """The block sizes a tuner times for ``call`` on a GPU with ``caps``: the library (the
    default, block 0) and each of ``values`` whose tiled launch the device can run; and the
    values it cannot, each with the reason (threads or shared memory per block, grid limits)."""
    valid: list[tuple[dict[str, int], bool]] = [({"block": LIBRARY}, True)]
    invalid: list[tuple[dict[str, int], str]] = []
    for block in sorted(set(values)):
        launch = tiled_launch(call.kernel_id, call.outs[0].shape, block, _group(call))
        why = unfit(block, caps.max_threads_per_block, caps.shared_mem_per_block, launch)
        if why is None and not tileable(call):
            why = "the call takes the library path only (not float32, or a fused pool)"
        if why is None:
            valid.append(({"block": block}, False))
        else:
            invalid.append(({"block": block}, why))
    return tuple(valid), tuple(invalid)
