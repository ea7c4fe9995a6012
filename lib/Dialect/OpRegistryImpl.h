//===- OpRegistryImpl.h - What the registry's rows name ---------*- C++ -*-===//
//
// The functions the rows of the op registry's table (OpRegistry.cpp) name:
// Ops.def's INFER column, defined in OpInference.cpp, and its EFFECTS
// column, defined in OpAliasing.cpp. Private to lib/Dialect; the interface
// is TraceIR/Dialect/OpRegistry.h. Each function's comment is at its
// definition.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_LIB_DIALECT_OPREGISTRYIMPL_H
#define TRACEIR_LIB_DIALECT_OPREGISTRYIMPL_H

#include "TraceIR/Dialect/OpRegistry.h"

#include <type_traits>

namespace mlir::trace::registry {

/// The types of the functions an InferFn, AliasFn and FlagFn point to.
using InferSig = std::remove_pointer_t<InferFn>;
using AliasSig = std::remove_pointer_t<AliasFn>;
using FlagSig = std::remove_pointer_t<FlagFn>;

//===----------------------------------------------------------------------===//
// Shape and dtype inference (OpInference.cpp)
//===----------------------------------------------------------------------===//

/// The result dtype of an elementwise op: the operands' promoted one, a
/// float one (integers give f32), or bool. NotBool, Integral and FloatOnly
/// keep the promoted one but refuse what PyTorch has no kernel for: bool
/// (ceil, floor, round, trunc), floats (bitwise_not), integers and bools
/// (leaky_relu, elu).
/// IntegerOnly: integers but not bool (the shifts: ATen dispatches them
/// over AT_DISPATCH_INTEGRAL_TYPES, which has no bool).
enum class EltRule {
  Promote,
  Float,
  Bool,
  NotBool,
  Integral,
  IntegerOnly,
  FloatOnly
};

/// What a reduction does to the dtype: amax and amin keep it (and, having
/// no identity, refuse an empty group), mean needs a float, sum and prod
/// widen integers and bools to i64 (as PyTorch does), any gives bool,
/// argmax and argmin give i64 positions (and refuse an empty group), max
/// and min over one dim give the values and their i64 positions (bools
/// too).
enum class ReduceDtype { Same, Float, Sum, Bool, Index, ValueIndex };

// The table takes the addresses of the template ones without seeing their
// definitions: each instantiation a row names is also in the list of
// explicit instantiations at the end of OpInference.cpp.
InferSig inferWhere, inferDiv, inferSameAsFirst, inferDropout, inferToCopy,
    inferClamp, inferCopy, inferNativeDropout;
// Tensors made from scalars
InferSig inferFull, inferFullLike, inferScalarTensor, inferArange;
template <bool Strided, bool Random> InferSig inferFactory;
InferSig inferRandperm;
template <unsigned N, EltRule R = EltRule::Promote> InferSig inferElementwise;
InferSig inferRound;

// Linear algebra
InferSig inferMatmul, inferLinear, inferAddmm, inferAttention;
template <unsigned Rank> InferSig inferMatmulOfRank;
InferSig inferFlashAttentionForCpu;

// Reductions and normalizations
template <ReduceDtype R, traceir::DimArg F = traceir::DimArg::List>
InferSig inferReduce;
InferSig inferSoftmax, inferCumsum, inferVar, inferGroupNorm,
    inferBatchNormBackward, inferBatchNormDoubleBackward;
template <bool Topk> InferSig inferSort;
template <bool Native> InferSig inferLayerNorm;
template <bool Native> InferSig inferBatchNorm;

// Views
InferSig inferView, inferTranspose, inferT, inferPermute, inferUnsqueeze,
    inferSqueeze, inferFlatten, inferUnflatten, inferExpand, inferSelect,
    inferSlice, inferNarrow, inferCat, inferDiagonal, inferAsStrided;

// Indexing
InferSig inferIndexSelect, inferGather, inferScatter, inferScatterAdd,
    inferScatterReduce, inferIndex, inferIndexPut, inferSliceScatter,
    inferSelectScatter;
InferSig inferMaskedScatter;

// Neural-network layers
InferSig inferEmbedding, inferConv2d, inferMaxPool2d, inferAdaptiveAvgPool2d,
    inferMaxPool2dWithIndices;
InferSig inferAdaptiveAvgPool3d, inferMaxPool3dWithIndices;
// Distances, bags of embeddings and grid sampling
InferSig inferCdistForward, inferPdistForward, inferEmbeddingBag,
    inferEmbeddingBagForwardOnly, inferGridSampler2d;
InferSig inferConvolution;

// Pooling, padding, resampling and data movement
InferSig inferAvgPool2d, inferFlip, inferRepeat;
InferSig inferAvgPool3d, inferCol2im;
template <traceir::PadMode M, int N> InferSig inferPad;
template <bool Bilinear> InferSig inferUpsample2d;
template <bool Lstm> InferSig inferRnn;
template <bool AllowProbabilities> InferSig inferLoss;

// Backward ops of the joint training graph
InferSig inferLogSoftmaxInternal, inferLogSoftmaxBackward,
    inferThresholdBackward, inferOnesLike, inferNllLossForward,
    inferNllLossBackward, inferConvolutionBackward,
    inferMaxPool2dWithIndicesBackward;
InferSig inferAvgPool2dBackward, inferAdaptiveAvgPool2dBackward,
    inferLayerNormBackward, inferGroupNormBackward, inferEmbeddingDenseBackward;

//===----------------------------------------------------------------------===//
// Aliasing and effect rules (OpAliasing.cpp)
//===----------------------------------------------------------------------===//

AliasSig aliasNone, aliasFirst, aliasDropout;
FlagSig never, always, attentionRandom, dropoutRandom, batchNormMutates,
    rnnRandom;

} // namespace mlir::trace::registry

#endif // TRACEIR_LIB_DIALECT_OPREGISTRYIMPL_H
