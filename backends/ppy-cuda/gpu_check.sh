#!/usr/bin/env bash
# The ppy-cuda checks that need an NVIDIA GPU, in one run (under 8 minutes on an H200).
#
#   bash backends/ppy-cuda/gpu_check.sh          # from the repository root
#
# The GPU machine reaches no package index: its python3 (3.12) already has torch with
# CUDA, llvmlite, pybind11, ninja. This installs the project's distributions from the
# tree without dependencies and without an index, and only what is missing (pytest,
# hypothesis) from the wheels in $PPY_WHEELS (default .gpu-wheels, made on a machine
# with an index by `pip download -d .gpu-wheels --python-version 3.12 --only-binary=:all:
# --no-deps pytest pluggy iniconfig packaging pygments hypothesis sortedcontainers attrs`;
# the device tool carries it with carry=[".gpu-wheels"]). When no toolkit on the machine
# has the libdevice of torch's CUDA, $PPY_WHEELS/libdevice-<cuda>.bc is used.
#
# Steps (each under its own timeout; a failing step is reported and the rest still run):
#   1. the `gpu`-marked tests of ppy-cuda (kernels vs torch's CUDA ops, bit for bit),
#      and the rest of ppy-cuda's tests (ptxas ones skip where ptxas is absent);
#   2. the proofs: every libdevice function on all 2^32 float32 inputs and sampled
#      float64 ones (`python -m ppy_cuda.gpu prove`), JSON in $OUT (or /tmp);
#   3. the benchmark: a*b+c, where, exp(a)*b+c at 1e7 and 1e8, float32/float64, vs
#      eager and torch.compile (benchmarks/cuda_fused.py);
#   4. GPT-2 XL at 1x128: eager vs ATen regions on CUDA tensors, with dispatch counts
#      (examples/46_gpt2/gpt2.ppy; item 4 of issue 16: regions run on CUDA).
set -u
cd "$(dirname "$0")/../.."
PY=${PYTHON:-python3}
WHEELS=${PPY_WHEELS:-.gpu-wheels}
OUT=${OUT:-/tmp/ppy-gpu-check}
mkdir -p "$OUT"
status=0
step() { echo; echo "=== $1 ($(date +%T))"; }
run() {  # run LIMIT CMD...: a step's command under a timeout; remember a failure
    local limit=$1; shift
    timeout "$limit" "$@"; local rc=$?
    if [ $rc -ne 0 ]; then echo "!!! exit $rc: $*"; status=1; fi
}

step "machine"
nvidia-smi --query-gpu=name,driver_version,compute_cap,memory.total --format=csv,noheader
$PY - <<'PYEOF'
import sys, torch, llvmlite
print("python", sys.version.split()[0], "| torch", torch.__version__, "CUDA", torch.version.cuda,
      "| llvmlite", llvmlite.__version__, "| cuda available:", torch.cuda.is_available())
PYEOF
command -v ptxas >/dev/null && ptxas --version | tail -1 || echo "ptxas: none (ptxas tests skip)"

step "install the tree (no deps, no index)"
missing=()
for mod in pytest hypothesis; do $PY -c "import $mod" 2>/dev/null || missing+=("$mod"); done
if [ ${#missing[@]} -gt 0 ]; then
    echo "from $WHEELS: ${missing[*]}"
    $PY -m pip install -q --no-index --find-links "$WHEELS" "${missing[@]}" || status=1
fi
$PY -m pip install -q --no-deps --no-index --no-build-isolation \
    -e core -e backends/ppy-llvm -e backends/ppy-cuda -e packages/ppy-torch || status=1
CUDA_VER=$($PY -c "import torch; print(torch.version.cuda or '')")
if ! $PY -c "import sys; from ppy_cuda.target import find_libdevice; sys.exit(find_libdevice('$CUDA_VER') is None)"; then
    if [ -f "$WHEELS/libdevice-$CUDA_VER.bc" ]; then
        export PPY_CUDA_LIBDEVICE=$PWD/$WHEELS/libdevice-$CUDA_VER.bc
        echo "libdevice: $PPY_CUDA_LIBDEVICE (carried; CUDA $CUDA_VER)"
    else
        echo "!!! no libdevice for CUDA $CUDA_VER: the transcendental proofs will fail"
    fi
fi

step "1. ppy-cuda tests, gpu-marked ones included; ATen regions on CUDA tensors"
run 150 $PY -m pytest -q -p no:cacheprovider backends/ppy-cuda/tests -rs
run 150 $PY -m pytest -q -p no:cacheprovider packages/ppy-torch/tests/test_cuda_regions.py -rs

step "2. proofs: libdevice functions vs torch (float32 exhaustive, float64 sampled)"
run 150 $PY -m ppy_cuda.gpu prove --json "$OUT/proofs.json"

step "3. benchmark: fused elementwise trees vs eager and torch.compile"
run 150 $PY benchmarks/cuda_fused.py --sizes 1e7 1e8 --reps 20

step "4. GPT-2 XL 1x128: eager vs regions on CUDA (dispatch counts)"
pushd examples/46_gpt2 >/dev/null
run 150 $PY -c "import sys; from ppy_core.cli import main; sys.argv[0] = 'ppy'; sys.exit(main())" \
    gpt2.ppy --config xl --device cuda --batch 1 --tokens 128 --rounds 5 --no-compile
popd >/dev/null

step "done: status $status"
exit $status
