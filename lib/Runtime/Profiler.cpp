//===- Profiler.cpp - From recorded runs to one Chrome trace --------------===//

#include "TraceIR/Runtime/CPU/Optimized.h"
#include "TraceIR/Runtime/Profiler.h"
#include "TraceIR/Runtime/Allocator.h"
#include "TraceIR/Runtime/Executable.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <unistd.h>

using namespace traceir;

DeviceTimer::~DeviceTimer() = default;
Profiler::Profiler() = default;
Profiler::~Profiler() = default;

Expected<std::unique_ptr<DeviceTimer>> Allocator::createTimer() {
  return nullptr; // the CPU: its ranges are its kernels' times
}

namespace {
int64_t currentTid() {
  thread_local int64_t tid = ::gettid();
  return tid;
}

/// Microseconds with three decimals, for metadata numbers.
double micros(int64_t ns) { return double(ns) / 1000.0; }
} // namespace

void Profiler::start() {
  exes.clear();
  devices.clear();
  runs.clear();
  active = true;
  baseNs = profileClockNs();
}

Expected<Profiler::RunRecord *> Profiler::beginRun(Executable &exe) {
  std::lock_guard<std::mutex> lock(mutex);
  // What the trace needs to name each op is copied once per executable, not
  // per run, and is keyed by the executable's uid, not its address (an
  // address can be reused by a later executable).
  uint32_t exeIdx = 0;
  while (exeIdx < exes.size() && exes[exeIdx].uid != exe.uid)
    ++exeIdx;
  if (exeIdx == exes.size()) {
    ExeInfo info;
    info.uid = exe.uid;
    info.graph = exe.name;
    info.planned = exe.arenaAlignment > 0;
    for (const OpInfoRT &op : exe.ops) {
      info.opNames.push_back(op.name);
      info.locations.push_back(op.location);
      info.scalars.push_back(op.scalars);
      info.generatedKernels.push_back(op.generatedKernels);
      std::string operands;
      for (const std::string &v : op.valueNames)
        if (!v.empty() && v[0] == '%')
          operands += (operands.empty() ? "" : ", ") + v;
      info.operands.push_back(std::move(operands));
    }
    exes.push_back(std::move(info));
  }

  Device dev = exe.device();
  uint32_t devIdx = 0;
  while (devIdx < devices.size() &&
         !(devices[devIdx].device.kind == dev.kind &&
           devices[devIdx].device.index == dev.index))
    ++devIdx;
  if (devIdx == devices.size()) {
    DeviceState state;
    state.device = dev;
    auto timer = exe.allocator().createTimer();
    if (!timer)
      return timer.takeError();
    state.timer = std::move(*timer);
    state.hasClock = state.timer != nullptr;
    if (state.timer) {
      state.description = state.timer->description();
      if (Error err =
              state.timer->start(state.sync.cpuBeforeNs, state.sync.cpuAfterNs))
        return err;
    }
    devices.push_back(std::move(state));
  }

  auto run = std::make_unique<RunRecord>();
  run->exeInfo = exeIdx;
  run->deviceIdx = devIdx;
  run->tid = currentTid();
  // Reserved up front: no reallocation while ops are timed (pages are only
  // touched as records are written).
  run->ops.reserve(exe.instrs.size());
  run->frees.reserve(exe.instrs.size());
  run->counters.reserve(exe.instrs.size() + 1);
  runs.push_back(std::move(run));
  return runs.back().get();
}

Error Profiler::stop(TraceSink &sink) {
  active = false;
  std::vector<std::vector<int64_t>> deviceNs(devices.size());
  for (size_t d = 0; d < devices.size(); ++d) {
    if (!devices[d].timer)
      continue;
    auto times = devices[d].timer->collect();
    if (!times)
      return times.takeError();
    deviceNs[d] = std::move(*times);
  }
  return write(sink, deviceNs);
}

Error Profiler::write(TraceSink &sink,
                      const std::vector<std::vector<int64_t>> &deviceNs) {
  emit(sink, deviceNs);
  nlohmann::json metadata;
  metadata["base_time_ns"] = baseNs;
  metadata["clock"] =
      "CLOCK_MONOTONIC (std::chrono::steady_clock); ts and dur are "
      "microseconds from base_time_ns, 3 decimals (ns resolution)";
  metadata["pid"] = int64_t(::getpid());
  metadata["runs"] = int64_t(runs.size());
  nlohmann::json devs = nlohmann::json::array();
  for (const DeviceClockReport &c : lastClocks) {
    nlohmann::json d;
    d["device"] = c.device.str();
    d["pid"] = devicePid(c.device.index);
    d["sync"] = nlohmann::json{
        {"method", "__cuda_start recorded after warm-up records; its CPU time "
                   "is the midpoint of [cpu_before, cpu_after], the CPU clock "
                   "just before recording it and once it completed"},
        {"cpu_before_us", micros(c.sync.cpuBeforeNs - baseNs)},
        {"cpu_after_us", micros(c.sync.cpuAfterNs - baseNs)},
        {"error_bound_us", micros(c.sync.errorBoundNs())}};
    d["kernels_before_launch"] = c.kernelsBeforeLaunch;
    d["max_launch_skew_us"] = micros(c.maxSkewNs);
    devs.push_back(std::move(d));
  }
  metadata["devices"] = std::move(devs);
  return sink.finish(std::move(metadata));
}

void Profiler::emit(TraceSink &sink,
                    const std::vector<std::vector<int64_t>> &deviceNs) {
  const int64_t pid = ::getpid();
  auto rel = [&](int64_t ns) { return ns - baseNs; };
  auto meta = [&](int64_t p, int64_t t, const char *name, const char *key,
                  nlohmann::json value) {
    TraceEvent e;
    e.phase = 'M';
    e.name = name;
    e.pid = p;
    e.tid = t;
    e.args[key] = std::move(value);
    sink.event(std::move(e));
  };

  // Names and order of every process and thread.
  meta(pid, pid, "process_name", "name",
       "TraceIR host (pid " + std::to_string(pid) + ")");
  meta(pid, pid, "process_sort_index", "sort_index", 0);
  std::vector<int64_t> tids;
  for (const auto &run : runs)
    if (std::find(tids.begin(), tids.end(), run->tid) == tids.end())
      tids.push_back(run->tid);
  for (size_t i = 0; i < tids.size(); ++i) {
    int64_t tid = tids[i];
    meta(pid, tid, "thread_name", "name",
         tid == pid ? std::string("main thread")
                    : "thread " + std::to_string(tid));
    meta(pid, tid, "thread_sort_index", "sort_index", int64_t(i));
  }
  for (const DeviceState &d : devices) {
    if (!d.hasClock)
      continue;
    int64_t dpid = devicePid(d.device.index);
    meta(dpid, streamTid(d.device.index), "process_name", "name",
         d.device.str() + " (" + d.description + ")");
    meta(dpid, streamTid(d.device.index), "process_sort_index", "sort_index",
         1 + d.device.index);
    meta(dpid, streamTid(d.device.index), "thread_name", "name",
         "default stream");
    meta(dpid, streamTid(d.device.index), "thread_sort_index", "sort_index", 0);
  }

  lastClocks.clear();
  for (const DeviceState &d : devices)
    if (d.hasClock)
      lastClocks.push_back({d.device, d.sync, 0, 0});
  auto clockOf = [&](const Device &dev) -> DeviceClockReport & {
    for (DeviceClockReport &c : lastClocks)
      if (c.device.kind == dev.kind && c.device.index == dev.index)
        return c;
    std::abort(); // a device with a timer has a clock report
  };

  std::map<std::string, ProfileSummary::Row> rows;
  auto account = [](int64_t &calls, int64_t &total, int64_t &mn, int64_t &mx,
                    int64_t ns) {
    mn = calls ? std::min(mn, ns) : ns;
    mx = calls ? std::max(mx, ns) : ns;
    total += ns;
    ++calls;
  };
  ProfileSummary summary;
  uint64_t nextFlow = 1;
  for (const auto &runPtr : runs) {
    const RunRecord &run = *runPtr;
    const ExeInfo &info = exes[run.exeInfo];
    const DeviceState &dev = devices[run.deviceIdx];
    const std::string devName = dev.device.str();
    int64_t end = std::max(run.endNs, run.beginNs);
    summary.runNs += end - run.beginNs;
    ++summary.runs;

    TraceEvent r;
    r.phase = 'X';
    r.name = "run @" + info.graph;
    r.category = "run";
    r.pid = pid;
    r.tid = run.tid;
    r.tsNs = rel(run.beginNs);
    r.durNs = end - run.beginNs;
    r.args =
        nlohmann::json{{"device", devName}, {"ops", int64_t(run.ops.size())}};
    sink.event(std::move(r));

    for (const OpRecord &op : run.ops) {
      const std::string &name = info.opNames[op.op];
      TraceEvent e;
      e.phase = 'X';
      e.name = name;
      e.category = "cpu_op";
      e.pid = pid;
      e.tid = run.tid;
      e.tsNs = rel(op.beginNs);
      e.durNs = op.endNs - op.beginNs;
      e.args = nlohmann::json{{"op", name},
                              {"device", devName},
                              {"operands", info.operands[op.op]},
                              {"scalars", info.scalars[op.op]},
                              {"location", info.locations[op.op]},
                              {"tier", kernelTierName(op.tier)}};
      // Which build of the optimized loops ran (the process's choice).
      if (op.tier == KernelTier::Optimized)
        e.args["cpu_capability"] = cpu::optimized::capability();
      sink.event(std::move(e));
      ProfileSummary::Row &row = rows[name];
      // A fused call's work ran in the optimized kernel before it.
      row.optimizedCalls += op.tier != KernelTier::Portable;
      account(row.calls, row.cpuTotalNs, row.cpuMinNs, row.cpuMaxNs,
              op.endNs - op.beginNs);

      if (op.deviceBegin < 0 || !dev.hasClock)
        continue;
      const std::vector<int64_t> &times = deviceNs[run.deviceIdx];
      if (size_t(op.deviceBegin) + 1 >= times.size())
        continue;
      int64_t kBegin = dev.sync.toCpuNs(times[op.deviceBegin]);
      int64_t kEnd = dev.sync.toCpuNs(times[op.deviceBegin + 1]);
      kEnd = std::max(kEnd, kBegin);
      DeviceClockReport &clock = clockOf(dev.device);
      if (kBegin < op.launchNs) {
        ++clock.kernelsBeforeLaunch;
        clock.maxSkewNs = std::max(clock.maxSkewNs, op.launchNs - kBegin);
      }
      TraceEvent k;
      k.phase = 'X';
      k.name = name;
      k.category = "kernel";
      k.pid = devicePid(dev.device.index);
      k.tid = streamTid(dev.device.index);
      k.tsNs = rel(kBegin);
      k.durNs = kEnd - kBegin;
      k.args = nlohmann::json{{"op", name},
                              {"device", devName},
                              {"location", info.locations[op.op]}};
      // Which code ran: the runtime's kernel, or the compiler's (trace-run
      // --gpu-binary), named as in the binary.
      if (!info.generatedKernels[op.op].empty())
        k.args["generated_kernels"] = info.generatedKernels[op.op];
      sink.event(std::move(k));
      account(row.kernelCalls, row.kernelTotalNs, row.kernelMinNs,
              row.kernelMaxNs, kEnd - kBegin);

      // The arrow from the launch (inside the op's CPU range) to the kernel
      // slice it starts.
      uint64_t id = nextFlow++;
      TraceEvent s;
      s.phase = 's';
      s.name = "launch";
      s.category = "flow";
      s.pid = pid;
      s.tid = run.tid;
      s.tsNs = rel(op.launchNs);
      s.id = id;
      TraceEvent f = s;
      f.phase = 'f';
      f.pid = devicePid(dev.device.index);
      f.tid = streamTid(dev.device.index);
      f.tsNs = rel(kBegin);
      sink.event(std::move(s));
      sink.event(std::move(f));
    }

    for (const FreeRecord &fr : run.frees) {
      TraceEvent e;
      e.phase = 'i';
      e.name = "free";
      e.category = "memory";
      e.pid = pid;
      e.tid = run.tid;
      e.tsNs = rel(fr.tsNs);
      e.args = nlohmann::json{{"value", info.operands[fr.op]},
                              {"bytes", fr.bytes},
                              {"device", devName},
                              {"location", info.locations[fr.op]}};
      sink.event(std::move(e));
    }
    // Live bytes on the run's device: on the device's own process for a
    // device with a timer, on the host process for the CPU.
    int64_t counterPid = dev.hasClock ? devicePid(dev.device.index) : pid;
    for (const CounterRecord &c : run.counters) {
      TraceEvent e;
      e.phase = 'C';
      e.name = "memory " + devName;
      e.category = "memory";
      e.pid = counterPid;
      e.tid = dev.hasClock ? streamTid(dev.device.index) : run.tid;
      e.tsNs = rel(c.tsNs);
      e.args = nlohmann::json{{"live_bytes", c.liveBytes},
                              {"allocated_bytes", c.allocatedBytes}};
      if (info.planned)
        e.args["arena_bytes"] = c.arenaBytes;
      sink.event(std::move(e));
    }
  }

  for (auto &entry : rows) {
    entry.second.name = entry.first;
    summary.rows.push_back(std::move(entry.second));
  }
  std::sort(summary.rows.begin(), summary.rows.end(),
            [](const auto &a, const auto &b) {
              int64_t ta = std::max(a.cpuTotalNs, a.kernelTotalNs);
              int64_t tb = std::max(b.cpuTotalNs, b.kernelTotalNs);
              return ta != tb ? ta > tb : a.name < b.name;
            });
  lastSummary = std::move(summary);
}

std::string ProfileSummary::toText() const {
  bool kernels = std::any_of(rows.begin(), rows.end(),
                             [](const Row &r) { return r.kernelCalls; });
  auto pct = [&](int64_t ns) { return runNs ? 100.0 * ns / runNs : 0.0; };
  std::string s =
      formatString("%-28s %7s %9s %12s %10s %10s %10s %8s", "op", "calls",
                   "optimized", "CPU total us", "mean us", "min us", "max us",
                   "% of run");
  if (kernels)
    s += formatString(" | %15s %10s %10s %10s %8s", "kernel total us",
                      "mean us", "min us", "max us", "% of run");
  s += "\n";
  for (const Row &r : rows) {
    s += formatString("%-28s %7lld %9lld %12.3f %10.3f %10.3f %10.3f %8.2f",
                      r.name.c_str(), static_cast<long long>(r.calls),
                      static_cast<long long>(r.optimizedCalls),
                      r.cpuTotalNs / 1e3,
                      r.calls ? r.cpuTotalNs / 1e3 / r.calls : 0.0,
                      r.cpuMinNs / 1e3, r.cpuMaxNs / 1e3, pct(r.cpuTotalNs));
    if (kernels && r.kernelCalls)
      s += formatString(
          " | %15.3f %10.3f %10.3f %10.3f %8.2f", r.kernelTotalNs / 1e3,
          r.kernelTotalNs / 1e3 / r.kernelCalls, r.kernelMinNs / 1e3,
          r.kernelMaxNs / 1e3, pct(r.kernelTotalNs));
    s += "\n";
  }
  s +=
      formatString("%lld run%s, %.3f us in all\n", static_cast<long long>(runs),
                   runs == 1 ? "" : "s", runNs / 1e3);
  return s;
}
