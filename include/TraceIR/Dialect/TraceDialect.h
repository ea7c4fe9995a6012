//===- TraceDialect.h - The trace dialect -----------------------*- C++ -*-===//

#ifndef TRACEIR_DIALECT_TRACEDIALECT_H
#define TRACEIR_DIALECT_TRACEDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::trace {
struct OpInfo;
} // namespace mlir::trace

#include "TraceIR/Dialect/TraceDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "TraceIR/Dialect/TraceAttrs.h.inc"

#define GET_OP_CLASSES
#include "TraceIR/Dialect/TraceOps.h.inc"

#endif // TRACEIR_DIALECT_TRACEDIALECT_H
