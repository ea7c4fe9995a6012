//===- Tensor.h - Runtime tensors, storages and devices ---------*- C++ -*-===//
//
// The runtime's data model, free of MLIR: a Storage is one allocation on one
// device; a Tensor is a strided view into a storage (PyTorch's model), so
// views share storage and frees release storages.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_RUNTIME_TENSOR_H
#define TRACEIR_RUNTIME_TENSOR_H

#include "TraceIR/Support/Error.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace traceir {

/// Element types the runtime stores (PyTorch dtypes).
enum class DType : uint8_t { F32, F64, F16, BF16, I64, I32, I16, I8, U8, Bool };

size_t dtypeSize(DType dtype);
/// f32, f64, f16 or bf16.
bool isFloatingDType(DType dtype);
const char *dtypeName(DType dtype);            ///< "f32", "i64", ...
const char *dtypeSafetensorsName(DType dtype); ///< "F32", "I64", ...
std::optional<DType> dtypeFromSafetensors(std::string_view name);

/// A device: the CPU, or a CUDA device by index.
struct Device {
  enum class Kind : uint8_t { CPU, CUDA } kind = Kind::CPU;
  int index = 0;

  static std::optional<Device>
  parse(std::string_view text); ///< cpu, cuda, cuda:1
  std::string str() const;
  bool operator==(const Device &o) const {
    return kind == o.kind && index == o.index;
  }
};

/// One allocation. `freed` is set by a free; with free checking on the
/// memory is also poisoned, and reading a freed storage is an error.
struct Storage {
  void *data = nullptr;
  int64_t nbytes = 0;
  Device device;
  bool freed = false;
  /// Whether the run allocated it (as opposed to params and inputs).
  bool ownedByRun = false;
  /// Whether the memory went back to the allocator.
  bool released = false;
  /// Params and constants: owned by the Executable, alive across runs.
  bool persistent = false;
  /// The caller's memory, read where it lies (an input no op of the run
  /// writes): never written, poisoned or released by the run.
  bool borrowed = false;
  /// In the run's arena (a planned graph): never released on its own.
  bool inArena = false;
  /// Copies made by view-or-copy ops (reshape of a non-viewable tensor,
  /// contiguous) share this storage's lifetime: freeing it frees them.
  Storage *tiedNext = nullptr;
};

using Shape = std::vector<int64_t>;

/// A strided view of a storage. Offsets and strides count elements.
struct Tensor {
  Storage *storage = nullptr;
  DType dtype = DType::F32;
  Shape shape;
  Shape strides;
  int64_t offset = 0;

  int64_t rank() const { return shape.size(); }
  int64_t numel() const;
  int64_t nbytes() const;
  bool isContiguous() const;
  char *bytes() const {
    return static_cast<char *>(storage->data) + offset * dtypeSize(dtype);
  }
  template <typename T> T *data() const {
    return reinterpret_cast<T *>(bytes());
  }

  static Shape contiguousStrides(std::span<const int64_t> shape);
};

std::string shapeToString(std::span<const int64_t> shape);
/// Whether a tensor of shape `from` broadcasts to `to` (PyTorch's rules,
/// one way: `to` is the result). Kernels that read an operand through the
/// strides of its broadcast check this first: type inference guarantees it
/// in a verified graph, a saved executable may say anything.
bool broadcastsTo(std::span<const int64_t> from, std::span<const int64_t> to);

} // namespace traceir

#endif // TRACEIR_RUNTIME_TENSOR_H
