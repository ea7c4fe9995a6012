//===- API.cpp - TraceIR for language bindings ----------------------------===//

#include "TraceIR/API/API.h"
#include "TraceIR/Conversion/KernelPlan.h"
#include "TraceIR/Dialect/ParseSource.h"
#include "TraceIR/Dialect/TraceDialect.h"
#include "TraceIR/Import/ANFImporter.h"
#include "TraceIR/Runtime/Build.h"
#include "TraceIR/Runtime/Profiler.h"
#include "TraceIR/Support/CheckedMath.h"
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

llvm::Expected<Device> parseDevice(const std::string &name) {
  std::optional<Device> d = Device::parse(name);
  if (!d)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "unknown device '" + name +
                                       "' (expected cpu, cuda or cuda:N)");
  return *d;
}

llvm::Expected<HostTensor> toHost(const std::string &name,
                                  const api::Tensor &t) {
  std::optional<DType> dtype = dtypeFromSafetensors(t.dtype);
  if (!dtype)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "tensor '" + name + "' has dtype " +
                                       t.dtype + ", which TraceIR cannot hold");
  HostTensor h;
  h.dtype = *dtype;
  h.shape.assign(t.shape.begin(), t.shape.end());
  // Overflow-checked: the shape comes from the caller.
  std::optional<int64_t> bytes =
      checkedTensorBytes(t.shape, int64_t(dtypeSize(*dtype)));
  if (!bytes)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "tensor '" + name + "' has the shape " +
                                       shapeToString(h.shape) +
                                       ", too large for any tensor");
  if (*bytes != int64_t(t.data.size()))
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "tensor '" + name + "' holds " + llvm::Twine(t.data.size()) +
            " bytes but its shape and dtype need " + llvm::Twine(*bytes));
  h.data.assign(t.data.begin(), t.data.end());
  return h;
}

} // namespace

namespace traceir::api {

struct Profiler::Impl {
  std::unique_ptr<traceir::Profiler> profiler =
      std::make_unique<traceir::Profiler>();
  std::string json; ///< the last profile, when kept in memory
};

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
// Executable
//===----------------------------------------------------------------------===//

struct Executable::Impl {
  std::unique_ptr<traceir::Executable> exe;
};

Executable::Executable() : impl(std::make_unique<Impl>()) {}
Executable::~Executable() = default;

Result<std::unique_ptr<Executable>>
Executable::create(const std::string &text, const std::string &graphName,
                   const std::string &deviceName, const std::string &sourceName,
                   bool compileGpuKernels, const std::string &gpuBinary) {
  auto device = parseDevice(deviceName);
  if (!device)
    return {nullptr, llvm::toString(device.takeError())};
  Session s;
  auto module = s.parse(text, sourceName);
  if (!module)
    return {nullptr, s.error("cannot parse " + sourceName)};
  auto graph = findGraph(*module, graphName, sourceName);
  if (!graph)
    return {nullptr, llvm::toString(graph.takeError())};
  if (compileGpuKernels && !gpuBinary.empty())
    return {nullptr, "gpu_kernels: compile them or load a binary, not both"};
  std::optional<mlir::trace::LoadedGeneratedKernels> generated;
  if (compileGpuKernels || !gpuBinary.empty()) {
    mlir::trace::GeneratedKernelsSource source;
    source.gpuBinary = gpuBinary;
    auto loaded = mlir::trace::loadGeneratedKernels(*graph, *device, source);
    if (!loaded)
      return {nullptr, llvm::toString(loaded.takeError())};
    generated = std::move(*loaded);
  }
  auto built = buildExecutable(*graph, *device,
                               generated ? &generated->kernels : nullptr,
                               generated ? generated->library : nullptr);
  if (!built)
    return {nullptr, llvm::toString(built.takeError())};
  std::unique_ptr<Executable> exe(new Executable());
  exe->impl->exe = std::move(*built);
  return {std::move(exe), {}};
}

std::string Executable::device() const { return impl->exe->device().str(); }
const std::vector<std::string> &Executable::paramNames() const {
  return impl->exe->paramNames();
}
const std::vector<std::string> &Executable::inputNames() const {
  return impl->exe->inputNames();
}
std::string Executable::inputDType(size_t i) const {
  return dtypeSafetensorsName(impl->exe->inputSpecs[i].dtype).str();
}
std::vector<int64_t> Executable::inputShape(size_t i) const {
  const Shape &s = impl->exe->inputSpecs[i].shape;
  return {s.begin(), s.end()};
}

std::string Executable::loadParams(const NamedTensors &params) {
  traceir::NamedTensors host;
  for (const auto &[name, t] : params) {
    auto h = toHost(name, t);
    if (!h)
      return llvm::toString(h.takeError());
    host.emplace(name, std::move(*h));
  }
  if (llvm::Error err = impl->exe->loadParams(host))
    return llvm::toString(std::move(err));
  return {};
}

Result<std::vector<Tensor>> Executable::run(const NamedTensors &inputs,
                                            bool checkFrees, uint64_t seed,
                                            Profiler *profiler) {
  traceir::NamedTensors host;
  for (const auto &[name, t] : inputs) {
    auto h = toHost(name, t);
    if (!h)
      return {{}, llvm::toString(h.takeError())};
    host.emplace(name, std::move(*h));
  }
  RunOptions options;
  options.checkFrees = checkFrees;
  options.seed = seed;
  if (profiler)
    options.profiler = profiler->impl->profiler.get();
  auto outputs = impl->exe->run(host, options);
  if (!outputs)
    return {{}, llvm::toString(outputs.takeError())};
  std::vector<Tensor> result;
  result.reserve(outputs->size());
  for (HostTensor &h : *outputs) {
    Tensor t;
    t.dtype = dtypeSafetensorsName(h.dtype).str();
    t.shape.assign(h.shape.begin(), h.shape.end());
    t.data.assign(h.data.begin(), h.data.end());
    result.push_back(std::move(t));
  }
  return {std::move(result), {}};
}

Result<Tensor> Executable::readParam(const std::string &name) {
  auto h = impl->exe->readParam(name);
  if (!h)
    return {{}, llvm::toString(h.takeError())};
  Tensor t;
  t.dtype = dtypeSafetensorsName(h->dtype).str();
  t.shape.assign(h->shape.begin(), h->shape.end());
  t.data.assign(h->data.begin(), h->data.end());
  return {std::move(t), {}};
}

std::string Executable::memoryReportJSON() const {
  return impl->exe->memoryReport().toJSON();
}

//===----------------------------------------------------------------------===//
// Profiler
//===----------------------------------------------------------------------===//

Profiler::Profiler() : impl(std::make_unique<Impl>()) {}
Profiler::~Profiler() = default;

void Profiler::start() { impl->profiler->start(); }
bool Profiler::active() const { return impl->profiler->isActive(); }

std::string Profiler::stop(const std::string &path) {
  impl->json.clear();
  if (path.empty()) {
    MemoryTraceSink sink;
    if (llvm::Error err = impl->profiler->stop(sink))
      return llvm::toString(std::move(err));
    impl->json = sink.toJSON();
    return {};
  }
  auto sink = ChromeTraceFileSink::create(path);
  if (!sink) {
    // Still end the profile, so the next start() begins afresh.
    MemoryTraceSink dropped;
    llvm::consumeError(impl->profiler->stop(dropped));
    return llvm::toString(sink.takeError());
  }
  if (llvm::Error err = impl->profiler->stop(**sink))
    return llvm::toString(std::move(err));
  return {};
}

std::string Profiler::traceJSON() const { return impl->json; }
std::string Profiler::summary() const {
  return impl->profiler->summary().toText();
}

} // namespace traceir::api
