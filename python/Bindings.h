//===- Bindings.h - The halves of the _traceir extension --------*- C++ -*-===//
//
// The runtime half (RuntimeBindings.cpp: saved executables, runs, profiles)
// is in both builds; the full build's module adds the compiler half
// (CompilerBindings.cpp: parsing, passes, building from MLIR text).
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_PYTHON_BINDINGS_H
#define TRACEIR_PYTHON_BINDINGS_H

#include "TraceIR/API/API.h"

#include <nanobind/nanobind.h>

namespace traceir::bindings {

/// Raises traceir.TraceIRError with `msg`.
[[noreturn]] void raise(const std::string &msg);

template <typename T> T unwrap(api::Result<T> r) {
  if (!r.ok())
    raise(r.error);
  return std::move(r.value);
}

void bindRuntime(nanobind::module_ &m);
void bindCompiler(nanobind::module_ &m);

} // namespace traceir::bindings

#endif // TRACEIR_PYTHON_BINDINGS_H
