//===- Pipelines.cpp - Lowering pipelines from linalg on tensors ----------===//
//
// Only the pass sequences. The passes of TraceIR's own that they use are
// declared in TraceIR/Conversion/Passes.td and live beside this file, one
// per file, so each can also run alone under its flag; --trace-split-ops,
// which rewrites trace to trace, is one of lib/Transforms'.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Conversion/Pipelines.h"
#include "TraceIR/Conversion/Passes.h"
#include "TraceIR/Dialect/ParseSource.h"
#include "TraceIR/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "mlir/Transforms/Passes.h"

#define DEBUG_TYPE "trace-pipelines"

using namespace mlir;

namespace {

/// From trace.graph to linalg on tensors, checked; in per-op mode, first
/// one graph per op, and ops that do not lower are left to the runtime.
void addTraceToLinalg(OpPassManager &pm, const char *pipeline, bool perOp) {
  if (perOp)
    pm.addPass(trace::createTraceSplitOps());
  pm.addPass(trace::createConvertTraceToLinalg());
  if (perOp)
    pm.addPass(trace::createTraceDropUnlowered());
  else
    pm.addPass(trace::createTraceCheckLowered(
        trace::TraceCheckLoweredOptions{/*pipeline=*/pipeline}));
}

/// Bufferization shared by both pipelines: whole-module one-shot bufferize
/// with identity layouts at function boundaries (plain dense memrefs, the
/// layout StridedMemRefType and the runtime's tensors use), results turned
/// into caller-allocated out-params (the result's allocation is replaced by
/// the out-param, no copy), and deallocation of the remaining temporaries.
void addBufferization(OpPassManager &pm) {
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));

  bufferization::BufferResultsToOutParamsPassOptions outParams;
  // The entry points are public; they are exactly what must change.
  outParams.modifyPublicFunctions = true;
  outParams.hoistStaticAllocs = true;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));

  bufferization::buildBufferDeallocationPipeline(
      pm, bufferization::BufferDeallocationPipelineOptions());
  pm.addPass(createConvertBufferizationToMemRefPass());
}

} // namespace

void mlir::trace::buildTraceLowerToGpuPipeline(
    OpPassManager &pm, const GpuPipelineOptions &options) {
  trace::TraceCheckGpuTargetOptions check;
  check.chip = options.chip;
  check.features = options.features;
  check.format = options.format;
  check.toolkit = options.toolkit;
  check.serialize = options.serialize;
  pm.addPass(trace::createTraceCheckGpuTarget(check));
  addTraceToLinalg(pm, "trace-lower-to-gpu", options.perOp);
  addBufferization(pm);

  // Each parallel loop nest is tiled: the outer (inter-tile) loops map onto
  // blocks, the inner (intra-tile) loops onto threads, so a kernel runs one
  // thread per element rather than one thread over the whole iteration
  // space. Fixed tile bounds with an in-bounds check (no min/max bounds)
  // keep the thread loop's trip count constant, which convert-parallel-
  // loops-to-gpu needs to derive the block size. Reduction dimensions stay
  // sequential scf.for loops inside each thread. Dimensions are reversed
  // first, so the tile sizes and the x, y, z mapping start at the innermost
  // (contiguous) dimension: a warp's 32 threads touch 32 neighbours.
  SmallVector<int64_t> tileSizes(options.tileSizes.begin(),
                                 options.tileSizes.end());
  if (tileSizes.empty())
    tileSizes = {32, 8};
  OpPassManager &funcPm = pm.nest<func::FuncOp>();
  funcPm.addPass(createConvertLinalgToParallelLoopsPass());
  funcPm.addPass(trace::createTraceInnermostDimFirst());
  funcPm.addPass(
      createParallelLoopTilingPass(tileSizes, /*noMinMaxBounds=*/true));
  funcPm.addPass(createGpuMapParallelLoopsPass());
  funcPm.addPass(createConvertParallelLoopToGpuPass());
  funcPm.addPass(trace::createTraceSerialHostComputeToGpu());
  // Folds the launch's grid and block sizes to constants, so outlining
  // sees (and a reader or test can check) the static launch shape.
  funcPm.addPass(createCanonicalizerPass());
  pm.addPass(createGpuKernelOutliningPass());
  if (options.mergeKernelModules)
    pm.addPass(trace::createTraceMergeGpuModules(
        trace::TraceMergeGpuModulesOptions{/*fingerprint=*/options.perOp}));

  // Kernels go to NVVM and into a gpu.binary before the host is touched:
  // until then the host functions are plain memref code (allocations and
  // gpu.launch_func), which is what the runtime reads to launch the kernels
  // itself (see KernelPlan.h) when the host is not lowered.
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.features = options.features;
  pm.addPass(createGpuNVVMAttachTarget(target));
  OpPassManager &kernelPm = pm.nest<gpu::GPUModuleOp>();
  kernelPm.addPass(createLowerAffinePass());
  kernelPm.addPass(createSCFToControlFlowPass());
  kernelPm.addPass(memref::createExpandStridedMetadataPass());
  kernelPm.addPass(createConvertGpuOpsToNVVMOps());
  kernelPm.addPass(createCanonicalizerPass());
  kernelPm.addPass(createCSEPass());
  kernelPm.addPass(createReconcileUnrealizedCastsPass());

  if (options.serialize) {
    GpuModuleToBinaryPassOptions binary;
    binary.toolkitPath = options.toolkit;
    binary.compilationTarget = options.format;
    pm.addPass(createGpuModuleToBinaryPass(binary));
  }
  if (!options.lowerHost)
    return;

  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createGpuToLLVMConversionPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertNVVMToLLVMPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void mlir::trace::buildTraceLowerToCpuPipeline(
    OpPassManager &pm, const CpuPipelineOptions &options) {
  addTraceToLinalg(pm, "trace-lower-to-cpu", /*perOp=*/false);
  addBufferization(pm);
  OpPassManager &funcPm = pm.nest<func::FuncOp>();
  funcPm.addPass(createConvertLinalgToLoopsPass());
  // Sets llvm.emit_c_interface so func-to-llvm emits _mlir_ciface_<name>,
  // the entry point ExecutionEngine and trace-twin-run call.
  funcPm.addPass(LLVM::createLLVMRequestCWrappersPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertMathToLLVMPass());
  // What has no LLVM intrinsic (gelu's math.erf) becomes a libm call.
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createConvertToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void mlir::trace::registerTracePipelines() {
  PassPipelineRegistration<GpuPipelineOptions>(
      "trace-lower-to-gpu",
      "Lowers linalg-on-tensors funcs to host LLVM code launching GPU "
      "kernels, with each kernel module serialized to a gpu.binary",
      buildTraceLowerToGpuPipeline);
  PassPipelineRegistration<CpuPipelineOptions>(
      "trace-lower-to-cpu",
      "Lowers linalg-on-tensors funcs to LLVM with C interface wrappers for "
      "ExecutionEngine (the CPU twin of trace-lower-to-gpu)",
      buildTraceLowerToCpuPipeline);
}

void mlir::trace::registerTracePipelineDialects(DialectRegistry &registry) {
  // The pipelines start at trace.graph.
  registry.insert<TraceDialect>();
  registerAllDialects(registry);
  registerAllExtensions(registry);
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerAllToLLVMIRTranslations(registry);
}

namespace {
/// trace-translate's GPU options. Function-local statics: the options
/// exist only in tools that register a translation that uses them, not in
/// every user of the library.
struct GpuTranslationOptions {
  llvm::cl::opt<std::string> &chip;
  llvm::cl::opt<std::string> &features;
  llvm::cl::opt<std::string> &toolkit;
};
GpuTranslationOptions gpuTranslationOptions() {
  static llvm::cl::opt<std::string> chip(
      "chip", llvm::cl::desc("--emit-gpu-binary: NVPTX chip (sm_80, sm_90)"),
      llvm::cl::init("sm_90"));
  static llvm::cl::opt<std::string> features(
      "features", llvm::cl::desc("--emit-gpu-binary: NVPTX features"),
      llvm::cl::init("+ptx80"));
  static llvm::cl::opt<std::string> toolkit(
      "toolkit", llvm::cl::desc("--emit-gpu-binary: CUDA toolkit root"),
      llvm::cl::init("/usr/local/cuda"));
  return {chip, features, toolkit};
}
} // namespace

void mlir::trace::getGpuTranslationOptions(GpuPipelineOptions &options) {
  GpuTranslationOptions o = gpuTranslationOptions();
  options.chip = o.chip;
  options.features = o.features;
  options.toolkit = o.toolkit;
}

void mlir::trace::registerGpuBinaryTranslation() {
  gpuTranslationOptions();
  static llvm::cl::opt<bool> perOp(
      "per-op",
      llvm::cl::desc("--emit-gpu-binary: one host function per compute op "
                     "(the kernels trace-run --gpu-binary launches); "
                     "--per-op=false lowers each graph as a whole"),
      llvm::cl::init(true));

  registerFromMLIRTranslation(
      "emit-gpu-binary",
      "Lower linalg-on-tensors funcs with --trace-lower-to-gpu (all kernels "
      "in one module) and write the fatbin (cubin + PTX) for "
      "cuModuleLoadData",
      [](Operation *op, llvm::raw_ostream &os) -> LogicalResult {
        GpuPipelineOptions options;
        getGpuTranslationOptions(options);
        options.format = "fatbin";
        options.mergeKernelModules = true;
        options.perOp = perOp;
        PassManager pm(op->getContext(), op->getName().getStringRef());
        buildTraceLowerToGpuPipeline(pm, options);
        if (failed(pm.run(op)))
          return failure();
        SmallVector<gpu::BinaryOp> binaries;
        op->walk([&](gpu::BinaryOp binary) { binaries.push_back(binary); });
        if (binaries.size() != 1)
          return op->emitError("emit-gpu-binary: expected one gpu.binary "
                               "after lowering, found ")
                 << binaries.size() << " (no kernel to compile?)";
        ArrayAttr objects = binaries.front().getObjects();
        if (objects.size() != 1)
          return binaries.front().emitError(
              "emit-gpu-binary: expected one object (one target)");
        auto object = cast<gpu::ObjectAttr>(objects[0]);
        StringRef bytes = object.getObject().getValue();
        os.write(bytes.data(), bytes.size());
        return success();
      },
      [](DialectRegistry &registry) {
        registerTracePipelineDialects(registry);
      });
}
