//===- RuntimeTest.cpp - The runtime's C++ API ----------------------------===//

#include "TestTensors.h"
#include "TestTrace.h"
#include "TraceIR/Runtime/Build.h"
#include "TraceIR/Runtime/CPU/Kernels.h"
#include "TraceIR/Runtime/ExecutableFile.h"
#include "TraceIR/Runtime/Profiler.h"
#include "TraceIR/Support/ViewAlgebra.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include "gtest/gtest.h"

#include <cstring>
#include <map>
#include <set>
#include <thread>

using namespace traceir;

namespace {

struct RuntimeTest : ::testing::Test {
  mlir::MLIRContext ctx;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  RuntimeTest() { ctx.loadDialect<mlir::trace::TraceDialect>(); }

  mlir::trace::GraphOp parse(llvm::StringRef text, bool verify = true) {
    mlir::ParserConfig config(&ctx, verify);
    module = mlir::parseSourceString<mlir::ModuleOp>(text, config);
    if (!module)
      return {};
    mlir::trace::GraphOp graph;
    module->walk([&](mlir::trace::GraphOp g) { graph = g; });
    return graph;
  }
};

// Build once, run many times with different inputs; parameters are loaded
// once and survive the runs.
TEST_F(RuntimeTest, BuildOnceRunMany) {
  auto graph = parse(R"(
    trace.graph @g(%w: tensor<2x2xf32> {trace.param = "w"},
                   %x: tensor<1x2xf32> {trace.input = "x"}) -> tensor<1x2xf32> {
      %0 = pyop "matmul"(%x, %w) : (tensor<1x2xf32>, tensor<2x2xf32>) -> tensor<1x2xf32>
      %1 = pyop "mul"(%0, 2) : (tensor<1x2xf32>) -> tensor<1x2xf32>
      free %0 : tensor<1x2xf32>
      ret %1 : tensor<1x2xf32>
    })");
  ASSERT_TRUE(graph);
  auto exe = buildExecutable(graph, Device{});
  ASSERT_TRUE(static_cast<bool>(exe)) << toString(exe.takeError());
  ASSERT_FALSE(static_cast<bool>(
      (*exe)->loadParams({{"w", f32({2, 2}, {1, 2, 3, 4})}})));
  for (float a : {1.0f, -2.0f, 0.5f}) {
    auto out = (*exe)->run({{"x", f32({1, 2}, {a, 1})}});
    ASSERT_TRUE(static_cast<bool>(out)) << toString(out.takeError());
    EXPECT_EQ(values((*out)[0]),
              (std::vector<float>{2 * (a + 3), 2 * (2 * a + 4)}));
    EXPECT_EQ((*exe)->memoryReport().peakBytes,
              (*exe)->memoryReport().predictedPeakBytes);
  }
}

// runViews reads inputs where they lie, with their strides (a transposed
// view, a broadcast with stride 0, an offset into a larger buffer), hands
// each output over in memory of its own that outlives the executable, and
// refuses strides it cannot read and memory on another device by name.
TEST_F(RuntimeTest, RunViewsReadsStridedInputsAndHandsOutputsOver) {
  auto graph = parse(R"(
    trace.graph @g(%x: tensor<2x3xf32> {trace.input = "x"},
                   %y: tensor<2x3xf32> {trace.input = "y"}) -> tensor<2x3xf32> {
      %0 = pyop "add"(%x, %y) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
      ret %0 : tensor<2x3xf32>
    })");
  ASSERT_TRUE(graph);
  auto exe = buildExecutable(graph, Device{});
  ASSERT_TRUE(static_cast<bool>(exe)) << toString(exe.takeError());
  // x is the transpose of a 3x2 buffer [[0,1],[2,3],[4,5]] starting at 1.
  std::vector<float> buffer = {-1, 0, 1, 2, 3, 4, 5};
  std::vector<float> row = {10, 20, 30};
  InputViews views;
  views["x"] = {DType::F32, {2, 3}, {1, 2}, buffer.data() + 1, Device{}};
  views["y"] = {DType::F32, {2, 3}, {0, 1}, row.data(), Device{}};
  auto out = (*exe)->runViews(views, {}, /*outputsOnDevice=*/true);
  ASSERT_TRUE(static_cast<bool>(out)) << toString(out.takeError());
  ASSERT_EQ(out->size(), 1u);
  OutputBuffer result = std::move((*out)[0]);
  exe->reset(); // the output's memory is its own
  EXPECT_EQ(result.shape, (Shape{2, 3}));
  const float *got = static_cast<const float *>(result.data.get());
  EXPECT_EQ(std::vector<float>(got, got + 6),
            (std::vector<float>{10, 22, 34, 11, 23, 35}));

  auto again = buildExecutable(graph, Device{});
  ASSERT_TRUE(static_cast<bool>(again));
  auto expectError = [&](InputViews bad, const std::string &want) {
    auto r = (*again)->runViews(bad, {}, false);
    ASSERT_FALSE(static_cast<bool>(r));
    std::string msg = toString(r.takeError());
    EXPECT_NE(msg.find(want), std::string::npos) << msg;
  };
  InputViews negative = views;
  negative["x"].strides = {1, -2};
  expectError(negative, "input 'x' has a negative stride (-2 in dimension 1)");
  InputViews rank = views;
  rank["y"].strides = {1};
  expectError(rank, "input 'y' has 1 strides for 2 dimensions");
  InputViews elsewhere = views;
  elsewhere["x"].device = Device{Device::Kind::CUDA, 1};
  expectError(elsewhere, "input 'x' is on cuda:1 but @g runs on cpu");
  InputViews wrongType = views;
  wrongType["y"].shape = {3, 2};
  expectError(wrongType, "input 'y' is f32[3, 2] but the graph expects");
}

// --check-frees turns a read of freed storage into an error naming the op
// and the value. The verifier rejects such IR, so it is parsed unverified:
// this is the safety net for a runtime or pass bug.
TEST_F(RuntimeTest, CheckFreesCatchesReadAfterFree) {
  auto graph = parse(R"(
    trace.graph @g(%x: tensor<2xf32> {trace.input = "x"}) -> tensor<2xf32> {
      %0 = pyop "exp"(%x) : (tensor<2xf32>) -> tensor<2xf32>
      free %0 : tensor<2xf32>
      %1 = pyop "neg"(%0) : (tensor<2xf32>) -> tensor<2xf32>
      ret %1 : tensor<2xf32>
    })",
                     /*verify=*/false);
  ASSERT_TRUE(graph);
  auto exe = buildExecutable(graph, Device{});
  ASSERT_TRUE(static_cast<bool>(exe)) << toString(exe.takeError());
  RunOptions options;
  options.checkFrees = true;
  auto out = (*exe)->run({{"x", f32({2}, {1, 2})}}, options);
  ASSERT_FALSE(static_cast<bool>(out));
  std::string msg = toString(out.takeError());
  EXPECT_NE(msg.find("op 'neg'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("reads %0 (argument #0) after its storage was freed"),
            std::string::npos)
      << msg;
}

// A planned graph (--plan-memory's attributes) runs from one arena: the
// same bytes out as unplanned, one allocator call for the arena and one
// for the output; the kernel scratch the first run asked the allocator for
// comes from the arena's end in later runs.
static const char *kPlanned = R"(
    trace.graph @g(%a: tensor<4x8xf16> {trace.input = "a"},
                   %b: tensor<8x4xf16> {trace.input = "b"}) -> tensor<4x4xf16>
        attributes {trace.arena_alignment = 64 : i64, trace.arena_bytes = 128 : i64} {
      %0 = pyop "neg"(%a) {trace.arena_offsets = array<i64: 0>} : (tensor<4x8xf16>) -> tensor<4x8xf16>
      %1 = pyop "matmul"(%0, %b) {trace.arena_offsets = array<i64: 64>} : (tensor<4x8xf16>, tensor<8x4xf16>) -> tensor<4x4xf16>
      free %0 : tensor<4x8xf16>
      %2 = pyop "mul"(%1, 2) : (tensor<4x4xf16>) -> tensor<4x4xf16>
      free %1 : tensor<4x4xf16>
      ret %2 : tensor<4x4xf16>
    })";

static NamedTensors plannedInputs() {
  std::vector<uint16_t> a(32), b(32);
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = 0x3C00 + 64 * i; // 1.0, then larger halves
    b[i] = 0xBC00 - 32 * i; // -1.0, then smaller magnitudes
  }
  return {{"a", hostTensor(DType::F16, {4, 8}, a)},
          {"b", hostTensor(DType::F16, {8, 4}, b)}};
}

TEST_F(RuntimeTest, PlannedRunUsesOneArena) {
  std::string text = kPlanned;
  // The same graph unplanned: no attributes.
  std::string unplanned = text;
  for (const char *attr :
       {"attributes {trace.arena_alignment = 64 : i64, trace.arena_bytes = "
        "128 : i64} ",
        "{trace.arena_offsets = array<i64: 0>} ",
        "{trace.arena_offsets = array<i64: 64>} "}) {
    size_t at = unplanned.find(attr);
    ASSERT_NE(at, std::string::npos) << attr;
    unplanned.erase(at, std::strlen(attr));
  }
  auto graph = parse(unplanned);
  ASSERT_TRUE(graph);
  auto plain = buildExecutable(graph, Device{});
  ASSERT_TRUE(static_cast<bool>(plain)) << toString(plain.takeError());
  auto want = (*plain)->run(plannedInputs());
  ASSERT_TRUE(static_cast<bool>(want)) << toString(want.takeError());
  // One allocation per fresh result, plus matmul's f16 scratch.
  const MemoryReport &plainReport = (*plain)->memoryReport();
  EXPECT_EQ(plainReport.arenaAllocations, 0);
  EXPECT_EQ(plainReport.lowerBoundBytes, 0);
  int64_t scratchCalls = plainReport.allocations - 3;
  EXPECT_GT(scratchCalls, 0) << "matmul on f16 no longer takes scratch";

  graph = parse(text);
  ASSERT_TRUE(graph);
  auto exe = buildExecutable(graph, Device{});
  ASSERT_TRUE(static_cast<bool>(exe)) << toString(exe.takeError());
  RunOptions options;
  options.checkFrees = true;
  for (int run = 0; run < 3; ++run) {
    auto got = (*exe)->run(plannedInputs(), options);
    ASSERT_TRUE(static_cast<bool>(got)) << toString(got.takeError());
    EXPECT_EQ((*got)[0].data, (*want)[0].data);
    const MemoryReport &r = (*exe)->memoryReport();
    EXPECT_EQ(r.plannedArenaBytes, 128);
    EXPECT_EQ(r.lowerBoundBytes, 128); // neg's 64 and matmul's 32 -> 64
    EXPECT_EQ(r.peakBytes, r.predictedPeakBytes);
    EXPECT_EQ(r.arenaAllocations, 1);
    EXPECT_EQ(r.outputAllocations, 1);
    // The first run learns the scratch; the later ones take it from the
    // arena: one call for the arena, one for the output.
    EXPECT_EQ(r.allocations, run == 0 ? 2 + scratchCalls : 2) << run;
    EXPECT_EQ(r.arenaScratchBytes > 0, run > 0) << run;
  }

  // Saved and loaded, the plan comes along.
  auto bytes = serializeExecutable(**exe, "test");
  ASSERT_TRUE(static_cast<bool>(bytes)) << toString(bytes.takeError());
  auto loaded = loadExecutableBuffer(*bytes, "f.trx", Device{});
  ASSERT_TRUE(static_cast<bool>(loaded)) << toString(loaded.takeError());
  auto again = (*loaded)->run(plannedInputs());
  ASSERT_TRUE(static_cast<bool>(again)) << toString(again.takeError());
  EXPECT_EQ((*again)[0].data, (*want)[0].data);
  EXPECT_EQ((*loaded)->memoryReport().arenaAllocations, 1);
  EXPECT_EQ((*loaded)->memoryReport().lowerBoundBytes, 128);
}

// A plan that a saved executable may hold and no verified graph does: the
// loader refuses offsets that are misaligned, outside the arena or on a
// view, and the run refuses two storages alive at once sharing bytes,
// naming both and the op.
TEST_F(RuntimeTest, WrongPlansAreRefused) {
  auto graph = parse(kPlanned);
  ASSERT_TRUE(graph);
  auto built = buildExecutable(graph, Device{});
  ASSERT_TRUE(static_cast<bool>(built)) << toString(built.takeError());
  Executable &exe = **built;
  auto loadError = [&]() -> std::string {
    auto bytes = serializeExecutable(exe, "test");
    EXPECT_TRUE(static_cast<bool>(bytes));
    auto loaded = loadExecutableBuffer(*bytes, "f.trx", Device{});
    return loaded ? "" : loaded.takeError().message();
  };
  ASSERT_EQ(loadError(), "");
  exe.results[1].arenaOffset = 32;
  EXPECT_EQ(loadError(),
            "f.trx: corrupt saved executable: instruction #1 ('matmul')'s "
            "result #0 has arena offset 32 for 32 bytes: not aligned to 64 or "
            "not inside the arena of 128 bytes");
  exe.results[1].arenaOffset = 128;
  EXPECT_NE(loadError().find("not inside the arena of 128 bytes"),
            std::string::npos);
  exe.results[1].arenaOffset = 64;
  exe.arenaAlignment = exe.arenaBytes = 0;
  EXPECT_NE(loadError().find("the file has no memory plan"), std::string::npos);
  exe.arenaAlignment = 64;
  exe.arenaBytes = -64;
  EXPECT_NE(loadError().find("memory plan of -64 bytes"), std::string::npos);
  exe.arenaBytes = 128;
  ASSERT_EQ(loadError(), "");

  // matmul's result over neg's, which it reads: the run stops at matmul.
  exe.results[1].arenaOffset = 0;
  auto out = exe.run(plannedInputs());
  ASSERT_FALSE(static_cast<bool>(out));
  EXPECT_EQ(toString(out.takeError()),
            "op 'matmul' at -:6:12: its result #0 (32 bytes at arena offset "
            "0) overlaps the storage of result #0 of op 'neg' at -:5:12 (64 "
            "bytes at arena offset 0), which is still alive: the memory plan "
            "is wrong");
}

// A kernel that returns a view reaching past its input's storage (a bug a
// view kernel could have) reads bytes of another storage of the arena:
// --check-frees' owner map names both.
static void viewPastItsStorage(KernelContext &ctx) {
  Tensor t = ctx.tensor(0);
  t.shape = {4, 16}; // neg's 64 bytes, and matmul's after them
  t.strides = Tensor::contiguousStrides(t.shape);
  ctx.result(0) = t;
}

TEST_F(RuntimeTest, CheckFreesOwnerMapCatchesStrayViews) {
  auto graph = parse(R"(
    trace.graph @g(%a: tensor<4x8xf16> {trace.input = "a"})
        -> (tensor<4xf16>, tensor<8xf16>)
        attributes {trace.arena_alignment = 64 : i64, trace.arena_bytes = 128 : i64} {
      %0 = pyop "neg"(%a) {trace.arena_offsets = array<i64: 0>} : (tensor<4x8xf16>) -> tensor<4x8xf16>
      %1 = pyop "neg"(%a) {trace.arena_offsets = array<i64: 64>} : (tensor<4x8xf16>) -> tensor<4x8xf16>
      %2 = pyop "t"(%0) : (tensor<4x8xf16>) -> tensor<8x4xf16>
      %3 = pyop "sum"(%2, (0,), False) : (tensor<8x4xf16>) -> tensor<4xf16>
      %4 = pyop "sum"(%1, (0,), False) : (tensor<4x8xf16>) -> tensor<8xf16>
      free %0 : tensor<4x8xf16>
      free %1 : tensor<4x8xf16>
      ret %3, %4 : tensor<4xf16>, tensor<8xf16>
    })");
  ASSERT_TRUE(graph);
  auto exe = buildExecutable(graph, Device{});
  ASSERT_TRUE(static_cast<bool>(exe)) << toString(exe.takeError());
  NamedTensors inputs = {{"a", plannedInputs()["a"]}};
  RunOptions options;
  options.checkFrees = true;
  ASSERT_TRUE(static_cast<bool>((*exe)->run(inputs, options)));
  (*exe)->instrs[2].fn = viewPastItsStorage;
  auto out = (*exe)->run(inputs, options);
  ASSERT_FALSE(static_cast<bool>(out));
  EXPECT_EQ(toString(out.takeError()),
            "op 'sum' at -:8:12 reads %2 (argument #0) at arena bytes 0 to "
            "128, which overlap the storage of result #0 of op 'neg' at -:6:12 "
            "(64 bytes at arena offset 64): a view kernel or the memory plan "
            "is wrong");
}

// Two executables of one graph on cuda:0 and cuda:1, run alternately from
// one thread: each run makes its own device current, so the kernels and the
// cuBLAS handle of one never land on the other. Profiled: each device gets
// its own start event and process, every launch one arrow.
TEST_F(RuntimeTest, TwoCUDADevicesAlternate) {
  auto graph = parse(R"(
    trace.graph @g(%w: tensor<3x3xf32> {trace.param = "w"},
                   %x: tensor<2x3xf32> {trace.input = "x"}) -> tensor<2x3xf32> {
      %0 = pyop "matmul"(%x, %w) : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x3xf32>
      %1 = pyop "relu"(%0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
      free %0 : tensor<2x3xf32>
      ret %1 : tensor<2x3xf32>
    })");
  ASSERT_TRUE(graph);
  std::vector<std::unique_ptr<Executable>> exes;
  for (int index : {0, 1}) {
    auto exe = buildExecutable(graph, Device{Device::Kind::CUDA, index});
    if (!exe)
      GTEST_SKIP() << "needs two CUDA devices: " << toString(exe.takeError());
    exes.push_back(std::move(*exe));
  }
  HostTensor w = f32({3, 3}, {1, -1, 0, 2, 0, 1, 0, 3, -2});
  auto cpu = buildExecutable(graph, Device{});
  ASSERT_TRUE(static_cast<bool>(cpu)) << toString(cpu.takeError());
  ASSERT_FALSE(static_cast<bool>((*cpu)->loadParams({{"w", w}})));
  for (auto &exe : exes)
    ASSERT_FALSE(static_cast<bool>(exe->loadParams({{"w", w}})));
  Profiler profiler;
  profiler.start();
  RunOptions options;
  options.profiler = &profiler;
  for (float a : {1.0f, -2.0f, 0.5f}) {
    HostTensor x = f32({2, 3}, {a, 1, 2, -a, 0, 1});
    auto want = (*cpu)->run({{"x", x}});
    ASSERT_TRUE(static_cast<bool>(want)) << toString(want.takeError());
    for (auto &exe : exes) {
      auto out = exe->run({{"x", x}}, options);
      ASSERT_TRUE(static_cast<bool>(out)) << toString(out.takeError());
      EXPECT_EQ(values((*out)[0]), values((*want)[0]));
      EXPECT_EQ(exe->memoryReport().device.str(), exe->device().str());
      EXPECT_EQ(exe->memoryReport().peakBytes,
                exe->memoryReport().predictedPeakBytes);
    }
  }
  MemoryTraceSink sink;
  ASSERT_FALSE(static_cast<bool>(profiler.stop(sink)));
  std::map<int64_t, int> kernelsPerPid;
  int starts = 0, finishes = 0;
  for (const TraceEvent &e : sink.events) {
    kernelsPerPid[e.pid] += e.category == "kernel";
    starts += e.phase == 's';
    finishes += e.phase == 'f';
  }
  EXPECT_EQ(kernelsPerPid[devicePid(0)], 3 * 2); // 3 runs of 2 ops
  EXPECT_EQ(kernelsPerPid[devicePid(1)], 3 * 2);
  EXPECT_EQ(starts, 12);
  EXPECT_EQ(finishes, 12);
  EXPECT_EQ(profiler.clockReports().size(), 2u);
  writeTestTrace(sink, "two-cuda-devices");
}

// Two threads run their own executables into one profile at once: each
// thread gets its own named track, and its ranges nest on it.
TEST_F(RuntimeTest, ProfileTwoThreads) {
  auto graph = parse(R"(
    trace.graph @g(%x: tensor<64xf32> {trace.input = "x"}) -> tensor<64xf32> {
      %0 = pyop "exp"(%x) : (tensor<64xf32>) -> tensor<64xf32>
      %1 = pyop "add"(%0, %x) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
      free %0 : tensor<64xf32>
      ret %1 : tensor<64xf32>
    })");
  ASSERT_TRUE(graph);
  Profiler profiler;
  profiler.start();
  std::vector<std::unique_ptr<Executable>> exes;
  for (int i = 0; i < 2; ++i) {
    auto exe = buildExecutable(graph, Device{});
    ASSERT_TRUE(static_cast<bool>(exe)) << toString(exe.takeError());
    exes.push_back(std::move(*exe));
  }
  std::vector<std::thread> threads;
  std::vector<std::string> errors(2);
  for (int i = 0; i < 2; ++i)
    threads.emplace_back([&, i] {
      RunOptions options;
      options.profiler = &profiler;
      for (int r = 0; r < 50; ++r) {
        auto out = exes[i]->run(
            {{"x", f32({64}, std::vector<float>(64, float(i)))}}, options);
        if (!out) {
          errors[i] = toString(out.takeError());
          return;
        }
      }
    });
  for (auto &t : threads)
    t.join();
  EXPECT_EQ(errors, std::vector<std::string>(2));
  MemoryTraceSink sink;
  ASSERT_FALSE(static_cast<bool>(profiler.stop(sink)));
  std::map<int64_t, int> opsPerTid;
  std::set<int64_t> namedTids;
  for (const TraceEvent &e : sink.events) {
    if (e.category == "cpu_op")
      ++opsPerTid[e.tid];
    if (e.phase == 'M' && e.name == "thread_name")
      namedTids.insert(e.tid);
  }
  ASSERT_EQ(opsPerTid.size(), 2u);
  for (auto &[tid, n] : opsPerTid) {
    EXPECT_EQ(n, 100);
    EXPECT_TRUE(namedTids.count(tid));
  }
  EXPECT_EQ(profiler.summary().runs, 100);
  writeTestTrace(sink, "two-threads");
}

TEST_F(RuntimeTest, SafetensorsRoundTripAndNoPartialFile) {
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("traceir-st", dir));
  llvm::SmallString<128> path(dir);
  llvm::sys::path::append(path, "t.safetensors");
  HostTensor idx;
  idx.dtype = DType::I64;
  idx.shape = {3};
  idx.data.resize(24);
  int64_t raw[3] = {7, -1, 1LL << 40};
  std::memcpy(idx.data.data(), raw, 24);
  NamedTensors tensors{{"a", f32({2, 1}, {1.5f, -2})}, {"b.idx", idx}};
  ASSERT_FALSE(static_cast<bool>(writeSafetensors(path.str(), tensors)));
  auto back = readSafetensors(path.str());
  ASSERT_TRUE(static_cast<bool>(back)) << toString(back.takeError());
  ASSERT_EQ(back->size(), 2u);
  EXPECT_EQ(back->at("a").shape, (Shape{2, 1}));
  EXPECT_EQ(values(back->at("a")), (std::vector<float>{1.5f, -2}));
  EXPECT_EQ(back->at("b.idx").data, idx.data);
  // A write into a missing folder fails and leaves nothing behind.
  llvm::SmallString<128> bad(dir);
  llvm::sys::path::append(bad, "missing", "t.safetensors");
  traceir::Error err = writeSafetensors(bad.str(), tensors);
  EXPECT_TRUE(static_cast<bool>(err));
  EXPECT_FALSE(llvm::sys::fs::exists(bad));
  llvm::sys::fs::remove_directories(dir);
}

// What loading a saved executable checks beyond the FlatBuffer's bounds:
// each is a file that buildExecutable never writes, made here by editing a
// built executable before saving it.
TEST_F(RuntimeTest, LoadingChecksWhatBuildingDerives) {
  auto graph = parse(R"(
    trace.graph @g(%x: tensor<2x3xf32> {trace.input = "x"}) -> tensor<3x2xf32> {
      %0 = pyop "relu"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
      %1 = pyop "t"(%0) : (tensor<2x3xf32>) -> tensor<3x2xf32>
      ret %1 : tensor<3x2xf32>
    })");
  ASSERT_TRUE(graph);
  auto built = buildExecutable(graph, Device{});
  ASSERT_TRUE(static_cast<bool>(built)) << toString(built.takeError());
  Executable &exe = **built;
  auto loadError = [&](std::string_view bytes) -> std::string {
    auto loaded = loadExecutableBuffer(bytes, "f.trx", Device{});
    return loaded ? "" : loaded.takeError().message();
  };
  auto saved = [&] {
    auto bytes = serializeExecutable(exe, "test");
    EXPECT_TRUE(static_cast<bool>(bytes));
    return bytes ? *bytes : std::string();
  };
  std::string good = saved();
  EXPECT_EQ(loadError(good), "");
  // A FlatBuffer at an odd address loads too (it is copied to align it).
  std::string shifted = " " + good;
  EXPECT_EQ(loadError(std::string_view(shifted).substr(1)), "");

  // A pure op's result marked as a view: its kernel would write through a
  // null storage.
  exe.results[0].fresh = false;
  EXPECT_EQ(loadError(saved()),
            "f.trx: corrupt saved executable: instruction #0 ('relu')'s "
            "result #0 is marked as sharing an operand's storage, but op "
            "'relu' returns fresh tensors");
  exe.results[0].fresh = true;
  // A view's result marked fresh: its storage would be counted, never freed.
  exe.results[1].fresh = true;
  EXPECT_EQ(loadError(saved()),
            "f.trx: corrupt saved executable: instruction #1 ('t')'s result "
            "is marked fresh, but op 't' returns its first argument (or a "
            "view of it) here");
  exe.results[1].fresh = false;
  // More slots than values: the count would size every run's slot array.
  exe.numSlots = 1000;
  EXPECT_EQ(loadError(saved()), "f.trx: corrupt saved executable: num_slots "
                                "is 1000, but 3 values are defined");
  exe.numSlots = 3;
  EXPECT_EQ(loadError(saved()), "");
}

// Kernels check what type inference guarantees in a verified graph, since a
// saved executable is not one: each unverified graph below runs to an error
// naming the op, not to a read or write past a buffer.
TEST_F(RuntimeTest, KernelsCheckWhatInferenceGuarantees) {
  struct Case {
    const char *body, *type, *error;
  } cases[] = {
      {R"(%0 = pyop "add"(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<8xf32>)",
       "tensor<8xf32>",
       "argument #0 of shape [4] does not broadcast to the "
       "result's [8]"},
      {R"(%0 = pyop "matmul"(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4x4xf32>)",
       "tensor<4x4xf32>", "the result of [4] @ [4] is f32[], not f32[4, 4]"},
      {R"(%0 = pyop "transpose"(%x, 0, 5) : (tensor<4xf32>) -> tensor<4xf32>)",
       "tensor<4xf32>", "transpose: dim 5 is out of range for rank 1"},
      {R"(%0 = pyop "reshape"(%x, [100]) : (tensor<4xf32>) -> tensor<100xf32>)",
       "tensor<100xf32>",
       "reshape: shape [100] is invalid for an input of 4 "
       "elements"},
      {R"(%0 = pyop "select"(%x, 0, 4) : (tensor<4xf32>) -> tensor<f32>)",
       "tensor<f32>", "select: index 4 is out of range for dim 0 of size 4"},
  };
  for (const Case &c : cases) {
    std::string text =
        std::string("trace.graph @g(%x: tensor<4xf32> {trace.input = \"x\"}) "
                    "-> ") +
        c.type + " {\n  " + c.body + "\n  ret %0 : " + c.type + "\n}\n";
    auto graph = parse(text, /*verify=*/false);
    ASSERT_TRUE(graph) << text;
    auto exe = buildExecutable(graph, Device{});
    ASSERT_TRUE(static_cast<bool>(exe)) << toString(exe.takeError());
    auto out = (*exe)->run({{"x", f32({4}, {1, 2, 3, 4})}});
    ASSERT_FALSE(static_cast<bool>(out)) << text;
    std::string message = out.takeError().message();
    EXPECT_NE(message.find(c.error), std::string::npos) << message;
  }
}

// PyTorch's view rules: a transposed tensor cannot be flattened as a view,
// while merging contiguous dims can.
TEST(ViewStrides, MatchesPyTorch) {
  views::Layout t{{3, 2}, {1, 3}, 0}; // the transpose of a contiguous [2, 3]
  EXPECT_FALSE(views::viewStrides(t, views::Dims{6}).has_value());
  EXPECT_EQ(*views::viewStrides(t, views::Dims{3, 1, 2}),
            (views::Dims{1, 6, 3}));
  views::Layout c = views::Layout::contiguous(views::Dims{2, 3, 4});
  EXPECT_EQ(*views::viewStrides(c, views::Dims{6, 4}), (views::Dims{4, 1}));
  EXPECT_EQ(*views::viewStrides(c, views::Dims{2, 12}), (views::Dims{12, 1}));
  // contiguous() of the transpose copies; of a contiguous tensor it views.
  EXPECT_FALSE(
      views::applyView("contiguous", t, {}, views::Dims{3, 2}).has_value());
  EXPECT_TRUE(
      views::applyView("contiguous", c, {}, views::Dims{2, 3, 4}).has_value());
}

} // namespace
