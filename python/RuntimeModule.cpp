//===- RuntimeModule.cpp - The runtime-only build's _traceir extension ----===//
//
// Loads, runs and profiles saved executables; no LLVM, no MLIR.
//
//===----------------------------------------------------------------------===//

#include "Bindings.h"

NB_MODULE(_traceir, m) {
  traceir::bindings::bindRuntime(m);
  m.attr("HAS_COMPILER") = false;
}
