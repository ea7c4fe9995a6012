#!/usr/bin/env bash
# Runs a GPU bundle (scripts/gpu-bundle.sh wrote this folder) where there is
# no LLVM, no MLIR and no network: prints what it finds, builds TraceIR's
# runtime-only tree for this GPU, runs every case on cuda:0 (and cuda:1
# where present) through trace-exec and the Python module, and prints one
# table; then, on a GPU, times kernel_bench's ops at both of CUDA's kernel
# tiers beside eager (bench/gpu_ops.py). Usage:
#   ./run.sh                  the GPU run
#   ./run.sh --device cpu     the same cases on the CPU (CI, or no GPU)
#   ./run.sh --only FAILED    rerun what failed last time
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
DEVICE=cuda
PASS=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --device) DEVICE="$2"; shift 2 ;;
    --only) PASS+=(--only "$2"); shift 2 ;;
    --jobs) PASS+=(--jobs "$2"); shift 2 ;;
    --sanitize) PASS+=(--sanitize "$2"); shift 2 ;;
    *) echo "run.sh: unknown option '$1'"; exit 2 ;;
  esac
done
START=$SECONDS
# PYTHON: the Python with torch (default: python3 on PATH).
PY="${PYTHON:-$(command -v python3 || command -v python)}"
# The toolkit nvcc belongs to (it need not be /usr/local/cuda).
if [[ -z ${CUDA_HOME:-} ]]; then
  if command -v nvcc >/dev/null 2>&1; then
    CUDA_HOME="$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")"
  else
    CUDA_HOME=/usr/local/cuda
  fi
fi
export CUDA_HOME
# CUDA libraries that come as pip packages (nvidia-cublas, ...) beside
# torch: their lib/ and include/ folders, for CMake's find_library and the
# compilers, should the toolkit lack them.
NVIDIA_PIP="$("${PYTHON:-python3}" -c 'import nvidia, os; print(" ".join(os.path.join(p, d) for p in nvidia.__path__ for d in sorted(os.listdir(p))))' 2>/dev/null || true)"
for d in $NVIDIA_PIP; do
  [[ -d $d/lib ]] && export CMAKE_LIBRARY_PATH="${CMAKE_LIBRARY_PATH:+$CMAKE_LIBRARY_PATH:}$d/lib" \
    LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$d/lib"
  # Not the pip CUDA runtime's headers where the toolkit has its own: CPATH
  # ranks above the toolkit's include dir, and torch's cuda-runtime (13.2
  # here) beside a 13.0 nvcc makes CCCL's headers (CUB) refuse to compile.
  [[ -f $d/include/cuda_runtime_api.h && -f $CUDA_HOME/include/cuda_runtime_api.h ]] && continue
  [[ -d $d/include ]] && export CPATH="${CPATH:+$CPATH:}$d/include"
done
echo "== what this machine has"
have() { command -v "$1" >/dev/null 2>&1; }
for tool in g++ cmake ninja nvcc nvidia-smi compute-sanitizer; do
  if have "$tool" || [[ -x "$CUDA_HOME/bin/$tool" ]]; then
    path="$(command -v "$tool" || echo "$CUDA_HOME/bin/$tool")"
    echo "  $tool: $path"
  else
    echo "  $tool: missing (skipped where it is needed)"
  fi
done
echo "  python: $PY ($("$PY" -c 'import sys; print(sys.version.split()[0])'))"
"$PY" - <<'PYEOF'
import importlib.util
for mod in ("torch", "nanobind", "safetensors"):
    print(f"  {mod}: {'found' if importlib.util.find_spec(mod) else 'missing'}")
try:
    import torch
    print(f"  torch {torch.__version__}: CUDA {torch.version.cuda}, {torch.cuda.device_count()} GPU(s)"
          + (f", cuDNN {torch.backends.cudnn.version()}" if torch.cuda.is_available() else ""))
except Exception as e:
    print(f"  torch: {e}")
PYEOF
echo "  CUDA toolkit: $CUDA_HOME"
cublas="$(ls "$CUDA_HOME"/lib64/libcublas.so* "$CUDA_HOME"/lib/libcublas.so* 2>/dev/null | head -n1)"
[[ -z $cublas ]] && for d in $NVIDIA_PIP; do
  cublas="$(ls "$d"/lib/libcublas.so* 2>/dev/null | head -n1)"; [[ -n $cublas ]] && break
done
echo "  cuBLAS: ${cublas:-not found (the CUDA build needs it)}"
# cuDNN for the optimized tier's convolutions: the toolkit's, else the
# nvidia-cudnn wheel torch brings (CUDNN_ROOT for CMake).
CUDNN_ROOT=""
[[ -f $CUDA_HOME/include/cudnn.h ]] || for d in $NVIDIA_PIP; do
  [[ -f $d/include/cudnn.h ]] && { CUDNN_ROOT="$d"; break; }
done
echo "  cuDNN: ${CUDNN_ROOT:-$([[ -f $CUDA_HOME/include/cudnn.h ]] && echo "the toolkit's" || echo "not found (convolutions run the portable CUDA kernels)")}"
if ldconfig -p 2>/dev/null | grep -q libopenblas; then echo "  CPU BLAS: OpenBLAS"; else echo "  CPU BLAS: none (the portable GEMM)"; fi
have nvidia-smi && nvidia-smi --query-gpu=index,name,compute_cap,memory.total --format=csv,noheader | sed 's/^/  GPU /'

echo "== building the runtime-only tree"
BUILD="$HERE/build-$DEVICE"
ARCH=90
if have nvidia-smi; then
  cap="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n1 | tr -d ' .')"
  [[ -n "$cap" ]] && ARCH="$cap"
fi
NANOBIND_DIR="$("$PY" -m nanobind --cmake_dir 2>/dev/null || true)"
if ! cmake -S "$HERE/src" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DTRACEIR_RUNTIME_ONLY=ON -DTRACEIR_WERROR=OFF -DCMAKE_CUDA_ARCHITECTURES="$ARCH" \
    -DCMAKE_CUDA_COMPILER="$CUDA_HOME/bin/nvcc" \
    -DCMAKE_PREFIX_PATH="$HERE/third_party" -DFLATBUFFERS_INCLUDE_DIR="$HERE/third_party/include" \
    -DPython_EXECUTABLE="$PY" ${NANOBIND_DIR:+-Dnanobind_DIR="$NANOBIND_DIR"} \
    ${CUDNN_ROOT:+-DCUDNN_ROOT="$CUDNN_ROOT"} \
    >"$HERE/cmake-$DEVICE.log" 2>&1; then
  tail -n 30 "$HERE/cmake-$DEVICE.log"; echo "run.sh: configure failed ($HERE/cmake-$DEVICE.log)"; exit 1
fi
grep -E "TraceIR CUDA|TraceIR CPU GEMM|traceir Python" "$HERE/cmake-$DEVICE.log" | sed 's/^-- /  /'
if ! ninja -C "$BUILD" >"$HERE/ninja-$DEVICE.log" 2>&1; then
  grep -v '^\[' "$HERE/ninja-$DEVICE.log" | tail -n 40; echo "run.sh: build failed"; exit 1
fi
echo "  built in $((SECONDS - START)) s: $BUILD/bin/trace-exec, $BUILD/python"
"$BUILD/bin/trace-exec" --version

# The cases travel as one xz archive (gpu-bundle.sh): their tensors and
# executables shrink to under half, which keeps the bundle in the 64 MiB a
# GPU machine takes. Unpacked beside the build, not into the bundle, so the
# bundle itself stays as it travelled. Python's tarfile, as the GPU machine
# need not have xz.
CASES="$HERE/cases"
if [[ -f $HERE/cases.tar.xz ]]; then
  CASES="$BUILD/cases"
  rm -rf "$CASES"
  if ! "$PY" - "$HERE/cases.tar.xz" "$BUILD" <<'PYEOF'; then
import sys, tarfile
with tarfile.open(sys.argv[1], "r:xz") as archive:
    # The "data" filter (Python 3.12) refuses links and paths out of BUILD.
    extra = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
    archive.extractall(sys.argv[2], **extra)
PYEOF
    echo "run.sh: could not unpack $HERE/cases.tar.xz"; exit 1
  fi
  echo "  unpacked $(ls "$CASES" | wc -l) cases into $CASES"
fi

status=0
DEVICES=("$DEVICE")
if [[ $DEVICE == cuda ]] && have nvidia-smi && [[ $(nvidia-smi -L | wc -l) -ge 2 ]]; then
  DEVICES=(cuda:0 cuda:1) # the cases built for cuda load on cuda:1 too
fi
for dev in "${DEVICES[@]}"; do
  echo "== cases on $dev"
  "$PY" "$HERE/run_cases.py" --bundle "$HERE" --build "$BUILD" --cases "$CASES" --device "$dev" "${PASS[@]}" || status=1
done
if [[ $DEVICE == cuda && -d $HERE/ops/cases ]]; then
  echo "== the per-op benchmark (bench/gpu_ops.py): CUDA's tiers beside eager"
  PYTHONPATH="$BUILD/python${PYTHONPATH:+:$PYTHONPATH}" "$PY" "$HERE/ops/gpu_ops.py" \
    --run "$HERE/ops/cases" || status=1
fi
echo "== done in $((SECONDS - START)) s"
exit $status
