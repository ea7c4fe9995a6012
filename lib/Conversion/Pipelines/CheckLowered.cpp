//===- CheckLowered.cpp - No trace.pyop left to compile -------------------===//
//
// --convert-trace-to-linalg leaves an op it cannot lower as a trace.pyop and
// succeeds, so its output can be inspected; the compile pipelines cannot go
// on from there. This makes each leftover op an error naming it, the
// pipeline and where it is, rather than a failure of some later pass that
// does not know trace.pyop.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Conversion/Passes.h"

#include "mlir/IR/BuiltinOps.h"

#define DEBUG_TYPE "trace-check-lowered"

namespace mlir::trace {
#define GEN_PASS_DEF_TRACECHECKLOWERED
#include "TraceIR/Conversion/Passes.h.inc"
} // namespace mlir::trace

using namespace mlir;

namespace {

struct TraceCheckLoweredPass
    : public mlir::trace::impl::TraceCheckLoweredBase<TraceCheckLoweredPass> {
  using Base::Base;

  void runOnOperation() override {
    bool failed = false;
    getOperation()->walk([&](trace::PyOp op) {
      op.emitError() << pipeline << ": op '" << op.getOpName()
                     << "' was not lowered to linalg, so it cannot be "
                        "compiled (see the remark of "
                        "--convert-trace-to-linalg)";
      failed = true;
    });
    if (failed)
      signalPassFailure();
  }
};

} // namespace
