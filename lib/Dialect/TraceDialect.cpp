//===- TraceDialect.cpp - The trace dialect -------------------------------===//

#include "TraceIR/Dialect/TraceDialect.h"
#include "TraceIR/Dialect/OpRegistry.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::trace;

#include "TraceIR/Dialect/TraceDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "TraceIR/Dialect/TraceAttrs.cpp.inc"

void TraceDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "TraceIR/Dialect/TraceOps.cpp.inc"
      >();
  registerAttributes();
  for (const OpInfo &info : getAllOps())
    opInfos[StringAttr::get(getContext(), info.name)] = &info;
}

void TraceDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "TraceIR/Dialect/TraceAttrs.cpp.inc"
      >();
}

LogicalResult TraceDialect::verifyRegionArgAttribute(Operation *op,
                                                     unsigned regionIndex,
                                                     unsigned argIndex,
                                                     NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  // A func.func lowered from a graph keeps the argument names, so later
  // pipelines can still bind weights and inputs by name.
  if (!isa<FunctionOpInterface>(op))
    return op->emitError() << "'" << name
                           << "' is only valid on a trace.graph argument";
  if (name == kParamAttrName || name == kInputAttrName) {
    auto str = dyn_cast<StringAttr>(attr.getValue());
    if (!str || str.getValue().empty())
      return op->emitError() << "argument #" << argIndex << ": '" << name
                             << "' must be a non-empty string";
    return success();
  }
  if (name == kDonatedAttrName) {
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitError() << "argument #" << argIndex << ": '" << name
                             << "' must be a unit attribute";
    return success();
  }
  return op->emitError() << "argument #" << argIndex
                         << ": unknown trace argument attribute '" << name
                         << "' (expected trace.param, trace.input or "
                            "trace.donated)";
}

LogicalResult TraceDialect::verifyOperationAttribute(Operation *op,
                                                     NamedAttribute attr) {
  return op->emitError() << "unknown trace dialect attribute '"
                         << attr.getName().getValue() << "'";
}
