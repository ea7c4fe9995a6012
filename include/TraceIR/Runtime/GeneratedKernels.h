//===- GeneratedKernels.h - Compiler-generated kernels ----------*- C++ -*-===//
//
// The runtime can run an op with the kernels --trace-lower-to-gpu generated
// for it instead of its own (trace-run --gpu-binary). What it needs is the
// op's host code reduced to data, a GeneratedOp: which temporaries to
// allocate and which kernels to launch with which grid, block and
// arguments. The compiler side (Conversion/KernelPlan.h) reads that from
// the memref-level host function of the op; the runtime side here turns it
// into cudaLaunchKernel calls. Nothing here includes MLIR, and the argument
// packing is plain host code, tested on machines without a GPU.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_RUNTIME_GENERATEDKERNELS_H
#define TRACEIR_RUNTIME_GENERATEDKERNELS_H

#include "TraceIR/Runtime/Tensor.h"

#include "TraceIR/Support/Error.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace traceir {

/// One argument of a generated kernel, as its LLVM signature takes it:
/// MLIR passes a memref as (allocated pointer, aligned pointer, offset,
/// sizes..., strides...), an index as i64, a float as itself.
struct KernelArg {
  enum class Kind : uint8_t { Pointer, I64, I32, F32, F64 };
  Kind kind = Kind::I64;
  /// Kind::Pointer: the buffer whose address is passed (see GeneratedOp).
  int32_t buffer = -1;
  int64_t i = 0; ///< I64, I32
  double f = 0;  ///< F32, F64
};

struct KernelLaunch {
  uint32_t kernel = 0; ///< index into GeneratedKernels::kernelNames
  uint32_t grid[3] = {1, 1, 1};
  uint32_t block[3] = {1, 1, 1};
  uint32_t dynamicSharedBytes = 0;
  uint32_t argBegin = 0, numArgs = 0; ///< into GeneratedOp::args
};

/// A copy between two buffers on the device (what bufferization leaves when
/// an op's result is a reshaped temporary): `bytes` from byte `srcOffset`
/// of buffer `src` to byte `dstOffset` of buffer `dst`, both contiguous.
struct DeviceCopy {
  int32_t src = -1, dst = -1;
  int64_t srcOffset = 0, dstOffset = 0, bytes = 0;
};

/// One step of an op's host code, in program order: a launch or a copy.
struct GeneratedStep {
  enum class Kind : uint8_t { Launch, Copy };
  Kind kind = Kind::Launch;
  uint32_t index = 0; ///< into GeneratedOp::launches or ::copies
};

/// The host code of one op's generated kernels. Buffers are numbered: the
/// op's tensor operands first (contiguous, in operand order), then its
/// results, then temporaries of tempBytes[i] bytes.
struct GeneratedOp {
  std::string function; ///< the host function it came from, for messages
  uint32_t numOperands = 0, numResults = 0;
  std::vector<int64_t> tempBytes;
  std::vector<KernelLaunch> launches;
  std::vector<DeviceCopy> copies;
  std::vector<GeneratedStep> steps;
  std::vector<KernelArg> args;

  size_t numBuffers() const {
    return numOperands + numResults + tempBytes.size();
  }
};

/// Everything trace-run --gpu-binary needs for one graph.
struct GeneratedKernels {
  std::string binary; ///< the fatbin (cubin + PTX) holding every kernel
  std::string chip;   ///< what it was compiled for, e.g. sm_90
  std::vector<std::string> kernelNames;
  /// Indexed by the op's position among the graph's pyops (as
  /// --trace-split-ops counts); nullopt where the runtime keeps its kernel.
  std::vector<std::optional<GeneratedOp>> ops;
  /// Why each op without generated kernels has none, for the user.
  std::vector<std::string> notCovered;

  size_t numCovered() const {
    size_t n = 0;
    for (const auto &op : ops)
      n += op.has_value();
    return n;
  }
};

/// A launch's arguments as cudaLaunchKernel takes them: `pointers[i]`
/// points at argument i's value, which lives in `values` (8 bytes each,
/// enough for any kind; a 4-byte kind sits in its slot's first bytes).
struct PackedKernelArgs {
  std::vector<uint64_t> values;
  std::vector<void *> pointers;
};

/// Packs `launch`'s arguments with `buffers[b]` the address of buffer b.
/// Fails on a buffer index out of range (a malformed plan).
Error packKernelArgs(const GeneratedOp &op, const KernelLaunch &launch,
                     std::span<void *const> buffers, PackedKernelArgs &out);

/// A loaded fatbin with its kernels resolved (CUDA; see CUDA/).
class GpuLibrary {
public:
  virtual ~GpuLibrary();
  /// Launches kernel `index` (of the names it was loaded with) on the
  /// current device's default stream, where the runtime's own kernels run.
  virtual Error launch(uint32_t index, const uint32_t grid[3],
                       const uint32_t block[3], uint32_t sharedBytes,
                       void **args) = 0;
  /// Copies `bytes` between device buffers, ordered with the launches.
  virtual Error copy(void *dst, const void *src, size_t bytes) = 0;
};

/// Loads `binary` on CUDA device `device` and looks up every kernel of
/// `kernelNames`; a missing one is an error naming it (a fatbin built from
/// another graph or with other options).
Expected<std::unique_ptr<GpuLibrary>>
loadGpuLibrary(int device, const std::string &binary,
               std::span<const std::string> kernelNames);

/// The NVPTX chip name of CUDA device `device` ("sm_90" for compute
/// capability 9.0), to compile generated kernels for it.
Expected<std::string> cudaDeviceChip(int device);

/// Whether `bytes` starts like a CUDA fatbin (its magic number), so a wrong
/// file is named before the driver rejects it with a bare error code.
inline bool looksLikeFatbin(std::string_view bytes) {
  // The fatbin header starts with the 32-bit magic 0xBA55ED50 (little
  // endian on every host CUDA supports).
  return bytes.size() >= 4 && static_cast<unsigned char>(bytes[0]) == 0x50 &&
         static_cast<unsigned char>(bytes[1]) == 0xed &&
         static_cast<unsigned char>(bytes[2]) == 0x55 &&
         static_cast<unsigned char>(bytes[3]) == 0xba;
}

} // namespace traceir

#endif // TRACEIR_RUNTIME_GENERATEDKERNELS_H
