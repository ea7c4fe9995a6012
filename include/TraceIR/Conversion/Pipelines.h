//===- Pipelines.h - Lowering pipelines from linalg on tensors --*- C++ -*-===//
//
// Two pass pipelines start where --convert-trace-to-linalg ends (linalg on
// tensors inside func.func):
//   --trace-lower-to-gpu  bufferize, map parallel loops onto GPU blocks and
//                         threads, outline kernels, lower host code to LLVM
//                         and kernels to NVVM, serialize each gpu.module into
//                         a gpu.binary (fatbin: cubin + PTX by default);
//   --trace-lower-to-cpu  the CPU twin: bufferize, loops, LLVM, with C
//                         interface wrappers (_mlir_ciface_<name>) so
//                         ExecutionEngine can call the funcs.
// Both bufferize function results into trailing out-params (memrefs the
// caller allocates), so callers own every input and output buffer. In
// per-op mode (option per-op, and trace-translate --emit-gpu-binary's
// default) the GPU pipeline first splits each graph into one function per
// compute op (--trace-split-ops): the form the runtime launches (see
// KernelPlan.h). Kernels are serialized before the host code is lowered, so
// the host functions can be read at the memref level (lowerHost = false).
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_CONVERSION_PIPELINES_H
#define TRACEIR_CONVERSION_PIPELINES_H

#include "mlir/Pass/PassOptions.h"

#include <string>

namespace mlir {
class OpPassManager;
class DialectRegistry;
} // namespace mlir

namespace mlir::trace {

/// Options of --trace-lower-to-gpu.
struct GpuPipelineOptions : public PassPipelineOptions<GpuPipelineOptions> {
  Option<std::string> chip{*this, "chip",
                           llvm::cl::desc("NVPTX target chip, e.g. sm_80"),
                           llvm::cl::init("sm_90")};
  Option<std::string> features{*this, "features",
                               llvm::cl::desc("NVPTX features, e.g. +ptx80"),
                               llvm::cl::init("+ptx80")};
  Option<std::string> format{
      *this, "format",
      llvm::cl::desc("Object format: fatbin (cubin + PTX), bin (cubin) or "
                     "isa (PTX)"),
      llvm::cl::init("fatbin")};
  Option<std::string> toolkit{
      *this, "toolkit",
      llvm::cl::desc("CUDA toolkit root (bin/ptxas, bin/fatbinary)"),
      llvm::cl::init("/usr/local/cuda")};
  ListOption<int64_t> tileSizes{
      *this, "tile-sizes",
      llvm::cl::desc("Threads per block along each parallel loop dimension "
                     "(innermost first, which maps onto threadIdx.x; default "
                     "32,8)")};
  Option<bool> mergeKernelModules{
      *this, "merge-kernel-modules",
      llvm::cl::desc("Put all kernels into one gpu.module, hence one "
                     "gpu.binary (one loadable fatbin)"),
      llvm::cl::init(false)};
  Option<bool> perOp{
      *this, "per-op",
      llvm::cl::desc("Split each trace.graph into one function per compute "
                     "op (--trace-split-ops) and leave ops that do not lower "
                     "to the runtime: the kernels trace-run --gpu-binary "
                     "launches"),
      llvm::cl::init(false)};
  /// Whether host code goes to LLVM. The runtime stops before, to read the
  /// launches from the memref-level host functions (KernelPlan.h).
  bool lowerHost = true;
  /// Whether gpu.modules are serialized into gpu.binary ops (runs ptxas).
  /// The runtime skips it when it loads a prebuilt fatbin.
  bool serialize = true;
};

/// Options of --trace-lower-to-cpu (none yet; kept for a stable signature).
struct CpuPipelineOptions : public PassPipelineOptions<CpuPipelineOptions> {};

/// Appends the GPU lowering to `pm`, a pass manager on builtin.module. The
/// first pass checks chip, format and toolkit, so a bad value is one clear
/// error rather than a warning from LLVM or a failure deep inside ptxas.
void buildTraceLowerToGpuPipeline(OpPassManager &pm,
                                  const GpuPipelineOptions &options);

/// Appends the CPU-twin lowering to `pm`, a pass manager on builtin.module.
void buildTraceLowerToCpuPipeline(OpPassManager &pm,
                                  const CpuPipelineOptions &options);

/// Registers --trace-lower-to-gpu and --trace-lower-to-cpu.
void registerTracePipelines();

/// Registers the dialects, interfaces and LLVM IR translations the pipelines
/// need (gpu-module-to-binary translates kernels to LLVM IR and calls the
/// NVVM target's serializer).
void registerTracePipelineDialects(DialectRegistry &registry);

/// Registers the trace-translate translation --emit-gpu-binary (with its
/// --chip, --features and --toolkit options): runs --trace-lower-to-gpu with
/// all kernels merged into one gpu.module and writes that module's fatbin,
/// the bytes cuModuleLoadData takes. Call before parsing the command line.
void registerGpuBinaryTranslation();

/// Sets `options`' chip, features and toolkit from trace-translate's
/// --chip, --features and --toolkit (registering them on first use), for
/// every translation that compiles kernels.
void getGpuTranslationOptions(GpuPipelineOptions &options);

} // namespace mlir::trace

#endif // TRACEIR_CONVERSION_PIPELINES_H
