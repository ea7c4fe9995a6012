//===- DeviceError.cpp - The messages of errors kernels find --------------===//
//
// One message per DeviceErrorCode, shared by the CPU kernels (which fail
// their call with it) and the executor decoding a CUDA device's record, so
// that both devices fail a run with the same words.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/DeviceError.h"

#include "TraceIR/Support/Error.h"

using namespace traceir;

std::string traceir::deviceErrorMessage(const DeviceErrorRecord &r) {
  switch (static_cast<DeviceErrorCode>(r.code)) {
  case DeviceErrorCode::None:
    return "no error";
  case DeviceErrorCode::IndexRange:
    return "index " + strCat(r.value) + " is out of bounds for dimension " +
           strCat(r.dim) + " with size " + strCat(r.limit);
  case DeviceErrorCode::EmbeddingIndex:
    return "index " + strCat(r.value) + " is out of range for " +
           strCat(r.limit) + " embeddings";
  case DeviceErrorCode::EmbeddingBackwardIndex:
    return "index " + strCat(r.value) +
           " is out of range for num_weights=" + strCat(r.limit);
  case DeviceErrorCode::PoolIndex:
    return "max_pool2d_with_indices_backward: index " + strCat(r.value) +
           " is out of range for an input plane of " + strCat(r.limit) +
           " elements";
  case DeviceErrorCode::Target:
    return "Target " + strCat(r.value) + " is out of bounds.";
  case DeviceErrorCode::EmbeddingBagOffset:
    return "_embedding_bag: offsets must rise from 0 to at most the " +
           strCat(r.limit) + " indices, but offsets[" + strCat(r.position) +
           "] is " + strCat(r.value) +
           (r.position == 0 ? " (offsets[0] has to be 0)" : "");
  case DeviceErrorCode::EmbeddingBagIndex:
    return "_embedding_bag: index " + strCat(r.value) + " at position " +
           strCat(r.position) + " is out of range for a weight of " +
           strCat(r.limit) + " rows (expected 0 <= idx < num_embeddings)";
  case DeviceErrorCode::IntegerDivisionByZero:
    return "integer division by zero";
  }
  // A record from a device with a newer runtime, or memory overwritten.
  return "a kernel reported an unknown error (code " + strCat(r.code) + ")";
}
