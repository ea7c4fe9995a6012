//===- CompilerSession.cpp - The compiler half's shared parts -------------===//

#include "CompilerSession.h"
#include "TraceIR/Dialect/ParseSource.h"
#include "TraceIR/Transforms/Passes.h"

#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/MemoryBuffer.h"

#include <mutex>

using namespace traceir::api::detail;

mlir::OwningOpRef<mlir::ModuleOp> Session::parse(const std::string &text,
                                                 const std::string &name) {
  sourceMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, name),
                               llvm::SMLoc());
  return mlir::trace::parseTraceSource(sourceMgr, mlir::ParserConfig(&context));
}

std::string Session::error(llvm::StringRef fallback) {
  std::string msg = llvm::StringRef(diagnostics).trim().str();
  diagnostics.clear();
  return msg.empty() ? fallback.str() : msg;
}

std::string traceir::api::detail::print(mlir::ModuleOp module) {
  std::string s;
  llvm::raw_string_ostream os(s);
  module->print(os, mlir::OpPrintingFlags().enableDebugInfo());
  return s;
}

namespace {
/// Registers the passes a pipeline string may name, once per process.
void registerPasses() {
  static std::once_flag once;
  std::call_once(once, [] {
    mlir::registerTransformsPasses();
    mlir::trace::registerTraceTransformsPasses();
  });
}

/// Nests the pipeline's graph passes under `trace.graph(...)`, as
/// trace-opt's flags do: "canonicalize,free-dead-tensors" runs canonicalize
/// on the module and free-dead-tensors on each graph.
std::string nestGraphPasses(llvm::StringRef pipeline) {
  static const llvm::StringRef graphPasses[] = {
      "reorder-for-memory", "reinplace", "free-dead-tensors", "plan-memory"};
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

std::string traceir::api::detail::runPipeline(Session &s, mlir::ModuleOp module,
                                              const std::string &pipeline) {
  registerPasses();
  mlir::PassManager pm(&s.context, mlir::ModuleOp::getOperationName());
  std::string pipelineErrors;
  llvm::raw_string_ostream errs(pipelineErrors);
  if (pipeline.empty() || mlir::failed(mlir::parsePassPipeline(
                              nestGraphPasses(pipeline), pm, errs)))
    return "bad pass pipeline '" + pipeline +
           "': " + llvm::StringRef(pipelineErrors).trim().str();
  s.diagnostics.clear();
  if (mlir::failed(pm.run(module)))
    return s.error("the pipeline '" + pipeline + "' failed");
  return {};
}
