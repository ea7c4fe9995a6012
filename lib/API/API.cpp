//===- API.cpp - TraceIR for language bindings: the compiler half ---------===//
//
// Parsing, passes, the ANF importer and building executables from MLIR
// text; running them is RuntimeAPI.cpp's, which needs no MLIR.
//

#include "APIImpl.h"
#include "TraceIR/Conversion/KernelPlan.h"
#include "TraceIR/Dialect/ParseSource.h"
#include "TraceIR/Dialect/TraceDialect.h"
#include "TraceIR/Import/ANFImporter.h"
#include "TraceIR/Runtime/Build.h"
#include "TraceIR/Runtime/EmitExecutable.h"
#include "TraceIR/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <mutex>

using namespace traceir;

namespace {

/// Registers the passes a pipeline string may name, once per process.
void registerPasses() {
  static std::once_flag once;
  std::call_once(once, [] {
    mlir::registerTransformsPasses();
    mlir::trace::registerTraceTransformsPasses();
  });
}

/// A context and a source manager whose diagnostics (with file:line:col
/// and the source line) collect into `diagnostics`.
struct Session {
  mlir::MLIRContext context{mlir::MLIRContext::Threading::DISABLED};
  llvm::SourceMgr sourceMgr;
  std::string diagnostics;
  llvm::raw_string_ostream diagStream{diagnostics};
  mlir::SourceMgrDiagnosticHandler handler{sourceMgr, &context, diagStream};

  Session() { context.loadDialect<mlir::trace::TraceDialect>(); }

  mlir::OwningOpRef<mlir::ModuleOp> parse(const std::string &text,
                                          const std::string &name) {
    sourceMgr.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBufferCopy(text, name), llvm::SMLoc());
    return mlir::trace::parseTraceSource(sourceMgr,
                                         mlir::ParserConfig(&context));
  }
  std::string error(llvm::StringRef fallback) {
    std::string msg = llvm::StringRef(diagnostics).trim().str();
    return msg.empty() ? fallback.str() : msg;
  }
};

/// The module's text with its locations, so a round trip through Python
/// keeps them for errors and profiles.
std::string print(mlir::ModuleOp module) {
  std::string s;
  llvm::raw_string_ostream os(s);
  module->print(os, mlir::OpPrintingFlags().enableDebugInfo());
  return s;
}

/// Nests the pipeline's graph passes under `trace.graph(...)`, as
/// trace-opt's flags do: "canonicalize,free-dead-tensors" runs canonicalize
/// on the module and free-dead-tensors on each graph.
std::string nestGraphPasses(llvm::StringRef pipeline) {
  static const llvm::StringRef graphPasses[] = {"free-dead-tensors"};
  std::string out;
  int depth = 0;
  size_t begin = 0;
  auto flush = [&](size_t end) {
    llvm::StringRef element = pipeline.slice(begin, end).trim();
    llvm::StringRef name =
        element.take_until([](char c) { return c == '{' || c == '('; }).trim();
    if (!out.empty())
      out += ",";
    if (llvm::is_contained(graphPasses, name))
      out += ("trace.graph(" + element + ")").str();
    else
      out += element.str();
    begin = end + 1;
  };
  for (size_t i = 0; i < pipeline.size(); ++i) {
    char c = pipeline[i];
    depth += (c == '(' || c == '{') - (c == ')' || c == '}');
    if (c == ',' && depth == 0)
      flush(i);
  }
  flush(pipeline.size());
  return out;
}

} // namespace

namespace traceir::api {
Result<std::string> parse(const std::string &text,
                          const std::string &sourceName) {
  Session s;
  auto module = s.parse(text, sourceName);
  if (!module)
    return {{}, s.error("cannot parse " + sourceName)};
  return {print(*module), {}};
}

Result<std::string> runPasses(const std::string &text,
                              const std::string &pipeline,
                              const std::string &sourceName) {
  registerPasses();
  Session s;
  auto module = s.parse(text, sourceName);
  if (!module)
    return {{}, s.error("cannot parse " + sourceName)};
  mlir::PassManager pm(&s.context, mlir::ModuleOp::getOperationName());
  std::string pipelineErrors;
  llvm::raw_string_ostream errs(pipelineErrors);
  if (pipeline.empty() || mlir::failed(mlir::parsePassPipeline(
                              nestGraphPasses(pipeline), pm, errs)))
    return {{},
            "bad pass pipeline '" + pipeline +
                "': " + llvm::StringRef(pipelineErrors).trim().str()};
  if (mlir::failed(pm.run(*module)))
    return {{}, s.error("the pipeline '" + pipeline + "' failed")};
  return {print(*module), {}};
}

Result<std::string> importANF(const std::string &text,
                              const std::string &sourceName) {
  Session s;
  s.sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(text, sourceName), llvm::SMLoc());
  auto module = mlir::trace::importANFTrace(s.sourceMgr, &s.context);
  if (!module)
    return {{}, s.error("cannot import " + sourceName)};
  return {print(*module), {}};
}

//===----------------------------------------------------------------------===//
// Executable (building one; RuntimeAPI.cpp runs it)
//===----------------------------------------------------------------------===//

Result<std::unique_ptr<Executable>>
Executable::create(const std::string &text, const std::string &graphName,
                   const std::string &deviceName, const std::string &sourceName,
                   bool compileGpuKernels, const std::string &gpuBinary) {
  auto device = parseDevice(deviceName);
  if (!device)
    return {nullptr, toString(device.takeError())};
  Session s;
  auto module = s.parse(text, sourceName);
  if (!module)
    return {nullptr, s.error("cannot parse " + sourceName)};
  auto graph = findGraph(*module, graphName, sourceName);
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

Result<std::string>
emitExecutable(const std::string &text, const std::string &graphName,
               const std::string &deviceName, const std::string &sourceName,
               bool generatedKernels, const std::string &chip) {
  auto device = parseDevice(deviceName);
  if (!device)
    return {{}, toString(device.takeError())};
  Session s;
  auto module = s.parse(text, sourceName);
  if (!module)
    return {{}, s.error("cannot parse " + sourceName)};
  auto graph = findGraph(*module, graphName, sourceName);
  if (!graph)
    return {{}, llvm::toString(graph.takeError())};
  mlir::trace::GpuPipelineOptions options;
  options.chip = chip;
  auto bytes = traceir::emitExecutable(*graph, *device,
                                       generatedKernels ? &options : nullptr,
                                       "traceir (Python)");
  if (!bytes)
    return {{}, s.error(llvm::toString(bytes.takeError()))};
  return {std::move(*bytes), {}};
}

} // namespace traceir::api
