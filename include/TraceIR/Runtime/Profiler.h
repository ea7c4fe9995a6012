//===- Profiler.h - CPU ranges and device kernel times ----------*- C++ -*-===//
//
// A Profiler records, while executables run, a CPU range per op (with its
// thread id), the frees and the live bytes per device, and on a device with
// its own clock (CUDA) an event before and after each op's kernels on the
// stream they run on. stop() resolves the device times, places them on the
// CPU timeline through each device's start event, and sends one Chrome trace
// to a TraceSink; summary() then gives a table per op name.
//
// Recording is cheap on purpose: two clock reads and one vector append per
// op; names, scalars and JSON are only produced by stop(). See
// docs/Profiler.md for the clock sync and its error bound.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_RUNTIME_PROFILER_H
#define TRACEIR_RUNTIME_PROFILER_H

#include "TraceIR/Runtime/KernelTier.h"
#include "TraceIR/Runtime/Tensor.h"
#include "TraceIR/Runtime/TraceSink.h"

#include "TraceIR/Support/Error.h"

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace traceir {

class Executable;

/// The CPU clock every profile uses: steady (monotonic) nanoseconds.
inline int64_t profileClockNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// Timing of kernels on one device with the device's own clock (CUDA:
/// cudaEvents on the stream the kernels run on).
class DeviceTimer {
public:
  virtual ~DeviceTimer();
  /// Records a few warm-up events, then the start event (`__cuda_start`),
  /// and waits for it. `cpuBeforeNs`/`cpuAfterNs`: the CPU clock just
  /// before recording it and just after it had completed.
  virtual Error start(int64_t &cpuBeforeNs, int64_t &cpuAfterNs) = 0;
  /// Records an event on the stream; returns its index (0, 1, ...).
  virtual uint32_t record() = 0;
  /// Waits for every recorded event; returns each one's time in
  /// nanoseconds since the start event, by index.
  virtual Expected<std::vector<int64_t>> collect() = 0;
  /// The device's name for the trace, e.g. "NVIDIA H200".
  virtual std::string description() const = 0;
};

/// How one device's clock maps onto the CPU clock. The start event was
/// timestamped by the device somewhere between `cpuBeforeNs` (just before
/// it was recorded) and `cpuAfterNs` (once waiting for it returned); taking
/// the midpoint as its CPU time bounds the error by half that window.
struct ClockSync {
  int64_t cpuBeforeNs = 0;
  int64_t cpuAfterNs = 0;
  int64_t anchorNs() const {
    return cpuBeforeNs + (cpuAfterNs - cpuBeforeNs) / 2;
  }
  int64_t errorBoundNs() const { return (cpuAfterNs - cpuBeforeNs + 1) / 2; }
  /// The CPU time of a device time given in ns since the start event.
  int64_t toCpuNs(int64_t deviceNs) const { return anchorNs() + deviceNs; }
};

/// Per op name: calls and times, like torch.profiler's key_averages().
struct ProfileSummary {
  struct Row {
    std::string name;
    int64_t calls = 0;
    int64_t optimizedCalls = 0; ///< of `calls`, those the optimized tier ran
    int64_t cpuTotalNs = 0, cpuMinNs = 0, cpuMaxNs = 0;
    /// Device kernel times (ops that ran on a device with a timer).
    int64_t kernelCalls = 0;
    int64_t kernelTotalNs = 0, kernelMinNs = 0, kernelMaxNs = 0;
  };
  std::vector<Row> rows; ///< by total time, largest first
  /// Wall time of the profiled runs (the denominator of "% of run").
  int64_t runNs = 0;
  int64_t runs = 0;
  std::string toText() const;
};

/// What the trace's metadata says about one device's clock.
struct DeviceClockReport {
  Device device;
  ClockSync sync;
  /// Kernels that would start before their launch on the CPU timeline, and
  /// by how much at most: the sync's error made visible, never clamped.
  int64_t kernelsBeforeLaunch = 0;
  int64_t maxSkewNs = 0;
};

class Profiler {
public:
  Profiler();
  ~Profiler();
  Profiler(const Profiler &) = delete;
  Profiler &operator=(const Profiler &) = delete;

  /// Starts a profile: clears earlier records and sets the base time.
  void start();
  bool isActive() const { return active; }
  /// Ends the profile and sends it to `sink`: every event, then the
  /// metadata. Afterwards summary() describes it.
  Error stop(TraceSink &sink);
  const ProfileSummary &summary() const { return lastSummary; }
  const std::vector<DeviceClockReport> &clockReports() const {
    return lastClocks;
  }

  // --- Recording, called by Executable::run. ---------------------------

  /// One op: its CPU range, the launch time and the indices of the device
  /// events around its kernels (-1 without a device timer).
  struct OpRecord {
    uint32_t op;
    int64_t beginNs, endNs, launchNs;
    int32_t deviceBegin = -1;
    KernelTier tier = KernelTier::Portable; ///< which kernel tier ran it
  };
  struct FreeRecord {
    uint32_t op; ///< the trace.free (its value name is valueNames[0])
    int64_t tsNs;
    int64_t bytes;
  };
  struct CounterRecord {
    int64_t tsNs;
    int64_t liveBytes, allocatedBytes;
    /// A planned run's arena occupancy: aligned bytes of its planned
    /// storages alive.
    int64_t arenaBytes;
  };
  /// One run of one executable on one thread.
  struct RunRecord {
    uint32_t exeInfo;   ///< index into the profiler's executable table
    uint32_t deviceIdx; ///< index into the profiler's device table
    int64_t tid;
    int64_t beginNs = 0, endNs = 0;
    std::vector<OpRecord> ops;
    std::vector<FreeRecord> frees;
    std::vector<CounterRecord> counters;
  };

  /// Opens the record of a run of `exe` on the calling thread: starts the
  /// device's timer the first time the device is seen. Runs on several
  /// threads may record at once, each on its own device where the device
  /// has a timer (a CUDA device's event pool is not shared between
  /// threads); stop() must follow them.
  Expected<RunRecord *> beginRun(Executable &exe);
  /// The timer of a run's device, or null (the CPU).
  DeviceTimer *timerOf(const RunRecord &run) const {
    return devices[run.deviceIdx].timer.get();
  }

  /// Sends the recorded runs to `sink` as trace events, then the metadata,
  /// given each device's event times (`deviceNs[d]`, ns since device d's
  /// start event). stop() calls it with the timers' times; tests call it
  /// with recorded ones.
  Error write(TraceSink &sink,
              const std::vector<std::vector<int64_t>> &deviceNs);

  // --- State (public for the tests that feed recorded times). ----------

  struct ExeInfo {
    uint64_t uid;
    std::string graph;
    bool planned = false; ///< runs in an arena (--plan-memory)
    std::vector<std::string> opNames, locations, scalars, operands,
        generatedKernels;
  };
  struct DeviceState {
    Device device;
    std::string description;
    std::unique_ptr<DeviceTimer> timer;
    /// Whether its kernels have their own clock (a timer, or recorded
    /// times in tests): then they get their own process in the trace.
    bool hasClock = false;
    ClockSync sync;
  };
  int64_t baseNs = 0;
  std::vector<ExeInfo> exes;
  std::vector<DeviceState> devices;
  std::vector<std::unique_ptr<RunRecord>> runs;

private:
  std::mutex mutex; ///< guards the tables in beginRun
  void emit(TraceSink &sink, const std::vector<std::vector<int64_t>> &deviceNs);
  bool active = false;
  ProfileSummary lastSummary;
  std::vector<DeviceClockReport> lastClocks;
};

/// Track ids: a GPU device's pid and its stream's tid are above any Linux
/// pid or tid (at most 2^22), so they never collide with the CPU's.
constexpr int64_t kDevicePidBase = int64_t(1) << 30;
inline int64_t devicePid(int index) { return kDevicePidBase + index; }
inline int64_t streamTid(int index) { return kDevicePidBase + index * 64; }

} // namespace traceir

#endif // TRACEIR_RUNTIME_PROFILER_H
