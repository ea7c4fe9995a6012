//===- OpRegistryTest.cpp - The op registry table
//--------------------------===//

#include "TraceIR/Dialect/OpRegistry.h"
#include "TraceIR/Dialect/Scalars.h"
#include "TraceIR/Dialect/TraceDialect.h"
#include "TraceIR/Support/ViewAlgebra.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::trace;

namespace mlir {
// Readable gtest failures for types.
inline void PrintTo(Type t, std::ostream *os) {
  std::string s;
  llvm::raw_string_ostream ss(s);
  ss << t;
  *os << s;
}
} // namespace mlir

namespace {

// lookupOp binary-searches the table, so it must stay sorted and unique.
TEST(OpRegistryTest, TableIsSortedAndUnique) {
  ArrayRef<OpInfo> ops = getAllOps();
  ASSERT_FALSE(ops.empty());
  for (size_t i = 1; i < ops.size(); ++i)
    EXPECT_LT(ops[i - 1].name, ops[i].name) << "at " << ops[i].name.data();
  for (const OpInfo &info : ops)
    EXPECT_EQ(lookupOp(info.name), &info);
  EXPECT_EQ(lookupOp("no_such_op"), nullptr);
}

struct InferTest : ::testing::Test {
  InferTest() { ctx.loadDialect<TraceDialect>(); }
  MLIRContext ctx;
  Builder b{&ctx};
  Type f32 = b.getF32Type();

  /// Infers `name` on tensors `types` and scalars interleaved by `cconv`.
  SmallVector<Type> infer(StringRef name, StringRef cconv, ArrayRef<Type> types,
                          ArrayRef<Attribute> scalars,
                          std::string *error = nullptr) {
    const OpInfo *info = lookupOp(name);
    EXPECT_NE(info, nullptr) << name.str();
    PyArgs args(cconv, types, scalars);
    SmallVector<Type> out;
    InferError err;
    bool ok = info->infer(args, &ctx, out, err);
    if (error)
      *error = err.message;
    EXPECT_TRUE(ok || error) << name.str() << ": " << err.message;
    if (!ok)
      out.assign(1, Type()); // keeps [0] valid; compares unequal
    return out;
  }
  Type t(ArrayRef<int64_t> shape, Type elt = {}) {
    return RankedTensorType::get(shape, elt ? elt : f32);
  }
  Attribute i(int64_t v) { return b.getI64IntegerAttr(v); }
  Attribute tuple(ArrayRef<int64_t> v) {
    SmallVector<Attribute> elems;
    for (int64_t x : v)
      elems.push_back(i(x));
    return b.getArrayAttr(elems);
  }
};

TEST_F(InferTest, BroadcastingAndPromotion) {
  auto r = infer("add", "tt", {t({3, 1}), t({4})}, {});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0], t({3, 4}));
  // An int tensor times a Python float is a float tensor.
  r = infer("mul", "ts", {t({2}, b.getI64Type())}, {b.getF64FloatAttr(0.5)});
  EXPECT_EQ(r[0], t({2}));
  // True division of integers gives floats; floor division keeps ints.
  Type i64 = b.getI64Type();
  EXPECT_EQ(infer("div", "tt", {t({2}, i64), t({2}, i64)}, {})[0], t({2}));
  EXPECT_EQ(infer("div", "tts", {t({2}, i64), t({2}, i64)},
                  {b.getStringAttr("floor")})[0],
            t({2}, i64));
  std::string err;
  EXPECT_FALSE(infer("add", "tt", {t({3}), t({4})}, {}, &err)[0]);
  EXPECT_NE(err.find("cannot be broadcast"), std::string::npos) << err;
}

TEST_F(InferTest, ViewsAndShapes) {
  EXPECT_EQ(infer("view", "ts", {t({35, 20, 200})}, {tuple({700, -1})})[0],
            t({700, 200}));
  EXPECT_EQ(infer("transpose", "tss", {t({2, 3, 4})}, {i(0), i(-1)})[0],
            t({4, 3, 2}));
  EXPECT_EQ(infer("select", "tss", {t({2, 3})}, {i(0), i(1)})[0], t({3}));
  EXPECT_EQ(infer("flatten", "ts", {t({2, 3, 4})}, {i(1)})[0], t({2, 12}));
  EXPECT_EQ(infer("unflatten", "tss", {t({2, 12})}, {i(-1), tuple({3, -1})})[0],
            t({2, 3, 4}));
  // scaled_dot_product_attention: batch dims broadcast, [..., L, Ev].
  EXPECT_EQ(infer("scaled_dot_product_attention", "ttt",
                  {t({1, 3, 4, 8}), t({2, 1, 6, 8}), t({6, 5})}, {})[0],
            t({2, 3, 4, 5}));
  EXPECT_EQ(
      infer("slice", "tssss", {t({10, 3})}, {i(0), i(2), i(100), i(3)})[0],
      t({3, 3}));
  std::string err;
  EXPECT_FALSE(infer("view", "ts", {t({3, 5})}, {tuple({4, 4})}, &err)[0]);
  EXPECT_NE(err.find("invalid for input"), std::string::npos) << err;
}

TEST_F(InferTest, Layers) {
  // matmul broadcasting of batch dims, and the vector cases.
  EXPECT_EQ(infer("matmul", "tt", {t({5, 1, 2, 3}), t({4, 3, 6})}, {})[0],
            t({5, 4, 2, 6}));
  EXPECT_EQ(infer("matmul", "tt", {t({3}), t({3, 6})}, {})[0], t({6}));
  EXPECT_EQ(infer("linear", "tts", {t({700, 200}), t({10000, 200})},
                  {NoneAttr::get(&ctx)})[0],
            t({700, 10000}));
  EXPECT_EQ(infer("conv2d", "tttsss",
                  {t({8, 3, 32, 32}), t({16, 3, 3, 3}), t({16})},
                  {i(2), i(1), i(1)})[0],
            t({8, 16, 16, 16}));
  EXPECT_EQ(infer("max_pool2d", "tss", {t({1, 1, 5, 5})}, {i(2), i(2)})[0],
            t({1, 1, 2, 2}));
  // ceil_mode keeps the partial last window.
  EXPECT_EQ(infer("max_pool2d", "tsssss", {t({1, 1, 5, 5})},
                  {i(2), i(2), i(0), i(1), b.getBoolAttr(true)})[0],
            t({1, 1, 3, 3}));
  auto lstm =
      infer("lstm", "tttttttttttssssss",
            {t({35, 20, 200}), t({2, 20, 200}), t({2, 20, 200}), t({800, 200}),
             t({800, 200}), t({800}), t({800}), t({800, 200}), t({800, 200}),
             t({800}), t({800})},
            {b.getBoolAttr(true), i(2), b.getF64FloatAttr(0.2),
             b.getBoolAttr(true), b.getBoolAttr(false), b.getBoolAttr(false)});
  ASSERT_EQ(lstm.size(), 3u);
  EXPECT_EQ(lstm[0], t({35, 20, 200}));
  EXPECT_EQ(lstm[1], t({2, 20, 200}));
}

TEST_F(InferTest, Gru) {
  // The word language model's 2-layer GRU(200, 200, dropout=0.2): 3 gates,
  // one state, two results; random only when training.
  SmallVector<Type> types = {t({35, 20, 200}), t({2, 20, 200})};
  for (int l = 0; l < 2; ++l)
    types.append({t({600, 200}), t({600, 200}), t({600}), t({600})});
  auto scalars = [&](bool train) {
    return SmallVector<Attribute>{b.getBoolAttr(true),    i(2),
                                  b.getF64FloatAttr(0.2), b.getBoolAttr(train),
                                  b.getBoolAttr(false),   b.getBoolAttr(false)};
  };
  auto gru = infer("gru", "ttttttttttssssss", types, scalars(false));
  ASSERT_EQ(gru.size(), 2u);
  EXPECT_EQ(gru[0], t({35, 20, 200}));
  EXPECT_EQ(gru[1], t({2, 20, 200}));
  const OpInfo *info = lookupOp("gru");
  ASSERT_NE(info, nullptr);
  auto evalArgs = scalars(false), trainArgs = scalars(true);
  EXPECT_FALSE(info->random(PyArgs("ttttttttttssssss", types, evalArgs)));
  EXPECT_TRUE(info->random(PyArgs("ttttttttttssssss", types, trainArgs)));
  // lstm's [4H, in] weights do not fit a GRU.
  std::string error;
  types[2] = t({800, 200});
  infer("gru", "ttttttttttssssss", types, evalArgs, &error);
  EXPECT_EQ(error, "w_ih of layer 0 must be [600, 200], got [800, 200]");
}

/// The first pyop of `text`, parsed without verifying (the calls below need
/// not infer).
PyOp parsePyOp(MLIRContext &ctx, const std::string &text,
               OwningOpRef<ModuleOp> &module) {
  module = parseSourceString<ModuleOp>(
      text, ParserConfig(&ctx, /*verifyAfterParse=*/false));
  if (!module)
    return nullptr;
  PyOp found;
  module->walk([&](PyOp op) {
    if (!found)
      found = op;
  });
  return found;
}

// The runtime has no registry: loading a saved executable checks each
// result's fresh flag with ViewAlgebra.h's lists instead. They must say
// what the registry's alias rules say, for every op.
TEST(OpRegistryTest, RuntimeListsOfAliasingOpsAgree) {
  MLIRContext ctx;
  ctx.loadDialect<TraceDialect>();
  for (const OpInfo &info : getAllOps()) {
    std::string name = info.name.str();
    if (name == "dropout")
      continue; // depends on its scalars: below
    OwningOpRef<ModuleOp> module;
    PyOp op = parsePyOp(ctx,
                        "trace.graph @g(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
                        "  %0 = pyop \"" +
                            name +
                            "\"(%x) : (tensor<2xf32>) -> tensor<2xf32>\n"
                            "  ret %0 : tensor<2xf32>\n}\n",
                        module);
    ASSERT_TRUE(op) << name;
    bool aliases = getResultAlias(op, 0).kind == AliasKind::MustAlias;
    PyArgs args(op.getCconv(), op.getTensors().getTypes(),
                op.getScalars().getValue());
    EXPECT_EQ(aliases, traceir::views::isViewOp(name) ||
                           traceir::views::isInPlaceOp(name))
        << name;
    EXPECT_EQ(aliases && info.mutates(args), traceir::views::isInPlaceOp(name))
        << name;
  }
  // dropout(x, p, train) is its input in eval mode or with p == 0; an
  // absent or None `train` is training.
  std::pair<const char *, bool> cases[] = {
      {"0.5, True", false}, {"0.5, False", true}, {"0.0, True", true},
      {"0, True", true},    {"0.5", false},       {"0.5, None", false}};
  for (auto [scalars, identity] : cases) {
    OwningOpRef<ModuleOp> module;
    PyOp op = parsePyOp(
        ctx,
        std::string("trace.graph @g(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
                    "  %0 = pyop \"dropout\"(%x, ") +
            scalars +
            ") : (tensor<2xf32>) -> tensor<2xf32>\n"
            "  ret %0 : tensor<2xf32>\n}\n",
        module);
    ASSERT_TRUE(op) << scalars;
    EXPECT_EQ(getResultAlias(op, 0).kind == AliasKind::MustAlias, identity)
        << scalars;
  }
}

} // namespace
