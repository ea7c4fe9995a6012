//===- trace-exec.cpp - Run a saved executable, without LLVM or MLIR ------===//
//
//   trace-exec model.trx --params w.safetensors --inputs in.safetensors
//              --outputs out.safetensors [--device cuda:1]
//              [--memory-report[=json]] [--check-frees] [--seed N]
//              [--memory-limit BYTES] [--benchmark N]
//              [--profile trace.json] [--profile-summary]
//   trace-exec model.trx --describe
//
// The runtime-only build's runner (trace-run takes .trx files too, with the
// same options). Parameters and inputs are bound by name; outputs are
// written as output0, output1, ... On any error nothing is written.
//
//===----------------------------------------------------------------------===//

#include "RunDriver.h"
#include "TraceIR/Runtime/CPU/Gemm.h"
#include "TraceIR/Runtime/CPU/Kernels.h"
#include "TraceIR/Runtime/CUDA/Backend.h"
#include "TraceIR/Runtime/ExecutableFile.h"

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <string_view>

using namespace traceir;

namespace {
const char *kUsage =
    "usage: trace-exec FILE.trx [--describe] [--params F] [--inputs F]\n"
    "                  [--outputs F] [--device cpu|cuda|cuda:N]\n"
    "                  [--memory-report[=text|json]] [--check-frees]\n"
    "                  [--seed N] [--memory-limit BYTES] [--benchmark N]\n"
    "                  [--profile trace.json] [--profile-summary]\n"
    "Runs a saved executable (trace-translate --emit-executable, or\n"
    "CompiledGraph.save() in Python); --describe prints what it holds.\n";

int fail(const std::string &msg) {
  std::cerr << "trace-exec: error: " << msg << "\n";
  return 1;
}

/// A decimal number in [0, max], all of `text`.
bool parseNumber(std::string_view text, uint64_t max, uint64_t &out) {
  if (text.empty() || text.size() > 20)
    return false;
  uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9')
      return false;
    uint64_t d = c - '0';
    if (v > (max - d) / 10)
      return false;
    v = v * 10 + d;
  }
  out = v;
  return true;
}
} // namespace

int main(int argc, char **argv) {
  RunDriverOptions options;
  std::string file, deviceName;
  bool describe = false;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::cout << kUsage;
      return 0;
    }
    if (arg == "--version") {
      std::cout << "trace-exec: TraceIR runtime, executable format "
                << kExecutableFormatMajor << "." << kExecutableFormatMinor
                << ", CPU GEMM " << cpu::gemmBackend() << ", oneDNN "
                << (cpu::dnnlVersion() ? cpu::dnnlVersion() : "none")
                << ", CUDA "
                << (cuda::checkBackend() ? "none (built without CUDA)" : "yes")
                << ", cuDNN "
                << (cuda::cudnnVersion() ? cuda::cudnnVersion() : "none")
                << "\n";
      return 0;
    }
    if (arg.size() < 2 || arg.substr(0, 2) != "--") {
      if (!file.empty())
        return fail("one saved executable at a time ('" + file + "' and '" +
                    std::string(arg) + "')\n" + kUsage);
      file = arg;
      continue;
    }
    std::string_view name = arg, inlineValue;
    bool hasInline = false;
    if (size_t eq = arg.find('='); eq != std::string_view::npos) {
      name = arg.substr(0, eq);
      inlineValue = arg.substr(eq + 1);
      hasInline = true;
    }
    auto value = [&](std::string &out) -> bool {
      if (hasInline) {
        out = inlineValue;
        return true;
      }
      if (i + 1 >= argc)
        return false;
      out = argv[++i];
      return true;
    };
    auto flag = [&]() { return !hasInline; };
    std::string v;
    if (name == "--describe" && flag()) {
      describe = true;
    } else if (name == "--check-frees" && flag()) {
      options.checkFrees = true;
    } else if (name == "--profile-summary" && flag()) {
      options.profileSummary = true;
    } else if (name == "--memory-report") {
      std::string_view fmt = hasInline ? inlineValue : "text";
      if (fmt == "text" || fmt.empty())
        options.memoryReport = RunDriverOptions::Report::Text;
      else if (fmt == "json")
        options.memoryReport = RunDriverOptions::Report::JSON;
      else
        return fail("--memory-report takes text or json, not '" +
                    std::string(fmt) + "'");
    } else if (name == "--params" && value(v)) {
      options.paramsFile = v;
    } else if (name == "--inputs" && value(v)) {
      options.inputsFile = v;
    } else if (name == "--outputs" && value(v)) {
      options.outputsFile = v;
    } else if (name == "--profile" && value(v)) {
      options.profileFile = v;
    } else if (name == "--device" && value(v)) {
      deviceName = v;
    } else if (name == "--seed" && value(v)) {
      uint64_t n;
      if (!parseNumber(v, UINT64_MAX, n))
        return fail("--seed takes a number, not '" + v + "'");
      options.seed = n;
    } else if (name == "--memory-limit" && value(v)) {
      uint64_t n;
      if (!parseNumber(v, INT64_MAX, n))
        return fail("--memory-limit must be a number of bytes >= 0, not '" + v +
                    "'");
      options.memoryLimit = int64_t(n);
    } else if (name == "--benchmark" && value(v)) {
      uint64_t n;
      if (!parseNumber(v, 1u << 30, n))
        return fail("--benchmark takes a number of runs, not '" + v + "'");
      options.benchmark = unsigned(n);
    } else {
      return fail("unknown or incomplete option '" + std::string(arg) + "'\n" +
                  kUsage);
    }
  }
  if (file.empty())
    return fail(std::string("no saved executable given\n") + kUsage);

  auto bytes = readFileBytes(file);
  if (!bytes)
    return fail(toString(bytes.takeError()));
  if (describe) {
    auto text = describeExecutable(*bytes, file);
    if (!text)
      return fail(toString(text.takeError()));
    std::cout << *text;
    return 0;
  }
  std::optional<Device> device;
  if (!deviceName.empty()) {
    device = Device::parse(deviceName);
    if (!device)
      return fail("unknown device '" + deviceName +
                  "' (expected cpu, cuda or cuda:N)");
  }
  auto exe = loadExecutableBuffer(*bytes, file, device);
  if (!exe)
    return fail(toString(exe.takeError()));
  if (Error err = runDriver(**exe, options, std::cout))
    return fail(toString(std::move(err)));
  return 0;
}
