//===- TestTensors.h - Host tensors for unit tests --------------*- C++ -*-===//

#ifndef TRACEIR_UNITTESTS_TESTTENSORS_H
#define TRACEIR_UNITTESTS_TESTTENSORS_H

#include "TraceIR/Runtime/HostTensor.h"

#include <cstring>
#include <vector>

/// An f32 host tensor of `shape` holding `values` (row-major).
inline traceir::HostTensor f32(traceir::Shape shape,
                               std::vector<float> values) {
  traceir::HostTensor t;
  t.dtype = traceir::DType::F32;
  t.shape = shape;
  t.data.resize(values.size() * 4);
  std::memcpy(t.data.data(), values.data(), t.data.size());
  return t;
}

/// An f32 host tensor's elements.
inline std::vector<float> values(const traceir::HostTensor &t) {
  return std::vector<float>(t.as<float>(), t.as<float>() + t.numel());
}

#endif // TRACEIR_UNITTESTS_TESTTENSORS_H
