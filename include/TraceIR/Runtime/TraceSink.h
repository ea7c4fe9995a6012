//===- TraceSink.h - Where a profile's events go ----------------*- C++ -*-===//
//
// The profiler turns what it recorded into Chrome Trace Event Format events
// and hands them to a sink, so it knows nothing of the output format. Two
// sinks: a streaming Chrome JSON file writer (what Perfetto and
// chrome://tracing open) and an in-memory sink for tests and Python.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_RUNTIME_TRACESINK_H
#define TRACEIR_RUNTIME_TRACESINK_H

#include "TraceIR/Support/Error.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace traceir {

/// One event of the Trace Event Format. Times are integer nanoseconds from
/// the trace's base time (stored in the metadata) and are written as
/// microseconds with three decimals, so no precision is lost or invented.
struct TraceEvent {
  /// 'X' complete range, 'i' instant, 'C' counter, 's'/'f' flow start and
  /// end, 'M' metadata (process and thread names).
  char phase = 'X';
  std::string name;
  std::string category;
  int64_t pid = 0;
  int64_t tid = 0;
  int64_t tsNs = 0;
  int64_t durNs = 0; ///< 'X' only
  uint64_t id = 0;   ///< 's' and 'f' only
  nlohmann::json args;
};

/// Receives a finished profile: every event, then the metadata once.
class TraceSink {
public:
  virtual ~TraceSink();
  virtual void event(TraceEvent e) = 0;
  /// The trace's metadata (base time, clock sync per device, skew); the
  /// last call. An error means the trace was not kept.
  virtual Error finish(nlohmann::json metadata) = 0;
};

/// Keeps everything in memory.
class MemoryTraceSink final : public TraceSink {
public:
  void event(TraceEvent e) override { events.push_back(std::move(e)); }
  Error finish(nlohmann::json md) override {
    metadata = std::move(md);
    finished = true;
    return Error::success();
  }
  /// The same Chrome JSON a ChromeTraceFileSink writes.
  std::string toJSON() const;

  std::vector<TraceEvent> events;
  nlohmann::json metadata;
  bool finished = false;
};

/// Streams Chrome JSON into a temporary file beside `path` and renames it
/// onto `path` in finish(), so an error or a crash never leaves half a trace
/// under the final name; without finish() the temporary file is removed.
class ChromeTraceFileSink final : public TraceSink {
public:
  /// Fails, naming the path, when the temporary file cannot be created.
  static Expected<std::unique_ptr<ChromeTraceFileSink>>
  create(std::string_view path);
  ~ChromeTraceFileSink() override;
  void event(TraceEvent e) override;
  Error finish(nlohmann::json metadata) override;

private:
  ChromeTraceFileSink(std::string path, std::string tempPath, std::FILE *file);
  std::string path, tempPath;
  std::FILE *file = nullptr;
  bool first = true; ///< no event written yet (commas go between events)
  bool done = false;
};

/// Writes the head of a Chrome JSON trace, then one event at a time, then
/// the tail with the metadata: the format both sinks share.
/// The Chrome JSON of the trace: its head, one event (an object) and its
/// tail, the metadata in it; the file sink streams them.
std::string traceHead();
std::string traceEventJSON(const TraceEvent &e);
std::string traceTail(const nlohmann::json &metadata);

} // namespace traceir

#endif // TRACEIR_RUNTIME_TRACESINK_H
