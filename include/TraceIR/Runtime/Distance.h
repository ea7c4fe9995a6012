//===- Distance.h - cdist, pdist, embedding bags, grid sampling -*- C++ -*-===//
//
// The arithmetic of _cdist_forward, _pdist_forward, _embedding_bag and
// grid_sampler_2d as one plain struct per call (a plan, which
// DistanceArgs.h builds from a kernel's call) and one function per result
// element. The CPU kernels (CPU/Distance.cpp) loop over the results calling
// these functions; the CUDA kernels (CUDA/Distance.cu) run the same
// functions, one thread per element, so the CPU tests cover the arithmetic
// of both devices.
//
// Distances accumulate in f64 and round once. The embedding bags sum in f64
// (ATen: in float for f32, f16 and bf16, in double for f64) and round once;
// mean rounds the sum to the weight's dtype before dividing, as ATen's
// output /= bag_size; max compares the weight's values exactly. Grid
// sampling computes its coordinates and weights in ATen's own precision
// (float for f32, f16 and bf16; double for f64), so it picks the input
// elements ATen picks, and sums the taps in f64.
//
// No LLVM here: nvcc compiles it. Offsets and strides count elements.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_RUNTIME_DISTANCE_H
#define TRACEIR_RUNTIME_DISTANCE_H

#include "TraceIR/Runtime/Elementwise.h"

#include <cmath>
#include <cstdint>

namespace traceir {

//===--- _cdist_forward and _pdist_forward --------------------------------===//

/// Which p-norm: ATen's special cases and the general one.
enum class DistNorm : int32_t { Zero, One, Two, Inf, General };

/// x1 [*, P, M] and x2 [*, R, M] (batch dims broadcast, up to kEwMaxRank) to
/// a contiguous [*, P, R]; or, where `pdist`, the rows of one [N, M] input
/// (x1 == x2) to the condensed upper triangle of their distances
/// [N * (N - 1) / 2].
struct DistancePlan {
  const char *x1 = nullptr, *x2 = nullptr; ///< at their first element
  int32_t dtype = F32;                     ///< of both inputs and the result
  int32_t batchRank = 0;
  int64_t batchShape[kEwMaxRank] = {};
  int64_t x1Batch[kEwMaxRank] = {}, x2Batch[kEwMaxRank] = {};
  int64_t P = 0, R = 0, M = 0;
  int64_t x1Rs = 0, x1Cs = 0, x2Rs = 0, x2Cs = 0;
  char *out = nullptr;
  int32_t norm = static_cast<int32_t>(DistNorm::Two);
  double p = 2;
  bool pdist = false;
  int64_t numel = 0;
};

/// The distance of row a (x1's elements from `a`, step `as`) and row b.
TRACEIR_HD inline double rowDistance(const DistancePlan &p, const char *a,
                                     int64_t as, const char *b, int64_t bs) {
  int es = ewSize(p.dtype);
  double acc = 0;
  DistNorm norm = static_cast<DistNorm>(p.norm);
  for (int64_t m = 0; m < p.M; ++m) {
    double d = fabs(ewLoadDouble(a + m * as * es, p.dtype) -
                    ewLoadDouble(b + m * bs * es, p.dtype));
    switch (norm) {
    case DistNorm::Zero:
      acc += d != 0 ? 1.0 : 0.0; // a NaN difference counts, as ATen's
      break;
    case DistNorm::One:
      acc += d;
      break;
    case DistNorm::Two:
      acc += d * d;
      break;
    case DistNorm::Inf:
      // NaN propagates (ATen's max of the differences).
      acc = d > acc || d != d ? d : acc;
      break;
    case DistNorm::General:
      acc += pow(d, p.p);
      break;
    }
  }
  switch (norm) {
  case DistNorm::Two:
    return sqrt(acc);
  case DistNorm::General:
    return pow(acc, 1.0 / p.p);
  default:
    return acc;
  }
}

/// The first condensed index of pdist's row i of n: the pairs (i, j > i)
/// follow those of the rows before it.
TRACEIR_HD inline int64_t pdistRowStart(int64_t i, int64_t n) {
  return i * (2 * n - i - 1) / 2;
}

/// Result element k.
TRACEIR_HD inline void distanceElement(const DistancePlan &p, int64_t k) {
  int es = ewSize(p.dtype);
  const char *a, *b;
  if (p.pdist) {
    // Row i of pair k: a double estimate of the root of pdistRowStart(i) =
    // k, then corrected exactly.
    int64_t n = p.P;
    double nd = static_cast<double>(n);
    double disc = (2 * nd - 1) * (2 * nd - 1) - 8 * static_cast<double>(k);
    int64_t i =
        static_cast<int64_t>(((2 * nd - 1) - sqrt(disc > 0 ? disc : 0)) / 2);
    i = i < 0 ? 0 : i > n - 2 ? n - 2 : i;
    while (i > 0 && pdistRowStart(i, n) > k)
      --i;
    while (i < n - 2 && pdistRowStart(i + 1, n) <= k)
      ++i;
    int64_t j = k - pdistRowStart(i, n) + i + 1;
    a = p.x1 + i * p.x1Rs * es;
    b = p.x1 + j * p.x1Rs * es;
  } else {
    int64_t j = k % p.R, i = k / p.R % p.P, rest = k / (p.R * p.P);
    int64_t o1 = i * p.x1Rs, o2 = j * p.x2Rs;
    for (int d = p.batchRank - 1; d >= 0; --d) {
      int64_t idx = rest % p.batchShape[d];
      rest /= p.batchShape[d];
      o1 += idx * p.x1Batch[d];
      o2 += idx * p.x2Batch[d];
    }
    a = p.x1 + o1 * es;
    b = p.x2 + o2 * es;
  }
  ewStoreDouble(p.out + k * es, p.dtype,
                rowDistance(p, a, p.x1Cs, b, p.pdist ? p.x1Cs : p.x2Cs));
}

//===--- _embedding_bag ---------------------------------------------------===//

/// The bags of `indices` (1-D, N) that `offsets` (1-D) start, reduced over
/// the rows of `weight` [rows, D] they pick. Every result is contiguous;
/// the index results have `indexDtype` (indices' and offsets' common type).
struct EmbeddingBagPlan {
  const char *weight = nullptr;
  int32_t weightDtype = F32;
  int64_t rows = 0, D = 0, wRs = 0, wCs = 0;
  const char *indices = nullptr;
  int32_t indicesDtype = I64;
  int64_t N = 0, indicesStride = 0;
  const char *offsets = nullptr;
  int32_t offsetsDtype = I64;
  int64_t numOffsets = 0, offsetsStride = 0;
  const char *weights = nullptr; ///< per_sample_weights, or null
  int32_t weightsDtype = F32;
  int64_t weightsStride = 0;
  int64_t numBags = 0;
  int32_t mode = 0;        ///< 0 sum, 1 mean, 2 max
  int64_t paddingIdx = -1; ///< negative: none
  /// The last bag ends at offsets[numBags] (ATen's fast sum path with
  /// include_last_offset), not at N.
  bool lastEndsAtOffset = false;
  char *out = nullptr;        ///< [numBags, D], the weight's dtype
  char *offset2bag = nullptr; ///< [N], or null where ATen leaves it empty
  char *bagSize = nullptr;    ///< [numSizes]
  /// bag_size's length: numBags, or numOffsets (_embedding_bag_forward_only
  /// with include_last_offset, whose extra element is 0).
  int64_t numSizes = 0;
  char *maxIndices = nullptr; ///< [numBags, D] (max) or [numBags]
  int32_t indexDtype = I64;
};

TRACEIR_HD inline int64_t bagOffset(const EmbeddingBagPlan &p, int64_t b) {
  return ewLoadInt(p.offsets + b * p.offsetsStride * ewSize(p.offsetsDtype),
                   p.offsetsDtype);
}

TRACEIR_HD inline int64_t bagIndex(const EmbeddingBagPlan &p, int64_t i) {
  return ewLoadInt(p.indices + i * p.indicesStride * ewSize(p.indicesDtype),
                   p.indicesDtype);
}

/// Whether check position k is bad: for k < numOffsets, offsets[k] outside
/// [offsets[k - 1] (0 for k = 0, which must be 0), N]; past them, index
/// k - numOffsets outside [0, rows).
TRACEIR_HD inline bool embeddingBagFault(const EmbeddingBagPlan &p, int64_t k) {
  if (k < p.numOffsets) {
    int64_t o = bagOffset(p, k);
    if (k == 0)
      return o != 0;
    return o < bagOffset(p, k - 1) || o > p.N;
  }
  int64_t idx = bagIndex(p, k - p.numOffsets);
  return idx < 0 || idx >= p.rows;
}

/// Bag b's positions [start, end) (checked offsets); the last bag runs to N
/// (or to offsets[numBags] where lastEndsAtOffset). `sizeEnd` is where
/// ATen's bag_size counts it to (always N for the last bag).
TRACEIR_HD inline void bagRange(const EmbeddingBagPlan &p, int64_t b,
                                int64_t &start, int64_t &end,
                                int64_t &sizeEnd) {
  start = bagOffset(p, b);
  bool last = b + 1 >= p.numBags;
  sizeEnd = last ? p.N : bagOffset(p, b + 1);
  end = last && p.lastEndsAtOffset ? bagOffset(p, b + 1) : sizeEnd;
}

/// output[b, d] (and max_indices[b, d] for max) for element k = b * D + d.
TRACEIR_HD inline void embeddingBagElement(const EmbeddingBagPlan &p,
                                           int64_t k) {
  int64_t b = k / p.D, d = k % p.D, start, end, sizeEnd;
  bagRange(p, b, start, end, sizeEnd);
  int wes = ewSize(p.weightDtype);
  double acc = 0;
  int64_t count = 0, argmax = 0;
  for (int64_t i = start; i < end; ++i) {
    int64_t idx = bagIndex(p, i);
    if (idx == p.paddingIdx || idx < 0 || idx >= p.rows)
      continue;
    double v =
        ewLoadDouble(p.weight + (idx * p.wRs + d * p.wCs) * wes, p.weightDtype);
    if (p.mode == 2) {
      // ATen's: the first row, then any greater one.
      if (count == 0 || v > acc) {
        acc = v;
        argmax = idx;
      }
    } else {
      if (p.weights)
        v *= ewLoadDouble(p.weights +
                              i * p.weightsStride * ewSize(p.weightsDtype),
                          p.weightsDtype);
      acc += v;
    }
    ++count;
  }
  char *out = p.out + k * wes;
  if (p.mode == 1) {
    // ATen rounds the sum to the dtype and divides by max(bag_size, 1).
    ewStoreDouble(out, p.weightDtype, acc);
    acc = ewLoadDouble(out, p.weightDtype) /
          static_cast<double>(count > 0 ? count : 1);
  }
  ewStoreDouble(out, p.weightDtype, acc);
  if (p.mode == 2)
    ewStoreInt(p.maxIndices + k * ewSize(p.indexDtype), p.indexDtype, argmax);
}

/// bag_size[b] (the bag's positions less its padding_idx ones; 0 for sum,
/// as ATen zeroes it) and, for sum and mean, max_indices[b] (bag_size's
/// copy).
TRACEIR_HD inline void embeddingBagSizeElement(const EmbeddingBagPlan &p,
                                               int64_t b) {
  int es = ewSize(p.indexDtype);
  if (b >= p.numBags) {
    ewStoreInt(p.bagSize + b * es, p.indexDtype, 0);
    return;
  }
  int64_t start, end, sizeEnd, size = 0;
  bagRange(p, b, start, end, sizeEnd);
  if (p.mode != 0) {
    size = sizeEnd - start;
    if (p.paddingIdx >= 0)
      for (int64_t i = start; i < sizeEnd; ++i)
        size -= bagIndex(p, i) == p.paddingIdx ? 1 : 0;
  }
  ewStoreInt(p.bagSize + b * es, p.indexDtype, size);
  if (p.mode != 2)
    ewStoreInt(p.maxIndices + b * es, p.indexDtype, size);
}

/// offset2bag[i]: the bag position i falls in, the number of bags starting
/// at or before it less one (ATen's cumulative sum of bag starts).
TRACEIR_HD inline void embeddingBagOffset2bagElement(const EmbeddingBagPlan &p,
                                                     int64_t i) {
  int64_t lo = 0, hi = p.numBags; // bags [0, lo) start at or before i
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (bagOffset(p, mid) <= i)
      lo = mid + 1;
    else
      hi = mid;
  }
  ewStoreInt(p.offset2bag + i * ewSize(p.indexDtype), p.indexDtype, lo - 1);
}

//===--- grid_sampler_2d --------------------------------------------------===//

/// input [N, C, H, W] sampled at grid [N, OH, OW, 2] (x, y in [-1, 1]) into
/// a contiguous [N, C, OH, OW].
struct GridSamplePlan {
  const char *in = nullptr;
  int64_t inStrides[4] = {};
  const char *grid = nullptr;
  int64_t gridStrides[4] = {};
  int32_t dtype = F32; ///< of the input, the grid and the result
  char *out = nullptr;
  int64_t N = 0, C = 0, H = 0, W = 0, OH = 0, OW = 0;
  int32_t interpolation = 0; ///< 0 bilinear, 1 nearest, 2 bicubic
  int32_t padding = 0;       ///< 0 zeros, 1 border, 2 reflection
  bool alignCorners = false;
  bool f64 = false;

  int64_t numel() const { return N * C * OH * OW; }
};

/// The float and double math grid sampling computes in (ATen's scalar_t).
TRACEIR_HD inline float gridFloor(float v) { return floorf(v); }
TRACEIR_HD inline double gridFloor(double v) { return floor(v); }
TRACEIR_HD inline float gridAbs(float v) { return fabsf(v); }
TRACEIR_HD inline double gridAbs(double v) { return fabs(v); }
TRACEIR_HD inline float gridFmod(float a, float b) { return fmodf(a, b); }
TRACEIR_HD inline double gridFmod(double a, double b) { return fmod(a, b); }
TRACEIR_HD inline float gridRound(float v) { return nearbyintf(v); }
TRACEIR_HD inline double gridRound(double v) { return nearbyint(v); }

/// A coordinate as an index of a dim of `size`: truncated, as ATen's, but
/// one far outside (or NaN) reads as just outside, so that no cast
/// overflows.
template <typename T> TRACEIR_HD inline int64_t gridIndex(T v, int64_t size) {
  if (!(v >= static_cast<T>(-4)))
    return -4;
  if (v > static_cast<T>(size + 4))
    return size + 4;
  return static_cast<int64_t>(v);
}

/// ATen's grid_sampler_unnormalize: [-1, 1] to [0, size - 1] (align
/// corners) or [-0.5, size - 0.5].
template <typename T>
TRACEIR_HD inline T gridUnnormalize(T coord, int64_t size, bool alignCorners) {
  if (alignCorners)
    return ((coord + 1) / 2) * static_cast<T>(size - 1);
  return ((coord + 1) * static_cast<T>(size) - 1) / 2;
}

/// ATen's clip_coordinates, std::min(limit - 1, std::max(in, 0)) (a NaN
/// `in` gives limit - 1, as there).
template <typename T> TRACEIR_HD inline T gridClip(T in, int64_t limit) {
  T hi = static_cast<T>(limit - 1);
  T v = in < static_cast<T>(0) ? static_cast<T>(0) : in;
  return v < hi ? v : hi;
}

/// ATen's reflect_coordinates over [twiceLow / 2, twiceHigh / 2].
template <typename T>
TRACEIR_HD inline T gridReflect(T in, int64_t twiceLow, int64_t twiceHigh) {
  if (twiceLow == twiceHigh)
    return static_cast<T>(0);
  T lo = static_cast<T>(twiceLow) / 2;
  T span = static_cast<T>(twiceHigh - twiceLow) / 2;
  in = gridAbs(in - lo);
  T extra = gridFmod(in, span);
  // ATen's int flips; its parity, without overflowing for far coordinates.
  T flips = gridFloor(in / span);
  bool even = gridFmod(flips, static_cast<T>(2)) == static_cast<T>(0);
  return even ? extra + lo : span - extra + lo;
}

/// ATen's compute_coordinates: the padding mode's coordinate.
template <typename T>
TRACEIR_HD inline T gridPad(T coord, int64_t size, int32_t padding,
                            bool alignCorners) {
  if (padding == 1)
    return gridClip(coord, size);
  if (padding == 2) {
    coord = alignCorners ? gridReflect(coord, 0, 2 * (size - 1))
                         : gridReflect(coord, -1, 2 * size - 1);
    return gridClip(coord, size);
  }
  return coord;
}

/// Input (n, c, y, x) as f64; 0 outside the input.
TRACEIR_HD inline double gridLoad(const GridSamplePlan &p, int64_t n, int64_t c,
                                  int64_t y, int64_t x) {
  if (y < 0 || y >= p.H || x < 0 || x >= p.W)
    return 0;
  int64_t off = n * p.inStrides[0] + c * p.inStrides[1] + y * p.inStrides[2] +
                x * p.inStrides[3];
  return ewLoadDouble(p.in + off * ewSize(p.dtype), p.dtype);
}

/// v += w * input (n, c, y, x) where (y, x) is inside the input.
TRACEIR_HD inline void gridTap(const GridSamplePlan &p, int64_t n, int64_t c,
                               int64_t y, int64_t x, double w, double &v) {
  if (y >= 0 && y < p.H && x >= 0 && x < p.W)
    v += w * gridLoad(p, n, c, y, x);
}

/// ATen's cubic convolution coefficients (A = -0.75) at fraction t.
template <typename T> TRACEIR_HD inline T cubicConv1(T x, T A) {
  return ((A + 2) * x - (A + 3)) * x * x + 1;
}
template <typename T> TRACEIR_HD inline T cubicConv2(T x, T A) {
  return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
}
template <typename T> TRACEIR_HD inline void cubicCoefficients(T c[4], T t) {
  T A = static_cast<T>(-0.75);
  c[0] = cubicConv2<T>(t + 1, A);
  c[1] = cubicConv1<T>(t, A);
  T t2 = 1 - t;
  c[2] = cubicConv1<T>(t2, A);
  c[3] = cubicConv2<T>(t2 + 1, A);
}

template <typename T>
TRACEIR_HD inline void gridSampleElementIn(const GridSamplePlan &p, int64_t k) {
  int64_t ow = k % p.OW, oh = k / p.OW % p.OH, c = k / (p.OW * p.OH) % p.C,
          n = k / (p.OW * p.OH * p.C);
  int es = ewSize(p.dtype);
  const char *g = p.grid + (n * p.gridStrides[0] + oh * p.gridStrides[1] +
                            ow * p.gridStrides[2]) *
                               es;
  T gx = static_cast<T>(ewLoadDouble(g, p.dtype));
  T gy = static_cast<T>(ewLoadDouble(g + p.gridStrides[3] * es, p.dtype));
  double v = 0;
  if (p.interpolation == 2) {
    // Bicubic: the 4 x 4 taps around the unpadded coordinate, each tap's
    // coordinate padded on its own (ATen's get_value_bounded).
    T ix = gridUnnormalize(gx, p.W, p.alignCorners);
    T iy = gridUnnormalize(gy, p.H, p.alignCorners);
    T x0 = gridFloor(ix), y0 = gridFloor(iy);
    T cx[4], cy[4];
    cubicCoefficients<T>(cx, ix - x0);
    cubicCoefficients<T>(cy, iy - y0);
    for (int i = 0; i < 4; ++i) {
      T y = gridPad<T>(y0 - 1 + static_cast<T>(i), p.H, p.padding,
                       p.alignCorners);
      double row = 0;
      for (int j = 0; j < 4; ++j) {
        T x = gridPad<T>(x0 - 1 + static_cast<T>(j), p.W, p.padding,
                         p.alignCorners);
        // ATen truncates the padded coordinate.
        double tap = gridLoad(p, n, c, gridIndex(y, p.H), gridIndex(x, p.W));
        row += static_cast<double>(cx[j]) * tap;
      }
      v += static_cast<double>(cy[i]) * row;
    }
  } else {
    T ix = gridPad<T>(gridUnnormalize(gx, p.W, p.alignCorners), p.W, p.padding,
                      p.alignCorners);
    T iy = gridPad<T>(gridUnnormalize(gy, p.H, p.alignCorners), p.H, p.padding,
                      p.alignCorners);
    if (p.interpolation == 1) {
      // Nearest: round half to even, as nearbyint.
      v = gridLoad(p, n, c, gridIndex(gridRound(iy), p.H),
                   gridIndex(gridRound(ix), p.W));
    } else {
      T x0 = gridFloor(ix), y0 = gridFloor(iy);
      T x1 = x0 + 1, y1 = y0 + 1;
      T nw = (x1 - ix) * (y1 - iy), ne = (ix - x0) * (y1 - iy);
      T sw = (x1 - ix) * (iy - y0), se = (ix - x0) * (iy - y0);
      int64_t X0 = gridIndex(x0, p.W), Y0 = gridIndex(y0, p.H);
      // Only the corners inside the input add, as ATen's.
      gridTap(p, n, c, Y0, X0, static_cast<double>(nw), v);
      gridTap(p, n, c, Y0, X0 + 1, static_cast<double>(ne), v);
      gridTap(p, n, c, Y0 + 1, X0, static_cast<double>(sw), v);
      gridTap(p, n, c, Y0 + 1, X0 + 1, static_cast<double>(se), v);
    }
  }
  ewStoreDouble(p.out + k * es, p.dtype, v);
}

TRACEIR_HD inline void gridSampleElement(const GridSamplePlan &p, int64_t k) {
  if (p.f64)
    gridSampleElementIn<double>(p, k);
  else
    gridSampleElementIn<float>(p, k);
}

} // namespace traceir

#endif // TRACEIR_RUNTIME_DISTANCE_H
