//===- FuzzRuntime.h - What the runtime harnesses share ---------*- C++ -*-===//
//
// The half of FuzzCommon.h that needs no LLVM or MLIR, so that harnesses of
// the runtime alone (safetensors-fuzzer, trx-fuzzer) link TraceIRRuntime
// only, as the runtime-only build does. Besides the finding helpers, the
// made-up arguments that executable-fuzzer and trx-fuzzer run graphs on,
// and the limits they run under, so that both fuzz the same runs.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_FUZZ_FUZZRUNTIME_H
#define TRACEIR_FUZZ_FUZZRUNTIME_H

#include "TraceIR/Runtime/Executable.h"
#include "TraceIR/Runtime/HostTensor.h"
#include "TraceIR/Support/Error.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

namespace traceir::fuzz {

/// Aborts (a finding) with `what` unless `ok`.
inline void fuzzCheck(bool ok, const char *what) {
  if (!ok) {
    std::fprintf(stderr, "fuzz invariant broken: %s\n", what);
    std::abort();
  }
}

/// Whether TRACEIR_FUZZ_VERBOSE is set: then diagnostics and errors are
/// printed, to see why inputs are rejected.
inline bool verbose() {
  static const bool v = std::getenv("TRACEIR_FUZZ_VERBOSE") != nullptr;
  return v;
}

/// An error is the expected outcome of most inputs: drop it (print it when
/// verbose).
inline void ignore(traceir::Error err) {
  if (verbose() && err)
    std::fprintf(stderr, "error: %s\n", err.message().c_str());
}

/// Graphs are run on made-up params and inputs of at most this many bytes
/// in all, and only when no tensor type has more than kMaxElements: larger
/// ones are valid but too slow to fuzz (a sum over a broadcast view of 2^40
/// elements runs for hours in PyTorch as here).
inline constexpr int64_t kMaxMadeUpBytes = 1 << 20;
inline constexpr int64_t kMaxElements = int64_t(1) << 22;
/// The runtime's own limit for runs (trace-run --memory-limit): an
/// allocation over it is an error naming the op, as in production.
inline constexpr int64_t kMemoryLimit = int64_t(256) << 20;

/// Whether `shape` has at most kMaxElements (overflow-safe).
inline bool smallShape(const Shape &shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || (d && n > kMaxElements / d))
      return false;
    n *= d;
  }
  return n <= kMaxElements;
}

/// A tensor of `spec`'s dtype and shape holding the pattern 0, 1, 2, 0, ...
/// (bools alternate): small integers, so that index arguments are often in
/// range.
inline HostTensor madeUp(const Executable::ArgSpec &spec) {
  HostTensor t;
  t.dtype = spec.dtype;
  t.shape = spec.shape;
  int64_t n = t.numel();
  t.data.assign(n * dtypeSize(t.dtype), 0);
  for (int64_t i = 0; i < n; ++i) {
    int v = i % 3;
    switch (t.dtype) {
    case DType::F32:
      t.as<float>()[i] = v * 0.5f;
      break;
    case DType::F64:
      t.as<double>()[i] = v * 0.5;
      break;
    case DType::I64:
      t.as<int64_t>()[i] = v;
      break;
    case DType::I32:
      t.as<int32_t>()[i] = v;
      break;
    case DType::Bool:
      t.as<bool>()[i] = i % 2;
      break;
    default: // F16, BF16, I16, I8, U8: zeros
      break;
    }
  }
  return t;
}

/// Made-up params and inputs for `exe`, or false when they would pass
/// kMaxMadeUpBytes.
inline bool madeUpArguments(const Executable &exe, NamedTensors &params,
                            NamedTensors &inputs) {
  int64_t bytes = 0;
  for (const auto *specs : {&exe.paramSpecs, &exe.inputSpecs})
    for (const auto &spec : *specs) {
      if (!smallShape(spec.shape))
        return false;
      HostTensor probe;
      probe.shape = spec.shape;
      bytes += probe.numel() * int64_t(dtypeSize(spec.dtype));
      if (bytes > kMaxMadeUpBytes)
        return false;
    }
  for (const auto &spec : exe.paramSpecs)
    params.emplace(spec.name, madeUp(spec));
  for (const auto &spec : exe.inputSpecs)
    inputs.emplace(spec.name, madeUp(spec));
  return true;
}

/// Runs `exe` twice on made-up arguments as trace-run/trace-exec
/// --memory-limit --check-frees would (the limit holds from the parameters
/// on), where the arguments are small enough, and checks what every run
/// promises: as many outputs as declared, each holding its shape's bytes,
/// and, with `checkPeak` (an executable built here, whose prediction is
/// StorageLiveness' and not a file's claim), the measured peak is the
/// predicted one.
inline std::optional<std::vector<HostTensor>>
runTwiceChecked(Executable &exe, bool checkPeak, std::string *error = nullptr) {
  NamedTensors params, inputs;
  if (!madeUpArguments(exe, params, inputs))
    return std::nullopt;
  exe.allocator().setLimit(kMemoryLimit);
  if (Error err = exe.loadParams(params)) {
    if (error)
      *error = err.message();
    ignore(std::move(err));
    return std::nullopt;
  }
  std::optional<std::vector<HostTensor>> last;
  RunOptions options;
  options.checkFrees = true;
  options.seed = 1;
  options.memoryLimitBytes = kMemoryLimit;
  for (int run = 0; run < 2; ++run) {
    auto outputs = exe.run(inputs, options);
    if (!outputs) {
      Error err = outputs.takeError();
      if (error)
        *error = err.message();
      ignore(std::move(err));
      return std::nullopt;
    }
    if (verbose())
      std::fprintf(stderr, "ran @%s\n", exe.name.c_str());
    fuzzCheck(outputs->size() == exe.numOutputs(),
              "a run returned a different number of outputs than declared");
    for (const HostTensor &t : *outputs)
      fuzzCheck(int64_t(t.data.size()) ==
                    t.numel() * int64_t(dtypeSize(t.dtype)),
                "an output's bytes do not match its shape and dtype");
    const MemoryReport &report = exe.memoryReport();
    fuzzCheck(!checkPeak ||
                  (report.predictionIsLowerBound
                       ? report.peakBytes >= report.predictedPeakBytes
                       : report.peakBytes == report.predictedPeakBytes),
              "a run's measured peak differs from the predicted peak");
    last = std::move(*outputs);
  }
  return last;
}

} // namespace traceir::fuzz

#endif // TRACEIR_FUZZ_FUZZRUNTIME_H
