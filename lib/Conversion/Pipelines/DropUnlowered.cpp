//===- DropUnlowered.cpp - Per-op functions left to the runtime -----------===//
//
// In per-op mode each function is one op's host code, and the runtime runs
// every op it has no generated kernel for with its own kernel. So a function
// whose op did not lower is dropped (its remark from
// --convert-trace-to-linalg says why) rather than failing the pipeline.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#define DEBUG_TYPE "trace-drop-unlowered"

namespace mlir::trace {
#define GEN_PASS_DEF_TRACEDROPUNLOWERED
#include "TraceIR/Conversion/Passes.h.inc"
} // namespace mlir::trace

using namespace mlir;

namespace {

struct TraceDropUnloweredPass
    : public mlir::trace::impl::TraceDropUnloweredBase<TraceDropUnloweredPass> {
  void runOnOperation() override {
    for (func::FuncOp func :
         llvm::make_early_inc_range(getOperation().getOps<func::FuncOp>()))
      if (!func.getOps<trace::PyOp>().empty())
        func.erase();
  }
};

} // namespace
