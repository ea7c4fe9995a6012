//===- CheckGpuTarget.cpp - Check the GPU pipeline's options --------------===//
//
// --trace-lower-to-gpu's options reach tools that fail badly on a bad value:
// nvvm-attach-target takes any chip and LLVM only warns, the NVPTX backend
// aborts the process on a PTX version too old for the chip, and ptxas fails
// far from the cause. Checking them first, before any pass has changed the
// module, turns each into one error naming the option.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Conversion/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/TargetParser/Triple.h"

#include <memory>
#include <mutex>
#include <optional>

#define DEBUG_TYPE "trace-check-gpu-target"

// NVPTX registers itself through these C entry points of libLLVM; the MC
// layer is enough to ask which processor names exist.
extern "C" void LLVMInitializeNVPTXTargetInfo();
extern "C" void LLVMInitializeNVPTXTargetMC();

namespace mlir::trace {
#define GEN_PASS_DEF_TRACECHECKGPUTARGET
#include "TraceIR/Conversion/Passes.h.inc"
} // namespace mlir::trace

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kNVPTXTriple = "nvptx64-nvidia-cuda";

/// Whether LLVM's NVPTX backend knows `chip`. nvvm-attach-target accepts any
/// string and LLVM only warns ("not a recognized processor ... ignoring"),
/// then ptxas fails far from the cause; checking up front gives one error.
bool isKnownNVPTXChip(llvm::StringRef chip) {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTargetMC();
  });
  llvm::Triple triple(kNVPTXTriple);
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return false;
  // An empty CPU creates the subtarget without printing a warning.
  std::unique_ptr<llvm::MCSubtargetInfo> sti(
      target->createMCSubtargetInfo(triple, "", ""));
  return sti && sti->isCPUStringValid(chip);
}

/// The first PTX ISA version that supports `chip` (PTX ISA release notes),
/// for the chips of the last generations; nullopt where unknown.
std::optional<unsigned> minPTXVersion(StringRef chip) {
  return llvm::StringSwitch<std::optional<unsigned>>(chip)
      .Case("sm_80", 70)
      .Case("sm_86", 71)
      .Case("sm_87", 74)
      .Cases({"sm_89", "sm_90"}, 78)
      .Case("sm_90a", 80)
      .Cases({"sm_100", "sm_100a", "sm_101", "sm_101a"}, 86)
      .Cases({"sm_120", "sm_120a"}, 87)
      .Default(std::nullopt);
}

struct TraceCheckGpuTargetPass
    : public mlir::trace::impl::TraceCheckGpuTargetBase<
          TraceCheckGpuTargetPass> {
  using Base::Base;

  void runOnOperation() override {
    // emitError on the location, not the op: the note dumping the whole
    // input module would bury the one line that matters. The messages name
    // the pipeline, whose options these are, as the user wrote them.
    ModuleOp module = getOperation();
    if (!isKnownNVPTXChip(chip)) {
      mlir::emitError(module.getLoc())
          << "trace-lower-to-gpu: unsupported chip '" << chip
          << "': LLVM's NVPTX backend does not know it "
             "(expected a name such as sm_80 or sm_90)";
      return signalPassFailure();
    }
    // The NVPTX backend aborts the process (LLVM ERROR) on a PTX version
    // older than the chip needs; catch the combinations known here first.
    if (std::optional<unsigned> needed = minPTXVersion(chip)) {
      unsigned asked = 0;
      for (StringRef feature : llvm::split(features, ','))
        if (feature.consume_front("+ptx"))
          feature.getAsInteger(10, asked);
      if (asked && asked < *needed) {
        mlir::emitError(module.getLoc())
            << "trace-lower-to-gpu: features '" << features << "' ask for PTX "
            << asked / 10 << "." << asked % 10 << ", but " << chip
            << " needs PTX " << *needed / 10 << "." << *needed % 10
            << " or later (+ptx" << *needed
            << ", or no +ptx feature to let LLVM choose)";
        return signalPassFailure();
      }
    }
    if (format != "fatbin" && format != "bin" && format != "isa") {
      mlir::emitError(module.getLoc())
          << "trace-lower-to-gpu: unsupported format '" << format
          << "' (expected fatbin, bin or isa)";
      return signalPassFailure();
    }
    // Without serialization (the runtime reading a prebuilt fatbin's launch
    // plan) no tool of the toolkit runs.
    if (!serialize)
      return;
    if (!llvm::sys::fs::is_directory(toolkit)) {
      mlir::emitError(module.getLoc())
          << "trace-lower-to-gpu: CUDA toolkit path '" << toolkit
          << "' does not exist or is not a directory";
      return signalPassFailure();
    }
    // PTX alone needs no tool; cubin needs ptxas, fatbin also fatbinary.
    SmallVector<StringRef, 2> tools;
    if (format != "isa")
      tools.push_back("ptxas");
    if (format == "fatbin")
      tools.push_back("fatbinary");
    for (StringRef tool : tools) {
      SmallString<128> path(toolkit);
      llvm::sys::path::append(path, "bin", tool);
      if (!llvm::sys::fs::can_execute(path)) {
        mlir::emitError(module.getLoc())
            << "trace-lower-to-gpu: CUDA toolkit '" << toolkit
            << "' has no executable " << path;
        return signalPassFailure();
      }
    }
  }
};

} // namespace
