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
  StringRef name = attr.getName().getValue();
  // The memory plan's attributes, each on its own; GraphOp::verify checks
  // the plan as a whole (offsets against lifetimes).
  if (name == kArenaBytesAttrName || name == kArenaAlignmentAttrName) {
    if (!isa<GraphOp>(op))
      return op->emitError()
             << "'" << name << "' is only valid on a trace.graph";
    auto value = dyn_cast<IntegerAttr>(attr.getValue());
    if (!value || !value.getType().isSignlessInteger(64))
      return op->emitError() << "'" << name << "' must be an i64";
    int64_t v = value.getInt();
    if (name == kArenaBytesAttrName && v < 0)
      return op->emitError()
             << "'" << name << "' must not be negative, not " << v;
    if (name == kArenaAlignmentAttrName && (v <= 0 || (v & (v - 1)) != 0))
      return op->emitError()
             << "'" << name << "' must be a power of two, not " << v;
    return success();
  }
  if (name == kArenaOffsetsAttrName) {
    if (!isa<PyOp>(op))
      return op->emitError()
             << "'" << name << "' is only valid on a trace.pyop";
    auto offsets = dyn_cast<DenseI64ArrayAttr>(attr.getValue());
    if (!offsets || offsets.size() != static_cast<int64_t>(op->getNumResults()))
      return op->emitError()
             << "'" << name << "' must be an array<i64> of one offset per "
             << "result (" << op->getNumResults() << ")";
    for (auto [i, offset] : llvm::enumerate(offsets.asArrayRef()))
      if (offset < -1)
        return op->emitError()
               << "'" << name << "': result #" << i << " has offset " << offset
               << " (expected -1, not planned, or >= 0)";
    return success();
  }
  return op->emitError() << "unknown trace dialect attribute '" << name << "'";
}
