#!/usr/bin/env bash
# On a machine with an NVIDIA GPU: install CuPy from wheels, run the GPU-marked tests and the
# kernel benchmarks in one go. Figures go to stdout (and to $OUT when that is set).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/gpu_check}
mkdir -p "$out"
python3 -m pip install -q -e '.[dev,gpu]'
python3 -c 'import cupy; print("cupy", cupy.__version__, "devices", cupy.cuda.runtime.getDeviceCount())'
python3 -m pytest -m gpu -q 2>&1 | tee "$out/gpu_tests.log"
REFSTACK_BACKEND=cupy refstack bench kmd --json | tee "$out/bench_kmd.json"
