//===- HostTensor.h - Contiguous host tensors for I/O -----------*- C++ -*-===//

#ifndef TRACEIR_RUNTIME_HOSTTENSOR_H
#define TRACEIR_RUNTIME_HOSTTENSOR_H

#include "TraceIR/Runtime/Tensor.h"

#include "llvm/Support/Error.h"

#include <map>
#include <string>
#include <vector>

namespace traceir {

/// A contiguous tensor in host memory: what goes in and out of a run, and
/// what safetensors files hold.
struct HostTensor {
  DType dtype = DType::F32;
  Shape shape;
  std::vector<char> data;

  int64_t numel() const;
  template <typename T> T *as() { return reinterpret_cast<T *>(data.data()); }
  template <typename T> const T *as() const {
    return reinterpret_cast<const T *>(data.data());
  }
};

/// Tensors by name, in name order (safetensors files are sorted the same).
using NamedTensors = std::map<std::string, HostTensor>;

/// Reads a safetensors file. Every malformation (short file, header length
/// past the end, invalid JSON, unknown dtype, offsets out of range or not
/// matching shape x dtype) is an error naming the file and the tensor.
llvm::Expected<NamedTensors> readSafetensors(llvm::StringRef path);
/// Writes a safetensors file through a temporary file renamed on success,
/// so a failure never leaves a partial file under `path`.
llvm::Error writeSafetensors(llvm::StringRef path, const NamedTensors &tensors);

} // namespace traceir

#endif // TRACEIR_RUNTIME_HOSTTENSOR_H
