//===- OpArgsTest.cpp - Each op family's arguments, decoded once ----------===//
//
// The decoders of Support/OpArgs.h, and that the registry's inference and
// the runtime's kernels refuse a bad call with the decoder's one message.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Support/OpArgs.h"
#include "TestTensors.h"
#include "TraceIR/Dialect/TraceDialect.h"
#include "TraceIR/Runtime/Build.h"
#include "TraceIR/Runtime/NNArgs.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

using namespace traceir;

namespace {

Scalar intScalar(int64_t v) {
  ScalarValue s;
  s.kind = ScalarValue::Kind::Int;
  s.i = v;
  return decodeScalar(s);
}
Scalar listScalar(std::vector<int64_t> v) {
  ScalarValue s;
  s.kind = ScalarValue::Kind::List;
  for (int64_t e : v) {
    ScalarValue i;
    i.kind = ScalarValue::Kind::Int;
    i.i = e;
    s.elements.push_back(i);
  }
  return decodeScalar(s);
}
Scalar stringScalar(std::string v) {
  ScalarValue s;
  s.kind = ScalarValue::Kind::String;
  s.s = std::move(v);
  return decodeScalar(s);
}
Scalar floatScalar(double v) {
  ScalarValue s;
  s.kind = ScalarValue::Kind::Float;
  s.f = v;
  return decodeScalar(s);
}

TEST(OpArgs, Conv2dDefaultsPairsAndSamePadding) {
  ListCallArgs args; // conv2d(input, weight)
  args.addTensor();
  args.addTensor();
  Conv2dArgs conv;
  std::string err;
  ASSERT_TRUE(decodeConv2d(args, conv, err)) << err;
  EXPECT_EQ(conv.stride, (std::array<int64_t, 2>{1, 1}));
  EXPECT_EQ(conv.groups, 1);
  EXPECT_FALSE(conv.same);
  // conv2d(x, w, None, 2, [1, 3], 1, 2): one int is both dims.
  args.addScalar(Scalar());
  args.addScalar(intScalar(2));
  args.addScalar(listScalar({1, 3}));
  args.addScalar(intScalar(1));
  args.addScalar(intScalar(2));
  ASSERT_TRUE(decodeConv2d(args, conv, err)) << err;
  EXPECT_EQ(conv.stride, (std::array<int64_t, 2>{2, 2}));
  EXPECT_EQ(conv.padding, (std::array<int64_t, 2>{1, 3}));
  EXPECT_EQ(conv.groups, 2);
  // 7 - 3 + 2 * 1 = 6, in strides of 2: 4 windows.
  EXPECT_EQ(conv.outputSize(0, 7, 3), 4);
  EXPECT_EQ(conv.outputSize(0, 1, 5), std::nullopt);
  // padding='same' pads dilation * (k - 1), the odd one after, as PyTorch.
  args.scalars[3] = intScalar(1);
  args.scalars[4] = stringScalar("same");
  args.scalars[5] = intScalar(3);
  ASSERT_TRUE(decodeConv2d(args, conv, err)) << err;
  EXPECT_TRUE(conv.same);
  EXPECT_EQ(conv.pads(0, 2), (std::array<int64_t, 2>{1, 2}));
  EXPECT_EQ(conv.outputSize(1, 9, 2), 9);
  // ... and only with stride 1.
  args.scalars[3] = intScalar(2);
  EXPECT_FALSE(decodeConv2d(args, conv, err));
  EXPECT_EQ(err, "padding='same' is not supported for strided convolutions");
  args.scalars[3] = listScalar({1, 2, 3});
  EXPECT_FALSE(decodeConv2d(args, conv, err));
  EXPECT_EQ(err, "stride must have 1 or 2 values, got [1, 2, 3]");
}

TEST(OpArgs, MaxPoolStrideDefaultsToTheKernel) {
  ListCallArgs args; // max_pool2d(x, [3, 2], [])
  args.addTensor();
  args.addScalar(listScalar({3, 2}));
  args.addScalar(listScalar({}));
  MaxPool2dArgs pool;
  std::string err;
  ASSERT_TRUE(decodeMaxPool2d(args, pool, err)) << err;
  EXPECT_EQ(pool.stride, (std::array<int64_t, 2>{3, 2}));
  EXPECT_EQ(pool.outputSize(0, 7), 2);
  pool.ceil = true;
  EXPECT_EQ(pool.outputSize(0, 7), 3);
  ListCallArgs none;
  none.addTensor();
  EXPECT_FALSE(decodeMaxPool2d(none, pool, err));
  EXPECT_EQ(err, "kernel_size is required");
}

TEST(OpArgs, Pool3dTriplesAndTheLastWindowRule) {
  ListCallArgs args; // avg_pool3d(x, 2, [1, 2, 2], [1, 0, 1], True)
  args.addTensor();
  args.addScalar(intScalar(2));
  args.addScalar(listScalar({1, 2, 2}));
  args.addScalar(listScalar({1, 0, 1}));
  args.addScalar(intScalar(1));
  AvgPool3dArgs pool;
  std::string err;
  ASSERT_TRUE(decodeAvgPool3d(args, pool, err)) << err;
  EXPECT_EQ(pool.kernel, (std::array<int64_t, 3>{2, 2, 2}));
  EXPECT_EQ(pool.dilation, (std::array<int64_t, 3>{1, 1, 1}));
  // W = 7, k 2, s 2, pad 1: ceil(7 / 2) + 1 = 5 windows, but the fifth
  // would start at 8 >= 7 + 1, in the right padding: dropped.
  EXPECT_EQ(pool.outputSize(2, 7), 4);
  EXPECT_EQ(pool.outputSize(1, 7), 4);
  args.scalars[2] = listScalar({1, 2});
  EXPECT_FALSE(decodeAvgPool3d(args, pool, err));
  EXPECT_EQ(err, "stride must have 1 or 3 values, got [1, 2]");
  MaxPool3dArgs max;
  args.scalars[2] = listScalar({});
  args.scalars[4] = listScalar({1, 3, 1}); // max pooling's dilation
  ASSERT_TRUE(decodeMaxPool3d(args, max, err)) << err;
  EXPECT_EQ(max.stride, (std::array<int64_t, 3>{2, 2, 2}));
  EXPECT_EQ(max.dilation, (std::array<int64_t, 3>{1, 3, 1}));
}

TEST(OpArgs, Col2imCountsTheSlidingBlocks) {
  ListCallArgs args; // col2im(x, [7, 9], [2, 2], [2, 1], 1, [1, 2])
  args.addTensor();
  args.addScalar(listScalar({7, 9}));
  args.addScalar(listScalar({2, 2}));
  args.addScalar(listScalar({2, 1}));
  args.addScalar(intScalar(1));
  args.addScalar(listScalar({1, 2}));
  Col2imArgs col;
  std::string err;
  std::vector<int64_t> shape = {3, 8, 35};
  ASSERT_TRUE(decodeCol2im(args, shape, col, err)) << err;
  EXPECT_EQ(col.blocks, (std::array<int64_t, 2>{7, 5}));
  EXPECT_EQ(col.result, (std::vector<int64_t>{3, 2, 7, 9}));
  shape = {8, -1}; // an unknown length passes; unbatched
  ASSERT_TRUE(decodeCol2im(args, shape, col, err)) << err;
  EXPECT_EQ(col.result, (std::vector<int64_t>{2, 7, 9}));
  shape = {3, 8, 36};
  EXPECT_FALSE(decodeCol2im(args, shape, col, err));
  EXPECT_EQ(err, "expected the input's dim 2 to be the number of sliding "
                 "blocks 7 * 5 = 35, got 36");
  shape = {3, 6, 35};
  EXPECT_FALSE(decodeCol2im(args, shape, col, err));
  EXPECT_EQ(err, "expected the input's dim 1 (6) to be divisible by the "
                 "product of kernel_size [2, 2]");
}

TEST(OpArgs, ReducedDimsWrapAndRefuseRepeats) {
  ListCallArgs args;
  args.addTensor();
  std::vector<bool> reduced;
  std::string err;
  ASSERT_TRUE(decodeReducedDims(args, 1, 3, DimArg::List, reduced, err));
  EXPECT_EQ(reduced, (std::vector<bool>{true, true, true}));
  args.addScalar(listScalar({-1, 0}));
  ASSERT_TRUE(decodeReducedDims(args, 1, 3, DimArg::List, reduced, err));
  EXPECT_EQ(reduced, (std::vector<bool>{true, false, true}));
  args.scalars[1] = listScalar({2, -1});
  EXPECT_FALSE(decodeReducedDims(args, 1, 3, DimArg::List, reduced, err));
  EXPECT_EQ(err, "dim 2 appears more than once in the list of dims");
  args.scalars[1] = intScalar(3);
  EXPECT_FALSE(decodeReducedDims(args, 1, 3, DimArg::List, reduced, err));
  EXPECT_EQ(err, "dim 3 is out of range for a tensor of rank 3");
  // A 0-d input takes dim 0 or -1 and has nothing to mark.
  args.scalars[1] = intScalar(-1);
  ASSERT_TRUE(decodeReducedDims(args, 1, 0, DimArg::List, reduced, err));
  EXPECT_TRUE(reduced.empty());
}

TEST(OpArgs, ReducedDimsForms) {
  ListCallArgs args;
  args.addTensor();
  args.addScalar(listScalar({}));
  std::vector<bool> reduced;
  std::string err;
  // An empty list: every dim for amax's List, none for any.dims.
  ASSERT_TRUE(decodeReducedDims(args, 1, 2, DimArg::List, reduced, err));
  EXPECT_EQ(reduced, (std::vector<bool>{true, true}));
  ASSERT_TRUE(
      decodeReducedDims(args, 1, 2, DimArg::ListEmptyMarksNone, reduced, err));
  EXPECT_EQ(reduced, (std::vector<bool>{false, false}));
  // prod.dim_int takes one int, not a list; None (prod.default) is all.
  EXPECT_FALSE(decodeReducedDims(args, 1, 2, DimArg::One, reduced, err));
  EXPECT_NE(err.find("dim"), std::string::npos) << err;
  args.scalars[1] = intScalar(-1);
  ASSERT_TRUE(decodeReducedDims(args, 1, 2, DimArg::One, reduced, err));
  EXPECT_EQ(reduced, (std::vector<bool>{false, true}));
  args.scalars[1] = Scalar();
  ASSERT_TRUE(decodeReducedDims(args, 1, 2, DimArg::One, reduced, err));
  EXPECT_EQ(reduced, (std::vector<bool>{true, true}));
  // amax and amin refuse a reduced dim of size 0, even for an empty result.
  std::vector<int64_t> shape{3, 0};
  EXPECT_FALSE(checkReducedNonEmpty(shape, reduced, err));
  EXPECT_EQ(err, "reduction dim 1 has size 0, and a reduction without an "
                 "identity needs at least one element");
  EXPECT_TRUE(checkReducedNonEmpty(shape, {true, false}, err));
}

TEST(OpArgs, LossReductionAndDropout) {
  ListCallArgs loss;
  for (int i = 0; i < 3; ++i)
    loss.addTensor();
  Reduction r;
  std::string err;
  ASSERT_TRUE(decodeLossReduction(loss, 3, r, err));
  EXPECT_EQ(r, Reduction::Mean);
  loss.addScalar(stringScalar("sum"));
  ASSERT_TRUE(decodeLossReduction(loss, 3, r, err));
  EXPECT_EQ(r, Reduction::Sum);
  loss.scalars[3] = intScalar(0);
  ASSERT_TRUE(decodeLossReduction(loss, 3, r, err));
  EXPECT_EQ(r, Reduction::None);
  loss.scalars[3] = intScalar(3);
  EXPECT_FALSE(decodeLossReduction(loss, 3, r, err));

  ListCallArgs dropout; // dropout(x, 0.25): train defaults to True
  dropout.addTensor();
  dropout.addScalar(floatScalar(0.25));
  DropoutArgs d;
  ASSERT_TRUE(decodeDropout(dropout, d, err)) << err;
  EXPECT_TRUE(d.train);
  EXPECT_FALSE(d.isIdentity());
  dropout.scalars[1] = floatScalar(std::nan(""));
  EXPECT_FALSE(decodeDropout(dropout, d, err));
  EXPECT_EQ(err, "dropout probability must be in [0, 1], got nan");
}

// One bad call each, refused by the registry's inference (the verifier)
// and, in an unverified graph, by the runtime's kernel, with the same
// decoder message.
TEST(OpArgs, RegistryAndKernelsRefuseABadCallAlike) {
  struct Case {
    const char *body, *type, *error;
  } cases[] = {
      {R"(pyop "conv2d"(%x, %w, None, 0) : (tensor<1x1x4x4xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x3x3xf32>)",
       "tensor<1x1x3x3xf32>",
       "stride and dilation must be positive, got stride [0, 0] and "
       "dilation [1, 1]"},
      {R"(pyop "conv2d"(%x, %w, None, 1, "full") : (tensor<1x1x4x4xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x3x3xf32>)",
       "tensor<1x1x3x3xf32>",
       "padding must be 'same', 'valid' or ints, got 'full'"},
      {R"(pyop "max_pool2d"(%x, 2, 2, 3) : (tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32>)",
       "tensor<1x1x2x2xf32>", "padding 3 must be at most half of kernel 2"},
      {R"(pyop "sum"(%x, [1, -3]) : (tensor<1x1x4x4xf32>) -> tensor<1x4xf32>)",
       "tensor<1x4xf32>", "dim 1 appears more than once in the list of dims"},
      {R"(pyop "nll_loss"(%v2, %t, None, "avg") : (tensor<1x2xf32>, tensor<1xi64>) -> tensor<f32>)",
       "tensor<f32>", "reduction must be 0/'none', 1/'mean' or 2/'sum'"},
      {R"(pyop "dropout"(%x, 1.5, True) : (tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>)",
       "tensor<1x1x4x4xf32>", "dropout probability must be in [0, 1], got 1.5"},
      {R"(pyop "batch_norm"(%x, %v, %v, %v, %v, "yes", 0.1, 1.0e-05, False) : (tensor<1x1x4x4xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1x4x4xf32>)",
       "tensor<1x1x4x4xf32>", "argument #5 (training) must be a bool"},
  };
  mlir::MLIRContext ctx;
  ctx.loadDialect<mlir::trace::TraceDialect>();
  for (const Case &c : cases) {
    SCOPED_TRACE(c.body);
    std::string text =
        std::string("trace.graph @g(%x: tensor<1x1x4x4xf32> {trace.input = "
                    "\"x\"}, %w: tensor<1x1x2x2xf32> {trace.input = \"w\"}, "
                    "%v: tensor<1xf32> {trace.input = \"v\"}, "
                    "%v2: tensor<1x2xf32> {trace.input = \"v2\"}, "
                    "%t: tensor<1xi64> {trace.input = \"t\"}) -> ") +
        c.type + " {\n  %0 = " + c.body + "\n  ret %0 : " + c.type + "\n}\n";
    mlir::ParserConfig config(&ctx, /*verifyAfterParse=*/false);
    auto module = mlir::parseSourceString<mlir::ModuleOp>(text, config);
    ASSERT_TRUE(module);

    std::string diagnostics;
    {
      mlir::ScopedDiagnosticHandler handler(&ctx, [&](mlir::Diagnostic &d) {
        diagnostics += d.str() + "\n";
        return mlir::success();
      });
      EXPECT_TRUE(mlir::failed(mlir::verify(*module)));
    }
    EXPECT_NE(diagnostics.find(c.error), std::string::npos) << diagnostics;

    mlir::trace::GraphOp graph;
    module->walk([&](mlir::trace::GraphOp g) { graph = g; });
    auto exe = buildExecutable(graph, Device{});
    ASSERT_TRUE(static_cast<bool>(exe)) << llvm::toString(exe.takeError());
    auto out = (*exe)->run({{"x", f32({1, 1, 4, 4}, std::vector<float>(16, 1))},
                            {"w", f32({1, 1, 2, 2}, {1, 1, 1, 1})},
                            {"v", f32({1}, {1})},
                            {"v2", f32({1, 2}, {1, 2})},
                            {"t", i64({1}, {0})}});
    ASSERT_FALSE(static_cast<bool>(out));
    std::string message = out.takeError().message();
    EXPECT_NE(message.find(c.error), std::string::npos) << message;
  }
}

#ifdef __GLIBCXX__
/// A generator that returns one given 64-bit draw.
struct FixedDraw {
  using result_type = uint64_t;
  static constexpr uint64_t min() { return 0; }
  static constexpr uint64_t max() { return UINT64_MAX; }
  uint64_t x;
  uint64_t operator()() const { return x; }
};

TEST(OpArgs, KeepDrawKeepsWhatBernoulliDistributionKeeps) {
  // The dropout kernels' integer compare decides as libstdc++'s
  // bernoulli_distribution does for every draw, at its threshold, at the
  // top where the rounding reaches 2^64, and at the probabilities' ends.
  std::mt19937_64 g(7);
  for (double keep :
       {0.0, 0x1p-65, 0x1p-64, 1e-300, 0.3, 0.5, 0.7, std::nextafter(0.5, 0.0),
        1 - 0x1p-53, 1.0, 1.5, std::nan("")}) {
    KeepDraw draw(keep);
    std::bernoulli_distribution bernoulli;
    std::vector<uint64_t> xs = {0,
                                1,
                                UINT64_MAX,
                                UINT64_MAX - 1024,
                                UINT64_MAX - 1025,
                                (uint64_t(1) << 63) - 1,
                                uint64_t(1) << 63};
    for (int64_t d = -3; d <= 3; ++d)
      xs.push_back(draw.below + uint64_t(d));
    for (int k = 0; k < 1000; ++k)
      xs.push_back(g());
    for (uint64_t x : xs) {
      FixedDraw fixed{x};
      bool want =
          std::isnan(keep)
              ? false
              : bernoulli(fixed, std::bernoulli_distribution::param_type(
                                     std::min(keep, 1.0)));
      EXPECT_EQ(draw.keeps(x), want) << "keep " << keep << " draw " << x;
    }
  }
}
#endif

} // namespace
