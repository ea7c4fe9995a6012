//===- Executable.h - A graph as flat instructions --------------*- C++ -*-===//
//
// An Executable is built once from a trace.graph (see Build.h) and run many
// times. Running walks a flat array of instructions, each a kernel function
// pointer with argument and result slot indices, or a free: no IR, no
// string compares and no map lookups per op. Nothing here includes MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_RUNTIME_EXECUTABLE_H
#define TRACEIR_RUNTIME_EXECUTABLE_H

#include "TraceIR/Runtime/Allocator.h"
#include "TraceIR/Runtime/GeneratedKernels.h"
#include "TraceIR/Runtime/HostTensor.h"
#include "TraceIR/Runtime/KernelTier.h"
#include "TraceIR/Support/Scalar.h"

#include "TraceIR/Support/Error.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace traceir {

class KernelContext;
class Profiler;
/// A kernel: reads its arguments and writes its results through the context.
using KernelFn = void (*)(KernelContext &);

/// One argument of a call, in the original (re-interleaved) order.
struct ArgRef {
  int32_t slot = -1;   ///< a tensor's value slot, or -1 for a scalar
  uint32_t scalar = 0; ///< index into Executable::scalars
};

/// A result: the slot it fills, and for a fresh storage the type to allocate
/// before the kernel runs (static shapes only), and where the memory plan
/// (--plan-memory) put it in the run's arena.
struct ResultRef {
  int32_t slot;
  bool fresh;
  DType dtype;
  Shape shape;
  /// Its storage's offset in the arena, or -1 where the allocator gives it
  /// memory (no plan, a returned value, a view).
  int64_t arenaOffset = -1;
};

struct Instr {
  enum class Kind : uint8_t { Call, Free };
  Kind kind = Kind::Call;
  KernelFn fn = nullptr;
  uint32_t op = 0; ///< index into Executable::ops (name and location)
  uint32_t argBegin = 0, numArgs = 0;
  uint32_t resultBegin = 0, numResults = 0;
  int32_t freeSlot = -1; ///< for Kind::Free
  /// For runGeneratedOp: index into Executable::generatedOps.
  uint32_t generated = 0;
  /// Planned at the first run (Executable::planEpilogues): the activation
  /// of the next call, for this call's kernel to apply if it can; and, on
  /// that next call, that its work is then done and it only aliases its
  /// result to its input.
  Epilogue epilogue;
  bool fusedIntoPrevious = false;
};

/// What a run measured, per device.
struct MemoryReport {
  Device device;
  /// Largest sum of nbytes of the storages the run created that were alive
  /// at once (no params, constants or inputs, views count nothing, no
  /// rounding, no kernel scratch).
  int64_t peakBytes = 0;
  /// StorageLiveness' figure for the same graph.
  int64_t predictedPeakBytes = 0;
  bool predictionIsLowerBound = false;
  /// What the allocator held at its peak, with rounding, cache and scratch.
  int64_t allocatedPeakBytes = 0;
  /// Bytes the run's storages still held when the graph returned (outputs).
  int64_t liveBytesAtEnd = 0;
  int64_t numFrees = 0;
  /// A planned graph's arena (--plan-memory), and the bytes the run's
  /// arena had beyond it for kernel scratch (placed by earlier runs); both
  /// 0 without a plan.
  int64_t plannedArenaBytes = 0;
  int64_t arenaScratchBytes = 0;
  /// The most aligned bytes of planned storages alive at once in this run:
  /// what no placement in one arena can beat for this order. Below the
  /// predicted peak by what the arena leaves out (returned values, copies
  /// of view-or-copy ops, dynamic shapes), above it by the alignment.
  int64_t lowerBoundBytes = 0;
  /// Allocator calls the run made: all of them; the arena's (one per run
  /// with a plan); and those of the outputs handed to the caller. The rest
  /// are inputs copied, storages the plan left out and scratch that did not
  /// fit the arena.
  int64_t allocations = 0;
  int64_t arenaAllocations = 0;
  int64_t outputAllocations = 0;

  std::string toJSON() const;
  std::string toText() const;
};

struct RunOptions {
  /// Poison freed storage and report any later read of it, naming the op
  /// and the value.
  bool checkFrees = false;
  /// Seeds random ops (training dropout).
  uint64_t seed = 0;
  /// Records the run when set and started (see Profiler.h).
  Profiler *profiler = nullptr;
  /// When set, the device allocator's limit during the run (see
  /// Allocator::setLimit): an allocation that would take what it holds over
  /// this many bytes fails the run with an error naming the op and the
  /// bytes. Unset, the allocator keeps whatever limit it has.
  std::optional<int64_t> memoryLimitBytes;
};

/// An input a caller lends a run: memory on the host or on the executable's
/// device, with any non-negative strides (DLPack's view of a torch tensor or
/// a numpy array). The run reads it only during the call, copying it into a
/// storage of its own on the device (strides gathered there), so an input
/// the graph donates and writes in place is never the caller's memory.
struct InputView {
  DType dtype = DType::F32;
  Shape shape;
  /// In elements; empty means contiguous.
  Shape strides;
  const void *data = nullptr;
  Device device;
};
using InputViews = std::map<std::string, InputView>;

/// An output handed over to the caller: contiguous, in memory of `device`
/// that the last copy of `data` frees (Allocator::allocateExported).
struct OutputBuffer {
  DType dtype = DType::F32;
  Shape shape;
  Device device;
  std::shared_ptr<void> data;
};

/// Metadata of one op, for errors and profiles.
struct OpInfoRT {
  std::string name;                    ///< the PyOp name
  std::string location;                ///< file:line:col, or empty
  std::vector<std::string> valueNames; ///< SSA names of its arguments
  std::string scalars; ///< its Python scalars as literals, e.g. `-1, False`
  /// The generated kernels it launches instead of the runtime's, comma
  /// separated; empty when it runs the runtime's kernel.
  std::string generatedKernels;
};

class Executable {
public:
  ~Executable();

  Device device() const { return dev; }
  /// Parameter names (trace.param), and input names (trace.input), in
  /// argument order.
  const std::vector<std::string> &paramNames() const { return params; }
  const std::vector<std::string> &inputNames() const { return inputs; }
  size_t numOutputs() const { return outputSlots.size(); }

  /// Copies the parameters onto the device once; they are never freed by a
  /// run. Every parameter must be present with its declared shape and dtype.
  Error loadParams(const NamedTensors &tensors);
  /// A parameter's current value: runs may have updated it in place
  /// (batch_norm's running statistics in training mode).
  Expected<HostTensor> readParam(std::string_view name);
  /// Runs the graph on `inputs` (by input name); returns `output0`,
  /// `output1`, ... in trace.ret order. Errors name the op and location.
  Expected<std::vector<HostTensor>> run(const NamedTensors &inputs,
                                        const RunOptions &options = {});
  /// Runs on inputs lent where they lie (see InputView): on the host, or on
  /// this executable's device, where they are copied without passing
  /// through the host. With `outputsOnDevice` the outputs stay on the
  /// device, otherwise they come to the host; either way nothing is copied
  /// twice (what DLPack exchange with torch needs).
  Expected<std::vector<OutputBuffer>> runViews(const InputViews &inputs,
                                               const RunOptions &options,
                                               bool outputsOnDevice);
  /// Whether the run may write inputSpecs[i]'s storage (an in-place op, or
  /// training batch norm, on it or a view of it): that input is copied,
  /// the others are read where the caller keeps them. Computed at the first
  /// run from the instructions, so built and loaded executables share it.
  const std::vector<bool> &inputsWritten();
  /// The memory report of the last run.
  const MemoryReport &memoryReport() const { return report; }
  Allocator &allocator() { return *alloc; }

  /// An empty executable for `device`, with its allocator: what
  /// buildExecutable (Build.cpp) and loadExecutable (ExecutableFile.h) fill.
  /// Without `withAllocator` it can only be saved, not run: that is how a
  /// build machine without a GPU compiles for one.
  static Expected<std::unique_ptr<Executable>>
  create(Device device, bool withAllocator = true);

  // Filled by buildExecutable or loadExecutable.
  struct ArgSpec {
    int32_t slot;
    DType dtype;
    Shape shape;
    bool donated;
    std::string name;
  };
  Device dev;
  /// Unique per executable built in this process (profiles key on it).
  uint64_t uid = 0;
  std::string name; ///< the graph's symbol name
  std::unique_ptr<Allocator> alloc;
  std::vector<Instr> instrs;
  std::vector<ArgRef> args;
  std::vector<ResultRef> results;
  std::vector<Scalar> scalars;
  /// scalars[i] as the IR held it (what a saved executable stores).
  std::vector<ScalarValue> scalarValues;
  std::vector<OpInfoRT> ops;
  std::vector<std::string> params, inputs;
  std::vector<ArgSpec> paramSpecs, inputSpecs;
  /// Constants: their slot and host data, uploaded with the parameters.
  std::vector<std::pair<int32_t, HostTensor>> constants;
  std::vector<int32_t> outputSlots;
  size_t numSlots = 0;
  /// Ops run by generated kernels (trace-run --gpu-binary), and the loaded
  /// binary holding them.
  std::vector<GeneratedOp> generatedOps;
  std::shared_ptr<GpuLibrary> gpuLibrary;
  /// The fatbin gpuLibrary was loaded from, its chip and its kernel names,
  /// kept so that the executable can be saved.
  std::string gpuBinary, gpuChip;
  std::vector<std::string> gpuKernelNames;
  MemoryReport report;
  /// The memory plan (--plan-memory): every result with an arenaOffset lives
  /// in one allocation of arenaBytes per run; 0 without a plan. The
  /// alignment the plan rounded sizes to.
  int64_t arenaBytes = 0;
  int64_t arenaAlignment = 0;
  /// Kernel scratch in the arena: where each call's scratch goes (bytes
  /// free while it runs: between the planned storages alive then, or above
  /// them), learned from what the call asked for in earlier runs (kernels
  /// size scratch from static shapes, so the first run learns it), so that
  /// later runs make no scratch call. Indexed by instruction; the arena's
  /// bytes with them.
  struct ScratchSlot {
    int64_t offset = 0, bytes = 0;
  };
  std::vector<ScratchSlot> arenaScratchSlots;
  int64_t arenaWithScratchBytes = 0;
  /// What a saved executable was written by (empty when built here).
  std::string producer;

private:
  friend class KernelContext;
  /// Receives output `index` while the run's storages still live.
  using OutputSink = std::function<Error(size_t index, const Tensor &t)>;
  /// What run and runViews share: binds the inputs, runs every instruction
  /// and hands each output to `sink`.
  Error execute(const InputViews &inputs, const RunOptions &options,
                const OutputSink &sink);
  /// The error the device's kernels recorded in this run (waiting for
  /// them), naming its op, or success when there is none.
  Error recordedDeviceError();
  /// A recorded error's message, naming its op.
  std::string recordedErrorText(const DeviceErrorRecord &r) const;
  /// Copies `t` contiguously into host memory `dst` (t.nbytes() bytes),
  /// gathering strides on the device first.
  Error copyOutToHost(const Tensor &t, void *dst, const std::string &what);
  /// Storages of params and constants, owned by the executable.
  std::vector<std::unique_ptr<Storage>> persistent;
  std::vector<Tensor> persistentSlots; ///< slot contents for params/constants
  bool paramsLoaded = false;
  /// Finds the calls whose in-place activation the previous call's kernel
  /// may fuse (Epilogues.cpp); once, at the first run, on the CPU.
  void planEpilogues();
  std::once_flag epiloguesOnce;
  std::once_flag inputsWrittenOnce;
  std::vector<bool> inputsWrittenFlags;
};

/// The view a kernel has of one call.
class KernelContext {
public:
  unsigned numArgs() const { return instr->numArgs; }
  bool isTensor(unsigned i) const {
    return i < instr->numArgs && argAt(i).slot >= 0;
  }
  /// Whether argument `i` is absent or None.
  bool isNone(unsigned i) const {
    return i >= instr->numArgs || (argAt(i).slot < 0 && scalar(i).isNone());
  }
  /// Argument `i` as a tensor. Where it is absent or a scalar (a verified
  /// graph never has that where a kernel reads a tensor; a saved executable
  /// may), the call fails and gets a 0-d f64 zero to read (see
  /// notATensor), so that the kernel runs out without indexing the slots by
  /// -1.
  const Tensor &tensor(unsigned i) const {
    if (i >= instr->numArgs || argAt(i).slot < 0)
      return notATensor(i);
    return (*slots)[argAt(i).slot];
  }
  /// Argument `i` as a scalar; None where it is absent or a tensor (which a
  /// verified graph never has where a kernel reads a scalar, and a saved
  /// executable may).
  const Scalar &scalar(unsigned i) const {
    static const Scalar none;
    if (i >= instr->numArgs || argAt(i).slot >= 0)
      return none;
    return exe->scalars[argAt(i).scalar];
  }
  unsigned numResults() const { return instr->numResults; }
  /// Result `i`: preallocated and contiguous for a fresh result; a view
  /// kernel sets it to share its input's storage.
  Tensor &result(unsigned i) {
    return (*slots)[exe->results[instr->resultBegin + i].slot];
  }
  bool resultIsFresh(unsigned i) const {
    return exe->results[instr->resultBegin + i].fresh;
  }
  /// The static shape of result `i`, from the graph's types.
  const Shape &resultShape(unsigned i) const {
    return exe->results[instr->resultBegin + i].shape;
  }
  /// A contiguous copy of `src` viewed with `shape` (same number of
  /// elements) in a new storage tied to `src`'s: freeing that storage frees
  /// the copy. For view-or-copy ops that cannot view.
  Tensor tiedCopy(const Tensor &src, std::span<const int64_t> shape);
  /// Kernel-internal memory: counted by the allocator only, freed after the
  /// call.
  void *scratch(size_t nbytes);
  /// Scratch for `count` elements of `elementBytes` each, plus `extraBytes`:
  /// the size is overflow-checked, and one that does not fit fails the call
  /// as an allocation failure does.
  void *scratch(int64_t count, size_t elementBytes, size_t extraBytes = 0);
  /// The run's generator, seeded with RunOptions::seed on first use:
  /// seeding a Mersenne Twister costs about a microsecond, which most runs
  /// (no random op) need not pay.
  std::mt19937_64 &rng() {
    if (!generator)
      generator.emplace(seed);
    return *generator;
  }
  /// The generated code of a call bound to runGeneratedOp.
  const GeneratedOp &generatedOp() const {
    return exe->generatedOps[instr->generated];
  }
  GpuLibrary *gpuLibrary() const { return exe->gpuLibrary.get(); }
  Allocator &allocator() const { return *exe->alloc; }
  /// Fails the call; the run stops with an error naming the op.
  void fail(const std::string &message);
  /// Where this call's kernels record an error found in their data
  /// (DeviceError.h): the device's record (null on the CPU, whose kernels
  /// fail the call instead) and this call's op.
  DeviceErrorSlot deviceErrors() const {
    return {exe->alloc->errorRecord(), static_cast<int32_t>(instr->op)};
  }
  /// For a call that has just waited for its device anyway (one whose
  /// result's shape depends on its data): whether an earlier kernel of the
  /// run recorded an error, which then fails this call (the run reports the
  /// recorded error, naming its op), so that it does not act on data that
  /// error left unwritten. Reading the record waits for the device: never
  /// call it where the call would not wait otherwise.
  bool deviceFailed();
  bool failed() const { return !error.empty(); }
  /// Records that the call took `t`'s path (KernelTier.h); every call
  /// starts as portable.
  void ranTier(KernelTier t) { tier = t; }
  KernelTier ranTier() const { return tier; }
  /// The activation this call's kernel may apply to result 0 as it writes
  /// it (Instr::epilogue), or null; a kernel that applies it says so with
  /// appliedEpilogue(), and the next call then does nothing but alias.
  const Epilogue *epilogue() const {
    return instr->epilogue.clamp ? &instr->epilogue : nullptr;
  }
  void appliedEpilogue() { epilogueApplied = true; }

private:
  friend class Executable;
  const Tensor &notATensor(unsigned i) const;
  const ArgRef &argAt(unsigned i) const {
    return exe->args[instr->argBegin + i];
  }
  Executable *exe = nullptr;
  void *runState = nullptr; ///< the run's storages (Executable.cpp)
  const Instr *instr = nullptr;
  std::vector<Tensor> *slots = nullptr;
  std::optional<std::mt19937_64> generator;
  uint64_t seed = 0;
  std::vector<std::pair<void *, size_t>> scratchBlocks;
  std::string error;
  KernelTier tier = KernelTier::Portable;
  bool epilogueApplied = false;
};

/// The kernel of every op run by generated kernels: makes its operands
/// dense, allocates its temporaries as scratch and launches its kernels
/// through the executable's GpuLibrary.
void runGeneratedOp(KernelContext &ctx);

/// The kernel for `name` on `kind`, or null.
KernelFn lookupKernel(std::string_view name, Device::Kind kind);
/// Every registered (name, device) pair, for docs and tests.
std::vector<std::pair<std::string, Device::Kind>> listKernels();

} // namespace traceir

#endif // TRACEIR_RUNTIME_EXECUTABLE_H
