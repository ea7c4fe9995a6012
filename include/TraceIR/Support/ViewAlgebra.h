//===- ViewAlgebra.h - Shapes and strides of views --------------*- C++ -*-===//
//
// How each view op of the registry lays out its result over its input's
// storage, as PyTorch does. The runtime's view kernels and the storage
// liveness analysis both use these functions, so the analysis knows exactly
// when a view-or-copy op (reshape, flatten, contiguous) has to copy, and the
// predicted peak stays equal to the measured one.
//
// No MLIR here: callers decode their own scalars into plain integers.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_SUPPORT_VIEWALGEBRA_H
#define TRACEIR_SUPPORT_VIEWALGEBRA_H

#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <cstdint>
#include <optional>

namespace traceir::views {

using Dims = std::vector<int64_t>;

/// A strided view: element (i0, i1, ...) lives at offset + sum(ik *
/// strides[k]).
struct Layout {
  Dims shape;
  Dims strides;
  int64_t offset = 0;
  /// The offset of a view whose offset or strides overflow int64: no
  /// storage holds it, and checkedViewExtent rejects it.
  static constexpr int64_t kOutOfRange = -1;

  static Layout contiguous(std::span<const int64_t> shape);
  int64_t numel() const;
  bool isContiguous() const;
};

Dims contiguousStrides(std::span<const int64_t> shape);
/// Wraps a negative dim (PyTorch's maybe_wrap_dim, treating rank 0 as 1).
int64_t wrapDim(int64_t dim, int64_t rank);

/// The length of `start:end:step` (step > 0) over a dim of size `n`, with
/// Python's clamping of out-of-range bounds.
int64_t sliceLength(int64_t n, int64_t start, int64_t end, int64_t step);

/// The length of diagonal `offset` of a matrix of n1 rows and n2 columns
/// (0 when it misses the matrix).
int64_t diagonalLength(int64_t n1, int64_t n2, int64_t offset);

/// Strides that view `in` as `shape` without copying (PyTorch's
/// computeStride), if they exist.
std::optional<Dims> viewStrides(const Layout &in,
                                std::span<const int64_t> shape);

/// The integer arguments a view op reads, decoded by the caller from the
/// op's scalars in ATen order (see viewArgsFor).
struct ViewArgs {
  std::vector<int64_t> ints; ///< flattened int arguments
  bool none = false;         ///< the optional argument was None or absent
};

/// Decodes the integer arguments view op `op` reads. `intsAt(i)` returns
/// argument i's ints (one for an int, all of a list or tuple), or nullopt
/// for None, an absent argument or a tensor.
ViewArgs decodeViewArgs(
    std::string_view op,
    std::function<std::optional<std::vector<int64_t>>(unsigned)> intsAt);

/// Result layout of view op `op` applied to `in`, with `resultShape` the
/// result's static shape (from type inference). Returns std::nullopt when
/// the op is a view-or-copy op that must copy (the copy is contiguous with
/// `resultShape`), or when `op` is not a view op. `isViewOp` tells which.
std::optional<Layout> applyView(std::string_view op, const Layout &in,
                                const ViewArgs &args,
                                std::span<const int64_t> resultShape);

/// Why view op `op` cannot apply to `in` with `args` and `resultShape`, or
/// nullopt when it can: a dim out of range, a select index, slice or narrow
/// outside its dim, an expand to a shape `in` does not broadcast to, a
/// restride to a different number of elements. Type inference rejects all
/// of these in a verified graph; the runtime checks them before applyView
/// (which indexes by them) because a saved executable is not verified.
std::optional<std::string> checkViewArgs(std::string_view op, const Layout &in,
                                         const ViewArgs &args,
                                         std::span<const int64_t> resultShape);

/// Whether `op` is one of the view ops applyView knows.
bool isViewOp(std::string_view op);
/// Whether `op` may copy when no view exists (reshape, flatten, contiguous).
bool isViewOrCopyOp(std::string_view op);
/// Whether `op` is an in-place op (add_, relu_, dropout_, ...): its result
/// is its first operand itself.
bool isInPlaceOp(std::string_view op);
/// Whether `op` may write its argument `arg` (counted in the calling
/// convention's order, tensors and scalars alike): an in-place op's first,
/// batch norm's running_mean and running_var (training mode writes them;
/// this does not look at the flag). The runtime reads the caller's inputs in
/// place unless a run may write them.
bool mayWriteOperand(std::string_view op, unsigned arg);

} // namespace traceir::views

#endif // TRACEIR_SUPPORT_VIEWALGEBRA_H
