//===- GpuLibrary.cpp - A loaded fatbin of generated kernels --------------===//
//
// The CUDA runtime's library API (cudaLibraryLoadData, CUDA 12+) rather than
// the driver's cuModuleLoadData: it loads a fatbin without linking libcuda,
// so binaries still start on machines without a driver, and a cudaKernel_t
// goes to cudaLaunchKernel as it is, on the default stream the runtime's
// own kernels and the profiler's events use.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/Allocator.h"
#include "TraceIR/Runtime/CUDA/Device.h"
#include "TraceIR/Runtime/GeneratedKernels.h"

#include <cuda_runtime.h>

using namespace traceir;

namespace {

class CUDALibrary final : public GpuLibrary {
public:
  CUDALibrary(int device, std::unique_ptr<std::string> binary,
              cudaLibrary_t library, std::vector<cudaKernel_t> kernels,
              std::vector<std::string> names)
      : device(device), binary(std::move(binary)), library(library),
        kernels(std::move(kernels)), names(std::move(names)) {}
  ~CUDALibrary() override { cudaLibraryUnload(library); }

  Error launch(uint32_t index, const uint32_t grid[3], const uint32_t block[3],
               uint32_t sharedBytes, void **args) override {
    if (index >= kernels.size())
      return makeError("no generated kernel #" + strCat(index));
    cudaError_t err = cudaLaunchKernel(
        reinterpret_cast<const void *>(kernels[index]),
        dim3(grid[0], grid[1], grid[2]), dim3(block[0], block[1], block[2]),
        args, sharedBytes, /*stream=*/0);
    if (err != cudaSuccess)
      return cuda::failure("launching generated kernel '" + names[index] +
                               "' on cuda:" + strCat(device),
                           err);
    return Error::success();
  }

  Error copy(void *dst, const void *src, size_t bytes) override {
    cudaError_t err = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice,
                                      /*stream=*/0);
    if (err != cudaSuccess)
      return cuda::failure(
          "copying " + strCat(bytes) +
              " bytes for a generated op on cuda:" + strCat(device),
          err);
    return Error::success();
  }

private:
  int device;
  /// The image stays alive with the library: with lazy loading (the
  /// default since CUDA 12.2) a device may read it at its first launch.
  std::unique_ptr<std::string> binary;
  cudaLibrary_t library;
  std::vector<cudaKernel_t> kernels;
  std::vector<std::string> names;
};

} // namespace

Expected<std::unique_ptr<GpuLibrary>>
traceir::loadGpuLibrary(int device, const std::string &binary,
                        std::span<const std::string> kernelNames) {
  if (Error err = selectCUDADevice(device))
    return err;
  // Owned by the library from here on, at a fixed address.
  auto image = std::make_unique<std::string>(binary);
  cudaLibrary_t library = nullptr;
  if (cudaError_t err = cudaLibraryLoadData(&library, image->data(), nullptr,
                                            nullptr, 0, nullptr, nullptr, 0);
      err != cudaSuccess)
    return cuda::failure(
        "loading the GPU binary (" + strCat(binary.size()) + " bytes)", err);
  std::vector<cudaKernel_t> kernels;
  for (const std::string &name : kernelNames) {
    cudaKernel_t kernel = nullptr;
    if (cudaError_t err = cudaLibraryGetKernel(&kernel, library, name.c_str());
        err != cudaSuccess) {
      cudaLibraryUnload(library);
      return cuda::failure("the GPU binary has no kernel '" + name +
                               "' (was it built from this graph, by "
                               "trace-translate --emit-gpu-binary with the "
                               "same options?)",
                           err);
    }
    kernels.push_back(kernel);
  }
  return std::make_unique<CUDALibrary>(
      device, std::move(image), library, std::move(kernels),
      std::vector<std::string>(kernelNames.begin(), kernelNames.end()));
}

Expected<std::string> traceir::cudaDeviceChip(int device) {
  if (Error err = selectCUDADevice(device))
    return err;
  int major = 0, minor = 0;
  if (cudaError_t err = cudaDeviceGetAttribute(
          &major, cudaDevAttrComputeCapabilityMajor, device);
      err != cudaSuccess)
    return cuda::failure("querying cuda:" + strCat(device), err);
  if (cudaError_t err = cudaDeviceGetAttribute(
          &minor, cudaDevAttrComputeCapabilityMinor, device);
      err != cudaSuccess)
    return cuda::failure("querying cuda:" + strCat(device), err);
  return "sm_" + std::to_string(major) + std::to_string(minor);
}
