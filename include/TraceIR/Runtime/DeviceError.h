//===- DeviceError.h - Errors kernels find in their data --------*- C++ -*-===//
//
// What a kernel can find wrong only by reading its data (an index out of
// range, a class target out of bounds, an integer division by zero), as one
// record and one message per kind. The CPU kernels fail their call with
// deviceErrorMessage at once; the CUDA kernels cannot without waiting for
// the device, so they write the run's first such error into a record in
// device memory (the CUDA allocator's, one per executable, cleared at the
// start of each run) and go on without reading out of bounds; the executor
// reads the record once at the end of the run, or when a call waits anyway,
// and fails the run naming the op, as PyTorch's device asserts do. No
// CUDA here: nvcc and the host compiler both read it.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_RUNTIME_DEVICEERROR_H
#define TRACEIR_RUNTIME_DEVICEERROR_H

#include <cstdint>
#include <string>

namespace traceir {

/// The kinds of error; each names its own `limit` (see deviceErrorMessage).
enum class DeviceErrorCode : int32_t {
  None = 0,
  /// An index of gather, index_select, index, scatter*, index_put: `value`
  /// out of [-limit, limit) or [0, limit), for dimension `dim`.
  IndexRange,
  /// embedding: `value` out of [0, limit) rows.
  EmbeddingIndex,
  /// embedding_dense_backward: `value` out of [0, limit) weights.
  EmbeddingBackwardIndex,
  /// max_pool2d_with_indices_backward: `value` out of a plane of `limit`.
  PoolIndex,
  /// nll_loss, cross_entropy, nll_loss_backward: class `value` out of
  /// [0, C) (and not ignore_index).
  Target,
  /// _embedding_bag: offsets[position] is `value`, which does not rise
  /// from 0 to at most `limit` indices.
  EmbeddingBagOffset,
  /// _embedding_bag: indices[position] is `value`, out of [0, limit) rows.
  EmbeddingBagIndex,
  /// An integer division (div, floor_divide, fmod, remainder) by zero.
  IntegerDivisionByZero,
};

/// The run's first error found on a device. `code` is claimed first (0 to
/// nonzero, once), then the rest is written by the one claimer; the host
/// reads it only after the device's work is done. `pending` is the
/// smallest bad position of the check in flight (~0: none), turned into an
/// error by the commit that follows the check, so that the error reported
/// is the first in row-major order, as on the CPU.
struct DeviceErrorRecord {
  int32_t code = 0; ///< a DeviceErrorCode
  int32_t op = -1;  ///< the failing call's Executable::ops index
  int64_t value = 0, position = 0, limit = 0, dim = 0;
  unsigned long long pending = ~0ull;
};

/// Where a call's kernels write: the executable's record (null on the CPU)
/// and the call's op index.
struct DeviceErrorSlot {
  DeviceErrorRecord *record = nullptr;
  int32_t op = -1;
};

/// The message of `r` (without the op's name, which the executor adds), in
/// PyTorch's words where it has them: the CPU kernels fail with it too.
std::string deviceErrorMessage(const DeviceErrorRecord &r);

/// A record of one error, for the CPU kernels' messages.
inline DeviceErrorRecord deviceError(DeviceErrorCode code, int64_t value,
                                     int64_t limit, int64_t position = 0,
                                     int64_t dim = 0) {
  DeviceErrorRecord r;
  r.code = static_cast<int32_t>(code);
  r.value = value;
  r.limit = limit;
  r.position = position;
  r.dim = dim;
  return r;
}

} // namespace traceir

#endif // TRACEIR_RUNTIME_DEVICEERROR_H
