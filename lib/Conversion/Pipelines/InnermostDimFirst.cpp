//===- InnermostDimFirst.cpp - Innermost dimension onto threadIdx.x -------===//
//
// gpu-map-parallel-loops gives dimension 0 of a parallel loop nest to
// threadIdx.x (and blockIdx.x), whose neighbouring threads run together;
// with row-major buffers that must be the dimension whose neighbours are
// neighbours in memory, or every warp's loads and stores scatter over 32
// rows instead of falling into a few cache lines. The dimensions of a
// parallel loop commute, so reversing them only swaps which induction
// variable each bound drives.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <algorithm>

#define DEBUG_TYPE "trace-innermost-dim-first"

namespace mlir::trace {
#define GEN_PASS_DEF_TRACEINNERMOSTDIMFIRST
#include "TraceIR/Conversion/Passes.h.inc"
} // namespace mlir::trace

using namespace mlir;

namespace {

struct TraceInnermostDimFirstPass
    : public mlir::trace::impl::TraceInnermostDimFirstBase<
          TraceInnermostDimFirstPass> {
  void runOnOperation() override {
    getOperation().walk([](scf::ParallelOp loop) {
      unsigned n = loop.getNumLoops();
      if (n < 2 || !loop.getInitVals().empty())
        return;
      auto reversed = [](OperandRange range) {
        SmallVector<Value> values(range.begin(), range.end());
        std::reverse(values.begin(), values.end());
        return values;
      };
      SmallVector<Value> lbs = reversed(loop.getLowerBound());
      SmallVector<Value> ubs = reversed(loop.getUpperBound());
      SmallVector<Value> steps = reversed(loop.getStep());
      loop.getLowerBoundMutable().assign(lbs);
      loop.getUpperBoundMutable().assign(ubs);
      loop.getStepMutable().assign(steps);
      // Induction variable i now runs over what n-1-i ran over: swap uses.
      Block::BlockArgListType ivs = loop.getBody()->getArguments();
      SmallVector<SmallVector<OpOperand *>> uses(n);
      for (unsigned i = 0; i < n; ++i)
        for (OpOperand &use : ivs[i].getUses())
          uses[i].push_back(&use);
      for (unsigned i = 0; i < n; ++i)
        for (OpOperand *use : uses[i])
          use->set(ivs[n - 1 - i]);
    });
  }
};

} // namespace
