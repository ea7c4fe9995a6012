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
#include "TraceIR/Support/Scalar.h"

#include <nanobind/nanobind.h>

namespace traceir::bindings {

/// Raises traceir.TraceIRError with `msg`.
[[noreturn]] void raise(const std::string &msg);

template <typename T> T unwrap(api::Result<T> r) {
  if (!r.ok())
    raise(r.error);
  return std::move(r.value);
}

/// The traceir.TraceIRError class (a borrowed reference).
PyObject *traceirErrorType();

void bindRuntime(nanobind::module_ &m);

// The full build's (CompilerBindings.cpp, IRHandles.cpp).
void bindCompiler(nanobind::module_ &m);
void bindHandles(nanobind::module_ &m);
/// A pyop's Python scalar as Python holds it.
nanobind::object scalarToPython(const ScalarValue &v);

} // namespace traceir::bindings

#endif // TRACEIR_PYTHON_BINDINGS_H
