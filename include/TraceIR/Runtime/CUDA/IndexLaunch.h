//===- IndexLaunch.h - Launch descriptions of the CUDA indexing ops -*- C++
//-*-===//
//
// What the host half (CUDA/Indexing.cpp) hands to the device code
// (CUDA/Indexing.cu): Indexing.h's map, run by one thread per gathered
// element or per scatter line, and the range check of one index tensor.
// No LLVM here: nvcc compiles it.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_RUNTIME_CUDA_INDEXLAUNCH_H
#define TRACEIR_RUNTIME_CUDA_INDEXLAUNCH_H

#include "TraceIR/Runtime/DeviceError.h"
#include "TraceIR/Runtime/Indexing.h"
#include "TraceIR/Runtime/MaskedScatter.h"

#include <cstdint>

namespace traceir {

/// The range check of one index tensor (any strides): the smallest
/// row-major position holding an index out of range goes to *firstBad (the
/// error record's `pending`, which a commit then reads: DeviceErrorLaunch.h).
struct IxCheckLaunch {
  const char *data = nullptr; ///< at its storage offset
  int32_t dtype = I64;
  int32_t rank = 0;
  int64_t shape[kIxMaxRank] = {}, strides[kIxMaxRank] = {};
  int64_t numel = 0, size = 0;
  bool negative = false;
  unsigned long long *firstBad = nullptr;
};

/// Each returns null on success, else the CUDA error's text.
const char *launchIndexCheckCUDA(const IxCheckLaunch &launch);
/// Gathers `numel` elements into the map's contiguous result; nothing when
/// `errors` holds an error (the indices may be out of range).
const char *launchGatherCUDA(const IxMap &map, int64_t numel,
                             const DeviceErrorRecord *errors);
/// Scatters every line of the map into its base (the result, already a
/// copy of self, with its counts zeroed); then, for `mean`, divides each of
/// its `baseNumel` elements by its count. Nothing when `errors` holds an
/// error.
const char *launchScatterCUDA(const IxMap &map, bool mean, int64_t baseNumel,
                              const DeviceErrorRecord *errors);

/// masked_scatter splits the result into msChunks(numel) contiguous chunks,
/// a block each: the first launch counts each chunk's Trues and scans the
/// counts into each chunk's first source position (`starts`, msChunks
/// entries) and the total (`starts[msChunks]`), which the host reads back
/// and checks against source's size; the second writes the result, each
/// block scanning its chunk tile by tile from its start.
constexpr int kMsThreads = 256;
inline int64_t msChunks(int64_t numel) {
  int64_t c = (numel + kMsThreads - 1) / kMsThreads;
  return c < 1 ? 1 : c > kMsThreads ? kMsThreads : c;
}
const char *launchMaskedScatterCountCUDA(const MaskedScatterLaunch &launch,
                                         int64_t *starts);
const char *launchMaskedScatterCUDA(const MaskedScatterLaunch &launch,
                                    const int64_t *starts);

} // namespace traceir

#endif // TRACEIR_RUNTIME_CUDA_INDEXLAUNCH_H
