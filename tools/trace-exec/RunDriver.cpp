//===- RunDriver.cpp - What trace-run and trace-exec do after loading -----===//

#include "RunDriver.h"
#include "TraceIR/Runtime/Profiler.h"

#include <chrono>

using namespace traceir;

Error traceir::runDriver(Executable &exe, const RunDriverOptions &options,
                         std::ostream &out) {
  // Before the parameters load, so that they count against it too.
  exe.allocator().setLimit(options.memoryLimit);

  NamedTensors params, inputs;
  if (!options.paramsFile.empty()) {
    auto loaded = readSafetensors(options.paramsFile);
    if (!loaded)
      return loaded.takeError();
    params = std::move(*loaded);
  }
  if (!options.inputsFile.empty()) {
    auto loaded = readSafetensors(options.inputsFile);
    if (!loaded)
      return loaded.takeError();
    inputs = std::move(*loaded);
  }
  if (Error err = exe.loadParams(params))
    return err;

  RunOptions run;
  run.checkFrees = options.checkFrees;
  run.seed = options.seed;
  run.memoryLimitBytes = options.memoryLimit;
  // The trace's sink exists before the run, so an unwritable path fails
  // before any work; it becomes the file only once the profile is complete.
  Profiler profiler;
  std::unique_ptr<TraceSink> sink;
  if (!options.profileFile.empty()) {
    auto file = ChromeTraceFileSink::create(options.profileFile);
    if (!file)
      return file.takeError();
    sink = std::move(*file);
  } else if (options.profileSummary) {
    sink = std::make_unique<MemoryTraceSink>();
  }
  if (sink) {
    run.profiler = &profiler;
    profiler.start();
  }
  auto outputs = exe.run(inputs, run);
  if (!outputs)
    return outputs.takeError();

  // With --benchmark the profile covers every run, so that profiled and
  // unprofiled times compare (bench/profiler_bench.py).
  auto finishProfile = [&]() -> Error {
    if (!sink)
      return Error::success();
    if (Error err = profiler.stop(*sink))
      return err;
    if (options.profileSummary)
      out << profiler.summary().toText();
    return Error::success();
  };
  if (options.benchmark == 0)
    if (Error err = finishProfile())
      return err;

  if (options.benchmark > 0) {
    auto start = std::chrono::steady_clock::now();
    for (unsigned i = 0; i < options.benchmark; ++i) {
      auto again = exe.run(inputs, run);
      if (!again)
        return again.takeError();
    }
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count() /
        options.benchmark;
    size_t instrs = exe.instrs.size();
    out << formatString("benchmark: %u runs, %.3f ms per run, %zu "
                        "instructions, %.3f us per instruction\n",
                        options.benchmark, seconds * 1e3, instrs,
                        instrs ? seconds * 1e6 / instrs : 0.0);
    if (Error err = finishProfile())
      return err;
  }
  // Last, so that no later failure (of a benchmark run, or of the profile)
  // leaves an output file behind.
  if (!options.outputsFile.empty()) {
    NamedTensors named;
    for (size_t i = 0; i < outputs->size(); ++i)
      named.emplace("output" + std::to_string(i), std::move((*outputs)[i]));
    if (Error err = writeSafetensors(options.outputsFile, named))
      return err;
  }
  const MemoryReport &report = exe.memoryReport();
  if (options.memoryReport == RunDriverOptions::Report::JSON)
    out << report.toJSON() << "\n";
  else if (options.memoryReport == RunDriverOptions::Report::Text)
    out << report.toText() << "\n";
  return Error::success();
}
