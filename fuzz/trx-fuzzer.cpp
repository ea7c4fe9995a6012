//===- trx-fuzzer.cpp - libFuzzer harness for saved executables -----------===//
//
// Input: the bytes of a .trx file, as trace-exec reads one. They go to
// describeExecutable (trace-exec --describe) and to loadExecutableBuffer
// for the CPU, which touch no file. A file that loads is then
// - described too: --describe checks as loading does, so it cannot refuse
//   what loads;
// - saved and loaded again: what the loader accepts the writer writes, and
//   the written form loads and writes back to the same bytes;
// - run twice with --check-frees on params and inputs made up from their
//   declared types (FuzzRuntime.h: the pattern, the size limits and the
//   256 MiB memory limit executable-fuzzer runs under).
// Errors (a corrupt file, an op the runtime refuses, memory over the limit)
// are expected. Crashes, sanitizer reports, hangs and broken invariants are
// findings: a saved executable comes from elsewhere, and the runtime may
// trust nothing in it that loading did not check.
//
// Unlike executable-fuzzer there is no peak check: the predicted peak is a
// number in the file, and a hostile file may say anything.
//
//===----------------------------------------------------------------------===//

#include "FuzzRuntime.h"

#include "TraceIR/Runtime/ExecutableFile.h"

#include <cstdint>
#include <string>
#include <string_view>

using namespace traceir;
using namespace traceir::fuzz;

/// Whether every type the run allocates is small enough to fuzz.
static bool smallEnough(const Executable &exe) {
  for (const ResultRef &r : exe.results)
    if (!smallShape(r.shape))
      return false;
  return true;
}

/// Saves `exe`, loads what was written and saves that again.
static void checkRoundTrip(const Executable &exe) {
  Expected<std::string> written = serializeExecutable(exe, exe.producer);
  fuzzCheck(bool(written), "a loaded executable cannot be saved");
  auto back = loadExecutableBuffer(*written, "written", Device{});
  if (!back && verbose())
    std::fprintf(stderr, "reloading: %s\n", back.takeError().message().c_str());
  fuzzCheck(bool(back), "a saved executable does not load back");
  Expected<std::string> again = serializeExecutable(**back, (*back)->producer);
  fuzzCheck(again && *again == *written,
            "a reloaded executable saves to different bytes");
  fuzzCheck(bool(describeExecutable(*written, "written")),
            "a saved executable fails --describe");
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char *>(data), size);
  Expected<std::string> described = describeExecutable(bytes, "fuzz");
  bool describes = bool(described);
  if (!described)
    ignore(described.takeError());
  auto exe = loadExecutableBuffer(bytes, "fuzz", Device{});
  if (!exe) {
    ignore(exe.takeError());
    return 0;
  }
  fuzzCheck(describes, "a file that loads fails --describe");
  checkRoundTrip(**exe);

  if (!smallEnough(**exe))
    return 0;
  runTwiceChecked(**exe, /*checkPeak=*/false);
  return 0;
}
