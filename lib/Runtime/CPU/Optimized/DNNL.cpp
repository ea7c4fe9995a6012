//===- DNNL.cpp - conv2d and 2-D pooling on oneDNN ------------------------===//
//
// The optimized tier's conv2d, max_pool2d and avg_pool2d on oneDNN (Debian
// libdnnl-dev), the library PyTorch's CPU convolution runs on, for f32
// NCHW operands that are contiguous (conv2d's input may be strided: it is
// gathered first, and a depthwise conv of a few output pixels runs as a
// direct loop instead); everything else (f64, which oneDNN does not
// compute, half types, strided views, divisor_override) is left to the
// portable kernels. Arguments are read and checked by the portable
// kernels' readers (NNArgs.h), so both tiers accept the same calls; output
// sizes come from the result's shape (inference computed them), and the
// right and bottom padding oneDNN wants are what makes those sizes.
//
// Primitives are cached by their shapes and parameters, as PyTorch's ideep
// does: creating one (choosing an implementation, generating its JIT code)
// costs far more than running a small one. Each runs with a user-managed
// scratchpad from ctx.scratch(), so the allocator counts it, a later memory
// plan can place it, and a cached primitive may run on two threads at once.
// Every operand is given in the layout oneDNN chooses (format_tag::any;
// a pool's input nChw8c) and reordered into it through scratch on every
// call, the result reordered back to NCHW: on NCHW itself oneDNN 2.6 runs
// im2col + GEMM (gemm:jit) and a plain pooling loop (simple_nchw), which
// measured (1 thread, bench/kernel_bench.py) 39 ms against 22 ms blocked,
// reorders included, for resnet's 8x64x56x56 3x3, 24 against 3.5 ms for a
// 96-channel depthwise 3x3 and 186 against 13 ms for the stem's max pool.
// The weights are reordered every call too (the caller may change them
// between runs, so a reordered copy could not be kept); they are small
// beside the activations, except in 1x1 convolutions over few pixels,
// which therefore run as BLAS products instead (pointwise()).
//
// oneDNN threads with OpenMP (Debian's is built so) and reads the thread
// count from omp_get_max_threads(): each call sets it to the runtime's
// (CPU/Parallel.h), and the cache keys by it, as a primitive's blocking
// depends on it.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CPU/Gemm.h"
#include "TraceIR/Runtime/CPU/Kernels.h"
#include "TraceIR/Runtime/CPU/Optimized.h"
#include "TraceIR/Runtime/CPU/Parallel.h"
#include "TraceIR/Runtime/NNArgs.h"

#ifdef TRACEIR_HAVE_DNNL
#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <map>
#include <mutex>
#include <optional>
#include <tuple>
#include <unordered_map>
#ifdef _OPENMP
#include <omp.h>
#endif
#endif

using namespace traceir;

#ifndef TRACEIR_HAVE_DNNL
// Built without oneDNN: the portable kernels run these ops.
bool cpu::fast::conv2d(KernelContext &) { return false; }
bool cpu::fast::max_pool2d(KernelContext &) { return false; }
bool cpu::fast::avg_pool2d(KernelContext &) { return false; }
const char *cpu::dnnlVersion() { return nullptr; }
#else

namespace {
using Dims = dnnl::memory::dims;
using Tag = dnnl::memory::format_tag;
constexpr auto kF32 = dnnl::memory::data_type::f32;

dnnl::engine &engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

/// NCHW in blocks of as many channels as oneDNN's vectors hold: 16 where it
/// runs AVX-512 kernels, else 8.
Tag channelBlocked() {
  static const Tag tag = [] {
    auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
    auto avx512 = static_cast<unsigned>(dnnl::cpu_isa::avx512_core);
    return (isa & avx512) == avx512 ? Tag::nChw16c : Tag::nChw8c;
  }();
  return tag;
}

/// Below these amounts of work a primitive runs on one thread: its
/// parallel regions (reorders, the primitive, the reorder back) would cost
/// more in waking the pool than the second thread saves. The bounds are
/// about 0.1 ms of one core's work: multiply-adds of a convolution, window
/// elements read by a pool. (squeezenet1_1 at 64x64, all of whose 26
/// convolutions are below it, ran 8x slower at two threads than at one
/// with OMP_WAIT_POLICY=PASSIVE.)
constexpr double kSerialConvMacs = 1 << 22;
constexpr double kSerialPoolReads = 1 << 17;

/// `n` threads for oneDNN's OpenMP, which reads omp_get_max_threads().
int useThreads(int n) {
#ifdef _OPENMP
  if (omp_get_max_threads() != n)
    omp_set_num_threads(n);
#endif
  return n;
}

/// A convolution's threads: one below kSerialConvMacs multiply-adds, and in
/// deterministic mode, where the threads would change its rounding. (Work
/// in double: a product of verified sizes that need not fit int64.)
int convThreads(double macs) {
  return useThreads(
      macs < kSerialConvMacs || cpu::deterministic() ? 1 : cpu::numThreads());
}

/// A pool's threads: one below kSerialPoolReads window reads. Its rounding
/// does not depend on them: each output is one window's, read in one order.
int poolThreads(double reads) {
  return useThreads(reads < kSerialPoolReads ? 1 : cpu::numThreads());
}

/// Whether `t` is f32 and dense row-major (the NCHW oneDNN is told).
bool plainF32(const Tensor &t) {
  return t.dtype == DType::F32 && t.isContiguous();
}

/// The padding after the input along one dim that makes oneDNN's output
/// size `out` (its floor rule), or nullopt where none does.
std::optional<int64_t> padAfter(int64_t in, int64_t out, int64_t k, int64_t s,
                                int64_t d, int64_t before) {
  int64_t span = d * (k - 1) + 1;
  int64_t after = std::max<int64_t>((out - 1) * s + span - in - before, 0);
  if ((in + before + after - span) / s + 1 != out)
    return std::nullopt;
  return after;
}

/// A primitive and what its call needs: its scratchpad's size and, for a
/// convolution whose weights' layout is not PyTorch's, that layout and the
/// reorder into it.
struct Cached {
  dnnl::primitive prim;
  size_t scratchpad = 0;
  dnnl::memory::desc weights;
  std::optional<dnnl::reorder> weightsReorder;
  /// A convolution's input and output where it chose a blocked layout, and
  /// the reorders from and to NCHW.
  dnnl::memory::desc src, dst;
  std::optional<dnnl::reorder> srcReorder, dstReorder;
};

/// A reorder from `from` to `to`, or none where they are one layout.
std::optional<dnnl::reorder> reorderIfNeeded(const dnnl::memory::desc &from,
                                             const dnnl::memory::desc &to) {
  if (from == to)
    return std::nullopt;
  return dnnl::reorder(
      dnnl::reorder::primitive_desc(engine(), from, engine(), to));
}

/// The cache of one kind of primitive, by its key; a primitive that failed
/// to be created is kept as nullopt, so it is not tried again.
template <size_t K> class PrimitiveCache {
public:
  using Key = std::array<int64_t, K>;
  template <typename Make>
  const std::optional<Cached> &get(const Key &key, Make make) {
    std::lock_guard<std::mutex> lock(mu);
    auto it = entries.find(key);
    if (it == entries.end()) {
      std::optional<Cached> made;
      try {
        made = make();
      } catch (const dnnl::error &) {
        // An unsupported combination: the portable kernel runs it.
      }
      it = entries.emplace(key, std::move(made)).first;
    }
    return it->second;
  }

private:
  std::mutex mu;
  std::map<Key, std::optional<Cached>> entries;
};

dnnl::primitive_attr userScratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

/// Runs `prim` with `args` and its scratchpad from ctx.scratch(); false
/// (the call failed) when the scratchpad could not be allocated or oneDNN
/// failed.
bool execute(KernelContext &ctx, const Cached &c,
             std::unordered_map<int, dnnl::memory> args) {
  if (c.scratchpad) {
    void *pad = ctx.scratch(c.scratchpad);
    if (!pad)
      return false;
    dnnl::memory::desc d({static_cast<int64_t>(c.scratchpad)},
                         dnnl::memory::data_type::u8, Tag::a);
    args.emplace(DNNL_ARG_SCRATCHPAD, dnnl::memory(d, engine(), pad));
  }
  try {
    dnnl::stream s(engine());
    c.prim.execute(s, args);
    s.wait();
  } catch (const dnnl::error &e) {
    ctx.fail(std::string("oneDNN failed: ") + e.what());
    return false;
  }
  return true;
}

/// Whether the `n` floats at `p` hold a NaN, on the pool's threads.
bool hasNaN(const float *p, int64_t n) {
  std::atomic<bool> found{false};
  cpu::parallelFor(n, cpu::grainSize(), [&](int64_t b, int64_t e) {
    constexpr int64_t kBlock = 4096;
    for (int64_t i = b; i < e && !found.load(std::memory_order_relaxed);
         i += kBlock)
      if (cpu::optimized::anyNaN(p + i, std::min(e, i + kBlock) - i))
        found.store(true, std::memory_order_relaxed);
  });
  return found.load();
}

dnnl::memory plain(const Dims &dims, Tag tag, const void *p) {
  return dnnl::memory({dims, kF32, tag}, engine(), const_cast<void *>(p));
}

/// An operand of a primitive: the caller's memory, and the layout and
/// reorder the primitive wants it in (no reorder: the caller's layout).
struct Operand {
  int arg;
  dnnl::memory user;
  const dnnl::memory::desc &desc;
  const std::optional<dnnl::reorder> &reorder;
};

/// Runs `c` on `inputs` and `output`, each reordered through scratch where
/// the primitive wants another layout, plus the `extra` arguments.
void runReordered(KernelContext &ctx, const Cached &c,
                  std::initializer_list<Operand> inputs, const Operand &output,
                  std::unordered_map<int, dnnl::memory> extra = {}) {
  std::unordered_map<int, dnnl::memory> args = std::move(extra);
  auto place = [&](const Operand &o) -> bool {
    if (!o.reorder) {
      args.emplace(o.arg, o.user);
      return true;
    }
    void *buf = ctx.scratch(o.desc.get_size());
    if (!buf)
      return false;
    args.emplace(o.arg, dnnl::memory(o.desc, engine(), buf));
    return true;
  };
  for (const Operand &o : inputs)
    if (!place(o))
      return;
  if (!place(output))
    return;
  try {
    dnnl::stream s(engine());
    for (const Operand &o : inputs)
      if (o.reorder)
        o.reorder->execute(
            s, {{DNNL_ARG_FROM, o.user}, {DNNL_ARG_TO, args.at(o.arg)}});
    s.wait();
  } catch (const dnnl::error &e) {
    return ctx.fail(std::string("oneDNN failed: ") + e.what());
  }
  if (!execute(ctx, c, args) || !output.reorder)
    return;
  try {
    dnnl::stream s(engine());
    output.reorder->execute(
        s, {{DNNL_ARG_FROM, args.at(output.arg)}, {DNNL_ARG_TO, output.user}});
    s.wait();
  } catch (const dnnl::error &e) {
    ctx.fail(std::string("oneDNN failed: ") + e.what());
  }
}
} // namespace

const char *cpu::dnnlVersion() {
  static const std::string v = [] {
    const dnnl_version_t *ver = dnnl::version();
    return std::to_string(ver->major) + "." + std::to_string(ver->minor) + "." +
           std::to_string(ver->patch);
  }();
  return v.c_str();
}

namespace {
/// A depthwise conv2d (one filter per channel) whose output has at most
/// this many pixels runs as a direct loop: oneDNN 2.6 took 0.56 ms for
/// ConvNeXt's 384-channel 7x7 on a 2x2 image and 0.86 ms on 1x1 (eager,
/// on oneDNN 3: 0.16 and 0.23), where the loop below reads each weight
/// once and does at most 16 and 1 taps a channel. From 4x4 on oneDNN's
/// vectorized kernel is as fast (measured at 192 channels).
constexpr int64_t kDirectDepthwisePixels = 8;

/// out[n, c] = bias[c] + the taps of x[n, c] (any strides) under w[c, 0],
/// accumulated in float in the order kh, kw, then clamped where `act` is set
/// (a fused relu_ or hardtanh_): f32 operands, weight and result contiguous.
void depthwiseDirect(const ConvGeometry &g, const Tensor &x, const float *w,
                     const float *bias, float *out, const Epilogue *act) {
  int64_t lead = x.rank() - 3; // 0 for an unbatched [C, H, W] input
  int64_t sn = lead ? x.strides[0] : 0, sc = x.strides[lead],
          sh = x.strides[lead + 1], sw = x.strides[lead + 2];
  const float *in = x.data<float>();
  int64_t planes = g.N * g.C, taps = g.kH * g.kW, pixels = g.OH * g.OW;
  int64_t grain = std::max<int64_t>(1, cpu::grainSize() / (taps * pixels));
  cpu::parallelFor(planes, grain, [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) {
      int64_t n = p / g.C, c = p % g.C;
      const float *xp = in + n * sn + c * sc, *wp = w + c * taps;
      float *op = out + p * pixels;
      for (int64_t oh = 0; oh < g.OH; ++oh)
        for (int64_t ow = 0; ow < g.OW; ++ow) {
          float acc = bias ? bias[c] : 0.0f;
          for (int64_t kh = 0; kh < g.kH; ++kh) {
            int64_t ih = oh * g.sH - g.pT + kh * g.dH;
            if (ih < 0 || ih >= g.H)
              continue;
            for (int64_t kw = 0; kw < g.kW; ++kw) {
              int64_t iw = ow * g.sW - g.pL + kw * g.dW;
              if (iw >= 0 && iw < g.W)
                acc += xp[ih * sh + iw * sw] * wp[kh * g.kW + kw];
            }
          }
          op[oh * g.OW + ow] = acc;
        }
      if (act)
        cpu::optimized::clampFloats(op, pixels, *act);
    }
  });
}
/// Whether conv2d is a matrix product per image: a 1x1 kernel, one group,
/// no padding (any stride).
bool isPointwise(const ConvGeometry &g) {
  return g.kH == 1 && g.kW == 1 && g.groups == 1 && g.pT == 0 && g.pL == 0 &&
         g.OH == (g.H - 1) / g.sH + 1 && g.OW == (g.W - 1) / g.sW + 1;
}

/// How many parts a pointwise conv2d's images split into, each part's
/// images on one thread with the GEMM on that thread alone; 1 where
/// each image's product splits over the threads instead: one thread,
/// deterministic mode (the split changes the rounding), fewer images than
/// threads, or too little work to wake a second thread. Measured on
/// resnet50's 1x1 shapes at batch 8 with two threads (bench/README.md),
/// OpenBLAS 0.3.21 spread each image's product over both threads at about
/// 1.1-1.9x its one-thread speed, while whole images per thread ran at
/// nearly 2x: 8x256x56x56 -> 64 took 6.3 ms against 4.4, 8x2048x2x2 ->
/// 512 3.4 against 1.8.
int64_t pointwiseParts(const ConvGeometry &g) {
  const int64_t threads = cpu::numThreads();
  if (threads < 2 || cpu::deterministic() || g.N < threads ||
      double(g.N) * g.O * g.OH * g.OW * g.C < kSerialConvMacs)
    return 1;
  return threads;
}

/// A pointwise conv2d of a contiguous input x: out[n] (O x OH*OW) = w (O x C)
/// times x[n] (C x OH*OW, the pixels a stride keeps gathered into scratch
/// first), the bias broadcast into the result before. Through the BLAS, as
/// PyTorch's CPU convolution runs these (slow_conv2d, whose im2col is then
/// a copy at most): oneDNN reorders the weight on every call (DNNL.cpp's
/// header says why), and for resnet50's last stage at 2x2 pixels, 8 MB of
/// weight for 4 pixels, that reorder was nearly all of a 6 ms call. The
/// images split over threads where pointwiseParts says so; each image's
/// result clamped after its product, while it is in cache, where `act` is
/// set (a fused relu_ or hardtanh_). False where scratch could not be had
/// (the error is set).
bool pointwise(KernelContext &ctx, const ConvGeometry &g, const float *x,
               const float *w, const float *bias, float *out,
               const Epilogue *act) {
  const int64_t P = g.OH * g.OW, HW = g.H * g.W;
  const int64_t parts = pointwiseParts(g);
  float *cols = nullptr;
  if (P != HW) {
    // parts <= threads, and C * P is at most the input's element count.
    cols = static_cast<float *>(ctx.scratch(parts * g.C * P, sizeof(float)));
    if (!cols)
      return false;
  }
  // Image n with the strided pixels gathered into `part`'s columns.
  auto image = [&](int64_t n, int64_t part) {
    const float *xn = x + n * g.C * HW;
    float *on = out + n * g.O * P;
    if (cols) {
      float *pc = cols + part * g.C * P;
      for (int64_t c = 0; c < g.C; ++c)
        for (int64_t oh = 0; oh < g.OH; ++oh)
          for (int64_t ow = 0; ow < g.OW; ++ow)
            pc[(c * g.OH + oh) * g.OW + ow] =
                xn[(c * g.H + oh * g.sH) * g.W + ow * g.sW];
      xn = pc;
    }
    if (bias)
      for (int64_t o = 0; o < g.O; ++o)
        std::fill(on + o * P, on + (o + 1) * P, bias[o]);
    // Inside a parallel region (parts > 1) the product stays on the
    // calling thread (Gemm.h).
    cpu::sgemm(false, false, g.O, P, g.C, 1.0f, w, g.C, xn, P,
               bias ? 1.0f : 0.0f, on, P);
    if (act)
      cpu::optimized::clampFloats(on, g.O * P, *act);
  };
  if (parts == 1) {
    for (int64_t n = 0; n < g.N; ++n)
      image(n, 0);
    return true;
  }
  cpu::parallelFor(parts, 1, [&](int64_t b, int64_t e) {
    for (int64_t part = b; part < e; ++part)
      for (int64_t n = part * g.N / parts; n < (part + 1) * g.N / parts; ++n)
        image(n, part);
  });
  return true;
}
} // namespace

/// conv2d of f32 operands, any groups, bias fused: the weight and bias
/// contiguous, the input any strides (a permuted channels-last view, as
/// ConvNeXt's LayerNorm2d leaves before its downsampling convs, is
/// gathered into scratch first: a copy is cheap beside the portable
/// kernel's loops).
bool cpu::fast::conv2d(KernelContext &ctx) {
  const Tensor &x0 = ctx.tensor(0), &w = ctx.tensor(1);
  const Tensor *bias = ctx.isTensor(2) ? &ctx.tensor(2) : nullptr;
  if (x0.dtype != DType::F32 || !plainF32(w) || (bias && !plainF32(*bias)) ||
      !ctx.result(0).isContiguous())
    return false;
  ConvGeometry g;
  if (!conv2dArgs(ctx, g))
    return true; // failed, as the portable kernel would
  if (g.N * g.C * g.H * g.W == 0 || ctx.result(0).numel() == 0)
    return false;
  // A relu_ or hardtanh_ next on the result (Epilogues.cpp): the direct
  // and pointwise paths apply it as they write each plane or image.
  // oneDNN's convolutions do not: its relu and clip post-ops turn NaN into
  // the bound (measured, oneDNN 2.6's brgconv), where PyTorch's relu keeps
  // it, so there the activation stays a pass of its own.
  const Epilogue *act = ctx.epilogue();
  if (g.groups == g.C && g.O == g.C && g.OH * g.OW <= kDirectDepthwisePixels) {
    depthwiseDirect(g, x0, w.data<float>(),
                    bias ? bias->data<float>() : nullptr,
                    ctx.result(0).data<float>(), act);
    if (act)
      ctx.appliedEpilogue();
    return true;
  }
  Tensor x = x0;
  Storage gathered;
  if (!x0.isContiguous()) {
    gathered.data = ctx.scratch(x0.numel(), sizeof(float));
    if (!gathered.data)
      return true;
    x.storage = &gathered;
    x.offset = 0;
    x.strides = Tensor::contiguousStrides(x0.shape);
    cpu::copyTensor(x0, x);
  }
  if (isPointwise(g)) {
    if (pointwise(ctx, g, x.data<float>(), w.data<float>(),
                  bias ? bias->data<float>() : nullptr,
                  ctx.result(0).data<float>(), act) &&
        act)
      ctx.appliedEpilogue();
    return true;
  }
  std::optional<int64_t> pB = padAfter(g.H, g.OH, g.kH, g.sH, g.dH, g.pT);
  std::optional<int64_t> pR = padAfter(g.W, g.OW, g.kW, g.sW, g.dW, g.pL);
  if (!pB || !pR)
    return false;
  int threads =
      convThreads(double(g.N) * g.O * g.OH * g.OW * g.Cg * g.kH * g.kW);
  static PrimitiveCache<18> cache;
  const std::optional<Cached> &c = cache.get(
      {g.N, g.C, g.H, g.W, g.O, g.kH, g.kW, g.OH, g.OW, g.groups, g.sH, g.sW,
       g.pT, g.pL, *pB, *pR, g.dH * 4096 + g.dW,
       (bias != nullptr) + 2 * threads},
      [&]() -> std::optional<Cached> {
        Dims wdims = g.groups == 1
                         ? Dims{g.O, g.Cg, g.kH, g.kW}
                         : Dims{g.groups, g.O / g.groups, g.Cg, g.kH, g.kW};
        // A depthwise convolution's activations in the channel blocks of
        // the CPU's vectors: left to choose (`any`), oneDNN 2.6 takes
        // channels-last for its brdgmm kernel, whose reorders to and from
        // NCHW (jit:uni) took most of the call: 8x96x56x56 3x3 took 6.4 ms
        // against 2.1 ms blocked, eager's 2.1 to 3.0 (AVX-512 machine).
        const bool depthwise = g.groups == g.C && g.groups == g.O;
        const Tag act = depthwise ? channelBlocked() : Tag::any;
        dnnl::memory::desc src({g.N, g.C, g.H, g.W}, kF32, act);
        dnnl::memory::desc dst({g.N, g.O, g.OH, g.OW}, kF32, act);
        dnnl::memory::desc wts(wdims, kF32, Tag::any);
        dnnl::memory::desc bia({g.O}, kF32, Tag::a);
        // oneDNN counts dilation from 0 (1 is PyTorch's no dilation).
        Dims strides{g.sH, g.sW}, dil{g.dH - 1, g.dW - 1}, padL{g.pT, g.pL},
            padR{*pB, *pR};
        auto desc = bias ? dnnl::convolution_forward::desc(
                               dnnl::prop_kind::forward_inference,
                               dnnl::algorithm::convolution_direct, src, wts,
                               bia, dst, strides, dil, padL, padR)
                         : dnnl::convolution_forward::desc(
                               dnnl::prop_kind::forward_inference,
                               dnnl::algorithm::convolution_direct, src, wts,
                               dst, strides, dil, padL, padR);
        dnnl::convolution_forward::primitive_desc pd(desc, userScratchpad(),
                                                     engine());
        Cached c{dnnl::convolution_forward(pd),
                 pd.scratchpad_desc().get_size(),
                 pd.weights_desc(),
                 {},
                 pd.src_desc(),
                 pd.dst_desc(),
                 {},
                 {}};
        c.weightsReorder = reorderIfNeeded(
            {wdims, kF32, g.groups == 1 ? Tag::oihw : Tag::goihw}, c.weights);
        c.srcReorder =
            reorderIfNeeded({{g.N, g.C, g.H, g.W}, kF32, Tag::nchw}, c.src);
        c.dstReorder =
            reorderIfNeeded(c.dst, {{g.N, g.O, g.OH, g.OW}, kF32, Tag::nchw});
        return c;
      });
  if (!c)
    return false;
  std::unordered_map<int, dnnl::memory> extra;
  if (bias)
    extra.emplace(DNNL_ARG_BIAS, plain({g.O}, Tag::a, bias->bytes()));
  runReordered(
      ctx, *c,
      {{DNNL_ARG_SRC, plain({g.N, g.C, g.H, g.W}, Tag::nchw, x.bytes()), c->src,
        c->srcReorder},
       {DNNL_ARG_WEIGHTS,
        plain(c->weights.dims(), g.groups == 1 ? Tag::oihw : Tag::goihw,
              w.bytes()),
        c->weights, c->weightsReorder}},
      {DNNL_ARG_DST,
       plain({g.N, g.O, g.OH, g.OW}, Tag::nchw, ctx.result(0).bytes()), c->dst,
       c->dstReorder},
      std::move(extra));
  return true;
}

namespace {
/// A 2-D pool of an f32 contiguous [N, C, H, W] or [C, H, W] input into
/// its result with oneDNN's `alg`; false where oneDNN cannot express it.
bool pool2d(KernelContext &ctx, dnnl::algorithm alg, const MaxPoolArgs<2> &a) {
  const Tensor &x = ctx.tensor(0);
  Tensor &out = ctx.result(0);
  if (!plainF32(x) || x.numel() == 0 || out.numel() == 0)
    return false;
  int r = x.rank();
  int64_t N = r == 4 ? x.shape[0] : 1, C = x.shape[r - 3], H = x.shape[r - 2],
          W = x.shape[r - 1], OH = out.shape[r - 2], OW = out.shape[r - 1];
  std::optional<int64_t> pB =
      padAfter(H, OH, a.kernel[0], a.stride[0], a.dilation[0], a.padding[0]);
  std::optional<int64_t> pR =
      padAfter(W, OW, a.kernel[1], a.stride[1], a.dilation[1], a.padding[1]);
  if (!pB || !pR)
    return false;
  // oneDNN's average with padding divides by the whole window; PyTorch's
  // by the part that lies within the padded input, which is less for a
  // window that ceil_mode lets run past the padding.
  if (alg == dnnl::algorithm::pooling_avg_include_padding &&
      (*pB > a.padding[0] || *pR > a.padding[1]))
    return false;
  int threads =
      poolThreads(double(N) * C * OH * OW * a.kernel[0] * a.kernel[1]);
  static PrimitiveCache<17> cache;
  const std::optional<Cached> &c = cache.get(
      {static_cast<int64_t>(alg), N, C, H, W, OH, OW, a.kernel[0], a.kernel[1],
       a.stride[0], a.stride[1], a.padding[0], a.padding[1], *pB, *pR,
       a.dilation[0] * 4096 + a.dilation[1], threads},
      [&]() -> std::optional<Cached> {
        // oneDNN pools NCHW with a plain loop (simple_nchw) and a blocked
        // layout with its JIT kernels.
        dnnl::memory::desc src({N, C, H, W}, kF32, Tag::nChw8c);
        dnnl::pooling_v2_forward::desc desc(
            dnnl::prop_kind::forward_inference, alg, src,
            {{N, C, OH, OW}, kF32, Tag::any}, {a.stride[0], a.stride[1]},
            {a.kernel[0], a.kernel[1]}, {a.dilation[0] - 1, a.dilation[1] - 1},
            {a.padding[0], a.padding[1]}, {*pB, *pR});
        dnnl::pooling_v2_forward::primitive_desc pd(desc, userScratchpad(),
                                                    engine());
        Cached c;
        c.prim = dnnl::pooling_v2_forward(pd);
        c.scratchpad = pd.scratchpad_desc().get_size();
        c.src = pd.src_desc();
        c.dst = pd.dst_desc();
        c.srcReorder = reorderIfNeeded({{N, C, H, W}, kF32, Tag::nchw}, c.src);
        c.dstReorder =
            reorderIfNeeded(c.dst, {{N, C, OH, OW}, kF32, Tag::nchw});
        return c;
      });
  if (!c)
    return false;
  runReordered(ctx, *c,
               {{DNNL_ARG_SRC, plain({N, C, H, W}, Tag::nchw, x.bytes()),
                 c->src, c->srcReorder}},
               {DNNL_ARG_DST, plain({N, C, OH, OW}, Tag::nchw, out.bytes()),
                c->dst, c->dstReorder});
  return true;
}
} // namespace

/// max_pool2d of an input without NaN: oneDNN's max skips a NaN (its
/// compare is false), where PyTorch's lets it win its windows; one pass
/// over the input finds one, and the portable kernel runs that call.
bool cpu::fast::max_pool2d(KernelContext &ctx) {
  const Tensor &x = ctx.tensor(0);
  if (!plainF32(x) || hasNaN(x.data<float>(), x.numel()))
    return false;
  MaxPoolArgs<2> a;
  if (!maxPoolArgs<2>(ctx, a, false))
    return true; // failed, as the portable kernel would
  return pool2d(ctx, dnnl::algorithm::pooling_max, a);
}

/// avg_pool2d without divisor_override (oneDNN has none).
bool cpu::fast::avg_pool2d(KernelContext &ctx) {
  if (!plainF32(ctx.tensor(0)))
    return false;
  AvgPoolArgs<2> a;
  if (!avgPoolArgs<2>(ctx, a))
    return true; // failed, as the portable kernel would
  if (a.divisor)
    return false;
  return pool2d(ctx,
                a.countIncludePad
                    ? dnnl::algorithm::pooling_avg_include_padding
                    : dnnl::algorithm::pooling_avg_exclude_padding,
                a);
}

#endif // TRACEIR_HAVE_DNNL
