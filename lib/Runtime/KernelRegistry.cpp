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

#define TRACEIR_CPU_ENTRY(NAME) KernelEntry{#NAME, cpu::NAME},
// TRACEIR_CPU_KERNELS lists names in sorted order, so the table is sorted.
const KernelEntry kKernels[] = {TRACEIR_CPU_KERNELS(TRACEIR_CPU_ENTRY)};
#undef TRACEIR_CPU_ENTRY
} // namespace

KernelFn traceir::lookupKernel(llvm::StringRef name, Device::Kind kind) {
  auto it = std::lower_bound(
      std::begin(kKernels), std::end(kKernels), name,
      [](const KernelEntry &e, llvm::StringRef n) { return e.name < n; });
  if (it == std::end(kKernels) || it->name != name)
    return nullptr;
  return kind == Device::Kind::CPU ? it->cpu : nullptr;
}

std::vector<std::pair<std::string, Device::Kind>> traceir::listKernels() {
  std::vector<std::pair<std::string, Device::Kind>> out;
  for (const KernelEntry &e : kKernels)
    out.push_back({e.name.str(), Device::Kind::CPU});
  return out;
}
