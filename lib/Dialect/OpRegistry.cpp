//===- OpRegistry.cpp - What TraceIR knows about PyOp names ---------------===//
//
// Argument lists follow ATen's schemas (what torch.export emits), so the
// table serves every importer. The 2017 trace importer maps its names and
// argument orders onto these (see docs/OpRegistry.md).
//
// This file is the table, expanded from Ops.def, and what reads it by name
// or for the docs. The inference functions its rows name are in
// OpInference.cpp and the aliasing and effect rules in OpAliasing.cpp, both
// declared in OpRegistryImpl.h.
//
//===----------------------------------------------------------------------===//

#include "OpRegistryImpl.h"

#include "TraceIR/Dialect/OpRegistry.h"
#include "TraceIR/Dialect/Scalars.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::trace;
using namespace mlir::trace::registry;

//===----------------------------------------------------------------------===//
// PyArgs
//===----------------------------------------------------------------------===//

PyArgs::PyArgs(StringRef cconv, TypeRange tensorTypes,
               ArrayRef<Attribute> scalars)
    : tensorTypes(tensorTypes), scalars(scalars) {
  int t = 0, s = 0;
  slots.reserve(cconv.size());
  for (char c : cconv)
    slots.push_back(c == 't' ? t++ : -(++s));
}

bool PyArgs::isNoneOrAbsent(unsigned i) const {
  return !present(i) || (!isTensor(i) && isNone(scalar(i)));
}

traceir::ListCallArgs mlir::trace::callArgs(const PyArgs &args) {
  traceir::ListCallArgs out;
  for (unsigned i = 0; i < args.size(); ++i) {
    if (Attribute attr = args.scalar(i))
      out.addScalar(traceir::decodeScalar(toScalarValue(attr)));
    else
      out.addTensor();
  }
  return out;
}

//===----------------------------------------------------------------------===//
// The table
//===----------------------------------------------------------------------===//

namespace {

// Ops.def's EFFECTS: the alias function, whether it mutates, whether it
// draws random numbers, and the docs' lines on both.
#define TRACEIR_EFFECTS_PURE aliasNone, never, never, "fresh", "reads"
#define TRACEIR_EFFECTS_VIEW(KIND)                                             \
  aliasFirst, never, never, "view of self", "none"
#define TRACEIR_EFFECTS_VIEW_OR_COPY(KIND)                                     \
  aliasFirst, never, never, "view of self (or a copy tied to it)", "none"
#define TRACEIR_EFFECTS_INPLACE                                                \
  aliasFirst, always, never, "is self", "mutates self"
#define TRACEIR_EFFECTS_BATCH_NORM                                             \
  aliasNone, batchNormMutates, never, "fresh",                                 \
      "training: updates running_mean/var"
#define TRACEIR_EFFECTS_NATIVE_BATCH_NORM                                      \
  aliasNone, batchNormMutates, never, "fresh (out, save_mean, save_invstd)",   \
      "training: updates running_mean/var"
#define TRACEIR_EFFECTS_DROPOUT                                                \
  aliasDropout, never, dropoutRandom, "train and p > 0: fresh; else is input", \
      "train and p > 0: random"
#define TRACEIR_EFFECTS_DROPOUT_INPLACE                                        \
  aliasFirst, always, dropoutRandom, "is input", "mutates input; train: random"
#define TRACEIR_EFFECTS_NATIVE_DROPOUT                                         \
  aliasNone, never, dropoutRandom, "fresh (out, mask)",                        \
      "train and p > 0: random"
#define TRACEIR_EFFECTS_RNN                                                    \
  aliasNone, never, rnnRandom, "fresh",                                        \
      "train, dropout > 0 and num_layers > 1: random"
#define TRACEIR_EFFECTS_ATTENTION                                              \
  aliasNone, never, attentionRandom, "fresh", "dropout_p > 0: random"
#define TRACEIR_EFFECTS_RANDOM aliasNone, never, always, "fresh", "random"
// empty's values are unspecified: two calls are two tensors (an in-place
// op may write either), so it is never CSE'd, as a random op.
#define TRACEIR_EFFECTS_UNINITIALIZED                                          \
  aliasNone, never, always, "fresh", "uninitialized: not CSE'd, as random"

// Ops.def's CPU and CUDA columns, for the docs.
#define TRACEIR_KERNEL_DOC_KERNEL "kernel"
#define TRACEIR_KERNEL_DOC_ELEMENTWISE "elementwise"
#define TRACEIR_KERNEL_DOC_HOST "view (CPU's)"
#define TRACEIR_KERNEL_DOC_NONE ""
#define TRACEIR_KERNEL_DOC_ALIAS "alias"

// Ops.def's LOWERING: the family, or why not.
enum class LoweringReason {
#define TRACEIR_LOWERING_REASON(REASON, TEXT) REASON,
#include "TraceIR/Ops.def"
};
constexpr StringLiteral kLoweringReasons[] = {
#define TRACEIR_LOWERING_REASON(REASON, TEXT) TEXT,
#include "TraceIR/Ops.def"
};
#define TRACEIR_LOWERING_DOC_LOWERED(FAMILY) #FAMILY, ""
#define TRACEIR_LOWERING_DOC_KERNEL_ONLY(REASON)                               \
  "", kLoweringReasons[int(LoweringReason::REASON)]
#define TRACEIR_LOWERING_DOC_ALIAS "alias", ""

// Ops.def's aliases, sorted by name.
constexpr std::pair<StringLiteral, StringLiteral> kAliases[] = {
#define TRACEIR_ALIAS(NAME, CANONICAL) {#NAME, #CANONICAL},
#include "TraceIR/Ops.def"
};

// The rows of Ops.def, sorted by name (checked once at first lookup).
const OpInfo kOps[] = {
#define TRACEIR_OP(NAME, EFFECTS, SIGNATURE, INFER, CPU, CUDA, FAST, LOWERING) \
  OpInfo{#NAME,                                                                \
         SIGNATURE,                                                            \
         INFER,                                                                \
         TRACEIR_EFFECTS_##EFFECTS,                                            \
         TRACEIR_KERNEL_DOC_##CPU,                                             \
         TRACEIR_KERNEL_DOC_##CUDA,                                            \
         TRACEIR_LOWERING_DOC_##LOWERING},
#include "TraceIR/Ops.def"
};
} // namespace

ArrayRef<OpInfo> mlir::trace::getAllOps() { return kOps; }

unsigned mlir::trace::countRequiredArgs(StringRef signature) {
  SmallVector<StringRef> args;
  signature.split(args, ',', -1, /*KeepEmpty=*/false);
  unsigned n = 0;
  for (StringRef a : args)
    if (!a.contains('='))
      ++n;
  return n;
}

const OpInfo *mlir::trace::lookupOp(StringRef name) {
  // The table is sorted, so a binary search needs no allocation and no
  // static initializer.
  auto it = std::lower_bound(
      std::begin(kOps), std::end(kOps), name,
      [](const OpInfo &info, StringRef n) { return info.name < n; });
  return it != std::end(kOps) && it->name == name ? it : nullptr;
}

const OpInfo *mlir::trace::lookupInPlaceVariant(StringRef name) {
  auto elementwise = [](const OpInfo *info) {
    return info->cpuKernel == TRACEIR_KERNEL_DOC_ELEMENTWISE &&
           info->cudaKernel == TRACEIR_KERNEL_DOC_ELEMENTWISE;
  };
  const OpInfo *pure = lookupOp(name);
  if (!pure || pure->alias != aliasNone || pure->mutates != never ||
      pure->random != never || !elementwise(pure))
    return nullptr;
  const OpInfo *inPlace = lookupOp((name + "_").str());
  if (!inPlace || inPlace->alias != aliasFirst || inPlace->mutates != always ||
      inPlace->random != never || inPlace->signature != pure->signature ||
      !elementwise(inPlace))
    return nullptr;
  return inPlace;
}

StringRef mlir::trace::canonicalOpName(StringRef name) {
  for (const auto &[alias, canonical] : kAliases)
    if (alias == name)
      return canonical;
  return name;
}

void mlir::trace::printOpRegistryMarkdown(llvm::raw_ostream &os) {
  os << "<!-- Generated by `trace-translate --print-op-registry`; do not edit. "
        "test/Dialect/op-registry-doc.test keeps it in sync. -->\n"
     << "# The op registry\n\n"
     << "What TraceIR knows of each `trace.pyop` name "
        "(lib/Dialect/OpRegistry.cpp). Argument lists follow ATen's schemas. "
        "Every entry infers result shapes and dtypes; the verifier checks "
        "declared result types against it.\n\n"
     << "- **aliasing**: `fresh` results are new storages; a `view` shares "
        "its base's storage; an in-place op's result *is* its operand.\n"
     << "- `view of self (or a copy tied to it)`: PyTorch returns a view when "
        "the strides allow and a copy otherwise. TraceIR gives the result its "
        "operand's storage either way, so a runtime that has to copy frees "
        "the copy together with that storage.\n"
     << "- **effects**: `reads` ops may be CSE'd and removed when unused; "
        "mutating and random ops are neither.\n"
     << "- A name missing here is still legal. Its results *may alias* any "
        "tensor operand: `--free-dead-tensors` keeps those operands alive "
        "until the results are dead and never frees such a result; it is "
        "treated as reading, writing and drawing random numbers.\n"
     << "- Tuples are not values in TraceIR: the importers resolve a tuple "
        "`Index` statically to the element, which is the element itself (no "
        "op, so no new storage).\n"
     << "- **CPU**, **CUDA**: the runtime's kernel on each device: its own "
        "(`kernel`), made from the elementwise code both devices share "
        "(`elementwise`), or, for a view on CUDA, the CPU's view kernel, which "
        "changes metadata only.\n"
     << "- **lowering**: the TraceToLinalg family that lowers the op for GPU "
        "binaries (`trace-opt --trace-lower-to-gpu`), or why the runtime's "
        "kernel runs it instead.\n"
     << "- An *alias* (`mm`, `bmm`, `_log_softmax`) checks its own arguments "
        "but runs and lowers as its canonical op: `as matmul`.\n\n"
     << "| name | arguments | aliasing | effects | CPU | CUDA | lowering |\n"
     << "| --- | --- | --- | --- | --- | --- | --- |\n";
  for (const OpInfo &info : kOps) {
    std::string as = "as " + canonicalOpName(info.name).str();
    auto column = [&](StringRef value) {
      return value == "alias" ? StringRef(as) : value;
    };
    os << "| `" << info.name << "` | " << info.signature << " | "
       << info.aliasDoc << " | " << info.effectsDoc << " | "
       << column(info.cpuKernel) << " | " << column(info.cudaKernel) << " | ";
    if (!info.lowering.empty())
      os << column(info.lowering);
    else
      os << "no: " << info.notLowered;
    os << " |\n";
  }
}
