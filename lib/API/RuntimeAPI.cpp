//===- RuntimeAPI.cpp - The bindings' runtime half, without MLIR ----------===//
//
// Everything of API.h that runs a built or saved executable: it links the
// runtime alone, so the runtime-only build's Python module has it too.
//
//===----------------------------------------------------------------------===//

#include "APIImpl.h"
#include "TraceIR/Runtime/CPU/Gemm.h"
#include "TraceIR/Runtime/CPU/Kernels.h"
#include "TraceIR/Runtime/CPU/Parallel.h"
#include "TraceIR/Runtime/ExecutableFile.h"
#include "TraceIR/Runtime/KernelTier.h"
#include "TraceIR/Support/CheckedMath.h"

using namespace traceir;

Expected<Device> api::parseDevice(const std::string &name) {
  std::optional<Device> d = Device::parse(name);
  if (!d)
    return makeError("unknown device '" + name +
                     "' (expected cpu, cuda or cuda:N)");
  return *d;
}

namespace {
Expected<HostTensor> toHost(const std::string &name, const api::Tensor &t) {
  std::optional<DType> dtype = dtypeFromSafetensors(t.dtype);
  if (!dtype)
    return makeError("tensor '" + name + "' has dtype " + t.dtype +
                     ", which TraceIR cannot hold");
  HostTensor h;
  h.dtype = *dtype;
  h.shape.assign(t.shape.begin(), t.shape.end());
  // Overflow-checked: the shape comes from the caller.
  std::optional<int64_t> bytes =
      checkedTensorBytes(t.shape, int64_t(dtypeSize(*dtype)));
  if (!bytes)
    return makeError("tensor '" + name + "' has the shape " +
                     shapeToString(h.shape) + ", too large for any tensor");
  if (*bytes != int64_t(t.data.size()))
    return makeError(
        "tensor '" + name + "' holds " + std::to_string(t.data.size()) +
        " bytes but its shape and dtype need " + std::to_string(*bytes));
  h.data.assign(t.data.begin(), t.data.end());
  return h;
}

api::Tensor fromHost(const HostTensor &h) {
  api::Tensor t;
  t.dtype = dtypeSafetensorsName(h.dtype);
  t.shape.assign(h.shape.begin(), h.shape.end());
  t.data.assign(h.data.begin(), h.data.end());
  return t;
}
} // namespace

namespace traceir::api {

//===----------------------------------------------------------------------===//
// Executable
//===----------------------------------------------------------------------===//

Executable::Executable() : impl(std::make_unique<Impl>()) {}
Executable::~Executable() = default;

std::unique_ptr<Executable>
Executable::wrap(std::unique_ptr<traceir::Executable> exe) {
  std::unique_ptr<Executable> out(new Executable());
  out->impl->exe = std::move(exe);
  return out;
}

Result<std::unique_ptr<Executable>>
Executable::load(const std::string &path, const std::string &deviceName) {
  std::optional<Device> device;
  if (!deviceName.empty()) {
    auto d = parseDevice(deviceName);
    if (!d)
      return {nullptr, toString(d.takeError())};
    device = *d;
  }
  auto exe = loadExecutable(path, device);
  if (!exe)
    return {nullptr, toString(exe.takeError())};
  return {wrap(std::move(*exe)), {}};
}

std::string Executable::save(const std::string &path) const {
  return toString(saveExecutable(*impl->exe, path, "traceir (Python)"));
}

std::string Executable::describe() const {
  auto bytes = serializeExecutable(*impl->exe, impl->exe->producer.empty()
                                                   ? "this process"
                                                   : impl->exe->producer);
  if (!bytes)
    return toString(bytes.takeError());
  auto text = describeExecutable(*bytes, "(in memory)");
  return text ? *text : toString(text.takeError());
}

void setNumThreads(int n) { cpu::setNumThreads(n); }
int numThreads() { return cpu::numThreads(); }
void setDeterministic(bool on) { cpu::setDeterministic(on); }
bool deterministic() { return cpu::deterministic(); }
std::string threadingBackend() { return cpu::threadingBackend(); }

Result<std::string> setKernelTier(const std::string &tier) {
  Result<std::string> r;
  if (tier != "optimized" && tier != "portable") {
    r.error = "kernel tier must be 'optimized' or 'portable', got '" + tier +
              "'";
    return r;
  }
  setOptimizedTier(tier == "optimized");
  r.value = tier;
  return r;
}

std::string kernelTier() {
  return optimizedTierEnabled() ? "optimized" : "portable";
}
std::string gemmBackend() { return cpu::gemmBackend(); }
std::string dnnlVersion() {
  const char *v = cpu::dnnlVersion();
  return v ? v : "";
}

Result<std::vector<std::string>> kernelOps(const std::string &device) {
  if (device != "cpu" && device != "cuda")
    return {{}, "device must be 'cpu' or 'cuda', got '" + device + "'"};
  Device::Kind kind = device == "cpu" ? Device::Kind::CPU : Device::Kind::CUDA;
  std::vector<std::string> ops;
  for (const auto &[name, k] : listKernels())
    if (k == kind)
      ops.push_back(name);
  return {ops, {}};
}

std::string Executable::device() const { return impl->exe->device().str(); }
const std::vector<std::string> &Executable::paramNames() const {
  return impl->exe->paramNames();
}
const std::vector<std::string> &Executable::inputNames() const {
  return impl->exe->inputNames();
}
std::string Executable::inputDType(size_t i) const {
  return dtypeSafetensorsName(impl->exe->inputSpecs[i].dtype);
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
      return toString(h.takeError());
    host.emplace(name, std::move(*h));
  }
  if (Error err = impl->exe->loadParams(host))
    return toString(std::move(err));
  return {};
}

Result<std::vector<OutputTensor>>
Executable::run(const NamedViews &inputs, bool outputsOnDevice,
                bool checkFrees, uint64_t seed, Profiler *profiler) {
  InputViews views;
  for (const auto &[name, t] : inputs) {
    std::optional<DType> dtype = dtypeFromSafetensors(t.dtype);
    if (!dtype)
      return {{},
              "input '" + name + "' has dtype " + t.dtype +
                  ", which TraceIR cannot hold"};
    if (!views.emplace(name, InputView{}).second)
      return {{}, "input '" + name + "' given twice"};
    InputView &v = views[name];
    v.dtype = *dtype;
    v.shape.assign(t.shape.begin(), t.shape.end());
    v.strides.assign(t.strides.begin(), t.strides.end());
    v.data = t.data;
    if (t.onCUDA)
      v.device = Device{Device::Kind::CUDA, t.cudaIndex};
  }
  RunOptions options;
  options.checkFrees = checkFrees;
  options.seed = seed;
  if (profiler)
    options.profiler = profiler->impl->profiler.get();
  auto outputs = impl->exe->runViews(views, options, outputsOnDevice);
  if (!outputs)
    return {{}, toString(outputs.takeError())};
  std::vector<OutputTensor> result;
  result.reserve(outputs->size());
  for (OutputBuffer &o : *outputs) {
    OutputTensor t;
    t.dtype = dtypeSafetensorsName(o.dtype);
    t.shape.assign(o.shape.begin(), o.shape.end());
    t.onCUDA = o.device.kind == Device::Kind::CUDA;
    t.cudaIndex = o.device.index;
    t.data = std::move(o.data);
    result.push_back(std::move(t));
  }
  return {std::move(result), {}};
}

Result<Tensor> Executable::readParam(const std::string &name) {
  auto h = impl->exe->readParam(name);
  if (!h)
    return {{}, toString(h.takeError())};
  return {fromHost(*h), {}};
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
    if (Error err = impl->profiler->stop(sink))
      return toString(std::move(err));
    impl->json = sink.toJSON();
    return {};
  }
  auto sink = ChromeTraceFileSink::create(path);
  if (!sink) {
    // Still end the profile, so the next start() begins afresh.
    MemoryTraceSink dropped;
    (void)impl->profiler->stop(dropped);
    return toString(sink.takeError());
  }
  if (Error err = impl->profiler->stop(**sink))
    return toString(std::move(err));
  return {};
}

std::string Profiler::traceJSON() const { return impl->json; }
std::string Profiler::summary() const {
  return impl->profiler->summary().toText();
}

} // namespace traceir::api
