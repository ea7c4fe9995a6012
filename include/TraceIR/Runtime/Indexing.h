//===- Indexing.h - One description of gathers and scatters -----*- C++ -*-===//
//
// index_select, gather, index.Tensor, scatter, scatter_add, scatter_reduce
// and index_put as one map: an iteration space, a "base" tensor that index
// tensors address (gather's source, scatter's result) and an "other" side
// (gather's contiguous result, scatter's source). The element functions
// here are compiled for the host and (under nvcc) for CUDA devices: the CPU
// kernels (CPU/Indexing.cpp) run them in a loop and the CUDA kernels
// (CUDA/Indexing.cu) one line per thread, so the CPU tests cover everything
// but the device loop. IndexArgs.cpp builds the maps from a call, for both.
// No LLVM or MLIR here: nvcc compiles it.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_RUNTIME_INDEXING_H
#define TRACEIR_RUNTIME_INDEXING_H

#include "TraceIR/Runtime/Elementwise.h"

#include <cstdint>

namespace traceir {

constexpr int kIxMaxRank = kEwMaxRank;

/// One index tensor: at iteration point p its element is at
/// data + (sum_d p[d] * strides[d]) elements (strides 0 where it
/// broadcasts); it picks an element along a dim of the base tensor of
/// `size` elements `stride` apart. Negative indices count from the end
/// (index, index_put) once the range check (ixIndexInRange) has passed.
struct IxIndex {
  const char *data = nullptr; ///< at its storage offset
  int32_t dtype = I64;
  int64_t strides[kIxMaxRank] = {};
  int64_t size = 0, stride = 0;
};

/// How a scatter combines a source element into its target.
enum class IxReduce : int32_t { Assign, Sum, Prod, Mean, Max, Min };

/// A gather or a scatter over the row-major iteration space `shape`.
struct IxMap {
  int32_t rank = 0;
  int64_t shape[kIxMaxRank] = {};
  /// The base tensor's element of point p: base + (sum_d p[d] *
  /// baseStrides[d] + sum_k index_k(p) * idx[k].stride) elements.
  char *base = nullptr; ///< at its storage offset
  int64_t baseStrides[kIxMaxRank] = {};
  int32_t numIndices = 0;
  IxIndex idx[kIxMaxRank];
  /// Gather: the result, contiguous over the iteration space. Scatter: the
  /// source, at other + sum_d p[d] * otherStrides[d] (0 where it
  /// broadcasts), or `scalar` with the value below.
  char *other = nullptr;
  int64_t otherStrides[kIxMaxRank] = {};
  int32_t dtype = F32; ///< of base and other alike
  int32_t elementSize = 4;
  bool scalar = false;
  double valueD = 0;
  int64_t valueI = 0;
  /// Scatter: the dims one thread walks in order (scatter's dim, index_put's
  /// indexed ones); the others split the space into lines whose targets
  /// are disjoint, so a scatter needs no atomics and combines each target's
  /// sources in row-major order on every device.
  bool serial[kIxMaxRank] = {};
  IxReduce reduce = IxReduce::Assign;
  bool includeSelf = true;
  /// scatter_reduce: one count per base element (base is then contiguous),
  /// zeroed before the scatter; null otherwise.
  int64_t *counts = nullptr;
};

/// Whether index `v` addresses a dim of `size` (from the end too where
/// `negative`).
TRACEIR_HD inline bool ixIndexInRange(int64_t v, int64_t size, bool negative) {
  return v < size && (v >= 0 || (negative && v >= -size));
}

/// The base element (offset in elements) of iteration point `p`.
TRACEIR_HD inline int64_t ixBaseOffset(const IxMap &m, const int64_t *p) {
  int64_t off = 0;
  for (int d = 0; d < m.rank; ++d)
    off += p[d] * m.baseStrides[d];
  for (int k = 0; k < m.numIndices; ++k) {
    const IxIndex &x = m.idx[k];
    int64_t o = 0;
    for (int d = 0; d < m.rank; ++d)
      o += p[d] * x.strides[d];
    int64_t v = ewLoadInt(x.data + o * ewSize(x.dtype), x.dtype);
    off += (v < 0 ? v + x.size : v) * x.stride;
  }
  return off;
}

/// Copies one element of `bytes` bytes.
TRACEIR_HD inline void ixCopyElement(char *dst, const char *src, int bytes) {
  switch (bytes) {
  case 8:
    return ewWrite<uint64_t>(dst, ewRead<uint64_t>(src));
  case 4:
    return ewWrite<uint32_t>(dst, ewRead<uint32_t>(src));
  case 2:
    return ewWrite<uint16_t>(dst, ewRead<uint16_t>(src));
  default:
    return ewWrite<uint8_t>(dst, ewRead<uint8_t>(src));
  }
}

/// Gather: result element `k` (row-major over the space) from the base.
TRACEIR_HD inline void ixGatherElement(const IxMap &m, int64_t k) {
  int64_t p[kIxMaxRank];
  int64_t rest = k;
  for (int d = m.rank - 1; d >= 0; --d) {
    p[d] = rest % m.shape[d];
    rest /= m.shape[d];
  }
  ixCopyElement(m.other + k * m.elementSize,
                m.base + ixBaseOffset(m, p) * m.elementSize, m.elementSize);
}

/// Gather: the result elements of row `r` (a run of the space's last dim;
/// rank >= 1), as ixGatherElement copies each, with the row's point, base
/// offset and index positions found once (the CPU's loop: per element they
/// cost a division per dim, 27 ns an element of swin_t's index_selects).
TRACEIR_HD inline void ixGatherRow(const IxMap &m, int64_t r) {
  const int last = m.rank - 1;
  const int64_t W = m.shape[last];
  int64_t p[kIxMaxRank];
  int64_t rest = r;
  for (int d = last - 1; d >= 0; --d) {
    p[d] = rest % m.shape[d];
    rest /= m.shape[d];
  }
  p[last] = 0;
  int64_t base = 0;
  for (int d = 0; d < last; ++d)
    base += p[d] * m.baseStrides[d];
  int64_t at[kIxMaxRank]; // each index tensor's element for j = 0
  for (int k = 0; k < m.numIndices; ++k) {
    at[k] = 0;
    for (int d = 0; d < last; ++d)
      at[k] += p[d] * m.idx[k].strides[d];
  }
  // An index constant along the row (index_select's on another dim, an
  // index broadcast over the last dim) is read once.
  int varying = 0;
  int vary[kIxMaxRank];
  for (int k = 0; k < m.numIndices; ++k) {
    const IxIndex &x = m.idx[k];
    if (x.strides[last] != 0) {
      vary[varying++] = k;
      continue;
    }
    int64_t v = ewLoadInt(x.data + at[k] * ewSize(x.dtype), x.dtype);
    base += (v < 0 ? v + x.size : v) * x.stride;
  }
  char *out = m.other + r * W * m.elementSize;
  if (varying == 0 && m.baseStrides[last] == 1) {
    const char *from = m.base + base * m.elementSize;
    for (int64_t b = 0, n = W * m.elementSize; b < n; ++b)
      out[b] = from[b];
    return;
  }
  for (int64_t j = 0; j < W; ++j) {
    int64_t off = base + j * m.baseStrides[last];
    for (int i = 0; i < varying; ++i) {
      const IxIndex &x = m.idx[vary[i]];
      int64_t o = at[vary[i]] + j * x.strides[last];
      int64_t v = ewLoadInt(x.data + o * ewSize(x.dtype), x.dtype);
      off += (v < 0 ? v + x.size : v) * x.stride;
    }
    ixCopyElement(out + j * m.elementSize, m.base + off * m.elementSize,
                  m.elementSize);
  }
}

/// The number of lines and of points per line of a scatter.
TRACEIR_HD inline void ixLines(const IxMap &m, int64_t &lines,
                               int64_t &perLine) {
  lines = perLine = 1;
  for (int d = 0; d < m.rank; ++d)
    (m.serial[d] ? perLine : lines) *= m.shape[d];
}

/// Scatters one source element into its target, as `m.reduce` says:
/// integers in int64 (wrapping), floats in double, rounded to the dtype at
/// each step as PyTorch's in-place updates are. amax and amin propagate NaN.
TRACEIR_HD inline void ixScatterPoint(const IxMap &m, const int64_t *p) {
  int64_t t = ixBaseOffset(m, p);
  char *dst = m.base + t * m.elementSize;
  const char *src = nullptr;
  if (!m.scalar) {
    int64_t o = 0;
    for (int d = 0; d < m.rank; ++d)
      o += p[d] * m.otherStrides[d];
    src = m.other + o * m.elementSize;
  }
  if (m.reduce == IxReduce::Assign) {
    if (src)
      ixCopyElement(dst, src, m.elementSize);
    else if (ewIsFloating(m.dtype))
      ewStoreDouble(dst, m.dtype, m.valueD);
    else
      ewStoreInt(dst, m.dtype, m.valueI);
    return;
  }
  // The first source of a target replaces it when include_self is False.
  bool first = m.counts && !m.includeSelf && m.counts[t] == 0;
  if (m.counts)
    ++m.counts[t];
  if (ewIsFloating(m.dtype)) {
    double a = ewLoadDouble(dst, m.dtype), b = ewLoadDouble(src, m.dtype), r;
    switch (first ? IxReduce::Assign : m.reduce) {
    case IxReduce::Sum:
    case IxReduce::Mean:
      r = a + b;
      break;
    case IxReduce::Prod:
      r = a * b;
      break;
    case IxReduce::Max:
      r = a != a || b != b ? a + b : a < b ? b : a;
      break;
    case IxReduce::Min:
      r = a != a || b != b ? a + b : b < a ? b : a;
      break;
    default:
      r = b;
      break;
    }
    ewStoreDouble(dst, m.dtype, r);
    return;
  }
  int64_t a = ewLoadInt(dst, m.dtype), b = ewLoadInt(src, m.dtype), r;
  switch (first ? IxReduce::Assign : m.reduce) {
  case IxReduce::Sum:
  case IxReduce::Mean:
    r = static_cast<int64_t>(static_cast<uint64_t>(a) +
                             static_cast<uint64_t>(b));
    break;
  case IxReduce::Prod:
    r = static_cast<int64_t>(static_cast<uint64_t>(a) *
                             static_cast<uint64_t>(b));
    break;
  case IxReduce::Max:
    r = a < b ? b : a;
    break;
  case IxReduce::Min:
    r = b < a ? b : a;
    break;
  default:
    r = b;
    break;
  }
  ewStoreInt(dst, m.dtype, r);
}

/// Scatters line `line` (row-major over the non-serial dims), its points
/// in row-major order over the serial dims.
TRACEIR_HD inline void ixScatterLine(const IxMap &m, int64_t line,
                                     int64_t perLine) {
  int64_t p[kIxMaxRank];
  int64_t rest = line;
  for (int d = m.rank - 1; d >= 0; --d)
    if (!m.serial[d]) {
      p[d] = rest % m.shape[d];
      rest /= m.shape[d];
    }
  for (int64_t r = 0; r < perLine; ++r) {
    rest = r;
    for (int d = m.rank - 1; d >= 0; --d)
      if (m.serial[d]) {
        p[d] = rest % m.shape[d];
        rest /= m.shape[d];
      }
    ixScatterPoint(m, p);
  }
}

/// scatter_reduce's mean, after the sums: element `i` of the contiguous
/// base divided by its number of terms (floored for integers, as
/// PyTorch's); untouched elements keep self.
TRACEIR_HD inline void ixMeanElement(const IxMap &m, int64_t i) {
  int64_t n = m.counts[i] + (m.includeSelf ? 1 : 0);
  if (m.counts[i] == 0)
    return;
  char *p = m.base + i * m.elementSize;
  if (ewIsFloating(m.dtype)) {
    ewStoreDouble(p, m.dtype, ewLoadDouble(p, m.dtype) / n);
    return;
  }
  int64_t v = ewLoadInt(p, m.dtype), q = v / n;
  if ((v % n != 0) && ((v < 0) != (n < 0)))
    --q;
  ewStoreInt(p, m.dtype, q);
}

} // namespace traceir

#endif // TRACEIR_RUNTIME_INDEXING_H
