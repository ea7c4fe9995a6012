//===- Passes.h - TraceIR transformation passes -----------------*- C++ -*-===//

#ifndef TRACEIR_TRANSFORMS_PASSES_H
#define TRACEIR_TRANSFORMS_PASSES_H

#include "TraceIR/Dialect/TraceDialect.h"
#include "mlir/Pass/Pass.h"

namespace mlir::trace {

#define GEN_PASS_DECL
#include "TraceIR/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "TraceIR/Transforms/Passes.h.inc"

} // namespace mlir::trace

#endif // TRACEIR_TRANSFORMS_PASSES_H
