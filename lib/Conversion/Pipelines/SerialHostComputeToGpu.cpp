//===- SerialHostComputeToGpu.cpp - Host memory accesses into launches ----===//
//
// What convert-linalg-to-parallel-loops leaves outside parallel loops runs
// on the host: a reduction into a 0-d result (sum of every element, the max
// of a 1-D softmax) becomes a plain scf.for nest of loads and stores, or a
// bare store of its initial value. On a GPU that memory is device memory,
// which the host cannot touch; so each such op (a load, a store, or a region
// op containing one) is moved into a gpu.launch of one thread. Correct but
// serial: a tree reduction across threads would be the fast form, and is not
// written yet.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include "llvm/ADT/SmallPtrSet.h"

#define DEBUG_TYPE "trace-serial-host-compute-to-gpu"

namespace mlir::trace {
#define GEN_PASS_DEF_TRACESERIALHOSTCOMPUTETOGPU
#include "TraceIR/Conversion/Passes.h.inc"
} // namespace mlir::trace

using namespace mlir;

namespace {

struct TraceSerialHostComputeToGpuPass
    : public mlir::trace::impl::TraceSerialHostComputeToGpuBase<
          TraceSerialHostComputeToGpuPass> {
  /// Whether `op` loads or stores outside any launch, and launches nothing
  /// itself (a host loop around launches, like an RNN's time loop, is
  /// orchestration and stays on the host).
  static bool isHostCompute(Operation *op) {
    bool access = false, launches = false;
    op->walk<WalkOrder::PreOrder>([&](Operation *inner) {
      if (isa<gpu::LaunchOp>(inner)) {
        launches = true;
        return WalkResult::skip();
      }
      access |= isa<memref::LoadOp, memref::StoreOp>(inner);
      return WalkResult::advance();
    });
    return access && !launches;
  }

  /// Whether `op` may join a run of host compute: a load or store, a
  /// side-effect-free op (the arithmetic between them), or a region op
  /// doing host compute.
  static bool mayJoinRun(Operation &op) {
    if (op.hasTrait<OpTrait::IsTerminator>())
      return false;
    if (isa<memref::LoadOp, memref::StoreOp>(op))
      return true;
    if (op.getNumRegions() > 0)
      return isHostCompute(&op);
    return isMemoryEffectFree(&op) && !isa<ViewLikeOpInterface>(op);
  }

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    // Maximal runs of consecutive ops that may join, each holding a load,
    // a store or host compute (a 0-d elementwise op is load, arithmetic,
    // store; a 0-d reduction a store and a loop nest).
    SmallVector<SmallVector<Operation *>> runs;
    SmallVector<Operation *> current;
    auto close = [&] {
      if (llvm::any_of(current, [](Operation *op) {
            return isa<memref::LoadOp, memref::StoreOp>(op) ||
                   op->getNumRegions() > 0;
          }))
        runs.push_back(current);
      current.clear();
    };
    for (Operation &op : func.getBody().front()) {
      if (mayJoinRun(op))
        current.push_back(&op);
      else
        close();
    }
    close();
    for (SmallVector<Operation *> &run : runs)
      wrap(run);
  }

  /// Moves `run` into a one-thread launch. Constants stay outside, before
  /// it (other host code may use them); a run with any other value used
  /// after it stays on the host (and the plan reader refuses it).
  static void wrap(ArrayRef<Operation *> run) {
    llvm::SmallPtrSet<Operation *, 8> inRun(run.begin(), run.end());
    SmallVector<Operation *> moved;
    for (Operation *op : run) {
      if (op->hasTrait<OpTrait::ConstantLike>()) {
        op->moveBefore(run.front());
        continue;
      }
      for (Value result : op->getResults())
        for (Operation *user : result.getUsers())
          if (!inRun.count(op->getBlock()->findAncestorOpInBlock(*user)
                               ?: user))
            return;
      moved.push_back(op);
    }
    if (moved.empty())
      return;
    OpBuilder b(moved.front());
    Location loc = moved.front()->getLoc();
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    auto launch = gpu::LaunchOp::create(b, loc, one, one, one, one, one, one);
    Block &body = launch.getBody().front();
    OpBuilder inner = OpBuilder::atBlockEnd(&body);
    auto terminator = gpu::TerminatorOp::create(inner, loc);
    for (Operation *op : moved)
      op->moveBefore(terminator);
  }
};

} // namespace
