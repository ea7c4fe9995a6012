//===- RunDriver.h - Running after loading ----------------------*- C++ -*-===//
//
// Binding parameters and inputs from safetensors files, running (with a
// memory limit, a profile, a benchmark), writing the outputs and printing
// the memory report: one implementation for trace-run (MLIR text or a saved
// executable) and trace-exec (saved executables, no LLVM), so the two
// behave alike. Standard library only.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_TOOLS_RUNDRIVER_H
#define TRACEIR_TOOLS_RUNDRIVER_H

#include "TraceIR/Runtime/Executable.h"

#include <optional>
#include <ostream>
#include <string>

namespace traceir {

struct RunDriverOptions {
  std::string paramsFile, inputsFile, outputsFile, profileFile;
  enum class Report { None, Text, JSON } memoryReport = Report::None;
  bool checkFrees = false;
  bool profileSummary = false;
  uint64_t seed = 0;
  std::optional<int64_t> memoryLimit;
  unsigned benchmark = 0;
};

/// Runs `exe` as the options say, printing tables and reports to `out`.
/// On any error nothing is written to the outputs file.
Error runDriver(Executable &exe, const RunDriverOptions &options,
                std::ostream &out);

} // namespace traceir

#endif // TRACEIR_TOOLS_RUNDRIVER_H
