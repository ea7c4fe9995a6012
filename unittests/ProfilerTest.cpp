//===- ProfilerTest.cpp - Clock sync and the trace the profiler writes ----===//
//
// The multi-device timeline is tested here without a GPU by feeding the
// profiler recorded event times for two devices whose clocks start at
// different CPU times: the same write() path stop() takes on CUDA, only the
// times come from the test instead of cudaEventElapsedTime.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/Profiler.h"
#include "TestTrace.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <cstdlib>
#include <map>
#include <unistd.h>

using namespace traceir;

namespace {

TEST(ClockSync, MidpointAndErrorBound) {
  ClockSync sync{1000, 3001};
  EXPECT_EQ(sync.anchorNs(), 2000);
  EXPECT_EQ(sync.errorBoundNs(), 1001); // rounds up: never understated
  EXPECT_EQ(sync.toCpuNs(0), 2000);
  EXPECT_EQ(sync.toCpuNs(2500), 4500);
  // Whatever the true CPU time of the start event in [before, after], the
  // mapped time is within the bound of it.
  for (int64_t truth : {1000, 2000, 3001})
    EXPECT_LE(std::llabs(sync.toCpuNs(0) - truth), sync.errorBoundNs());
}

/// Two devices, one run on each: cuda:0's start event was recorded between
/// 1000 and 3000 ns (anchor 2000), cuda:1's between 1500 and 1700 (anchor
/// 1600). The second device's kernel maps to 400 ns before its launch: that
/// is reported as skew, not clamped.
struct TwoDevices : ::testing::Test {
  Profiler prof;
  MemoryTraceSink sink;

  void SetUp() override {
    prof.baseNs = 500;
    Profiler::ExeInfo info;
    info.uid = 1;
    info.graph = "g";
    info.opNames = {"matmul", "relu", "trace.free"};
    info.locations = {"g.mlir:2:8", "g.mlir:3:8", "g.mlir:4:3"};
    info.scalars = {"", "", ""};
    info.operands = {"%x, %w", "%0", "%0"};
    // relu ran the compiler's kernels (trace-run --gpu-binary).
    info.generatedKernels = {"", "g__op1_relu_kernel_0123abcd", ""};
    prof.exes.push_back(std::move(info));
    for (int index : {0, 1}) {
      Profiler::DeviceState dev;
      dev.device = Device{Device::Kind::CUDA, index};
      dev.description = "recorded";
      dev.hasClock = true;
      dev.sync = index == 0 ? ClockSync{1000, 3000} : ClockSync{1500, 1700};
      prof.devices.push_back(std::move(dev));
    }
    auto run0 = std::make_unique<Profiler::RunRecord>();
    run0->exeInfo = 0;
    run0->deviceIdx = 0;
    run0->tid = 42;
    run0->beginNs = 4000;
    run0->endNs = 12000;
    run0->ops = {{0, 4500, 6000, 5000, 0}, {1, 8500, 10000, 9000, 2}};
    run0->frees = {{2, 11000, 4096}};
    run0->counters = {
        {4000, 0, 0, 0}, {4500, 4096, 4608, 0}, {11000, 0, 4608, 0}};
    auto run1 = std::make_unique<Profiler::RunRecord>();
    run1->exeInfo = 0;
    run1->deviceIdx = 1;
    run1->tid = 42;
    run1->beginNs = 19000;
    run1->endNs = 22000;
    run1->ops = {{0, 19500, 21000, 20000, 0}};
    prof.runs.push_back(std::move(run0));
    prof.runs.push_back(std::move(run1));
    // Device times in ns since each device's start event.
    ASSERT_FALSE(static_cast<bool>(
        prof.write(sink, {{3500, 6000, 7500, 9000}, {18000, 19000}})));
    writeTestTrace(sink, "two-devices");
  }

  std::vector<const TraceEvent *> byCategory(llvm::StringRef cat) {
    std::vector<const TraceEvent *> out;
    for (const TraceEvent &e : sink.events)
      if (e.category == cat)
        out.push_back(&e);
    return out;
  }
};

TEST_F(TwoDevices, KernelsLandOnTheirDevicesCPUTime) {
  auto kernels = byCategory("kernel");
  ASSERT_EQ(kernels.size(), 3u);
  // cuda:0: anchor 2000 + device time, minus the base 500.
  EXPECT_EQ(kernels[0]->pid, devicePid(0));
  EXPECT_EQ(kernels[0]->tsNs, 2000 + 3500 - 500);
  EXPECT_EQ(kernels[0]->durNs, 2500);
  EXPECT_EQ(kernels[1]->tsNs, 2000 + 7500 - 500);
  // Which code ran is in the kernel's args: only where it was generated.
  EXPECT_FALSE(kernels[0]->args.contains("generated_kernels"));
  ASSERT_TRUE(kernels[1]->args.contains("generated_kernels"));
  EXPECT_EQ(kernels[1]->args["generated_kernels"],
            "g__op1_relu_kernel_0123abcd");
  // cuda:1 has its own anchor and its own process.
  EXPECT_EQ(kernels[2]->pid, devicePid(1));
  EXPECT_EQ(kernels[2]->tsNs, 1600 + 18000 - 500);
  EXPECT_NE(devicePid(0), devicePid(1));
}

TEST_F(TwoDevices, EveryLaunchHasOneArrowToItsKernel) {
  auto flows = byCategory("flow");
  ASSERT_EQ(flows.size(), 6u);
  std::map<uint64_t, std::pair<const TraceEvent *, const TraceEvent *>> ids;
  for (const TraceEvent *e : flows)
    (e->phase == 's' ? ids[e->id].first : ids[e->id].second) = e;
  ASSERT_EQ(ids.size(), 3u);
  for (auto &[id, pair] : ids) {
    ASSERT_TRUE(pair.first && pair.second) << "flow " << id;
    EXPECT_EQ(pair.first->pid, ::getpid());
    EXPECT_EQ(pair.first->tid, 42);
    EXPECT_GE(pair.second->pid, kDevicePidBase);
  }
}

TEST_F(TwoDevices, SkewIsReportedNotClamped) {
  const auto &clocks = prof.clockReports();
  ASSERT_EQ(clocks.size(), 2u);
  EXPECT_EQ(clocks[0].kernelsBeforeLaunch, 0);
  EXPECT_EQ(clocks[1].kernelsBeforeLaunch, 1);
  EXPECT_EQ(clocks[1].maxSkewNs, 20000 - (1600 + 18000));
  ASSERT_TRUE(sink.metadata.contains("devices"));
  const nlohmann::json &devices = sink.metadata["devices"];
  ASSERT_TRUE(devices.is_array());
  ASSERT_EQ(devices.size(), 2u);
  const nlohmann::json &second = devices[1];
  EXPECT_EQ(second["max_launch_skew_us"].get<double>(), 0.4);
  EXPECT_EQ(second["sync"]["error_bound_us"].get<double>(), 0.1);
}

TEST_F(TwoDevices, SummaryCountsCPUAndKernelTimes) {
  const ProfileSummary &summary = prof.summary();
  EXPECT_EQ(summary.runs, 2);
  EXPECT_EQ(summary.runNs, 8000 + 3000);
  ASSERT_EQ(summary.rows.size(), 2u);
  const auto &matmul = summary.rows[0];
  EXPECT_EQ(matmul.name, "matmul");
  EXPECT_EQ(matmul.calls, 2);
  EXPECT_EQ(matmul.cpuTotalNs, 1500 + 1500);
  EXPECT_EQ(matmul.kernelCalls, 2);
  EXPECT_EQ(matmul.kernelTotalNs, 2500 + 1000);
  EXPECT_EQ(matmul.kernelMinNs, 1000);
  std::string text = summary.toText();
  EXPECT_NE(text.find("kernel total us"), std::string::npos) << text;
}

TEST(ChromeTraceFileSink, NoFileUnlessFinished) {
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("traceir-sink", dir));
  llvm::SmallString<128> path(dir);
  llvm::sys::path::append(path, "trace.json");
  {
    auto sink = ChromeTraceFileSink::create(path.str());
    ASSERT_TRUE(static_cast<bool>(sink));
    (*sink)->event(TraceEvent{});
  } // dropped unfinished, as on an error
  std::error_code ec;
  EXPECT_EQ(llvm::sys::fs::directory_iterator(dir, ec),
            llvm::sys::fs::directory_iterator())
      << "an unfinished trace left a file behind";
  {
    auto sink = ChromeTraceFileSink::create(path.str());
    ASSERT_TRUE(static_cast<bool>(sink));
    ASSERT_FALSE(
        static_cast<bool>((*sink)->finish(nlohmann::json{{"runs", 0}})));
  }
  EXPECT_TRUE(llvm::sys::fs::exists(path));
  llvm::sys::fs::remove(path);
  llvm::sys::fs::remove(dir);

  auto bad = ChromeTraceFileSink::create("/nonexistent-dir/trace.json");
  ASSERT_FALSE(static_cast<bool>(bad));
  std::string msg = toString(bad.takeError());
  EXPECT_NE(msg.find("cannot write the trace '/nonexistent-dir/trace.json'"),
            std::string::npos)
      << msg;
}

} // namespace
