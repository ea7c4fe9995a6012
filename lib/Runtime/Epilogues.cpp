//===- Epilogues.cpp - In-place activations fused into their producer -----===//
//
// torchvision's blocks end in conv2d -> relu_ (squeezenet),
// batch_norm -> relu_ (resnets, densenet) and batch_norm -> hardtanh_
// (mobilenet_v2's relu6): the activation is a second pass over the whole
// result, in place. Where the very next call is such an activation of the
// call's fresh result 0, the producer's optimized kernel may apply it as
// it writes the result, as oneDNN's post-ops and cuBLASLt's epilogues do
// (here the tier's own loops: batch_norm's, the 1x1 and direct depthwise
// convolutions'; DNNL.cpp says why not oneDNN's). Whether it did is known
// only when it has run (the tier may be off, the dtype or layout not
// covered), so each run decides: Executable::execute skips the
// activation's work when the producer said it applied it
// (KernelContext::appliedEpilogue), and the profile shows that call's
// tier as "fused".
//
// Nothing changes in the graph or the memory plan: the activation is in
// place, so the same storages live and die at the same calls.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/Executable.h"

#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>

using namespace traceir;

namespace {
/// The calls whose result 0 an optimized kernel can clamp as it writes it.
bool appliesEpilogues(const std::string &op) {
  return op == "conv2d" || op == "batch_norm" || op == "native_batch_norm";
}
} // namespace

void Executable::planEpilogues() {
  // TRACEIR_FUSE_EPILOGUES=0 leaves every activation a call of its own
  // (to measure what fusing saves).
  const char *env = std::getenv("TRACEIR_FUSE_EPILOGUES");
  if (dev.kind != Device::Kind::CPU || (env && std::string(env) == "0"))
    return;
  // Argument i of `call` as a number (`dflt` when None), or nothing where it
  // is a tensor or not a number: left to the op's own kernel to check.
  auto number = [&](const Instr &call, unsigned i,
                    double dflt) -> std::optional<double> {
    if (i >= call.numArgs)
      return dflt;
    const ArgRef &a = args[call.argBegin + i];
    if (a.slot >= 0 || a.scalar >= scalars.size())
      return std::nullopt;
    const Scalar &s = scalars[a.scalar];
    switch (s.kind) {
    case Scalar::Kind::None:
      return dflt;
    case Scalar::Kind::Int:
    case Scalar::Kind::Float:
      return s.number();
    default:
      return std::nullopt;
    }
  };
  for (size_t i = 0; i + 1 < instrs.size(); ++i) {
    Instr &producer = instrs[i];
    if (producer.kind != Instr::Kind::Call || producer.numResults == 0 ||
        !appliesEpilogues(ops[producer.op].name))
      continue;
    const ResultRef &out = results[producer.resultBegin];
    if (!out.fresh)
      continue;
    // The next call, past the frees of other values.
    size_t j = i + 1;
    bool resultFreed = false;
    for (; j < instrs.size() && instrs[j].kind == Instr::Kind::Free; ++j)
      resultFreed |= instrs[j].freeSlot == out.slot;
    if (j == instrs.size() || resultFreed)
      continue;
    Instr &act = instrs[j];
    const std::string &name = ops[act.op].name;
    if ((name != "relu_" && name != "hardtanh_") || act.numArgs == 0 ||
        args[act.argBegin].slot != out.slot || act.numResults != 1 ||
        results[act.resultBegin].fresh)
      continue;
    double lo = 0, hi = INFINITY;
    if (name == "hardtanh_") {
      std::optional<double> l = number(act, 1, -1), h = number(act, 2, 1);
      // NaN or inverted bounds: hardtanh_'s own kernel reports or runs
      // them.
      if (!l || !h || !(*l <= *h))
        continue;
      lo = *l;
      hi = *h;
    }
    producer.epilogue = {true, lo, hi};
    act.fusedIntoPrevious = true;
  }
}
