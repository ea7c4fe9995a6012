//===- API.cpp - TraceIR for language bindings: the compiler half ---------===//
//
// Building and saving executables from a held module (IR.cpp holds,
// parses, walks and rewrites it); running them is RuntimeAPI.cpp's, which
// needs no MLIR.
//

#include "APIImpl.h"
#include "CompilerSession.h"
#include "TraceIR/API/IR.h"
#include "TraceIR/Conversion/KernelPlan.h"
#include "TraceIR/Dialect/TraceDialect.h"
#include "TraceIR/Runtime/Build.h"
#include "TraceIR/Runtime/EmitExecutable.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"

using namespace traceir;

using namespace traceir::api::detail;

namespace traceir::api {

//===----------------------------------------------------------------------===//
// Executable (building one; RuntimeAPI.cpp runs it)
//===----------------------------------------------------------------------===//

Result<std::unique_ptr<Executable>>
Executable::create(IRModule &held, const std::string &graphName,
                   const std::string &deviceName, bool compileGpuKernels,
                   const std::string &gpuBinary) {
  auto device = parseDevice(deviceName);
  if (!device)
    return {nullptr, toString(device.takeError())};
  // Python may have edited it since it was parsed.
  if (std::string err = held.verify(); !err.empty())
    return {nullptr, err};
  auto graph = findGraph(moduleOf(held), graphName, sourceNameOf(held));
  if (!graph)
    return {nullptr, llvm::toString(graph.takeError())};
  if (compileGpuKernels && !gpuBinary.empty())
    return {nullptr, "gpu_kernels: compile them or load a binary, not both"};
  std::optional<traceir::LoadedGeneratedKernels> generated;
  if (compileGpuKernels || !gpuBinary.empty()) {
    traceir::GeneratedKernelsSource source;
    source.gpuBinary = gpuBinary;
    auto loaded = traceir::loadGeneratedKernels(*graph, *device, source);
    if (!loaded)
      return {nullptr, llvm::toString(loaded.takeError())};
    generated = std::move(*loaded);
  }
  auto built = buildExecutable(*graph, *device,
                               generated ? &generated->kernels : nullptr,
                               generated ? generated->library : nullptr);
  if (!built)
    return {nullptr, llvm::toString(built.takeError())};
  return {wrap(std::move(*built)), {}};
}

Result<std::string> emitExecutable(IRModule &held, const std::string &graphName,
                                   const std::string &deviceName,
                                   bool generatedKernels,
                                   const std::string &chip) {
  auto device = parseDevice(deviceName);
  if (!device)
    return {{}, toString(device.takeError())};
  if (std::string err = held.verify(); !err.empty())
    return {{}, err};
  auto graph = findGraph(moduleOf(held), graphName, sourceNameOf(held));
  if (!graph)
    return {{}, llvm::toString(graph.takeError())};
  mlir::trace::GpuPipelineOptions options;
  options.chip = chip;
  Session &s = sessionOf(held);
  s.diagnostics.clear();
  auto bytes = traceir::emitExecutable(*graph, *device,
                                       generatedKernels ? &options : nullptr,
                                       "traceir (Python)");
  // The GPU pipeline reports through diagnostics, which say more.
  if (!bytes)
    return {{}, s.error(llvm::toString(bytes.takeError()))};
  return {std::move(*bytes), {}};
}

} // namespace traceir::api
