//===- TestTrace.h - Hand a unit test's trace to the validator --*- C++ -*-===//
//
// The trace validator is Python (test/python/trace_validator.py). Unit tests
// that build traces write them to $TRACEIR_TEST_TRACE_DIR/<name>.json when
// that is set, so test_profile.py and scripts/gpu-check.sh validate them.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_UNITTESTS_TESTTRACE_H
#define TRACEIR_UNITTESTS_TESTTRACE_H

#include "TraceIR/Runtime/TraceSink.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <cstdlib>

inline void writeTestTrace(const traceir::MemoryTraceSink &sink,
                           llvm::StringRef name) {
  const char *dir = std::getenv("TRACEIR_TEST_TRACE_DIR");
  if (!dir)
    return;
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, name + ".json");
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  ASSERT_FALSE(ec) << path.str().str() << ": " << ec.message();
  os << sink.toJSON();
}

#endif // TRACEIR_UNITTESTS_TESTTRACE_H
