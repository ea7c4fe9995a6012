#!/usr/bin/env bash
# The main job on the bundled example: set up, build, import the 2017 trace
# of the word language model, free its dead tensors, plan its memory (one
# arena, after --reorder-for-memory and --reinplace), print the result
# with the analyses' memory figures, then run it unfreed, freed and
# planned (freshly initialized PyTorch weights, random tokens) and print
# each measured memory report; last, profile
# the freed graph's run into a Chrome/Perfetto trace, check it with the test
# suite's validator and print the summary table.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$ROOT/build"
"$ROOT/scripts/setup.sh"
"$ROOT/scripts/build.sh" "$BUILD"
BIN="$BUILD/bin"
OUT="$BUILD/example"
mkdir -p "$OUT"

echo "== trace-translate --import-anf examples/word_lm.trace -o $OUT/word_lm.mlir"
"$BIN/trace-translate" --import-anf "$ROOT/examples/word_lm.trace" -o "$OUT/word_lm.mlir"
echo "== trace-opt word_lm.mlir --free-dead-tensors"
"$BIN/trace-opt" "$OUT/word_lm.mlir" --free-dead-tensors -o "$OUT/word_lm.freed.mlir"
cat "$OUT/word_lm.freed.mlir"
echo "== round trip: --mlir-print-op-generic | trace-opt"
"$BIN/trace-opt" "$OUT/word_lm.mlir" --free-dead-tensors --mlir-print-op-generic |
  "$BIN/trace-opt" | diff -q - "$OUT/word_lm.freed.mlir" && echo "identical"
echo "== trace-opt word_lm.mlir --reorder-for-memory --reinplace --free-dead-tensors --plan-memory (one arena)"
"$BIN/trace-opt" "$OUT/word_lm.mlir" --reorder-for-memory --reinplace --free-dead-tensors --plan-memory \
  -o "$OUT/word_lm.planned.mlir"
"$BIN/trace-opt" "$OUT/word_lm.planned.mlir" --test-print-memory-plan -o /dev/null 2>&1 | grep -E '^  arena'
echo "== live bytes (storage liveness analysis), without and with frees"
peak() { "$BIN/trace-opt" "$1" --test-print-storage-liveness -o /dev/null 2>&1 | grep -E '^  peak'; }
echo "without frees (the 2017 interpreter):$(peak "$OUT/word_lm.mlir")"
echo "with --free-dead-tensors:            $(peak "$OUT/word_lm.freed.mlir")"

# On CUDA when a GPU is present, else on the CPU, saying which.
DEVICE=cpu
cat >"$OUT/probe.mlir" <<'MLIR'
trace.graph @probe() -> tensor<1xf32> {
  %c = constant dense<1.0> : tensor<1xf32>
  %0 = pyop "neg"(%c) : (tensor<1xf32>) -> tensor<1xf32>
  ret %0 : tensor<1xf32>
}
MLIR
if probe=$("$BIN/trace-run" "$OUT/probe.mlir" --device cuda 2>&1 >/dev/null); then
  DEVICE=cuda
fi
if [[ $DEVICE == cpu ]]; then
  echo "== run on the CPU: ${probe#trace-run: error: }"
else
  echo "== run on cuda:0"
fi
VENV="${TRACEIR_VENV:-$HOME/.cache/traceir/venv}"
"$VENV/bin/python" "$ROOT/examples/word_lm_inputs.py" "$OUT"
for graph in word_lm.mlir word_lm.freed.mlir word_lm.planned.mlir; do
  echo "-- trace-run $graph --device $DEVICE --params params.safetensors --inputs inputs.safetensors --outputs out.safetensors --memory-report"
  "$BIN/trace-run" "$OUT/$graph" --device "$DEVICE" --params "$OUT/params.safetensors" \
    --inputs "$OUT/inputs.safetensors" --outputs "$OUT/out.safetensors" --memory-report
done
echo "-- trace-run word_lm.freed.mlir --device $DEVICE ... --profile $OUT/word_lm.trace.json --profile-summary"
"$BIN/trace-run" "$OUT/word_lm.freed.mlir" --device "$DEVICE" --params "$OUT/params.safetensors" \
  --inputs "$OUT/inputs.safetensors" --outputs "$OUT/out.safetensors" \
  --profile "$OUT/word_lm.trace.json" --profile-summary
"$VENV/bin/python" "$ROOT/test/python/trace_validator.py" "$OUT/word_lm.trace.json"
echo "trace written and validated: $OUT/word_lm.trace.json (open it in https://ui.perfetto.dev or chrome://tracing)"

# The compiler's side: the same graph lowered to a GPU binary, and which of
# its ops trace-run would launch from it (the others keep the runtime's
# kernels, each with the reason); on a GPU, run it that way too.
echo "== trace-translate word_lm.freed.mlir --emit-gpu-binary --chip=sm_90 -o $OUT/word_lm.fatbin"
"$BIN/trace-translate" "$OUT/word_lm.freed.mlir" --emit-gpu-binary --chip=sm_90 -o "$OUT/word_lm.fatbin"
echo "fatbin: $(stat -c %s "$OUT/word_lm.fatbin") bytes"
"$BIN/trace-run" "$OUT/word_lm.freed.mlir" --print-kernel-plan | grep -v '^    '
if [[ $DEVICE == cuda ]]; then
  echo "-- trace-run word_lm.freed.mlir --device cuda --compile-gpu-kernels ... --profile-summary"
  "$BIN/trace-run" "$OUT/word_lm.freed.mlir" --device cuda --compile-gpu-kernels \
    --params "$OUT/params.safetensors" --inputs "$OUT/inputs.safetensors" \
    --outputs "$OUT/out.generated.safetensors" --profile-summary
fi
