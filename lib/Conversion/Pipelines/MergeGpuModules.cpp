//===- MergeGpuModules.cpp - All kernels in one gpu.module ----------------===//
//
// Outlining makes one gpu.module per launch, and each serializes to a
// gpu.binary of its own; the runtime loads one fatbin with one
// cuModuleLoadData call. So every kernel moves into the first gpu.module,
// renamed after its old module, whose name outlining already made unique,
// and every gpu.launch_func is pointed at the new symbol.
//
// With `fingerprint` (per-op mode, whose binaries the runtime loads apart
// from the IR that launches them), each name also gets a hash of the host
// function that launches the kernel and of the kernels it launches: a fatbin
// compiled from another graph, shape or tiling then lacks the names the
// runtime looks up and fails to load instead of being launched with the
// wrong grid.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/xxhash.h"

#include <limits>

#define DEBUG_TYPE "trace-merge-gpu-modules"

namespace mlir::trace {
#define GEN_PASS_DEF_TRACEMERGEGPUMODULES
#include "TraceIR/Conversion/Passes.h.inc"
} // namespace mlir::trace

using namespace mlir;

namespace {

/// Hashes `func` (its launches: grids, arguments) with the kernels it
/// launches, and gives each of those kernels the hash as its suffix: a
/// per-op fingerprint, the same whatever else the file holds.
void fingerprintLaunches(func::FuncOp func,
                         llvm::StringMap<std::string> &suffixes) {
  // Fixed flags, whatever --mlir-print-* options the tool was given: no
  // locations (the same graph from another file is the same), nothing
  // elided (different constants are different code), local scope (no
  // #map aliases standing for different maps in different modules).
  OpPrintingFlags flags;
  flags.enableDebugInfo(false)
      .printGenericOpForm(false)
      .useLocalScope(true)
      .printValueUsers(false)
      .printUniqueSSAIDs(false)
      .printNameLocAsPrefix(false)
      .skipRegions(false)
      .elideLargeElementsAttrs(std::numeric_limits<int64_t>::max())
      .elideLargeResourceString(std::numeric_limits<int64_t>::max())
      .printLargeElementsAttrWithHex(-1);
  std::string text;
  llvm::raw_string_ostream os(text);
  func->print(os, flags);
  SmallVector<StringRef> launched;
  SymbolTable symbols(func->getParentOfType<ModuleOp>());
  func.walk([&](gpu::LaunchFuncOp launch) {
    StringRef name = launch.getKernelModuleName().getValue();
    if (llvm::is_contained(launched, name))
      return;
    launched.push_back(name);
    if (Operation *kernels = symbols.lookup(name))
      kernels->print(os, flags);
  });
  std::string suffix =
      "_" + llvm::utohexstr(llvm::xxh3_64bits(text) & 0xffffffffu,
                            /*LowerCase=*/true, /*Width=*/8);
  for (StringRef name : launched)
    suffixes[name] = suffix;
}

struct TraceMergeGpuModulesPass
    : public mlir::trace::impl::TraceMergeGpuModulesBase<
          TraceMergeGpuModulesPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<gpu::GPUModuleOp> kernelModules(
        module.getOps<gpu::GPUModuleOp>());
    if (kernelModules.empty() || (kernelModules.size() < 2 && !fingerprint))
      return;
    // Kernel module name -> fingerprint suffix of the host function that
    // launches it.
    llvm::StringMap<std::string> suffixes;
    if (fingerprint)
      for (func::FuncOp func : module.getOps<func::FuncOp>())
        fingerprintLaunches(func, suffixes);
    gpu::GPUModuleOp dest = kernelModules.front();
    MLIRContext *ctx = &getContext();
    // (old module, old kernel) -> new kernel name inside `dest`.
    llvm::DenseMap<std::pair<StringAttr, StringAttr>, StringAttr> renamed;
    for (gpu::GPUModuleOp kernelModule : kernelModules) {
      SmallVector<Operation *> ops;
      for (Operation &op : kernelModule.getBody()->getOperations())
        ops.push_back(&op);
      for (Operation *op : ops) {
        auto func = dyn_cast<gpu::GPUFuncOp>(op);
        // Anything else (helper functions, globals) could clash by name
        // once merged; outlining of linalg loops creates none.
        if (!func || ops.size() != 1) {
          op->emitError("trace-merge-gpu-modules: expected one gpu.func "
                        "per outlined gpu.module");
          return signalPassFailure();
        }
        StringAttr newName = StringAttr::get(
            ctx, kernelModule.getSymName() +
                     suffixes.lookup(kernelModule.getSymName()));
        renamed[{kernelModule.getSymNameAttr(), func.getNameAttr()}] = newName;
        func.setName(newName);
        if (kernelModule != dest) {
          func->remove();
          dest.getBody()->push_back(func);
        }
      }
    }
    // The first kernel's name would misdescribe a module holding them all.
    if (!SymbolTable::lookupSymbolIn(module, "trace_kernels"))
      dest.setName("trace_kernels");
    WalkResult walk = module.walk([&](gpu::LaunchFuncOp launch) {
      auto it =
          renamed.find({launch.getKernelModuleName(), launch.getKernelName()});
      if (it == renamed.end()) {
        launch.emitError("trace-merge-gpu-modules: launch of an unknown "
                         "kernel");
        return WalkResult::interrupt();
      }
      launch.setKernelAttr(SymbolRefAttr::get(
          dest.getSymNameAttr(), {FlatSymbolRefAttr::get(ctx, it->second)}));
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();
    for (gpu::GPUModuleOp kernelModule : llvm::drop_begin(kernelModules))
      kernelModule.erase();
  }
};

} // namespace
