//===- HostTensor.h - Contiguous host tensors for I/O -----------*- C++ -*-===//

#ifndef TRACEIR_RUNTIME_HOSTTENSOR_H
#define TRACEIR_RUNTIME_HOSTTENSOR_H

#include "TraceIR/Runtime/Tensor.h"

#include "TraceIR/Support/Error.h"

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

/// Resizes `t.data` to `nbytes`; the host refusing (std::bad_alloc) is an
/// error "cannot allocate N bytes on the host for <what>" instead.
Error allocateHostData(HostTensor &t, int64_t nbytes, const std::string &what);

/// Tensors by name, in name order (safetensors files are sorted the same).
using NamedTensors = std::map<std::string, HostTensor>;

/// Reads a safetensors file, validating it as the reference reader
/// (huggingface/safetensors) does: a header length within the 100 MB limit
/// and the file; a header of exactly that many bytes of JSON (trailing
/// spaces allowed), an object starting with '{' and nested no deeper than
/// the format needs; no duplicate names; a string-to-string
/// "__metadata__"; entries of exactly dtype, shape and data_offsets whose
/// size (overflow-checked) matches their span; and spans that tile the data
/// section exactly. Every malformation is an error naming the file, and the
/// tensor or the byte where it applies.
Expected<NamedTensors> readSafetensors(std::string_view path);
/// readSafetensors on a file held in memory; `name` labels the errors.
/// It writes nothing anywhere, which makes it the fuzzer's entry point.
Expected<NamedTensors> readSafetensorsBuffer(std::string_view bytes,
                                             std::string_view name);
/// The bytes writeSafetensors writes: the header padded with spaces to a
/// multiple of 8 (as the reference writer pads), then the data in name
/// order. A tensor whose data does not match its shape and dtype, a
/// non-UTF-8 name or the reserved name "__metadata__" is an error.
Expected<std::string> serializeSafetensors(const NamedTensors &tensors);
/// Writes serializeSafetensors' bytes through a temporary file renamed on
/// success, so a failure never leaves a partial file under `path`.
Error writeSafetensors(std::string_view path, const NamedTensors &tensors);

} // namespace traceir

#endif // TRACEIR_RUNTIME_HOSTTENSOR_H
