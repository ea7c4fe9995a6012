//===- TestTensors.h - Host tensors for unit tests --------------*- C++ -*-===//

#ifndef TRACEIR_UNITTESTS_TESTTENSORS_H
#define TRACEIR_UNITTESTS_TESTTENSORS_H

#include "TraceIR/Runtime/HostTensor.h"

#include <cstring>
#include <vector>

/// A host tensor of `dtype` and `shape` holding `values` (row-major).
template <typename T>
traceir::HostTensor hostTensor(traceir::DType dtype, traceir::Shape shape,
                               const std::vector<T> &values) {
  traceir::HostTensor t;
  t.dtype = dtype;
  t.shape = shape;
  t.data.resize(values.size() * sizeof(T));
  std::memcpy(t.data.data(), values.data(), t.data.size());
  return t;
}
inline traceir::HostTensor f32(traceir::Shape shape,
                               std::vector<float> values) {
  return hostTensor(traceir::DType::F32, shape, values);
}
inline traceir::HostTensor i64(traceir::Shape shape,
                               std::vector<int64_t> values) {
  return hostTensor(traceir::DType::I64, shape, values);
}

/// An f32 host tensor's elements.
inline std::vector<float> values(const traceir::HostTensor &t) {
  return std::vector<float>(t.as<float>(), t.as<float>() + t.numel());
}

#endif // TRACEIR_UNITTESTS_TESTTENSORS_H
