//===- NNArgs.h - Reading and checking NN kernel arguments ------*- C++ -*-===//
//
// Argument parsing and validation of the convolution, pooling, batch norm,
// loss, layer norm, dropout and recurrent (lstm, gru) kernels, shared by their
// CPU and CUDA host halves so both accept the same calls and fail with the same
// messages. Each reader fails the call (and returns false) on bad input.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_RUNTIME_NNARGS_H
#define TRACEIR_RUNTIME_NNARGS_H

#include "TraceIR/Runtime/Executable.h"
#include "TraceIR/Runtime/KernelArgs.h"

#include <cstdint>
#include <initializer_list>
#include <random>

namespace traceir {

//===--- Convolution and pooling ------------------------------------------===//

struct ConvGeometry {
  int64_t N, C, H, W;     // input (N = 1 when unbatched)
  int64_t O, Cg, kH, kW;  // weight [O, C / groups, kH, kW]
  int64_t OH, OW;         // output spatial size
  int64_t groups;         //
  int64_t sH, sW, pT, pL; // stride; top and left padding
  int64_t dH, dW;         // dilation
};

/// conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1,
/// groups=1), decoded by decodeConv2d ('same' pads the top and left by
/// the first of Conv2dArgs::pads). Checks the input [N, C, H, W] or
/// [C, H, W], the weight [O, C / groups, kH, kW], a bias of O elements and
/// the result: [N, O, OH, OW] (or [O, OH, OW]) of the input's dtype, OH and
/// OW as PyTorch computes them.
bool conv2dArgs(KernelContext &ctx, ConvGeometry &g);

/// max_pool2d(input, kernel_size, stride=kernel_size, padding=0,
/// dilation=1, ceil_mode=False) and, where `indices`,
/// max_pool2d_with_indices, decoded by decodeMaxPool2d (N = 2): a floating
/// 3-D or 4-D input with nonzero non-batch dims, a result of the input's
/// leading dims and PyTorch's output size and, with `indices`, a contiguous
/// i64 indices result of its shape. max_pool3d_with_indices (N = 3, decoded
/// by decodeMaxPool3d; `indices` must be true) likewise over a 4-D or 5-D
/// input of any dtype but bool. Instantiated for N = 2 and 3.
template <size_t N>
bool maxPoolArgs(KernelContext &ctx, MaxPoolArgs<N> &a, bool indices);
/// max_pool2d_with_indices_backward(grad_output, self, kernel_size, stride,
/// padding, dilation, ceil_mode, indices): a floating 3-D or 4-D self,
/// grad_output of its dtype and i64 indices, both of the pooled shape, and
/// a result of self's type. (The indices' range is checked as they are
/// read.)
bool maxPool2dBackwardArgs(KernelContext &ctx, MaxPool2dArgs &a);
/// Fails max_pool2d_with_indices_backward on an index outside its plane.
void failPoolIndex(KernelContext &ctx, int64_t index, int64_t planeSize);
/// convolution_backward(grad_output, input, weight, bias_sizes, stride,
/// padding, dilation, transposed, output_padding, groups, output_mask) of a
/// 2-D convolution, decoded by decodeConvolutionBackward: f32 or f64
/// grad_output [N, O, OH, OW], input [N, C, H, W] and weight
/// [O, C / groups, kH, kW] of one dtype, OH and OW as the forward computes
/// them, and results shaped like the input, the weight and [O] (an empty
/// [0] where output_mask leaves one out). `g` is the forward's geometry.
bool convolutionBackwardArgs(KernelContext &ctx, ConvGeometry &g, bool mask[3]);
/// avg_pool2d and avg_pool3d(input, kernel_size, stride=kernel_size,
/// padding=0, ceil_mode=False, count_include_pad=True,
/// divisor_override=None), decoded by decodeAvgPool2d / decodeAvgPool3d,
/// with max pooling's checks but for an i64 input, which PyTorch's CPU
/// kernels also take. Instantiated for N = 2 and 3.
template <size_t N> bool avgPoolArgs(KernelContext &ctx, AvgPoolArgs<N> &a);
/// adaptive_avg_pool2d (`spatial` 2) and _adaptive_avg_pool3d (3)(input,
/// output_size): a floating input of spatial + 1 or spatial + 2 dims with
/// nonzero non-batch dims, and a result of its leading dims and a
/// non-negative output size.
bool adaptiveAvgPoolArgs(KernelContext &ctx, int spatial);

//===--- Batch norm -------------------------------------------------------===//

/// [N, C, *] as N x C x S; element (n, c, s) is at (n * C + c) * S + s.
struct ChannelLayout {
  int64_t N, C, S;
  explicit ChannelLayout(const Tensor &x) : N(x.shape[0]), C(x.shape[1]), S(1) {
    for (int64_t d = 2; d < x.rank(); ++d)
      S *= x.shape[d];
  }
  double count() const { return static_cast<double>(N * S); }
  /// Calls f(index) for every element of channel c.
  template <typename F> void forChannel(int64_t c, F f) const {
    for (int64_t n = 0; n < N; ++n)
      for (int64_t s = 0, base = (n * C + c) * S; s < S; ++s)
        f(base + s);
  }
};

/// batch_norm and native_batch_norm, decoded by decodeBatchNorm. Also
/// checks the shapes inference checks in a verified graph: an input
/// [N, C, *], weight, bias and running statistics of C elements, a result
/// of the input's shape and, for native_batch_norm (`native`), the mean and
/// invstd results of C elements.
bool batchNormArgs(KernelContext &ctx, BatchNormArgs &a, bool native);

/// The flags of the batch norm backward passes: `training` and `eps` at
/// arguments `first` and `first + 1`, the output mask at `maskArg`.
struct BatchNormBackwardArgs {
  bool training;
  double eps;
  bool mask[3];
};
bool batchNormBackwardArgs(KernelContext &ctx, unsigned first, unsigned maskArg,
                           BatchNormBackwardArgs &a);

/// The statistics a backward pass normalizes with: save_mean / save_invstd
/// (at `saveMean`, `saveMean + 1`) in training, else running_mean /
/// running_var (at `runningMean`, `runningMean + 1`). Both must be tensors.
/// The shapes a batch norm backward pass indexes by, which inference
/// checks in a verified graph and a saved executable states itself: an
/// input [N, C, *] at argument `input`, the arguments `likeInput` of its
/// shape, the tensor arguments `perChannel` of C elements, and three
/// results, shaped like the input where `resultLikeInput` says so and of C
/// elements otherwise.
bool batchNormBackwardShapes(KernelContext &ctx, unsigned input,
                             std::initializer_list<unsigned> likeInput,
                             std::initializer_list<unsigned> perChannel,
                             const bool resultLikeInput[3]);
bool batchNormStatsArgs(KernelContext &ctx, bool training, unsigned saveMean,
                        unsigned runningMean, unsigned &meanArg,
                        unsigned &varArg);

//===--- Losses -----------------------------------------------------------===//

/// nll_loss / cross_entropy(self, target, weight, reduction, ignore_index,
/// label_smoothing): a floating input [N, C, d1, ...] or [C] whose
/// positions p = (n, s) are N * S, S = prod(d1, ...), and an optional
/// weight of C elements. `first` is self's index (nll_loss_backward's
/// arguments start with grad_output).
struct LossArgs {
  Reduction reduction;
  int64_t N, C, S;
};
bool lossArgs(KernelContext &ctx, LossArgs &a, unsigned first = 0);
/// nll_loss_backward(grad_output, self, target, weight, reduction,
/// ignore_index, total_weight): lossArgs from argument 1, then PyTorch's
/// checks of grad_output's and total_weight's shapes and dtypes.
bool nllLossBackwardArgs(KernelContext &ctx, LossArgs &a);
/// cross_entropy's label_smoothing in [0, 1] (0 for nll_loss).
bool labelSmoothingArg(KernelContext &ctx, bool crossEntropy,
                       double &smoothing);
/// A target of class indices must hold integers.
bool classIndexTarget(KernelContext &ctx, const Tensor &target);
/// ignore_index, argument `i` (-100 when None).
int64_t ignoreIndexArg(KernelContext &ctx, unsigned i = 4);

//===--- log_softmax backward ---------------------------------------------===//

/// _log_softmax_backward_data(grad_output, output, dim, input_dtype):
/// floating grad_output and output of one shape; `dim` is wrapped.
bool logSoftmaxBackwardArgs(KernelContext &ctx, int64_t &dim);
/// softmax and log_softmax(self, dim, dtype): `dim` wrapped and in range
/// (any value for a 0-d self, which has one element to normalize), and a
/// result of self's shape.
bool softmaxArgs(KernelContext &ctx, int64_t &dim);

//===--- layer_norm, dropout, embedding -----------------------------------===//

/// layer_norm(input, normalized_shape, weight, bias, eps, ...), and
/// native_group_norm read as one: `rows` is the input seen as rows (its
/// first rank - normDims dims, row-major) of normalized elements (the last
/// normDims), each normalized over itself; the results are contiguous in
/// that order. Element j of row o takes weight and bias element
/// (o % groups) * (inner / span) + j / span, for `inner` elements a row.
struct LayerNormArgs {
  Tensor rows;
  int64_t normDims;
  double eps;
  const Tensor *weight, *bias; // null when None
  /// layer_norm: 1 and 1 (element j takes weight j); native_group_norm: the
  /// groups, and HxW (a channel's elements).
  int64_t groups = 1, span = 1;

  /// The number of rows.
  int64_t numRows() const;
  /// The weight and bias element of element j of row o.
  int64_t weightIndex(int64_t o, int64_t j, int64_t inner) const {
    return (o % groups) * (inner / span) + j / span;
  }
};
/// normalized_shape must be the input's trailing dims, weight and bias hold
/// one element per normalized element, the result has the input's shape
/// and, for native_layer_norm (`native`), mean and rstd one element per row.
bool layerNormArgs(KernelContext &ctx, LayerNormArgs &a, bool native);
/// native_group_norm(input, weight, bias, N, C, HxW, group, eps): input [N,
/// C, *] with HxW the product of *, C divisible by group, weight and bias
/// None or C contiguous elements; out has the input's shape, mean and rstd
/// N * group elements. `rows` is the input viewed as [N, group, C / group,
/// *] with the last normDims = rank - 1 dims normalized.
bool groupNormArgs(KernelContext &ctx, LayerNormArgs &a);

/// dropout(input, p, train), decoded by decodeDropout, and a result of the
/// input's shape; native_dropout (`native`) also a contiguous bool mask of
/// that shape.
bool dropoutArgs(KernelContext &ctx, DropoutArgs &a, bool native = false);

/// Dropout's draws: std::bernoulli_distribution(keep) as libstdc++ draws
/// it (generate_canonical<double>: one 64-bit draw x rounded to a double,
/// scaled by 2^-64 and kept below 1; kept when below `keep`), as one integer
/// compare: x < below, the smallest draw whose rounding reaches keep *
/// 2^64, found once per call. Without AVX-512 an unsigned 64-bit to double
/// conversion is a branch on the top bit, mispredicted for half the draws
/// (3 of the 5 ns a draw took); and every standard library now draws alike.
struct KeepDraw {
  explicit KeepDraw(double keep);
  /// Without branches: a branch on a random draw is mispredicted often.
  bool keeps(uint64_t x) const { return (x < below) | all; }
  /// Draws once, whatever the probability, as libstdc++ does.
  bool operator()(std::mt19937_64 &g) const { return keeps(g()); }

  uint64_t below = 0;
  /// keep >= 1: the canonical draw, kept below 1, is always below keep.
  bool all = false;
};

/// embedding(weight, indices, ...): a 2-D weight, integer indices, and a
/// result of the weight's dtype shaped indices.shape + [weight.shape[1]].
bool embeddingArgs(KernelContext &ctx);
/// Fails an embedding call on an out-of-range row index.
void failEmbeddingIndex(KernelContext &ctx, int64_t index, int64_t rows);

//===--- scaled_dot_product_attention -------------------------------------===//

/// Where one operand's matrices lie: batch b (flat index over the broadcast
/// batch dims) starts at offset + sum(index_d * batchStrides[d]) elements
/// (stride 0 on a broadcast dim); rows and columns step by rs and cs.
struct AttentionOperand {
  const Tensor *t = nullptr;
  std::vector<int64_t> batchStrides;
  int64_t offset = 0, rs = 0, cs = 0;
};

/// scaled_dot_product_attention(query, key, value, attn_mask=None,
/// dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False), read and
/// checked: query [..., L, E], key [..., S, E], value [..., S, Ev] of one
/// floating dtype, batch dims broadcasting to `batchShape` (B batches); an
/// optional bool or query-dtype mask broadcasting to [..., L, S].
/// dropout_p must be 0 and enable_gqa False: the runtime implements neither.
struct AttentionArgs {
  int64_t B = 1, L = 0, S = 0, E = 0, Ev = 0;
  double scale = 1;
  bool causal = false;
  bool hasMask = false, maskIsBool = false;
  std::vector<int64_t> batchShape;
  AttentionOperand q, k, v, mask;

  /// The element offset of batch `b`'s matrix of `o`.
  int64_t batchOffset(const AttentionOperand &o, int64_t b) const;
  /// Whether `o`'s batches are evenly spaced (offset + b * stride), as a
  /// strided-batched gemm needs; `stride` is then that spacing.
  bool evenlySpaced(const AttentionOperand &o, int64_t &stride) const;
};
/// Lays `t` out as batches over `batch` and a [rows, cols] matrix; missing
/// and size-1 dims broadcast (stride 0).
void attentionOperand(const Tensor &t, std::span<const int64_t> batch,
                      AttentionOperand &o);
/// Where attentionArgs finds the optional arguments:
/// scaled_dot_product_attention's order by default; flashForCpu() gives
/// _scaled_dot_product_flash_attention_for_cpu's (query, key, value,
/// dropout_p, is_causal, attn_mask, scale), which has no enable_gqa.
struct AttentionArgOrder {
  unsigned mask = 3, dropout = 4, causal = 5, scale = 6, gqa = 7;
  static AttentionArgOrder flashForCpu() { return {5, 3, 4, 6, ~0u}; }
};
bool attentionArgs(KernelContext &ctx, AttentionArgs &a,
                   const AttentionArgOrder &order = {});
/// _scaled_dot_product_flash_attention_for_cpu's call: attentionArgs in its
/// order, rank-4 operands, a mask (if any) of the query's dtype, and result
/// 1 (logsumexp) [N, H, L] in float32 (float64 for float64).
bool flashAttentionForCpuArgs(KernelContext &ctx, AttentionArgs &a);

//===--- Recurrent layers (lstm, gru) -------------------------------------===//

/// The cell of a recurrent layer: LSTM carries (h, c) through 4 gates
/// (i, f, g, o), GRU carries h through 3 (r, z, n).
enum class RnnCell { Lstm, Gru };
inline const char *rnnName(RnnCell cell) {
  return cell == RnnCell::Lstm ? "lstm" : "gru";
}
inline unsigned rnnStates(RnnCell cell) {
  return cell == RnnCell::Lstm ? 2 : 1;
}
inline int64_t rnnGates(RnnCell cell) { return cell == RnnCell::Lstm ? 4 : 3; }

/// The scalar arguments that follow the weights.
struct RnnConfig {
  RnnCell cell = RnnCell::Lstm;
  unsigned numTensors = 0;
  bool hasBiases = true;
  int64_t layers = 1;
  double dropout = 0;
  bool train = false;
  bool bidirectional = false;
  bool batchFirst = false;
};

/// lstm(input, h0, c0, weights..., has_biases, num_layers, dropout, train,
/// bidirectional, batch_first) -> (output, h_n, c_n) and gru (the same
/// without c0 and c_n): checks the counts, dtypes (f32 or f64, all alike)
/// and shapes of every tensor and result.
bool rnnArgs(KernelContext &ctx, RnnCell cell, RnnConfig &cfg);

} // namespace traceir

#endif // TRACEIR_RUNTIME_NNARGS_H
