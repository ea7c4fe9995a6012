//===- Passes.h - TraceIR conversion passes ---------------------*- C++ -*-===//

#ifndef TRACEIR_CONVERSION_PASSES_H
#define TRACEIR_CONVERSION_PASSES_H

#include "TraceIR/Dialect/TraceDialect.h"
#include "mlir/Pass/Pass.h"

namespace mlir::trace {

#define GEN_PASS_DECL
#include "TraceIR/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "TraceIR/Conversion/Passes.h.inc"

} // namespace mlir::trace

#endif // TRACEIR_CONVERSION_PASSES_H
