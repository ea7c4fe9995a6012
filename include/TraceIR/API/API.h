//===- API.h - TraceIR for language bindings --------------------*- C++ -*-===//
//
// Everything the Python bindings need, behind types of the C++ standard
// library only. LLVM and MLIR are built without RTTI and exceptions while a
// nanobind extension needs both; keeping their headers out of the extension
// (as MLIR's own bindings do with its C API) lets each side keep its flags.
// Errors come back as strings, never as exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_API_API_H
#define TRACEIR_API_API_H

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace traceir {
class Executable;
} // namespace traceir

namespace traceir::api {

/// A result or an error message.
template <typename T> struct Result {
  T value{};
  std::string error; ///< empty on success
  bool ok() const { return error.empty(); }
};

/// A tensor crossing the boundary: dtype by its safetensors name ("F32",
/// "I64", ...), a contiguous row-major copy of the data.
struct Tensor {
  std::string dtype;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;
};
using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

/// A tensor lent to a run where it lies (DLPack's view of a torch tensor or
/// a numpy array): `data` on the host or on CUDA device `cudaIndex`,
/// strides in elements (empty: contiguous). Read only during the call.
struct TensorView {
  std::string dtype;
  std::vector<int64_t> shape, strides;
  const void *data = nullptr;
  bool onCUDA = false;
  int cudaIndex = 0;
};
using NamedViews = std::vector<std::pair<std::string, TensorView>>;

/// An output handed over to the caller: contiguous memory on the host or
/// on CUDA device `cudaIndex`, freed with the last copy of `data`.
struct OutputTensor {
  std::string dtype;
  std::vector<int64_t> shape;
  bool onCUDA = false;
  int cudaIndex = 0;
  std::shared_ptr<void> data;
};

class Profiler;

class IRModule;

/// The .trx bytes of the graph named `graph` (or the only one) of `module`
/// built for `device` without using the device (trace-translate
/// --emit-executable); with `generatedKernels`, the ops the GPU lowering
/// covers run its kernels, compiled for `chip`. The compiler half only.
Result<std::string> emitExecutable(IRModule &module, const std::string &graph,
                                   const std::string &device,
                                   bool generatedKernels,
                                   const std::string &chip);

/// Threads of the CPU kernels and the BLAS (cpu/Parallel.h: from
/// TRACEIR_NUM_THREADS, else OMP_NUM_THREADS, else the available cores;
/// the portable GEMM runs on one).
void setNumThreads(int n);
int numThreads();
/// Results that do not depend on the thread count (CPU/Parallel.h).
void setDeterministic(bool on);
bool deterministic();
/// "OpenMP", or "none" where the build has no OpenMP (one thread).
std::string threadingBackend();
/// The kernel tier (Runtime/KernelTier.h): "optimized" (the default: each
/// optimized kernel where it covers the call, else the portable one) or
/// "portable" (the portable kernels only). Another name is an error.
/// Returns the tier now in force.
Result<std::string> setKernelTier(const std::string &tier);
std::string kernelTier();
/// "OpenBLAS" or "portable".
std::string gemmBackend();
/// The oneDNN version conv2d and the 2-D pools run on at the optimized
/// tier ("2.6.3"), or "" in a runtime built without oneDNN.
std::string dnnlVersion();
/// The ops with a kernel on `device` ("cpu" or "cuda") in this runtime,
/// sorted; none on cuda in a runtime built without CUDA.
Result<std::vector<std::string>> kernelOps(const std::string &device);

/// A trace.graph built for one device, with its parameters loaded.
class Executable {
public:
  /// Builds the graph named `graph` (or the only one) of `module` for
  /// `device` ("cpu", "cuda", "cuda:N"). With `compileGpuKernels` or a
  /// `gpuBinary` (a fatbin of trace-translate --emit-gpu-binary), the ops
  /// the lowering covers launch the compiler's kernels instead of the
  /// runtime's (CUDA only; see trace-run --gpu-binary). The compiler half
  /// only.
  static Result<std::unique_ptr<Executable>>
  create(IRModule &module, const std::string &graph, const std::string &device,
         bool compileGpuKernels = false, const std::string &gpuBinary = "");
  ~Executable();
  /// Loads a saved executable (.trx) to run on `device`, or on the device it
  /// was built for when `device` is empty.
  static Result<std::unique_ptr<Executable>> load(const std::string &path,
                                                  const std::string &device);
  /// Saves it as a .trx file (parameters are not in it).
  std::string save(const std::string &path) const;
  /// What it holds (as trace-exec --describe prints).
  std::string describe() const;
  /// Takes over a runtime executable (what create() builds).
  static std::unique_ptr<Executable>
  wrap(std::unique_ptr<traceir::Executable> exe);

  std::string device() const;
  const std::vector<std::string> &paramNames() const;
  const std::vector<std::string> &inputNames() const;
  /// Declared dtype and shape of input `i` (for error messages and
  /// conversions before the call).
  std::string inputDType(size_t i) const;
  std::vector<int64_t> inputShape(size_t i) const;

  /// Uploads the parameters once; every one must be present.
  std::string loadParams(const NamedTensors &params);
  /// A parameter's current value (runs may update some in place).
  Result<Tensor> readParam(const std::string &name);
  /// Runs on `inputs` (by name) where they lie: host memory, or memory of
  /// this executable's CUDA device, copied there without a host round trip.
  /// Returns output0, output1, ... in order, on the device with
  /// `outputsOnDevice` (a CUDA executable), otherwise on the host.
  Result<std::vector<OutputTensor>> run(const NamedViews &inputs,
                                        bool outputsOnDevice, bool checkFrees,
                                        uint64_t seed, Profiler *profiler);
  /// The last run's memory report as JSON (trace-run --memory-report=json).
  std::string memoryReportJSON() const;

private:
  Executable();
  struct Impl;
  std::unique_ptr<Impl> impl;
};

/// Records runs (see TraceIR/Runtime/Profiler.h).
class Profiler {
public:
  Profiler();
  ~Profiler();
  void start();
  bool active() const;
  /// Ends the profile; writes a Chrome trace to `path` (temporary file
  /// renamed when complete) or, with an empty path, keeps it in memory for
  /// traceJSON(). Returns an error message or "".
  std::string stop(const std::string &path);
  /// The last profile's trace, when it was kept in memory.
  std::string traceJSON() const;
  /// The last profile's table per op name.
  std::string summary() const;

  struct Impl;
  std::unique_ptr<Impl> impl;
};

} // namespace traceir::api

#endif // TRACEIR_API_API_H
