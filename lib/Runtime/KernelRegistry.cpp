//===- KernelRegistry.cpp - Kernels by op name and device
//------------------===//
//
// The runtime's half of the op registry: which function implements a PyOp
// name on which device. Looked up once per op at build time.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CPU/Kernels.h"

#include <algorithm>
#include <iterator>

using namespace traceir;

namespace {
struct KernelEntry {
  llvm::StringLiteral name;
  KernelFn cpu;
};

/// All kernels sorted by name, built on first use (build time only).
llvm::ArrayRef<KernelEntry> kernels() {
  static const std::vector<KernelEntry> table = [] {
#define TRACEIR_CPU_ENTRY(NAME) KernelEntry{#NAME, cpu::NAME},
    std::vector<KernelEntry> t{TRACEIR_CPU_KERNELS(TRACEIR_CPU_ENTRY)};
#undef TRACEIR_CPU_ENTRY
    std::sort(t.begin(), t.end(),
              [](const KernelEntry &a, const KernelEntry &b) {
                return a.name < b.name;
              });
    return t;
  }();
  return table;
}
} // namespace

KernelFn traceir::lookupKernel(llvm::StringRef name, Device::Kind kind) {
  llvm::ArrayRef<KernelEntry> table = kernels();
  auto it = std::lower_bound(
      table.begin(), table.end(), name,
      [](const KernelEntry &e, llvm::StringRef n) { return e.name < n; });
  if (it == table.end() || it->name != name)
    return nullptr;
  return kind == Device::Kind::CPU ? it->cpu : nullptr;
}

std::vector<std::pair<std::string, Device::Kind>> traceir::listKernels() {
  std::vector<std::pair<std::string, Device::Kind>> out;
  for (const KernelEntry &e : kernels())
    out.push_back({e.name.str(), Device::Kind::CPU});
  return out;
}
