#!/usr/bin/env bash
# Builds the libFuzzer harnesses (fuzz/, docs/Fuzzing.md) with clang-22,
# AddressSanitizer and UndefinedBehaviorSanitizer into build-fuzz/, and runs
# one of them.
#
#   scripts/fuzz.sh TARGET SECONDS [LIBFUZZER_FLAGS...]  fuzz TARGET for SECONDS
#   scripts/fuzz.sh merge TARGET [DIR...]   merge new inputs into fuzz/corpus/TARGET
#   scripts/fuzz.sh seed                    re-seed every corpus from the tests
#   scripts/fuzz.sh build                   only build
#
# TARGET: anf-importer-fuzzer, trace-parser-fuzzer, safetensors-fuzzer,
# executable-fuzzer, trx-fuzzer. A run starts from fuzz/corpus/TARGET and
# keeps what it finds in build-fuzz/corpus/TARGET; crashes go to
# build-fuzz/crashes/.
# Add a crash, once fixed, to fuzz/corpus/TARGET (scripts/fuzz.sh merge
# keeps only inputs that add coverage, so copy a regression input in by
# hand): CI replays every corpus input under ASan/UBSan.
# nvcc 13.0 refuses clang >= 21 as its host compiler: CUDA code keeps g++
# and is not instrumented.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$ROOT/build-fuzz"
MAX_LEN=65536 # bytes per input: large enough for the tests' graphs

"$ROOT/scripts/setup.sh" >/dev/null
missing=()
for p in clang-22 libclang-rt-22-dev; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""
  [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

build() {
  CC=clang-22 CXX=clang++-22 "$ROOT/scripts/build.sh" "$BUILD" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTRACEIR_FUZZ=ON -DTRACEIR_SANITIZE=ON \
    -DTRACEIR_WERROR=OFF -DTRACEIR_BUILD_PYTHON=OFF -DTRACEIR_BUILD_UNITTESTS=OFF \
    -DCMAKE_CUDA_HOST_COMPILER=/usr/bin/g++ >/dev/null
}

# As scripts/test.sh's sanitizer run: an allocation the system cannot grant
# returns null (the runtime reports it) instead of aborting.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allow_user_poisoning=0:allocator_may_return_null=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

case "${1:-}" in
build)
  build
  ;;
seed)
  build
  seeds="$(mktemp -d)"
  mkdir -p "$BUILD/crashes"
  python3 "$ROOT/fuzz/seed_corpora.py" "$seeds" --tools "$BUILD/bin" \
    ${TRACEIR_FUZZ_SEED_DIR:+--python-graphs "$TRACEIR_FUZZ_SEED_DIR"}
  for dir in "$seeds"/*/; do
    t="$(basename "$dir")"
    mkdir -p "$ROOT/fuzz/corpus/$t"
    "$BUILD/bin/$t" -merge=1 -max_len=$MAX_LEN -artifact_prefix="$BUILD/crashes/$t-" \
      "$ROOT/fuzz/corpus/$t" "$dir"
  done
  rm -rf "$seeds"
  ;;
merge)
  t="$2"
  shift 2
  build
  mkdir -p "$ROOT/fuzz/corpus/$t" "$BUILD/crashes"
  "$BUILD/bin/$t" -merge=1 -max_len=$MAX_LEN -artifact_prefix="$BUILD/crashes/$t-" \
    "$ROOT/fuzz/corpus/$t" \
    "${@:-$BUILD/corpus/$t}"
  ;;
*-fuzzer)
  t="$1"
  seconds="${2:?usage: scripts/fuzz.sh TARGET SECONDS}"
  shift 2
  build
  mkdir -p "$BUILD/corpus/$t" "$BUILD/crashes" "$ROOT/fuzz/corpus/$t"
  "$BUILD/bin/$t" -max_total_time="$seconds" -max_len=$MAX_LEN -timeout=10 \
    -rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix="$BUILD/crashes/$t-" \
    "$@" "$BUILD/corpus/$t" "$ROOT/fuzz/corpus/$t"
  ;;
*)
  sed -n '2,18p' "${BASH_SOURCE[0]}"
  exit 2
  ;;
esac
