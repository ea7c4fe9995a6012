//===- Utils.h - Helpers the TraceToLinalg lowerings share ------*- C++ -*-===//
//
// The IR-building helpers of the lowering families (Lowerings.h) that more
// than one family uses: element conversion and arithmetic inside linalg
// bodies, generics with numpy broadcasting, reductions, reshapes and
// transposes to static types, the softmax the softmax family and attention
// share, and the window arguments of convolution and pooling. Private to
// lib/Conversion/TraceToLinalg; a helper one family alone uses stays in its
// file.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_LIB_CONVERSION_TRACETOLINALG_UTILS_H
#define TRACEIR_LIB_CONVERSION_TRACETOLINALG_UTILS_H

#include "TraceIR/Dialect/OpRegistry.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

#include <array>
#include <optional>

namespace mlir::trace::trace_to_linalg {

//===----------------------------------------------------------------------===//
// Scalar helpers (inside linalg bodies)
//===----------------------------------------------------------------------===//

/// Converts one element between PyTorch dtypes (signless ints are signed;
/// i1 is bool), the way a `.to(dtype)` would.
Value castElement(OpBuilder &b, Location loc, Value v, Type to);

/// A constant of element type `type` (float or int) with value `value`.
Value constantOf(OpBuilder &b, Location loc, Type type, double value);

bool isFloat(Value v);

Value add(OpBuilder &b, Location loc, Value x, Value y);
Value sub(OpBuilder &b, Location loc, Value x, Value y);
Value mul(OpBuilder &b, Location loc, Value x, Value y);
/// max that propagates NaN, like torch.amax and relu.
Value max(OpBuilder &b, Location loc, Value x, Value y);

//===----------------------------------------------------------------------===//
// Special functions (SpecialFunctions.cpp): f64 in, f64 out, the runtime
// kernels' algorithms (Runtime/SpecialFunctions.h) and fdlibm's lgamma
//===----------------------------------------------------------------------===//

Value buildLgamma(OpBuilder &b, Location loc, Value x);
Value buildDigamma(OpBuilder &b, Location loc, Value x);
Value buildTrigamma(OpBuilder &b, Location loc, Value x);
/// polygamma(n, x) for n >= 0.
Value buildPolygamma(OpBuilder &b, Location loc, int64_t n, Value x);
Value buildErfinv(OpBuilder &b, Location loc, Value y);

//===----------------------------------------------------------------------===//
// Tensor helpers
//===----------------------------------------------------------------------===//

using BodyFn = function_ref<Value(OpBuilder &, Location, ValueRange)>;

/// A static-shaped tensor.empty of `type`.
Value emptyLike(OpBuilder &b, Location loc, RankedTensorType type);

/// Numpy broadcasting of `type` into an iteration space of `shape`: trailing
/// dimensions line up; a size-1 dimension that the result stretches reads
/// index 0.
AffineMap broadcastMap(RankedTensorType type, ArrayRef<int64_t> shape,
                       MLIRContext *ctx);

/// The map of a tensor that has the `reduced` dimensions of the iteration
/// space dropped (a reduction's result read back while broadcasting).
AffineMap dropDimsMap(ArrayRef<bool> reduced, MLIRContext *ctx);

/// An all-parallel linalg.generic producing `resultType`; `maps` index the
/// inputs in the result's iteration space. The body gets the input elements.
Value buildGeneric(OpBuilder &b, Location loc, RankedTensorType resultType,
                   ValueRange inputs, ArrayRef<AffineMap> maps, BodyFn body);

/// Elementwise with numpy broadcasting of every input into `resultType`.
Value buildElementwise(OpBuilder &b, Location loc, RankedTensorType resultType,
                       ValueRange inputs, BodyFn body);

/// A reduction over the `reduced` dimensions of an iteration space of
/// `shape`; the result (element type `elt`) drops them. `maps` index the
/// inputs in the full space; `combine(args, acc)` folds one step into the
/// accumulator, which starts at `init`.
Value buildReduction(
    OpBuilder &b, Location loc, ArrayRef<int64_t> shape, ArrayRef<bool> reduced,
    Type elt, ValueRange inputs, ArrayRef<AffineMap> maps, double init,
    function_ref<Value(OpBuilder &, Location, ValueRange, Value)> combine);

/// A size computed from verified types: the verifier bounds every tensor type
/// (Support/CheckedMath.h), so products of their dims and the windows that
/// shape inference accepted fit. Checked all the same, so a broken invariant
/// stops here instead of building a wrapped shape.
int64_t fits(std::optional<int64_t> size);
int64_t productOf(ArrayRef<int64_t> dims);

/// Reshapes `v` to the static `type` with the same element count: a single
/// collapse_shape or expand_shape when one exists (the common view, flatten,
/// squeeze, unsqueeze), else a collapse to 1-D followed by an expand.
Value reshapeTo(OpBuilder &b, Location loc, Value v, RankedTensorType type);

/// linalg.transpose of `v` by `perm` (result dim i = input dim perm[i]).
Value transpose(OpBuilder &b, Location loc, Value v, ArrayRef<int64_t> perm);

/// Whether `type` broadcasts to `shape` by numpy's rules.
bool broadcastsTo(RankedTensorType type, ArrayRef<int64_t> shape);

/// `v` [..., R, C] broadcast to the batch dims `batch` and collapsed to
/// [prod(batch), R, C], an operand of a 3-D batched contraction. Only a
/// batch dim that stretches costs a copy; the collapse is a view.
Value toBatch3D(OpBuilder &b, Location loc, Value v, ArrayRef<int64_t> batch);

/// A zero-filled tensor of `type` (a matmul accumulator).
Value zeros(OpBuilder &b, Location loc, RankedTensorType type);

/// Normalizes a possibly negative dimension; nullopt when out of range.
std::optional<int64_t> normDim(std::optional<int64_t> dim, int64_t rank);

//===----------------------------------------------------------------------===//
// Softmax (the softmax family and attention)
//===----------------------------------------------------------------------===//

/// Softmax (or log_softmax) of the float tensor `x` along `dim`, in its
/// element type and numerically stable: m = max(x), s = sum(exp(x - m));
/// softmax = exp(x - m) / s and log_softmax = x - m - log(s). With
/// `zeroMaskedRows` (softmax only), a row whose max is -inf, every element
/// masked out, gives zeros as PyTorch's _safe_softmax does (exp(-inf -
/// -inf) would make it NaN).
Value buildSoftmax(OpBuilder &b, Location loc, Value x, int64_t dim, bool isLog,
                   bool zeroMaskedRows = false);

//===----------------------------------------------------------------------===//
// Sliding windows (convolution and pooling)
//===----------------------------------------------------------------------===//

// The window arguments themselves are decoded by Support/OpArgs.h, as the
// registry and the runtime decode them.

/// `x` [N, C, H, W] padded on both sides of H and W by `pad` with `value`;
/// `x` itself when there is no padding.
Value padHW(OpBuilder &b, Location loc, Value x, std::array<int64_t, 2> pad,
            double value);

/// A 3-D [C, H, W] (unbatched) tensor as [1, C, H, W]; 4-D stays.
Value to4D(OpBuilder &b, Location loc, Value v);

/// The 4-D type that `to4D` gives a 3-D or 4-D result type.
RankedTensorType type4D(RankedTensorType t);

} // namespace mlir::trace::trace_to_linalg

#endif // TRACEIR_LIB_CONVERSION_TRACETOLINALG_UTILS_H
