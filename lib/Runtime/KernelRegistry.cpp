//===- KernelRegistry.cpp - Kernels by op name and device -----------------===//
//
// The runtime's half of the op registry: which function implements a PyOp
// name on which device. Looked up once per op at build time.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CPU/Kernels.h"
#include "TraceIR/Runtime/CUDA/Backend.h"

#include <algorithm>
#include <iterator>
#include <map>

using namespace traceir;

namespace {
/// A CPU kernel with an optimized one in front (Ops.def's FAST_CPU): the
/// optimized kernel runs while the tier is on and hands what it does not
/// cover to the portable one.
template <bool (*Fast)(KernelContext &), void (*Portable)(KernelContext &)>
void tiered(KernelContext &ctx) {
  if (optimizedTierEnabled() && Fast(ctx)) {
    ctx.ranTier(KernelTier::Optimized);
    return;
  }
  Portable(ctx);
}

struct KernelEntry {
  std::string name;
  KernelFn cpu = nullptr;
  KernelFn cuda = nullptr;
};

/// All kernels sorted by name, built on first use (build time only).
std::span<const KernelEntry> kernels() {
  static const std::vector<KernelEntry> table = [] {
    std::map<std::string, KernelEntry> byName;
    // Ops.def's CPU column.
#define TRACEIR_CPU_ENTRY_KERNEL(NAME) byName[#NAME].cpu = cpu::NAME;
#define TRACEIR_CPU_ENTRY_ELEMENTWISE(NAME) byName[#NAME].cpu = cpu::NAME;
#define TRACEIR_CPU_ENTRY_NONE(NAME)
#define TRACEIR_CPU_ENTRY_ALIAS(NAME)
#define TRACEIR_OP(NAME, EFFECTS, SIGNATURE, INFER, CPU, CUDA, FAST, LOWERING) \
  TRACEIR_CPU_ENTRY_##CPU(NAME)
#include "TraceIR/Ops.def"
    // Ops.def's FAST column: the optimized kernel in front of the CPU's.
#define TRACEIR_FAST_ENTRY_FAST_CPU(NAME)                                      \
  byName[#NAME].cpu = tiered<cpu::fast::NAME, cpu::NAME>;
#define TRACEIR_FAST_ENTRY_NOFAST(NAME)
#define TRACEIR_OP(NAME, EFFECTS, SIGNATURE, INFER, CPU, CUDA, FAST, LOWERING) \
  TRACEIR_FAST_ENTRY_##FAST(NAME)
#include "TraceIR/Ops.def"
#undef TRACEIR_FAST_ENTRY_FAST_CPU
#undef TRACEIR_FAST_ENTRY_NOFAST
    // The CUDA backend's column (CUDA/Backend.cpp; empty in a runtime
    // built without CUDA).
    for (const cuda::NamedKernel &k : cuda::kernelTable()) {
      byName[k.name].cuda = k.fn;
    }
    // An alias runs its canonical op's kernels (Ops.def's TRACEIR_ALIAS).
#define TRACEIR_ALIAS(NAME, CANONICAL)                                         \
  byName[#NAME].cpu = byName[#CANONICAL].cpu;                                  \
  byName[#NAME].cuda = byName[#CANONICAL].cuda;
#include "TraceIR/Ops.def"
    std::vector<KernelEntry> t;
    for (auto &entry : byName) {
      KernelEntry e = entry.second;
      e.name = entry.first;
      t.push_back(e);
    }
    std::sort(t.begin(), t.end(),
              [](const KernelEntry &a, const KernelEntry &b) {
                return a.name < b.name;
              });
    return t;
  }();
  return table;
}
} // namespace

KernelFn traceir::lookupKernel(std::string_view name, Device::Kind kind) {
  std::span<const KernelEntry> table = kernels();
  auto it = std::lower_bound(table.begin(), table.end(), name,
                             [](const KernelEntry &e, std::string_view n) {
                               return std::string_view(e.name) < n;
                             });
  if (it == table.end() || it->name != name)
    return nullptr;
  return kind == Device::Kind::CPU ? it->cpu : it->cuda;
}

std::vector<std::pair<std::string, Device::Kind>> traceir::listKernels() {
  std::vector<std::pair<std::string, Device::Kind>> out;
  for (const KernelEntry &e : kernels()) {
    if (e.cpu)
      out.push_back({e.name, Device::Kind::CPU});
    if (e.cuda)
      out.push_back({e.name, Device::Kind::CUDA});
  }
  return out;
}
