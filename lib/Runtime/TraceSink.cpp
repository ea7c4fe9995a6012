//===- TraceSink.cpp - Chrome JSON trace writers --------------------------===//

#include "TraceIR/Runtime/TraceSink.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <unistd.h>

using namespace traceir;

TraceSink::~TraceSink() = default;

namespace {
/// Nanoseconds as microseconds with exactly three decimals: the format's
/// unit, at the clock's full resolution, without float rounding.
std::string micros(int64_t ns) {
  char buf[32];
  uint64_t mag = ns < 0 ? -static_cast<uint64_t>(ns) : ns;
  std::snprintf(buf, sizeof buf, "%s%llu.%03u", ns < 0 ? "-" : "",
                static_cast<unsigned long long>(mag / 1000),
                static_cast<unsigned>(mag % 1000));
  return buf;
}

std::string quoted(const std::string &s) { return nlohmann::json(s).dump(); }
} // namespace

std::string traceir::traceHead() { return "{\"traceEvents\":["; }

std::string traceir::traceEventJSON(const TraceEvent &e) {
  // Written field by field (not as one json object) so the keys keep this
  // order and ts/dur keep their exact decimals.
  std::string s = "{\"ph\":" + quoted(std::string(1, e.phase)) +
                  ",\"name\":" + quoted(e.name);
  if (!e.category.empty())
    s += ",\"cat\":" + quoted(e.category);
  s +=
      ",\"pid\":" + std::to_string(e.pid) + ",\"tid\":" + std::to_string(e.tid);
  if (e.phase != 'M')
    s += ",\"ts\":" + micros(e.tsNs);
  if (e.phase == 'X')
    s += ",\"dur\":" + micros(e.durNs);
  if (e.phase == 's' || e.phase == 'f') {
    s += ",\"id\":" + std::to_string(static_cast<int64_t>(e.id));
    if (e.phase == 'f')
      s += ",\"bp\":\"e\""; // bind to the kernel slice enclosing ts
  }
  if (e.phase == 'i')
    s += ",\"s\":\"t\""; // thread-scoped instant
  if (!e.args.empty())
    s += ",\"args\":" + e.args.dump();
  s += '}';
  return s;
}

std::string traceir::traceTail(const nlohmann::json &metadata) {
  return "],\"displayTimeUnit\":\"ns\",\"otherData\":" +
         (metadata.is_null() ? std::string("{}") : metadata.dump()) + "}";
}

std::string MemoryTraceSink::toJSON() const {
  std::string s = traceHead();
  for (size_t i = 0; i < events.size(); ++i) {
    if (i)
      s += ',';
    s += traceEventJSON(events[i]);
  }
  return s + traceTail(metadata);
}

ChromeTraceFileSink::ChromeTraceFileSink(std::string path, std::string temp,
                                         std::FILE *file)
    : path(std::move(path)), tempPath(std::move(temp)), file(file) {
  std::fputs(traceHead().c_str(), file);
}

Expected<std::unique_ptr<ChromeTraceFileSink>>
ChromeTraceFileSink::create(std::string_view path) {
  // Beside the final file, so the rename stays on one file system.
  std::string temp = std::string(path) + ".tmp-XXXXXX";
  int fd = mkstemp(temp.data());
  if (fd < 0)
    return makeError("cannot write the trace '" + std::string(path) +
                     "': " + std::strerror(errno));
  std::FILE *file = fdopen(fd, "w");
  if (!file) {
    int err = errno;
    ::close(fd);
    ::unlink(temp.c_str());
    return makeError("cannot write the trace '" + std::string(path) +
                     "': " + std::strerror(err));
  }
  return std::unique_ptr<ChromeTraceFileSink>(
      new ChromeTraceFileSink(std::string(path), temp, file));
}

ChromeTraceFileSink::~ChromeTraceFileSink() {
  if (done)
    return;
  if (file)
    std::fclose(file);
  ::unlink(tempPath.c_str());
}

void ChromeTraceFileSink::event(TraceEvent e) {
  if (!first)
    std::fputc(',', file);
  first = false;
  std::fputs(traceEventJSON(e).c_str(), file);
}

Error ChromeTraceFileSink::finish(nlohmann::json metadata) {
  std::fputs(traceTail(metadata).c_str(), file);
  bool failed = std::ferror(file) != 0;
  int err = errno;
  if (std::fclose(file) != 0 && !failed) {
    failed = true;
    err = errno;
  }
  file = nullptr;
  if (failed)
    return makeError("writing the trace '" + path +
                     "' failed: " + std::strerror(err));
  if (std::rename(tempPath.c_str(), path.c_str()) != 0)
    return makeError("cannot write the trace '" + path +
                     "': " + std::strerror(errno));
  done = true;
  return Error::success();
}
