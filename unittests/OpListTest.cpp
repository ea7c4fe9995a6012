//===- OpListTest.cpp - Every row of Ops.def has what it says -------------===//
//
// include/TraceIR/Ops.def is the one list of ops. This checks that the
// tables expanded from it agree with it and that each row is complete: the
// registry has the op with an inference, the CPU and CUDA kernel tables have
// its kernels, the lowering column names a family or a reason, and no kernel
// or 2017 name leads to an op the list lacks. (test/python/test_op_list.py
// checks that no other list of op names exists.)
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Dialect/OpRegistry.h"
#include "TraceIR/Import/ANFImporter.h"
#include "TraceIR/Runtime/CUDA/Backend.h"
#include "TraceIR/Runtime/Executable.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

using namespace traceir;

namespace {

enum class Kernel { Own, Alias, None };

struct Row {
  std::string name;
  Kernel cpu, cuda;
  bool aliasLowering;
};

const std::vector<Row> &rows() {
#define TRACEIR_HAS_KERNEL_KERNEL Kernel::Own
#define TRACEIR_HAS_KERNEL_ELEMENTWISE Kernel::Own
#define TRACEIR_HAS_KERNEL_HOST Kernel::Own
#define TRACEIR_HAS_KERNEL_ALIAS Kernel::Alias
#define TRACEIR_HAS_KERNEL_NONE Kernel::None
#define TRACEIR_IS_ALIAS_LOWERED(FAMILY) false
#define TRACEIR_IS_ALIAS_KERNEL_ONLY(REASON) false
#define TRACEIR_IS_ALIAS_ALIAS true
  static const std::vector<Row> r = {
#define TRACEIR_OP(NAME, EFFECTS, SIGNATURE, INFER, CPU, CUDA, FAST, LOWERING) \
  {#NAME, TRACEIR_HAS_KERNEL_##CPU, TRACEIR_HAS_KERNEL_##CUDA,                 \
   TRACEIR_IS_ALIAS_##LOWERING},
#include "TraceIR/Ops.def"
  };
  return r;
}

/// Ops.def's aliases: name -> canonical op.
const std::map<std::string, std::string> &aliases() {
  static const std::map<std::string, std::string> a = {
#define TRACEIR_ALIAS(NAME, CANONICAL) {#NAME, #CANONICAL},
#include "TraceIR/Ops.def"
  };
  return a;
}

TEST(OpList, IsSortedAndIsTheRegistry) {
  const std::vector<Row> &list = rows();
  llvm::ArrayRef<mlir::trace::OpInfo> registry = mlir::trace::getAllOps();
  ASSERT_EQ(list.size(), registry.size());
  for (size_t i = 0; i < list.size(); ++i) {
    EXPECT_EQ(list[i].name, registry[i].name.str());
    if (i > 0) {
      EXPECT_LT(list[i - 1].name, list[i].name) << "Ops.def is not sorted";
    }
    EXPECT_EQ(mlir::trace::lookupOp(list[i].name), &registry[i]);
  }
}

TEST(OpList, EveryOpHasInferenceKernelsAndALoweringOrAReason) {
  bool withCuda = !cuda::kernelTable().empty();
  for (const Row &row : rows()) {
    SCOPED_TRACE(row.name);
    const mlir::trace::OpInfo *info = mlir::trace::lookupOp(row.name);
    ASSERT_NE(info, nullptr);
    EXPECT_NE(info->infer, nullptr);
    EXPECT_NE(info->alias, nullptr);
    EXPECT_FALSE(info->signature.empty());
    // A CPU and a CUDA kernel for every op, where the column says so and in
    // the kernel tables.
    EXPECT_NE(row.cpu, Kernel::None) << "no CPU kernel in Ops.def";
    EXPECT_NE(lookupKernel(row.name, Device::Kind::CPU), nullptr);
    EXPECT_NE(row.cuda, Kernel::None) << "no CUDA kernel in Ops.def";
    if (withCuda) {
      EXPECT_NE(lookupKernel(row.name, Device::Kind::CUDA), nullptr);
    }
    EXPECT_NE(info->lowering.empty(), info->notLowered.empty())
        << "a lowering family or a reason, not both or neither";
  }
}

TEST(OpList, AnAliasIsResolvedToItsCanonicalOpEverywhere) {
  std::map<std::string, const Row *> byName;
  for (const Row &row : rows())
    byName[row.name] = &row;
  for (const Row &row : rows()) {
    SCOPED_TRACE(row.name);
    bool alias = aliases().count(row.name);
    // Every column of an alias says ALIAS, and only an alias's does.
    EXPECT_EQ(row.cpu == Kernel::Alias, alias);
    EXPECT_EQ(row.cuda == Kernel::Alias, alias);
    EXPECT_EQ(row.aliasLowering, alias);
  }
  for (const auto &[name, canonical] : aliases()) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(byName.count(name)) << "an alias without a row";
    ASSERT_TRUE(byName.count(canonical)) << "an alias of an unlisted op";
    EXPECT_FALSE(aliases().count(canonical)) << "an alias of an alias";
    EXPECT_EQ(mlir::trace::canonicalOpName(name), canonical);
    for (Device::Kind kind : {Device::Kind::CPU, Device::Kind::CUDA})
      EXPECT_EQ(lookupKernel(name, kind), lookupKernel(canonical, kind));
    EXPECT_EQ(mlir::trace::lookupOp(name)->lowering, "alias");
  }
  EXPECT_EQ(mlir::trace::canonicalOpName("matmul"), "matmul");
}

TEST(OpList, NoKernelOrImportedNameOutsideTheList) {
  std::set<std::string> names;
  for (const Row &row : rows())
    names.insert(row.name);
  for (const auto &[name, device] : listKernels())
    EXPECT_TRUE(names.count(name))
        << "a kernel for '" << name << "', which Ops.def does not list";
  for (llvm::StringRef op : mlir::trace::getANFTargetOps())
    EXPECT_TRUE(names.count(op.str()))
        << "a 2017 name becomes '" << op.str() << "', which Ops.def lacks";
}

} // namespace
