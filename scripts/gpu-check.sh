#!/usr/bin/env bash
# The GPU tier runs from a bundle (docs/GPU.md): the GPU machine has no LLVM,
# no MLIR and no network, so the cases are compiled here and the bundle
# builds the runtime-only tree there. This prints the procedure; with
# --make it also writes the bundle and runs its CPU half here.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cat <<TEXT
The GPU tier, in three steps (docs/GPU.md):
  1. here:            scripts/gpu-bundle.sh gpu-bundle
  2. check it here:   gpu-bundle/run.sh --device cpu
  3. on the GPU:      gpu-bundle/run.sh            (the device tool: carry ["gpu-bundle"])
                      gpu-bundle/run.sh --only FAILED   to rerun what failed
TEXT
if [[ ${1:-} == --make ]]; then
  "$ROOT/scripts/gpu-bundle.sh" "$ROOT/gpu-bundle"
  "$ROOT/gpu-bundle/run.sh" --device cpu
fi
