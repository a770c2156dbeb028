#!/usr/bin/env bash
# On a machine with an NVIDIA GPU: make CuPy importable, run the GPU-marked tests, the KMD
# benchmark with the CuPy backend, and `refstack tune` for the CuPy GEMM and Conv kernels (the
# tiled kernels' block sizes the GPU can run against the cuBLAS library path). Figures go to stdout and, when $OUT is set, to files there.
#
# Uses the CuPy importable by $PYTHON (default python3; the lab's H200 image ships cupy-cuda13x).
# Offline machines without it: put CuPy (and any other missing) wheels in .whl/ first, e.g.
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 \
#     --platform manylinux2014_x86_64 -d .whl 'cupy-cuda12x>=13,<15' fastrlock
# and they are installed from there (no index needed).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/gpu_check}
mkdir -p "$out"
PY=${PYTHON:-python3}
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"

if ls .whl/*.whl >/dev/null 2>&1; then
    "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site .whl/*.whl || exit 2
    export PYTHONPATH="$PYTHONPATH:/tmp/site"
elif ! "$PY" -c 'import cupy' 2>/dev/null; then
    if [ "${GPU_CHECK_PIP:-0}" = 1 ]; then  # opt in: installs into $PY's environment
        "$PY" -m pip install -q -e '.[dev,gpu]' || exit 2
    else
        echo "error: CuPy is not importable by $PY; put wheels in .whl/ or set GPU_CHECK_PIP=1" >&2
        exit 2
    fi
fi
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true; } \
    | tee "$out/gpu.txt"
"$PY" -c 'import cupy; print("cupy", cupy.__version__, "devices", cupy.cuda.runtime.getDeviceCount())' \
    | tee -a "$out/gpu.txt" || exit 2

# The GPU-marked tests (other layers' modules that cannot import here are reported, not fatal).
"$PY" -m pytest -m gpu -q -p no:cacheprovider --continue-on-collection-errors tests/stack \
    2>&1 | tee "$out/gpu_tests.log"
tests_rc=${PIPESTATUS[0]}

# The kernel benchmark through the KMD on the GPU (and the null device, for comparison):
# `refstack bench kmd`, or the same function directly if the CLI's other imports are missing.
bench() {  # $1 = backend, $2 = output file, then extra options
    local backend=$1 file=$2
    shift 2
    if "$PY" -c 'import stack.cli' 2>/dev/null; then
        "$PY" -c 'from stack.cli import main; main()' bench kmd --json --backend "$backend" "$@"
    else
        "$PY" -c 'import json, sys; from stack.kmd import bench
print(json.dumps(bench.run(sys.argv[1], size=int(sys.argv[2])), indent=2))' "$backend" "${SIZE:-2048}"
    fi | tee "$file"
    return "${PIPESTATUS[0]}"
}
SIZE=4096 bench cupy "$out/bench_kmd_cupy.json" --size 4096
bench_rc=$?
bench numpy "$out/bench_kmd_numpy.json" --iters 500

# GPU tuning: one table per kernel (block 0 = cuBLAS, the default; T = the T x T tiled kernel),
# the best kept in a tuning database under $out (the user's own database is left alone).
tune_rc=0
for kernel in GEMM Conv; do
    "$PY" -c 'from stack.cli import main; main()' tune "$kernel" --backend cupy \
        --db "$out/tuning.json" --warmup 5 --iters "${TUNE_ITERS:-50}" | tee "$out/tune_$kernel.txt"
    [ "${PIPESTATUS[0]}" = 0 ] || tune_rc=1
done
echo "gpu tests exit $tests_rc, cupy bench exit $bench_rc, tune exit $tune_rc" | tee "$out/summary.txt"
exit $(( tests_rc != 0 || bench_rc != 0 || tune_rc != 0 ))
