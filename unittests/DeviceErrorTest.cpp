//===- DeviceErrorTest.cpp - Errors kernels record on a device ------------===//
//
// The host half of DeviceError.h, on the CPU: each record's message (the
// words the CPU kernels fail with, and the Python tests expect on both
// devices), and the executor's handling of a device's record, through an
// allocator that plays a GPU's: the run fails naming the recorded op, a host
// error after it is not what the run reports, and the next run, whose
// record is cleared, succeeds.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/DeviceError.h"
#include "TestTensors.h"
#include "TraceIR/Runtime/Build.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

using namespace traceir;

namespace {

TEST(DeviceError, MessagesAreTheCPUKernels) {
  using C = DeviceErrorCode;
  EXPECT_EQ(deviceErrorMessage(deviceError(C::IndexRange, 5, 5, 3, 1)),
            "index 5 is out of bounds for dimension 1 with size 5");
  EXPECT_EQ(deviceErrorMessage(deviceError(C::EmbeddingIndex, -1, 10)),
            "index -1 is out of range for 10 embeddings");
  EXPECT_EQ(deviceErrorMessage(deviceError(C::EmbeddingBackwardIndex, 5, 5)),
            "index 5 is out of range for num_weights=5");
  EXPECT_EQ(deviceErrorMessage(deviceError(C::PoolIndex, 64, 64)),
            "max_pool2d_with_indices_backward: index 64 is out of range for "
            "an input plane of 64 elements");
  EXPECT_EQ(deviceErrorMessage(deviceError(C::Target, 7, 0)),
            "Target 7 is out of bounds.");
  EXPECT_EQ(deviceErrorMessage(deviceError(C::EmbeddingBagOffset, 2, 6, 0)),
            "_embedding_bag: offsets must rise from 0 to at most the 6 "
            "indices, but offsets[0] is 2 (offsets[0] has to be 0)");
  EXPECT_EQ(deviceErrorMessage(deviceError(C::EmbeddingBagOffset, 9, 6, 2)),
            "_embedding_bag: offsets must rise from 0 to at most the 6 "
            "indices, but offsets[2] is 9");
  EXPECT_EQ(deviceErrorMessage(deviceError(C::EmbeddingBagIndex, 12, 10, 3)),
            "_embedding_bag: index 12 at position 3 is out of range for a "
            "weight of 10 rows (expected 0 <= idx < num_embeddings)");
  EXPECT_EQ(deviceErrorMessage(deviceError(C::IntegerDivisionByZero, 0, 0)),
            "integer division by zero");
  DeviceErrorRecord unknown;
  unknown.code = 99;
  EXPECT_EQ(deviceErrorMessage(unknown),
            "a kernel reported an unknown error (code 99)");
}

/// The CPU's memory, with a device's error record: `plant` is what "the
/// kernels" of the next run record (set when that run's record is cleared,
/// as a kernel would write it during the run), once.
class RecordingAllocator final : public Allocator {
public:
  std::unique_ptr<Allocator> cpu = createCPUAllocator();
  DeviceErrorRecord record, plant;
  int clears = 0, reads = 0;

  void *allocate(size_t n) override { return cpu->allocate(n); }
  void deallocate(void *p, size_t n) override { cpu->deallocate(p, n); }
  Device device() const override { return cpu->device(); }
  void copyFromHost(void *d, const void *s, size_t n) override {
    cpu->copyFromHost(d, s, n);
  }
  void copyToHost(void *d, const void *s, size_t n) override {
    cpu->copyToHost(d, s, n);
  }
  void poison(void *p, size_t n) override { cpu->poison(p, n); }
  bool copyStrided(const Tensor &s, Tensor &d) override {
    return cpu->copyStrided(s, d);
  }
  std::shared_ptr<void> allocateExported(size_t n) override {
    return cpu->allocateExported(n);
  }
  DeviceErrorRecord *errorRecord() override { return &record; }
  Error clearErrorRecord() override {
    ++clears;
    record = plant;
    plant = DeviceErrorRecord();
    return Error::success();
  }
  Error readErrorRecord(DeviceErrorRecord &out) override {
    ++reads;
    out = record;
    return Error::success();
  }
};

struct DeviceErrorRunTest : ::testing::Test {
  mlir::MLIRContext ctx;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  DeviceErrorRunTest() { ctx.loadDialect<mlir::trace::TraceDialect>(); }

  /// An executable of `text` whose allocator is a RecordingAllocator.
  std::unique_ptr<Executable> build(llvm::StringRef text,
                                    RecordingAllocator *&alloc) {
    module = mlir::parseSourceString<mlir::ModuleOp>(text, &ctx);
    if (!module)
      return nullptr;
    mlir::trace::GraphOp graph;
    module->walk([&](mlir::trace::GraphOp g) { graph = g; });
    auto exe = buildExecutable(graph, Device{});
    if (!exe)
      return nullptr;
    auto owned = std::make_unique<RecordingAllocator>();
    alloc = owned.get();
    (*exe)->alloc = std::move(owned);
    return std::move(*exe);
  }
};

// A recorded error fails the run with the op it names (not the last op
// run), read once at the run's end; the next run starts with a clear record
// and succeeds.
TEST_F(DeviceErrorRunTest, RecordFailsTheRunNamingItsOp) {
  RecordingAllocator *alloc = nullptr;
  auto exe = build(R"(
    trace.graph @g(%x: tensor<2xi64> {trace.input = "x"}) -> tensor<2xi64> {
      %0 = pyop "neg"(%x) : (tensor<2xi64>) -> tensor<2xi64> loc("m.py":3:1)
      %1 = pyop "abs"(%0) : (tensor<2xi64>) -> tensor<2xi64> loc("m.py":4:1)
      ret %1 : tensor<2xi64>
    })",
                   alloc);
  ASSERT_TRUE(exe);
  int neg = -1;
  for (size_t i = 0; i < exe->ops.size(); ++i)
    if (exe->ops[i].name == "neg")
      neg = static_cast<int>(i);
  ASSERT_GE(neg, 0);
  alloc->plant =
      deviceError(DeviceErrorCode::EmbeddingIndex, 12, 10, /*position=*/1);
  alloc->plant.op = neg;
  auto bad = exe->run({{"x", i64({2}, {1, 2})}});
  ASSERT_FALSE(static_cast<bool>(bad));
  std::string msg = toString(bad.takeError());
  EXPECT_EQ(msg, "op 'neg' at m.py:3:1: index 12 is out of range for 10 "
                 "embeddings");
  EXPECT_EQ(alloc->reads, 1);
  auto good = exe->run({{"x", i64({2}, {1, -2})}});
  ASSERT_TRUE(static_cast<bool>(good)) << toString(good.takeError());
  EXPECT_EQ(alloc->clears, 2);
  EXPECT_EQ(alloc->reads, 2);
}

// A call that fails on the host after a kernel recorded an error (its data
// may be what that error left unwritten) reports the recorded error, which
// came first.
TEST_F(DeviceErrorRunTest, RecordComesBeforeALaterHostError) {
  RecordingAllocator *alloc = nullptr;
  auto exe = build(R"(
    trace.graph @g(%x: tensor<2xi64> {trace.input = "x"}) -> tensor<2xi64> {
      %0 = pyop "neg"(%x) : (tensor<2xi64>) -> tensor<2xi64>
      %1 = pyop "div"(%0, %x, "floor") : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
      ret %1 : tensor<2xi64>
    })",
                   alloc);
  ASSERT_TRUE(exe);
  alloc->plant = deviceError(DeviceErrorCode::Target, 7, 0);
  alloc->plant.op = 0;
  // The CPU's div fails on the host: x has a 0.
  auto bad = exe->run({{"x", i64({2}, {0, 2})}});
  ASSERT_FALSE(static_cast<bool>(bad));
  std::string msg = toString(bad.takeError());
  EXPECT_NE(msg.find("Target 7 is out of bounds."), std::string::npos) << msg;
  EXPECT_EQ(msg.find("division"), std::string::npos) << msg;
  // Without a recorded error the host's own error is the run's.
  auto again = exe->run({{"x", i64({2}, {0, 2})}});
  ASSERT_FALSE(static_cast<bool>(again));
  EXPECT_NE(toString(again.takeError()).find("integer division by zero"),
            std::string::npos);
}

} // namespace
