//===- SortLaunch.h - sort and topk's CUDA launch ---------------*- C++ -*-===//
//
// CUDA/Sorting.cpp hands SortRows (Runtime/SortRows.h, what the CPU reads
// too) to CUDA/Sorting.cu with its scratch set.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_RUNTIME_CUDA_SORTLAUNCH_H
#define TRACEIR_RUNTIME_CUDA_SORTLAUNCH_H

#include "TraceIR/Runtime/SortRows.h"

namespace traceir {

/// A thread per row; returns null on success, else the CUDA error's text.
const char *launchSortCUDA(const SortRows &rows);

} // namespace traceir

#endif // TRACEIR_RUNTIME_CUDA_SORTLAUNCH_H
