//===- OpArgs.h - Each op family's ATen arguments, decoded once -*- C++ -*-===//
//
// The scalar arguments of the op families whose scalars carry structure
// (convolution and pooling windows, reduction dims, loss reductions,
// dropout, batch norm's flags) decoded by one function per family into a
// typed struct, with PyTorch's defaults and checks. The registry's inference
// (Dialect), the lowering (TraceToLinalg) and the CPU and CUDA host code
// (Runtime) all call these, as StableHLO's TypeInference.cpp serves its
// verifier, shape inference and interpreter: the three accept the same calls
// and refuse the rest with the same message. The shape arithmetic they lead
// to (checkedWindowOutput) is in CheckedMath.h.
//
// Each layer reads its own form of a call through CallArgs: the runtime its
// KernelContext, the dialect and the loader of saved executables a
// ListCallArgs of decoded Scalars. Plain C++ (the runtime-only build has
// it).
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_SUPPORT_OPARGS_H
#define TRACEIR_SUPPORT_OPARGS_H

#include "TraceIR/Support/Scalar.h"

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace traceir {

/// One call's arguments in PyTorch's order, as the decoders read them: each
/// is a tensor, a scalar, or absent (past the end), which reads as None.
class CallArgs {
public:
  virtual bool isTensor(unsigned i) const = 0;
  /// Argument `i` as a scalar: None when it is absent or a tensor.
  virtual const Scalar &scalar(unsigned i) const = 0;
  /// Whether argument `i` is None or absent (a tensor is neither).
  bool isNone(unsigned i) const { return !isTensor(i) && scalar(i).isNone(); }

protected:
  ~CallArgs() = default;
};

/// A call's arguments held as a list, for code that has them at hand rather
/// than in a call of its own form: argument `i` is a tensor where
/// `tensors[i]`, else `scalars[i]` (None for a tensor).
struct ListCallArgs final : CallArgs {
  std::vector<bool> tensors;
  std::vector<Scalar> scalars;

  /// Appends an argument.
  void addTensor() {
    tensors.push_back(true);
    scalars.emplace_back();
  }
  void addScalar(Scalar s) {
    tensors.push_back(false);
    scalars.push_back(std::move(s));
  }
  bool isTensor(unsigned i) const override {
    return i < tensors.size() && tensors[i];
  }
  const Scalar &scalar(unsigned i) const override;
};

/// `base`'s arguments from `offset` on: a backward op's arguments that
/// follow the forward's after its leading gradient.
struct OffsetCallArgs final : CallArgs {
  const CallArgs &base;
  unsigned offset;
  OffsetCallArgs(const CallArgs &base, unsigned offset)
      : base(base), offset(offset) {}
  bool isTensor(unsigned i) const override { return base.isTensor(i + offset); }
  const Scalar &scalar(unsigned i) const override {
    return base.scalar(i + offset);
  }
};

/// The readers the decoders are built from, public for the op-specific
/// checks that use the same wording. Each returns false and sets `err`
/// (a sentence naming the argument, without the op's name, which each
/// caller adds as it reports) on a bad argument; None or absent gives the
/// default where there is one.
bool readInt(const CallArgs &args, unsigned i, const char *what, int64_t &v,
             std::optional<int64_t> dflt, std::string &err);
/// A bool, or PyTorch's 0/1 for a flag.
bool readBool(const CallArgs &args, unsigned i, const char *what, bool &v,
              std::optional<bool> dflt, std::string &err);
/// An int or a float, as a double.
bool readNumber(const CallArgs &args, unsigned i, const char *what, double &v,
                std::optional<double> dflt, std::string &err);
/// An int or a list/tuple of ints (one int reads as a one-element list).
bool readIntList(const CallArgs &args, unsigned i, const char *what,
                 std::vector<int64_t> &v, std::string &err);
/// PyTorch's _pair and _triple: one int or a list of one or N, for (h, w)
/// or (d, h, w); None (and an empty list where `emptyIsDefault`, as the
/// pools' stride) gives `dflt`. Instantiated for N = 2 and 3.
template <size_t N>
bool readTuple(const CallArgs &args, unsigned i, const char *what,
               std::array<int64_t, N> &v, std::array<int64_t, N> dflt,
               std::string &err, bool emptyIsDefault = false);
inline bool readPair(const CallArgs &args, unsigned i, const char *what,
                     std::array<int64_t, 2> &v, std::array<int64_t, 2> dflt,
                     std::string &err, bool emptyIsDefault = false) {
  return readTuple<2>(args, i, what, v, dflt, err, emptyIsDefault);
}

/// `v` as PyTorch prints an int list: [1, 2].
std::string intListString(std::span<const int64_t> v);

//===--- Convolution and pooling ------------------------------------------===//

/// conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1,
/// groups=1): stride and dilation positive, padding non-negative or 'same'
/// (stride 1 only) or 'valid', groups positive.
struct Conv2dArgs {
  std::array<int64_t, 2> stride{1, 1}, padding{0, 0}, dilation{1, 1};
  int64_t groups = 1;
  /// padding='same': dilation * (k - 1) in total along each spatial dim,
  /// the odd one after (bottom, right), as PyTorch; the output keeps the
  /// input's size.
  bool same = false;

  /// The padding before and after spatial dim `d` (0: H, 1: W) for a kernel
  /// of size `k`; nullopt when 'same''s total overflows.
  std::optional<std::array<int64_t, 2>> pads(int d, int64_t k) const;
  /// The output size along spatial dim `d` of an input of size `in` and a
  /// kernel of size `k`; nullopt when the window does not fit the padded
  /// input or the arithmetic overflows.
  std::optional<int64_t> outputSize(int d, int64_t in, int64_t k) const;
};
bool decodeConv2d(const CallArgs &args, Conv2dArgs &a, std::string &err);

/// convolution_backward(grad_output, input, weight, bias_sizes, stride,
/// padding, dilation, transposed, output_padding, groups, output_mask):
/// conv2d's window and checks (explicit padding only), not transposed, and
/// which of (grad_input, grad_weight, grad_bias) to compute.
struct ConvolutionBackwardArgs {
  Conv2dArgs conv;
  std::array<bool, 3> mask{true, true, true};
};
bool decodeConvolutionBackward(const CallArgs &args, ConvolutionBackwardArgs &a,
                               std::string &err);

/// max_pool2d(input, kernel_size, stride=kernel_size, padding=0,
/// dilation=1, ceil_mode=False) (N = 2) and max_pool3d_with_indices (N = 3,
/// (d, h, w)): kernel, stride and dilation positive, padding non-negative
/// and at most half the kernel.
template <size_t N> struct MaxPoolArgs {
  std::array<int64_t, N> kernel{}, stride{}, padding{}, dilation{};
  bool ceil = false;

  MaxPoolArgs() { dilation.fill(1); }
  /// PyTorch's pooling_output_shape along spatial dim `d`; nullopt when the
  /// window does not fit or the arithmetic overflows.
  std::optional<int64_t> outputSize(int d, int64_t in) const;
};
using MaxPool2dArgs = MaxPoolArgs<2>;
using MaxPool3dArgs = MaxPoolArgs<3>;
bool decodeMaxPool2d(const CallArgs &args, MaxPool2dArgs &a, std::string &err);
bool decodeMaxPool3d(const CallArgs &args, MaxPool3dArgs &a, std::string &err);
/// max_pool2d_with_indices_backward(grad_output, self, kernel_size, stride,
/// padding, dilation, ceil_mode, indices): max_pool2d's window, one
/// argument later.
bool decodeMaxPool2dBackward(const CallArgs &args, MaxPool2dArgs &a,
                             std::string &err);

/// avg_pool2d / avg_pool3d(input, kernel_size, stride=kernel_size,
/// padding=0, ceil_mode=False, count_include_pad=True,
/// divisor_override=None): max pooling's window and checks without
/// dilation (always 1), and a nonzero divisor_override.
template <size_t N> struct AvgPoolArgs : MaxPoolArgs<N> {
  bool countIncludePad = true;
  int64_t divisor = 0; ///< divisor_override; 0 when None
};
using AvgPool2dArgs = AvgPoolArgs<2>;
using AvgPool3dArgs = AvgPoolArgs<3>;
bool decodeAvgPool2d(const CallArgs &args, AvgPool2dArgs &a, std::string &err);
bool decodeAvgPool3d(const CallArgs &args, AvgPool3dArgs &a, std::string &err);

/// col2im(self, output_size, kernel_size, dilation, padding, stride)
/// (F.fold) of an input of `shape` (a negative size is unknown): each
/// argument an int or two, kernel, dilation and stride positive, padding
/// non-negative; the input [N, C * kH * kW, L] or [C * kH * kW, L] with
/// nonzero non-batch dims and L the number of sliding blocks, as PyTorch's
/// col2im_shape_check. `result` is [N, C, oH, oW] (or [C, oH, oW]).
struct Col2imArgs {
  std::array<int64_t, 2> outputSize{}, kernel{}, dilation{}, padding{},
      stride{};
  /// The sliding blocks along H and W: L = blocks[0] * blocks[1].
  std::array<int64_t, 2> blocks{};
  std::vector<int64_t> result;
};
bool decodeCol2im(const CallArgs &args, std::span<const int64_t> shape,
                  Col2imArgs &a, std::string &err);
/// avg_pool2d_backward(grad_output, self, kernel_size, stride, padding,
/// ceil_mode, count_include_pad, divisor_override): avg_pool2d's window and
/// checks, one argument later.
bool decodeAvgPool2dBackward(const CallArgs &args, AvgPool2dArgs &a,
                             std::string &err);

//===--- Padding and resampling -------------------------------------------===//

/// How a pad fills: a constant (constant_pad_nd), the input mirrored about
/// its edges (reflection_padNd) or its edge repeated (replication_padNd).
enum class PadMode { Constant, Reflect, Replicate };

/// The pads of constant_pad_nd(self, pad, value=0) (`spatial` 0: the pad
/// list covers up to every dim, from the last backward, negative pads
/// crop) and of reflection_padNd / replication_padNd(self, padding) (N =
/// `spatial` 1, 2 or 3: an (N+1)-D or (N+2)-D input, 2N pads), with
/// PyTorch's checks against `shape` (a negative size is unknown and passes).
struct PadArgs {
  PadMode mode = PadMode::Constant;
  /// The pads before and after each dim of the input (0 on unpadded dims).
  std::vector<int64_t> before, after;
  /// constant_pad_nd's value: an int (`valueIsInt`, exact) or a float.
  double value = 0;
  int64_t intValue = 0;
  bool valueIsInt = true;
  /// The result's shape (negative where `shape` is).
  std::vector<int64_t> resultShape;
};
bool decodePad(const CallArgs &args, PadMode mode, int spatial,
               std::span<const int64_t> shape, PadArgs &a, std::string &err);

/// upsample_nearest2d.vec(input, output_size, scale_factors) and
/// upsample_bilinear2d.vec(input, output_size, align_corners,
/// scale_factors) (`bilinear`) of a 4-D `shape` (a negative size is
/// unknown): exactly one of output_size and scale_factors, each of two
/// entries; the result's spatial size (negative where unknown) and the
/// scales PyTorch's index computations take (0 for none: output_size
/// given, the ratio of the sizes is used).
struct UpsampleArgs {
  std::array<int64_t, 2> size{0, 0};
  std::array<double, 2> scales{0, 0};
  bool alignCorners = false;
};
bool decodeUpsample2d(const CallArgs &args, bool bilinear,
                      std::span<const int64_t> shape, UpsampleArgs &a,
                      std::string &err);

/// repeat(self, repeats): at least one repeat per dim of `shape`, none
/// negative; the result's shape (negative where `shape` is unknown).
bool decodeRepeat(const CallArgs &args, std::span<const int64_t> shape,
                  std::vector<int64_t> &result, std::string &err);

//===--- Reductions -------------------------------------------------------===//

/// How a reduction's dim argument reads, as its ATen schemas declare it.
enum class DimArg {
  /// An int or an int list (sum, mean, amax, amin); an empty list marks
  /// every dim.
  List,
  /// An int or an int list, an empty list marking none (any.dims: PyTorch
  /// reduces nothing then, where amax reduces everything).
  ListEmptyMarksNone,
  /// One int (prod.dim_int); a list is refused.
  One,
};

/// The dims of a rank-`rank` input that a reduction's dim argument `i`
/// marks, read as `form` says: negative dims wrapped, each at most once;
/// None or absent marks every dim. A 0-d input accepts dim 0 and -1 and
/// has no dim to mark.
bool decodeReducedDims(const CallArgs &args, unsigned i, int64_t rank,
                       DimArg form, std::vector<bool> &reduced,
                       std::string &err);

/// For the reductions without an identity (amax, amin): fails, naming the
/// first, unless every dim `reduced` marks has a nonzero size, as PyTorch
/// requires (even of an empty result). Sizes below 0 (dynamic) pass.
bool checkReducedNonEmpty(std::span<const int64_t> shape,
                          const std::vector<bool> &reduced, std::string &err);

/// sort(self, dim=-1, descending=False) and topk(self, k, dim=-1,
/// largest=True, sorted=True) of an input of `shape`: `dim` wrapped (0 for a
/// 0-d input, whose one element is its only row), the first `k` elements of
/// each row in order (sort: all of them), descending for sort's descending
/// and topk's largest. topk refuses a k outside [0, size of dim]; a dynamic
/// size (below 0) passes.
struct SortArgs {
  int64_t dim = 0, k = 0;
  bool descending = false;
  /// topk's `sorted`: whether its k results must come in order.
  bool sorted = true;
};
bool decodeSort(const CallArgs &args, std::span<const int64_t> shape, bool topk,
                SortArgs &a, std::string &err);

/// A loss reduction: 0/'none', 1/'mean' (the default) or 2/'sum'.
enum class Reduction { None = 0, Mean = 1, Sum = 2 };
bool decodeLossReduction(const CallArgs &args, unsigned i, Reduction &r,
                         std::string &err);

//===--- Dropout and batch norm -------------------------------------------===//

/// dropout(input, p, train=True): p a number in [0, 1].
struct DropoutArgs {
  double p = 0;
  bool train = true;
  /// In eval mode, or with p == 0, dropout returns its input.
  bool isIdentity() const { return !train || p == 0; }
};
bool decodeDropout(const CallArgs &args, DropoutArgs &a, std::string &err);

/// batch_norm(input, weight, bias, running_mean, running_var,
/// training=False, momentum=0.1, eps=1e-5[, cudnn_enabled]), and
/// native_batch_norm with the same head.
struct BatchNormArgs {
  bool training = false;
  double momentum = 0.1, eps = 1e-5;
};
bool decodeBatchNorm(const CallArgs &args, BatchNormArgs &a, std::string &err);

//===--- Indexing ---------------------------------------------------------===//

// The shape rules of the indexing ops, for shapes whose dims below 0 are
// unknown (the dialect's dynamic dims): an unknown dim passes every check
// and stays unknown in a result.

/// gather(self, dim, index) and scatter(self, dim, index, src): wraps `dim`
/// against self's rank (a 0-d tensor counts as rank 1) and checks, as
/// PyTorch does, that index has self's rank (0-d and 1-d mix) and is no
/// larger than self outside `dim` and, given `src`, that src has that rank
/// too and index is no larger than src anywhere.
bool checkGatherScatter(std::span<const int64_t> self,
                        std::span<const int64_t> index,
                        const std::vector<int64_t> *src, int64_t &dim,
                        std::string &err);

/// index_select(self, dim, index): wraps `dim` (a 0-d self counts as rank
/// 1), checks index is a vector (or 0-d) and gives the result's shape: self's
/// with dim `dim` the number of indices.
bool indexSelectShape(std::span<const int64_t> self,
                      std::span<const int64_t> index, int64_t &dim,
                      std::vector<int64_t> &result, std::string &err);

/// scatter_reduce's reduce argument.
enum class ScatterReduce { Sum, Prod, Mean, Amax, Amin };
bool decodeScatterReduce(const CallArgs &args, unsigned i, ScatterReduce &r,
                         std::string &err);

/// index.Tensor(self, indices...) and index_put's indices: argument `first`
/// to `end` (exclusive), each a tensor or None, one per leading dim of self.
/// Sets `dims` to the self dim of each tensor in order; fails unless there
/// is at least one tensor and at most rank entries.
bool decodeIndexEntries(const CallArgs &args, unsigned first, unsigned end,
                        int64_t rank, std::vector<int64_t> &dims,
                        std::string &err);

/// Where advanced indexing puts things: the index tensors (of shapes
/// `indexShapes`, at self dims `dims`) broadcast to `broadcast`, which
/// replaces the indexed dims in the result when they are adjacent (at
/// `position`, their first), else goes first (`position` 0), the other dims
/// of self following in order.
struct IndexLayout {
  std::vector<int64_t> broadcast, result;
  int64_t position = 0;
};
bool indexLayout(std::span<const int64_t> self, std::span<const int64_t> dims,
                 const std::vector<std::vector<int64_t>> &indexShapes,
                 IndexLayout &layout, std::string &err);

/// index_put(self, indices..., values, accumulate=False) of `n` arguments:
/// values is the last tensor, accumulate the bool after it if any. Sets
/// `values` to its position.
bool decodeIndexPut(const CallArgs &args, unsigned n, unsigned &values,
                    bool &accumulate, std::string &err);

/// native_group_norm(input, weight, bias, N, C, HxW, group, eps): N, C
/// and HxW non-negative, group positive and dividing C.
struct GroupNormArgs {
  int64_t N = 0, C = 0, HxW = 0, group = 1;
  double eps = 1e-5;
};
bool decodeGroupNorm(const CallArgs &args, GroupNormArgs &a, std::string &err);
/// native_group_norm_backward(grad_out, input, mean, rstd, weight, N, C,
/// HxW, group, output_mask): native_group_norm's N, C, HxW and group (two
/// arguments later, no eps) and which of (grad_input, grad_weight,
/// grad_bias) to compute.
bool decodeGroupNormBackward(const CallArgs &args, GroupNormArgs &a,
                             std::array<bool, 3> &mask, std::string &err);
/// native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd,
/// weight, bias, output_mask): normalized_shape (non-negative sizes) and
/// which of (grad_input, grad_weight, grad_bias) to compute.
bool decodeLayerNormBackward(const CallArgs &args,
                             std::vector<int64_t> &normalized,
                             std::array<bool, 3> &mask, std::string &err);

/// embedding_dense_backward(grad_output, indices, num_weights, padding_idx,
/// scale_grad_by_freq): num_weights non-negative; padding_idx is compared
/// with each index as it is (ATen does not wrap a negative one here).
struct EmbeddingBackwardArgs {
  int64_t numWeights = 0, paddingIdx = -1;
  bool scaleGradByFreq = false;
};
bool decodeEmbeddingDenseBackward(const CallArgs &args,
                                  EmbeddingBackwardArgs &a, std::string &err);

//===--- Tensors made from scalars ----------------------------------------===//

/// How arange computes, after its result's dtype: int64 (the bounds and
/// step truncated to int64, the length in int64), another integer dtype
/// (the same values, the length from the untruncated numbers in double) or
/// a floating one (all in double), as PyTorch's arange_out does. Default:
/// the dtype PyTorch infers without dtype=, int64 unless a number is a float
/// (then the default float32).
enum class ArangeKind { Default, Int64, Integer, Floating };

/// arange(start, end, step=1, dtype=None, ...), arange.start_step: the
/// values are start + i * step for i in [0, size), in int64 (wrapping) for
/// an integer result, else in double.
struct ArangeArgs {
  ArangeKind kind = ArangeKind::Int64;
  int64_t startI = 0, stepI = 1;
  double startD = 0, stepD = 1;
  int64_t size = 0;
};
/// Refuses what PyTorch refuses: a non-number, a bound or step beyond int64
/// for an integer result, a zero step, a non-finite bound, bounds whose
/// order disagrees with the step's sign, a length beyond int64.
bool decodeArange(const CallArgs &args, ArangeKind kind, ArangeArgs &a,
                  std::string &err);

/// randperm's result dtypes (PyTorch has no bool kernel for it).
enum class RandpermDtype { U8, I8, I16, I32, I64, F16, BF16, F32, F64 };
/// The largest n randperm(n, dtype) takes: every value 0..n-1 must be the
/// dtype's exactly, as ATen's check_supported_max_int_with_precision asks
/// (n - 1 within an integer dtype's range; n <= 2^digits + 1 for a floating
/// one). ATen checks no bound for bfloat16 and then repeats values above
/// 257; TraceIR refuses those too.
int64_t randpermMaxN(RandpermDtype dtype);
/// The dtype's name in PyTorch's words ("uint8", "float16", ...).
const char *randpermDtypeName(RandpermDtype dtype);

//===--- Distances, bags of embeddings and grid sampling ------------------===//

/// _cdist_forward(x1, x2, p, compute_mode) and _pdist_forward(self, p=2):
/// a non-negative p (inf allowed), and cdist's compute_mode None (0), 1
/// (use the matrix-product form for p = 2) or 2 (never), as ATen's.
struct DistanceArgs {
  double p = 2;
  int64_t computeMode = 0;
};
bool decodeCdist(const CallArgs &args, DistanceArgs &a, std::string &err);
bool decodePdist(const CallArgs &args, DistanceArgs &a, std::string &err);

/// _embedding_bag(weight, indices, offsets, scale_grad_by_freq=False,
/// mode=0, sparse=False, per_sample_weights=None, include_last_offset=False,
/// padding_idx=-1): mode 0 (sum), 1 (mean) or 2 (max); per_sample_weights
/// only with sum; a negative padding_idx is none, as ATen's.
struct EmbeddingBagArgs {
  int64_t mode = 0;
  bool includeLastOffset = false;
  bool hasPerSampleWeights = false;
  int64_t paddingIdx = -1;

  /// Whether offset2bag is empty ([0]) rather than one bag position per
  /// index, as PyTorch's meta function decides, whose shapes torch.export
  /// declares: its fast sum path (mode sum, no padding_idx, an f32 or f16
  /// weight). ATen's CPU kernel takes that path for bf16 too, but a graph
  /// must agree with its declared types. (Both also ask for unit column
  /// strides, which a graph's types do not carry: TraceIR decides by dtype.)
  bool skipsOffset2bag(bool weightF32OrF16) const {
    return mode == 0 && paddingIdx < 0 && weightF32OrF16;
  }
};
bool decodeEmbeddingBag(const CallArgs &args, EmbeddingBagArgs &a,
                        std::string &err);

/// grid_sampler_2d(input, grid, interpolation_mode, padding_mode,
/// align_corners): interpolation 0 (bilinear), 1 (nearest) or 2 (bicubic),
/// padding 0 (zeros), 1 (border) or 2 (reflection).
struct GridSamplerArgs {
  int64_t interpolation = 0, padding = 0;
  bool alignCorners = false;
};
bool decodeGridSampler(const CallArgs &args, GridSamplerArgs &a,
                       std::string &err);

} // namespace traceir

#endif // TRACEIR_SUPPORT_OPARGS_H
