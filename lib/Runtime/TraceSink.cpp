//===- TraceSink.cpp - Chrome JSON trace writers --------------------------===//

#include "TraceIR/Runtime/TraceSink.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"

using namespace traceir;

TraceSink::~TraceSink() = default;

namespace {
/// Nanoseconds as microseconds with exactly three decimals: the format's
/// unit, at the clock's full resolution, without float rounding.
std::string micros(int64_t ns) {
  std::string s;
  llvm::raw_string_ostream os(s);
  if (ns < 0) {
    os << '-';
    ns = -ns;
  }
  os << ns / 1000 << '.' << llvm::format("%03d", int(ns % 1000));
  return s;
}
} // namespace

void traceir::writeTraceHead(llvm::json::OStream &j) {
  j.objectBegin();
  j.attributeBegin("traceEvents");
  j.arrayBegin();
}

void traceir::writeTraceEvent(llvm::json::OStream &j, const TraceEvent &e) {
  j.objectBegin();
  j.attribute("ph", std::string(1, e.phase));
  j.attribute("name", e.name);
  if (!e.category.empty())
    j.attribute("cat", e.category);
  j.attribute("pid", e.pid);
  j.attribute("tid", e.tid);
  if (e.phase != 'M') {
    j.attributeBegin("ts");
    j.rawValue(micros(e.tsNs));
    j.attributeEnd();
  }
  if (e.phase == 'X') {
    j.attributeBegin("dur");
    j.rawValue(micros(e.durNs));
    j.attributeEnd();
  }
  if (e.phase == 's' || e.phase == 'f') {
    j.attribute("id", static_cast<int64_t>(e.id));
    if (e.phase == 'f')
      j.attribute("bp", "e"); // bind to the kernel slice enclosing ts
  }
  if (e.phase == 'i')
    j.attribute("s", "t"); // thread-scoped instant
  if (!e.args.empty())
    j.attribute("args", llvm::json::Object(e.args));
  j.objectEnd();
}

void traceir::writeTraceTail(llvm::json::OStream &j,
                             llvm::json::Object metadata) {
  j.arrayEnd();
  j.attributeEnd();
  j.attribute("displayTimeUnit", "ns");
  j.attribute("otherData", std::move(metadata));
  j.objectEnd();
}

std::string MemoryTraceSink::toJSON() const {
  std::string s;
  llvm::raw_string_ostream os(s);
  llvm::json::OStream j(os);
  writeTraceHead(j);
  for (const TraceEvent &e : events)
    writeTraceEvent(j, e);
  writeTraceTail(j, llvm::json::Object(metadata));
  return s;
}

ChromeTraceFileSink::ChromeTraceFileSink(std::string path, std::string temp,
                                         int fd)
    : path(std::move(path)), tempPath(std::move(temp)) {
  os = std::make_unique<llvm::raw_fd_ostream>(fd, /*shouldClose=*/true);
  json = std::make_unique<llvm::json::OStream>(*os);
  writeTraceHead(*json);
}

llvm::Expected<std::unique_ptr<ChromeTraceFileSink>>
ChromeTraceFileSink::create(llvm::StringRef path) {
  // Beside the final file, so the rename stays on one file system.
  llvm::SmallString<256> model(path);
  model += ".tmp-%%%%%%";
  int fd = -1;
  llvm::SmallString<256> temp;
  if (std::error_code ec = llvm::sys::fs::createUniqueFile(model, fd, temp))
    return llvm::createStringError(ec, "cannot write the trace '" + path +
                                           "': " + ec.message());
  return std::unique_ptr<ChromeTraceFileSink>(
      new ChromeTraceFileSink(path.str(), temp.str().str(), fd));
}

ChromeTraceFileSink::~ChromeTraceFileSink() {
  if (done)
    return;
  json.reset();
  if (os) {
    os->close();
    os->clear_error();
  }
  llvm::sys::fs::remove(tempPath);
}

void ChromeTraceFileSink::event(TraceEvent e) { writeTraceEvent(*json, e); }

llvm::Error ChromeTraceFileSink::finish(llvm::json::Object metadata) {
  writeTraceTail(*json, std::move(metadata));
  json.reset();
  os->close();
  if (os->has_error()) {
    std::error_code ec = os->error();
    os->clear_error();
    return llvm::createStringError(ec, "writing the trace '" + path +
                                           "' failed: " + ec.message());
  }
  if (std::error_code ec = llvm::sys::fs::rename(tempPath, path))
    return llvm::createStringError(ec, "cannot write the trace '" + path +
                                           "': " + ec.message());
  done = true;
  return llvm::Error::success();
}
