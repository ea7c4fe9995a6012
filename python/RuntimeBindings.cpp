//===- RuntimeBindings.cpp - The runtime half of the _traceir extension ---===//
//
// nanobind over TraceIR/API/API.h only: this file is compiled with RTTI and
// exceptions (nanobind needs both) and sees no LLVM or MLIR header. Errors
// from the API become Python exceptions here; the `traceir` package on top
// turns torch tensors and numpy arrays into what these functions take.
// Both builds have this half; the full build adds CompilerBindings.cpp.
//
//===----------------------------------------------------------------------===//

#include "Bindings.h"

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <cstring>

namespace nb = nanobind;
using namespace traceir;

/// The error type of every TraceIR failure the bindings report.
static nb::object traceirError;

PyObject *traceir::bindings::traceirErrorType() { return traceirError.ptr(); }

void traceir::bindings::raise(const std::string &msg) {
  PyErr_SetString(traceirError.ptr(), msg.c_str());
  throw nb::python_error();
}

using namespace traceir::bindings;

namespace {

using HostArray = nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu>;

/// The safetensors dtype name of a DLPack dtype, or "" if TraceIR has none.
std::string dtypeName(nb::dlpack::dtype t) {
  using C = nb::dlpack::dtype_code;
  switch (static_cast<C>(t.code)) {
  case C::Float:
    return t.bits == 32   ? "F32"
           : t.bits == 64 ? "F64"
           : t.bits == 16 ? "F16"
                          : "";
  case C::Bfloat:
    return t.bits == 16 ? "BF16" : "";
  case C::Int:
    return t.bits == 64   ? "I64"
           : t.bits == 32 ? "I32"
           : t.bits == 16 ? "I16"
           : t.bits == 8  ? "I8"
                          : "";
  case C::UInt:
    return t.bits == 8 ? "U8" : "";
  case C::Bool:
    return "BOOL";
  default:
    return "";
  }
}

nb::dlpack::dtype dlpackDType(const std::string &name) {
  using C = nb::dlpack::dtype_code;
  auto make = [](C code, int bits) {
    nb::dlpack::dtype t;
    t.code = static_cast<uint8_t>(code);
    t.bits = static_cast<uint8_t>(bits);
    t.lanes = 1;
    return t;
  };
  if (name == "F32")
    return make(C::Float, 32);
  if (name == "F64")
    return make(C::Float, 64);
  if (name == "F16")
    return make(C::Float, 16);
  if (name == "BF16")
    return make(C::Bfloat, 16);
  if (name == "I64")
    return make(C::Int, 64);
  if (name == "I32")
    return make(C::Int, 32);
  if (name == "I16")
    return make(C::Int, 16);
  if (name == "I8")
    return make(C::Int, 8);
  if (name == "U8")
    return make(C::UInt, 8);
  if (name == "BF16_BITS")
    return make(C::UInt, 16);
  return make(C::Bool, 8);
}

api::NamedTensors
toTensors(const std::vector<std::pair<std::string, HostArray>> &arrays) {
  api::NamedTensors out;
  out.reserve(arrays.size());
  for (const auto &[name, a] : arrays) {
    api::Tensor t;
    t.dtype = dtypeName(a.dtype());
    if (t.dtype.empty())
      raise("tensor '" + name + "' has a dtype TraceIR cannot hold");
    t.shape.assign(a.shape_ptr(), a.shape_ptr() + a.ndim());
    const auto *bytes = static_cast<const uint8_t *>(a.data());
    t.data.assign(bytes, bytes + a.nbytes());
    out.emplace_back(name, std::move(t));
  }
  return out;
}

/// A numpy array owning a copy of the output (freed with the array). numpy
/// has no bfloat16: a BF16 tensor comes as its uint16 bits, which the
/// package views as torch.bfloat16 (see _from_native in traceir).
nb::object toNumpy(api::Tensor &t) {
  if (t.dtype == "BF16")
    t.dtype = "BF16_BITS";
  auto *data = new std::vector<uint8_t>(std::move(t.data));
  nb::capsule owner(data, [](void *p) noexcept {
    delete static_cast<std::vector<uint8_t> *>(p);
  });
  std::vector<size_t> shape(t.shape.begin(), t.shape.end());
  nb::ndarray<nb::numpy> array(data->data(), shape.size(), shape.data(), owner,
                               nullptr, dlpackDType(t.dtype));
  return nb::cast(array);
}

/// Any array or DLPack capsule, on any device, with any strides: a run reads
/// inputs where they lie (a CUDA torch tensor on its device).
using AnyArray = nb::ndarray<nb::ro>;

api::NamedViews
toViews(const std::vector<std::pair<std::string, AnyArray>> &arrays) {
  api::NamedViews out;
  out.reserve(arrays.size());
  for (const auto &[name, a] : arrays) {
    api::TensorView v;
    v.dtype = dtypeName(a.dtype());
    if (v.dtype.empty())
      raise("input '" + name + "' has a dtype TraceIR cannot hold");
    v.shape.assign(a.shape_ptr(), a.shape_ptr() + a.ndim());
    if (a.stride_ptr())
      v.strides.assign(a.stride_ptr(), a.stride_ptr() + a.ndim());
    v.data = a.data();
    switch (a.device_type()) {
    case nb::device::cpu::value:
    case nb::device::cuda_host::value: // pinned host memory
      break;
    case nb::device::cuda::value:
    case nb::device::cuda_managed::value:
      v.onCUDA = true;
      v.cudaIndex = static_cast<int>(a.device_id());
      break;
    default:
      raise("input '" + name + "' lies on DLPack device type " +
            std::to_string(a.device_type()) +
            "; TraceIR reads host and CUDA memory");
    }
    out.emplace_back(name, std::move(v));
  }
  return out;
}

/// An output sharing the memory the run handed over (no copy; the last
/// user frees it): a numpy array for host memory (torch.from_numpy makes it
/// a tensor at a fifth of torch.from_dlpack's cost), a torch tensor through
/// DLPack for CUDA memory and for bfloat16, which numpy lacks.
nb::object toArray(api::OutputTensor &t) {
  auto *data = new std::shared_ptr<void>(std::move(t.data));
  nb::capsule owner(data, [](void *p) noexcept {
    delete static_cast<std::shared_ptr<void> *>(p);
  });
  std::vector<size_t> shape(t.shape.begin(), t.shape.end());
  int device = t.onCUDA ? nb::device::cuda::value : nb::device::cpu::value;
  if (t.onCUDA || t.dtype == "BF16")
    return nb::cast(nb::ndarray<nb::pytorch>(
        data->get(), shape.size(), shape.data(), owner, nullptr,
        dlpackDType(t.dtype), device, t.cudaIndex));
  return nb::cast(nb::ndarray<nb::numpy>(data->get(), shape.size(),
                                         shape.data(), owner, nullptr,
                                         dlpackDType(t.dtype), device));
}

} // namespace

void traceir::bindings::bindRuntime(nb::module_ &m) {
  m.doc() = "TraceIR: traced neural-network graphs as MLIR (native part)";
  traceirError = nb::steal(
      PyErr_NewExceptionWithDoc("traceir.TraceIRError",
                                "A TraceIR error: bad IR, a failed pass, a "
                                "failed build or run.",
                                PyExc_RuntimeError, nullptr));
  m.attr("TraceIRError") = traceirError;
  m.def("set_num_threads", &api::setNumThreads, nb::arg("n"),
        "Threads of the CPU kernels and their BLAS.");
  m.def("num_threads", &api::numThreads);
  m.def("set_deterministic", &api::setDeterministic, nb::arg("on"),
        "Results that do not depend on the thread count.");
  m.def("deterministic", &api::deterministic);
  m.def("threading_backend", &api::threadingBackend);
  m.def(
      "set_kernel_tier",
      [](const std::string &tier) { return unwrap(api::setKernelTier(tier)); },
      nb::arg("tier"));
  m.def("kernel_tier", &api::kernelTier);
  m.def("gemm_backend", &api::gemmBackend);
  m.def("dnnl_version", &api::dnnlVersion,
        "The oneDNN version of conv2d and the 2-D pools' optimized kernels; "
        "'' in a runtime built without oneDNN.");
  m.def(
      "kernel_ops",
      [](const std::string &device) { return unwrap(api::kernelOps(device)); },
      nb::arg("device"));

  nb::class_<api::Profiler>(m, "Profiler")
      .def(nb::init<>())
      .def("start", &api::Profiler::start)
      .def_prop_ro("active", &api::Profiler::active)
      .def(
          "stop",
          [](api::Profiler &p, const std::string &path) {
            std::string err = p.stop(path);
            if (!err.empty())
              raise(err);
          },
          nb::arg("path") = "")
      .def("trace_json", &api::Profiler::traceJSON)
      .def("summary", &api::Profiler::summary);

  nb::class_<api::Executable>(m, "Executable")
      .def_static(
          "load",
          [](const std::string &path, const std::string &device) {
            return unwrap(api::Executable::load(path, device));
          },
          nb::arg("path"), nb::arg("device") = "",
          "Loads a saved executable (.trx); device \"\" is the one it was "
          "built for.")
      .def("save",
           [](api::Executable &e, const std::string &path) {
             std::string err = e.save(path);
             if (!err.empty())
               raise(err);
           })
      .def("describe", &api::Executable::describe)
      .def_prop_ro("device", &api::Executable::device)
      .def_prop_ro("param_names", &api::Executable::paramNames)
      .def_prop_ro("input_names", &api::Executable::inputNames)
      .def("input_dtype", &api::Executable::inputDType)
      .def("input_shape", &api::Executable::inputShape)
      .def("load_params",
           [](api::Executable &e,
              const std::vector<std::pair<std::string, HostArray>> &params) {
             std::string err = e.loadParams(toTensors(params));
             if (!err.empty())
               raise(err);
           })
      .def(
          "run",
          [](api::Executable &e,
             const std::vector<std::pair<std::string, AnyArray>> &inputs,
             bool outputsOnDevice, bool checkFrees, uint64_t seed,
             api::Profiler *profiler) {
            api::NamedViews views = toViews(inputs);
            api::Result<std::vector<api::OutputTensor>> r;
            {
              // Kernels may run long; other Python threads go on meanwhile
              // (`inputs` keeps the lent memory alive).
              nb::gil_scoped_release release;
              r = e.run(views, outputsOnDevice, checkFrees, seed,
                        profiler && profiler->active() ? profiler : nullptr);
            }
            std::vector<api::OutputTensor> outs = unwrap(std::move(r));
            nb::list result;
            for (api::OutputTensor &t : outs)
              result.append(toArray(t));
            return result;
          },
          nb::arg("inputs"), nb::arg("outputs_on_device") = false,
          nb::arg("check_frees") = false, nb::arg("seed") = 0,
          nb::arg("profiler") = nb::none(),
          "Runs on (name, array) inputs read where they lie (host memory or "
          "this executable's CUDA device, any strides); returns the outputs "
          "(on the device with outputs_on_device=True) as numpy arrays, or "
          "torch tensors for CUDA memory and bfloat16, sharing the memory the "
          "run handed over.")
      .def("read_param",
           [](api::Executable &e, const std::string &name) {
             api::Tensor t = unwrap(e.readParam(name));
             bool bf16 = t.dtype == "BF16";
             return nb::make_tuple(toNumpy(t), bf16);
           })
      .def("memory_report", &api::Executable::memoryReportJSON);
}
