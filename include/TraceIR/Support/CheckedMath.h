//===- CheckedMath.h - Overflow-checked size arithmetic ---------*- C++ -*-===//
//
// Every size, stride, offset and window computation in TraceIR goes through
// these helpers, so a hostile shape or scalar (a dim of 2^62, a padding of
// 2^63 - 1) yields "does not fit" instead of a wrapped value that later
// reads out of bounds. They are header-only and use the C++ standard
// library and compiler builtins alone, so the compiler, the runtime and the
// CUDA host code share them.
//
// The tensor size limit is stated once here: the trace dialect's verifier
// rejects any tensor type over kMaxTensorBytes, so code after verification
// may rely on numel * element size (and small multiples of it) fitting in
// int64_t. It is far above any device's memory (an H200 has about 2^37
// bytes) and leaves room to add a few sizes without overflow.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_SUPPORT_CHECKEDMATH_H
#define TRACEIR_SUPPORT_CHECKEDMATH_H

#include <cstdint>
#include <initializer_list>
#include <optional>

namespace traceir {

/// The largest tensor, in bytes (numel x element size), that TraceIR
/// accepts anywhere: 2^48 bytes (256 TiB).
inline constexpr int64_t kMaxTensorBytes = int64_t(1) << 48;

/// a * b, or nullopt on int64_t overflow.
inline std::optional<int64_t> checkedMul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    return std::nullopt;
  return r;
}

/// a + b, or nullopt on int64_t overflow.
inline std::optional<int64_t> checkedAdd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r))
    return std::nullopt;
  return r;
}

/// a - b, or nullopt on int64_t overflow.
/// a + b, or INT64_MAX / INT64_MIN where that overflows: sums of byte
/// counts that only need comparing (a schedule's peaks).
inline int64_t saturatingAdd(int64_t a, int64_t b) {
  std::optional<int64_t> sum = checkedAdd(a, b);
  return sum ? *sum : (b > 0 ? INT64_MAX : INT64_MIN);
}

inline std::optional<int64_t> checkedSub(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r))
    return std::nullopt;
  return r;
}

/// The product of `dims`, or nullopt if a dim is negative or the product
/// overflows int64_t. The product of no dims is 1 (a 0-d tensor).
template <typename Range>
inline std::optional<int64_t> checkedNumel(const Range &dims) {
  int64_t n = 1;
  bool zero = false;
  for (int64_t d : dims) {
    if (d < 0)
      return std::nullopt;
    // A zero dim makes the product 0 whatever the others are, but an
    // overflowing product of the others is still rejected: such a shape
    // is as unrepresentable as its non-empty twin.
    zero |= d == 0;
    std::optional<int64_t> p = checkedMul(n, d == 0 ? 1 : d);
    if (!p)
      return std::nullopt;
    n = *p;
  }
  return zero ? 0 : n;
}
inline std::optional<int64_t>
checkedNumel(std::initializer_list<int64_t> dims) {
  return checkedNumel<std::initializer_list<int64_t>>(dims);
}

/// numel(dims) * elementBytes if that is at most kMaxTensorBytes, else
/// nullopt. This is the one test of "is this tensor representable".
template <typename Range>
inline std::optional<int64_t> checkedTensorBytes(const Range &dims,
                                                 int64_t elementBytes) {
  std::optional<int64_t> n = checkedNumel(dims);
  if (!n)
    return std::nullopt;
  std::optional<int64_t> bytes = checkedMul(*n, elementBytes);
  if (!bytes || *bytes > kMaxTensorBytes)
    return std::nullopt;
  return bytes;
}

/// Row-major (contiguous) strides of `shape`, in elements, written into
/// `strides`; false if a dim after the first is negative or a stride
/// overflows int64_t. Size-0 and size-1 dims count as 1, as PyTorch's
/// strides do. The first dim takes no part in any stride: callers that need
/// the whole shape representable check checkedNumel too (a verified type
/// never fails either).
template <typename Shape, typename Strides>
inline bool checkedContiguousStrides(const Shape &shape, Strides &strides) {
  strides.assign(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i) {
    int64_t d = shape[i + 1];
    if (d < 0)
      return false;
    std::optional<int64_t> s = checkedMul(strides[i + 1], d > 1 ? d : 1);
    if (!s)
      return false;
    strides[i] = *s;
  }
  return true;
}

/// How many elements of its storage a strided view spans from element 0:
/// offset + sum((shape[i] - 1) * strides[i]) + 1, or 0 for a view with no
/// elements. nullopt if the shape, a stride or the offset is negative or a
/// step overflows. A view is in bounds of a storage of `n` elements iff
/// this is at most `n`: the one check of views built at run time.
template <typename Shape, typename Strides>
inline std::optional<int64_t>
checkedViewExtent(const Shape &shape, const Strides &strides, int64_t offset) {
  if (offset < 0 || shape.size() != strides.size())
    return std::nullopt;
  if (!checkedNumel(shape))
    return std::nullopt;
  int64_t last = offset;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0)
      return 0;
    if (strides[i] < 0)
      return std::nullopt;
    std::optional<int64_t> step = checkedMul(shape[i] - 1, strides[i]);
    std::optional<int64_t> sum = step ? checkedAdd(last, *step) : step;
    if (!sum)
      return std::nullopt;
    last = *sum;
  }
  return checkedAdd(last, 1);
}

/// Normalizes narrow(dim of size `size`, start, length) as ATen does (a
/// negative start counts from the end) and returns the start, or nullopt
/// when the window [start, start + length) is not inside [0, size).
inline std::optional<int64_t> checkedNarrowStart(int64_t size, int64_t start,
                                                 int64_t length) {
  if (size < 0 || length < 0)
    return std::nullopt;
  if (start < 0) {
    std::optional<int64_t> wrapped = checkedAdd(start, size);
    if (!wrapped || *wrapped < 0)
      return std::nullopt;
    start = *wrapped;
  }
  std::optional<int64_t> end = checkedAdd(start, length);
  if (!end || *end > size)
    return std::nullopt;
  return start;
}

/// The output length of a convolution or pooling window along one dim, as
/// ATen computes it: (in + 2 * pad - dilation * (kernel - 1) - 1) / stride
/// + 1 (floor division, or ceil division for ceil_mode pooling, where the
/// last window must start inside the input or its left padding). nullopt
/// if any step overflows, the stride is not positive or the result is
/// negative.
inline std::optional<int64_t> checkedWindowOutput(int64_t in, int64_t kernel,
                                                  int64_t stride, int64_t pad,
                                                  int64_t dilation,
                                                  bool ceilMode = false) {
  if (stride <= 0 || dilation <= 0 || kernel <= 0 || pad < 0 || in < 0)
    return std::nullopt;
  std::optional<int64_t> twoPad = checkedMul(pad, 2);
  std::optional<int64_t> span = checkedMul(dilation, kernel - 1);
  if (!twoPad || !span)
    return std::nullopt;
  std::optional<int64_t> padded = checkedAdd(in, *twoPad);
  if (!padded)
    return std::nullopt;
  std::optional<int64_t> room = checkedSub(*padded, *span);
  if (!room)
    return std::nullopt;
  int64_t numer = *room - 1; // room >= -(2^63 - 1) + ..., cannot wrap below
  if (numer < 0)
    return std::nullopt;
  int64_t out = numer / stride + 1;
  if (ceilMode) {
    if (numer % stride != 0)
      ++out;
    // PyTorch: the last window must start inside the input or left pad.
    std::optional<int64_t> lastStart = checkedMul(out - 1, stride);
    if (lastStart && *lastStart >= in + pad)
      --out;
  }
  return out;
}

} // namespace traceir

#endif // TRACEIR_SUPPORT_CHECKEDMATH_H
