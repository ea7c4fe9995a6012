//===- ScalarsTest.cpp - Python scalar printing and parsing ---------------===//

#include "TraceIR/Dialect/Scalars.h"
#include "TraceIR/Dialect/TraceDialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>

using namespace mlir;
using namespace mlir::trace;

namespace {

// formatFloat must read back to the identical double and stay a float
// literal, like Python's repr.
TEST(ScalarsTest, FormatFloatRoundTripsRandomDoubles) {
  std::mt19937_64 rng(42);
  for (int i = 0; i < 200000; ++i) {
    uint64_t bits = rng();
    double v;
    std::memcpy(&v, &bits, sizeof(v));
    if (!std::isfinite(v))
      continue;
    std::string text = formatFloat(v);
    double back = std::strtod(text.c_str(), nullptr);
    ASSERT_EQ(std::memcmp(&back, &v, sizeof(v)), 0) << text;
    ASSERT_NE(text.find_first_of(".eE"), std::string::npos) << text;
  }
}

TEST(ScalarsTest, FormatFloatIsShortest) {
  EXPECT_EQ(formatFloat(0.2), "0.2");
  EXPECT_EQ(formatFloat(2.0), "2.0");
  EXPECT_EQ(formatFloat(1e-05), "1.0e-05");
  EXPECT_EQ(formatFloat(1e300), "1.0e+300");
  EXPECT_EQ(formatFloat(-0.0), "-0.0");
  EXPECT_EQ(formatFloat(0.1 + 0.2), "0.30000000000000004");
}

/// Parses a graph with one pyop whose argument list is `args`, prints it and
/// returns the printed argument list.
std::string roundTrip(MLIRContext &ctx, const std::string &args) {
  std::string text = "trace.graph @g(%arg0: tensor<2xf32>) -> () {\n"
                     "  pyop \"unknown_op\"(" +
                     args + ") : (tensor<2xf32>) -> ()\n  ret\n}\n";
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &ctx);
  if (!module)
    return "<parse error>";
  std::string out;
  llvm::raw_string_ostream os(out);
  module->print(os);
  size_t open = out.find("\"unknown_op\"(");
  size_t close = out.find(") : (tensor");
  if (open == std::string::npos || close == std::string::npos)
    return "<print error>";
  open += std::strlen("\"unknown_op\"(");
  return out.substr(open, close - open);
}

TEST(ScalarsTest, EveryKindRoundTripsThroughPrintAndParse) {
  MLIRContext ctx;
  ctx.loadDialect<TraceDialect>();
  for (const char *args :
       {"%arg0, -1, None, 2, False, True",
        "%arg0, 0.2, 1.0e-05, -0.0, 1.0e+300, 2.5e-07",
        "%arg0, \"mean\", \"quote\\22 and \\\\\"",
        "%arg0, (1,), (), (1, (2.5, None))",
        "%arg0, [], [1, [2, (3,)]], [\"a\", False]",
        "%arg0, 0x7FF0000000000000 : f64, 0xFFF0000000000000 : f64",
        "9223372036854775807, %arg0, -9223372036854775808"}) {
    std::string once = roundTrip(ctx, args);
    EXPECT_EQ(once, args);
    // And printing what was printed is a fixed point.
    EXPECT_EQ(roundTrip(ctx, once), once);
  }
}

TEST(ScalarsTest, TypedReaders) {
  MLIRContext ctx;
  ctx.loadDialect<TraceDialect>();
  Builder b(&ctx);
  EXPECT_EQ(getInt(b.getI64IntegerAttr(3)), 3);
  EXPECT_FALSE(getInt(b.getF64FloatAttr(3.0)));
  EXPECT_EQ(getNumber(b.getI64IntegerAttr(3)), 3.0);
  EXPECT_EQ(getBool(b.getBoolAttr(true)), true);
  auto list = getIntList(
      b.getArrayAttr({b.getI64IntegerAttr(1), b.getI64IntegerAttr(2)}));
  ASSERT_TRUE(list);
  EXPECT_EQ(list->size(), 2u);
  EXPECT_FALSE(getIntList(b.getArrayAttr({b.getF64FloatAttr(1.0)})));
  EXPECT_TRUE(isNone(NoneAttr::get(&ctx)));
  EXPECT_FALSE(isScalarAttr(b.getI32IntegerAttr(1)));
}

} // namespace
