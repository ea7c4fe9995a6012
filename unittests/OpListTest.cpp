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

#include <set>
#include <string>
#include <vector>

using namespace traceir;

namespace {

struct Row {
  std::string name;
  bool cpu, cuda;
};

const std::vector<Row> &rows() {
#define TRACEIR_HAS_KERNEL_KERNEL true
#define TRACEIR_HAS_KERNEL_ELEMENTWISE true
#define TRACEIR_HAS_KERNEL_HOST true
#define TRACEIR_HAS_KERNEL_NONE false
  static const std::vector<Row> r = {
#define TRACEIR_OP(NAME, EFFECTS, SIGNATURE, INFER, CPU, CUDA, FAST, LOWERING) \
  {#NAME, TRACEIR_HAS_KERNEL_##CPU, TRACEIR_HAS_KERNEL_##CUDA},
#include "TraceIR/Ops.def"
  };
  return r;
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
    EXPECT_TRUE(row.cpu) << "no CPU kernel in Ops.def";
    EXPECT_NE(lookupKernel(row.name, Device::Kind::CPU), nullptr);
    EXPECT_TRUE(row.cuda) << "no CUDA kernel in Ops.def";
    if (withCuda) {
      EXPECT_NE(lookupKernel(row.name, Device::Kind::CUDA), nullptr);
    }
    EXPECT_NE(info->lowering.empty(), info->notLowered.empty())
        << "a lowering family or a reason, not both or neither";
  }
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
