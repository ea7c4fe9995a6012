//===- EmitExecutable.cpp - trace-translate --emit-executable -------------===//
//
// The compiler side of saved executables: builds a graph's Executable for a
// device (with the generated kernels compiled for a chip, if asked) and
// writes it as a .trx file (ExecutableFile.h). It needs no GPU: a build
// machine compiles for the GPU server that runs the file.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/EmitExecutable.h"
#include "TraceIR/Conversion/KernelPlan.h"
#include "TraceIR/Conversion/Pipelines.h"
#include "TraceIR/Dialect/ParseSource.h"
#include "TraceIR/Runtime/Build.h"
#include "TraceIR/Runtime/ExecutableFile.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/CommandLine.h"

using namespace mlir;
using namespace mlir::trace;

llvm::Expected<std::string>
traceir::emitExecutable(GraphOp graph, Device device,
                        const GpuPipelineOptions *generatedKernels,
                        const std::string &producer) {
  std::optional<GeneratedKernels> generated;
  if (generatedKernels) {
    if (device.kind != Device::Kind::CUDA)
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "generated kernels run on a CUDA device, not on " + device.str());
    auto built = buildGeneratedKernels(graph, *generatedKernels);
    if (!built)
      return built.takeError();
    generated = std::move(*built);
  }
  auto exe = buildExecutable(graph, device, generated ? &*generated : nullptr,
                             nullptr, /*forSaving=*/true);
  if (!exe)
    return exe.takeError();
  return toLLVM(serializeExecutable(**exe, producer));
}

void traceir::registerExecutableTranslation() {
  static llvm::cl::opt<std::string> device(
      "device",
      llvm::cl::desc("--emit-executable: the device it runs on (cpu, cuda, "
                     "cuda:N)"),
      llvm::cl::init("cpu"));
  static llvm::cl::opt<std::string> graphName(
      "graph",
      llvm::cl::desc("--emit-executable: the trace.graph (default: the only "
                     "one)"));
  static llvm::cl::opt<bool> withGenerated(
      "generated-kernels",
      llvm::cl::desc("--emit-executable: run the ops the GPU lowering covers "
                     "with its kernels, compiled for --chip (as trace-run "
                     "--compile-gpu-kernels does)"));
  GpuPipelineOptions probe;
  getGpuTranslationOptions(probe); // registers --chip, --features, --toolkit

  registerFromMLIRTranslation(
      "emit-executable",
      "Build a graph's executable for --device and write it as a saved "
      "executable (.trx) that trace-exec and traceir.load_executable run "
      "without LLVM or MLIR",
      [](Operation *op, llvm::raw_ostream &os) -> LogicalResult {
        auto module = dyn_cast<ModuleOp>(op);
        std::optional<Device> dev = Device::parse(device);
        if (!dev)
          return op->emitError("unknown device '")
                 << device << "' (expected cpu, cuda or cuda:N)";
        auto graph = findGraph(module, graphName, "the input");
        if (!graph)
          return op->emitError(llvm::toString(graph.takeError()));
        GpuPipelineOptions options;
        getGpuTranslationOptions(options);
        auto bytes =
            emitExecutable(*graph, *dev, withGenerated ? &options : nullptr,
                           "trace-translate --emit-executable");
        if (!bytes)
          return graph->emitError(llvm::toString(bytes.takeError()));
        os.write(bytes->data(), bytes->size());
        return success();
      },
      [](DialectRegistry &registry) {
        registerTracePipelineDialects(registry);
      });
}
