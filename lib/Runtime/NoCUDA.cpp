//===- NoCUDA.cpp - The CUDA entry points of a runtime without CUDA -------===//
//
// Compiled instead of CUDA/ in a runtime-only build without CUDA
// (TRACEIR_ENABLE_CUDA=OFF, or no CUDA toolkit at configure time): the few
// functions the rest of the runtime calls on a CUDA device, each failing
// with one error that says why. No kernel is stubbed: the registry's CUDA
// column is empty, and since no CUDA allocator can be made, no CUDA
// executable is created or loaded (and no CUDA profiler timer exists).
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/Allocator.h"
#include "TraceIR/Runtime/CUDA/Backend.h"
#include "TraceIR/Runtime/GeneratedKernels.h"

using namespace traceir;

Error cuda::checkBackend() {
  return makeError("this TraceIR runtime was built without CUDA "
                   "(TRACEIR_ENABLE_CUDA=OFF or no CUDA toolkit at configure "
                   "time); it runs on the CPU only");
}

std::span<const cuda::NamedKernel> cuda::kernelTable() { return {}; }

const char *cuda::cudnnVersion() { return nullptr; }

namespace {
Error noDevice(int index) {
  return makeError("cannot use cuda:" + strCat(index) + ": " +
                   toString(cuda::checkBackend()));
}
} // namespace

Error traceir::selectCUDADevice(int index) { return noDevice(index); }

Expected<std::unique_ptr<Allocator>> traceir::createCUDAAllocator(int index) {
  return noDevice(index);
}

Expected<std::unique_ptr<GpuLibrary>>
traceir::loadGpuLibrary(int device, const std::string &,
                        std::span<const std::string>) {
  return noDevice(device);
}

Expected<std::string> traceir::cudaDeviceChip(int device) {
  return noDevice(device);
}
