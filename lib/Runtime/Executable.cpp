//===- Executable.cpp - Running the flat instruction list -----------------===//

#include "TraceIR/Runtime/Executable.h"
#include "TraceIR/Runtime/CPU/Kernels.h"
#include "TraceIR/Runtime/Profiler.h"
#include "TraceIR/Support/CheckedMath.h"
#include "TraceIR/Support/ViewAlgebra.h"

#include <atomic>
#include <deque>
#include <new>

using namespace traceir;

Executable::~Executable() {
  for (auto &st : persistent)
    if (st->data)
      alloc->deallocate(st->data, st->nbytes);
}

/// Why allocating `nbytes` on `alloc`'s device failed: the limit, or the
/// device itself (the allocator returned null).
static std::string cannotAllocate(const Allocator &alloc, int64_t nbytes) {
  std::string s = "cannot allocate " + std::to_string(nbytes) + " bytes on " +
                  alloc.device().str();
  if (alloc.lastFailureWasLimit())
    s += " (" + std::to_string(alloc.allocatedBytes()) +
         " bytes held; the memory limit is " +
         std::to_string(*alloc.limitBytes()) + " bytes)";
  return s;
}

/// A contiguous tensor of `dtype` and `shape` at the start of `st`.
static Tensor denseTensor(Storage *st, DType dtype, const Shape &shape) {
  Tensor t;
  t.storage = st;
  t.dtype = dtype;
  t.shape = shape;
  t.strides = Tensor::contiguousStrides(shape);
  return t;
}

/// Checks a bound tensor against the graph's declared type.
static Error checkBinding(const std::string &what, const std::string &name,
                          DType dtype, const Shape &shape,
                          const Executable::ArgSpec &spec) {
  if (dtype != spec.dtype || shape != spec.shape)
    return makeError(what + " '" + name + "' is " + dtypeName(dtype) +
                     shapeToString(shape) + " but the graph expects " +
                     dtypeName(spec.dtype) + shapeToString(spec.shape));
  return Error::success();
}

/// Checks that a host tensor holds exactly the bytes its shape needs, so
/// that nothing reads past its end.
static Error checkHostTensor(const std::string &what, const std::string &name,
                             const HostTensor &t) {
  std::optional<int64_t> bytes =
      checkedTensorBytes(t.shape, int64_t(dtypeSize(t.dtype)));
  if (!bytes || *bytes != int64_t(t.data.size()))
    return makeError(what + " '" + name + "' holds " + strCat(t.data.size()) +
                     " bytes, not what " + dtypeName(t.dtype) +
                     shapeToString(t.shape) + " needs");
  return Error::success();
}

Error Executable::loadParams(const NamedTensors &tensors) {
  if (!alloc)
    return makeError("@" + name + " was built to be saved, not run");
  alloc->activate();
  for (auto &st : persistent)
    if (st->data)
      alloc->deallocate(st->data, st->nbytes);
  persistent.clear();
  persistentSlots.clear();
  auto upload = [&](int32_t slot, const HostTensor &t,
                    const std::string &what) -> Error {
    auto st = std::make_unique<Storage>();
    st->persistent = true;
    st->nbytes = t.data.size();
    st->device = dev;
    st->data = alloc->allocate(st->nbytes);
    if (!st->data)
      return makeError(cannotAllocate(*alloc, st->nbytes) + " for " + what);
    alloc->copyFromHost(st->data, t.data.data(), st->nbytes);
    Tensor view = denseTensor(st.get(), t.dtype, t.shape);
    persistent.push_back(std::move(st));
    persistentSlots.resize(std::max<size_t>(persistentSlots.size(), slot + 1));
    persistentSlots[slot] = view;
    return Error::success();
  };
  std::vector<std::string> missing;
  for (const ArgSpec &spec : paramSpecs) {
    auto it = tensors.find(spec.name);
    if (it == tensors.end()) {
      missing.push_back(spec.name);
      continue;
    }
    if (Error err = checkHostTensor("parameter", spec.name, it->second))
      return err;
    if (Error err = checkBinding("parameter", spec.name, it->second.dtype,
                                 it->second.shape, spec))
      return err;
    if (Error err =
            upload(spec.slot, it->second, "parameter '" + spec.name + "'"))
      return err;
  }
  if (!missing.empty()) {
    std::string list;
    for (auto &m : missing)
      list += (list.empty() ? "'" : ", '") + m + "'";
    return makeError("missing parameter" +
                     strCat(missing.size() > 1 ? "s " : " ") + list);
  }
  for (const auto &[slot, t] : constants)
    if (Error err = upload(slot, t, "a constant"))
      return err;
  paramsLoaded = true;
  return Error::success();
}

Expected<HostTensor> Executable::readParam(std::string_view name) {
  for (const ArgSpec &spec : paramSpecs) {
    if (spec.name != name)
      continue;
    if (!paramsLoaded || size_t(spec.slot) >= persistentSlots.size())
      return makeError("parameters are not loaded");
    const Tensor &t = persistentSlots[spec.slot];
    HostTensor h;
    h.dtype = t.dtype;
    h.shape = t.shape;
    if (Error err = allocateHostData(h, t.nbytes(),
                                     "parameter '" + std::string(name) + "'"))
      return err;
    alloc->activate();
    alloc->copyToHost(h.data.data(), t.bytes(), h.data.size());
    return h;
  }
  return makeError("no parameter '" + std::string(name) + "'");
}

void *KernelContext::scratch(int64_t count, size_t elementBytes,
                             size_t extraBytes) {
  std::optional<int64_t> bytes =
      traceir::checkedMul(count, static_cast<int64_t>(elementBytes));
  if (bytes)
    bytes = traceir::checkedAdd(*bytes, static_cast<int64_t>(extraBytes));
  if (count < 0 || !bytes) {
    fail("kernel scratch of " + strCat(count) + " x " + strCat(elementBytes) +
         " bytes does not fit in 64 bits");
    return nullptr;
  }
  return scratch(static_cast<size_t>(*bytes));
}

void KernelContext::fail(const std::string &message) {
  if (error.empty())
    error = message;
}

bool KernelContext::deviceFailed() {
  DeviceErrorRecord r;
  if (Error err = exe->alloc->readErrorRecord(r)) {
    fail(err.message());
    return true;
  }
  if (r.code == 0)
    return false;
  // Executable::execute reports the record, which names the op that failed.
  fail("an earlier kernel recorded an error");
  return true;
}

const Tensor &KernelContext::notATensor(unsigned i) const {
  // Read-only to every kernel (in-place ops, which write their argument 0,
  // have a tensor there: loading checks that), and one element of any
  // dtype fits its storage.
  alignas(16) static char zeros[16] = {};
  static Storage storage = [] {
    Storage st;
    st.data = zeros;
    st.nbytes = sizeof zeros;
    st.persistent = true;
    return st;
  }();
  static const Tensor zero = [] {
    Tensor t;
    t.storage = &storage;
    t.dtype = DType::F64;
    return t;
  }();
  const_cast<KernelContext *>(this)->fail(
      "argument #" + strCat(i) + " must be a tensor, got " +
      (i < instr->numArgs ? "a scalar" : "none"));
  return zero;
}

/// Scratch blocks are aligned for any load a kernel makes (CUDA's 256).
static constexpr int64_t kScratchAlignment = 256;
/// The most an arena may take (2^62: its sums stay in int64_t).
static constexpr int64_t kMaxArenaBytes = int64_t(1) << 62;

namespace {
std::string opWhere(const OpInfoRT &op) {
  std::string s = "op '" + op.name + "'";
  if (!op.location.empty())
    s += " at " + op.location;
  return s;
}

/// Everything one run owns; the destructor returns all memory, so an error
/// anywhere leaves nothing allocated.
struct RunState {
  Executable &exe;
  Allocator &alloc;
  std::deque<Storage> storages;
  std::vector<Tensor> slots;
  int64_t live = 0, peak = 0, numFrees = 0;
  /// Allocator calls, all and those of the arena.
  int64_t allocations = 0, arenaAllocations = 0;
  /// Whether a call's scratch got a new place in the arena this run.
  bool placedScratch = false;

  /// A planned graph's arena: one allocation for the run, its planned
  /// storages from 0 to exe.arenaBytes, kernel scratch where earlier runs
  /// placed it (exe.arenaScratchSlots), which may take it further.
  char *arena = nullptr;
  int64_t arenaAllocated = 0;
  /// The call running: its index, the scratch it asked for (aligned) and
  /// how much of that its slot served.
  size_t call = 0;
  int64_t callScratch = 0, scratchUsed = 0;
  /// The owner map: each live planned storage by its offset, with the op
  /// whose result it is. Disjoint ranges, so an overlap shows up beside
  /// the offset.
  struct ArenaOwner {
    int64_t end;
    Storage *storage;
    uint32_t op;
    unsigned result;
  };
  std::map<int64_t, ArenaOwner> owners;
  /// Aligned bytes of the planned storages alive, and their peak.
  int64_t arenaLive = 0, arenaPeak = 0;

  RunState(Executable &exe) : exe(exe), alloc(*exe.alloc) {}
  ~RunState() {
    for (Storage &st : storages)
      release(st);
    if (arena)
      alloc.deallocate(arena, arenaAllocated);
  }
  int64_t alignedArenaBytes(int64_t nbytes) const {
    int64_t a = std::max<int64_t>(exe.arenaAlignment, 1);
    return (nbytes + a - 1) / a * a;
  }
  void release(Storage &st) {
    if (!st.released && st.data)
      alloc.deallocate(st.data, st.nbytes);
    st.released = true;
  }
  /// The caller's memory, read in place for the run.
  Storage *borrow(void *data, int64_t nbytes) {
    storages.emplace_back();
    Storage &st = storages.back();
    st.data = data;
    st.nbytes = nbytes;
    st.device = exe.dev;
    st.borrowed = true;
    st.released = true; // not the allocator's
    return &st;
  }
  /// Allocates the arena of a planned graph (none without a plan, or with
  /// nothing in it): the planned storages, and scratch placed by earlier
  /// runs.
  Error allocateArena() {
    if (exe.arenaAlignment <= 0)
      return Error::success();
    if (exe.arenaBytes < 0 || exe.arenaBytes > kMaxArenaBytes)
      return makeError("the memory plan's arena of " + strCat(exe.arenaBytes) +
                       " bytes is over TraceIR's size limit");
    exe.arenaScratchSlots.resize(exe.instrs.size());
    int64_t total = std::max(exe.arenaBytes, exe.arenaWithScratchBytes);
    if (total == 0)
      return Error::success();
    arena = static_cast<char *>(alloc.allocate(total));
    ++allocations;
    if (!arena)
      return makeError(cannotAllocate(alloc, total) +
                       " for the memory plan's arena");
    ++arenaAllocations;
    arenaAllocated = total;
    return Error::success();
  }
  /// After a call that asked for more scratch than its slot holds: a slot
  /// for next runs in the bytes no planned storage alive now holds, the
  /// smallest gap that fits or above them all (every run places the same
  /// storages at this call, so the bytes are free then in every run).
  void placeScratch() {
    auto up = [](int64_t n) {
      return (n + kScratchAlignment - 1) / kScratchAlignment *
             kScratchAlignment;
    };
    int64_t best = -1, bestGap = INT64_MAX, at = 0;
    for (const auto &[offset, owner] : owners) {
      int64_t start = up(at);
      if (offset >= start && offset - start >= callScratch &&
          offset - start < bestGap) {
        best = start;
        bestGap = offset - start;
      }
      at = std::max(at, owner.end);
    }
    if (best < 0)
      best = up(at);
    // Within the size limit (scratch sizes are checked, the plan's too):
    // no overflow, and the next arena stays allocatable or fails plainly.
    if (best > kMaxArenaBytes || callScratch > kMaxArenaBytes - best)
      return;
    exe.arenaScratchSlots[call] = {best, callScratch};
    placedScratch = true;
    exe.arenaWithScratchBytes =
        std::max(exe.arenaWithScratchBytes, best + callScratch);
  }
  /// Who owns arena bytes, for errors.
  std::string ownerText(int64_t offset, const ArenaOwner &o) const {
    return "the storage of result #" + strCat(o.result) + " of " +
           opWhere(exe.ops[o.op]) + " (" + strCat(o.end - offset) +
           " bytes at arena offset " + strCat(offset) + ")";
  }
  /// A planned storage of `nbytes` at `offset`: result `result` of the call
  /// of op `op`. The owner map refuses it where a storage still alive holds
  /// any of its bytes (a wrong plan: a verified graph's never is, a saved
  /// executable's may be), naming both.
  Expected<Storage *> placeInArena(int64_t nbytes, int64_t offset, uint32_t op,
                                   unsigned result) {
    std::string what = "result #" + strCat(result) + " (" + strCat(nbytes) +
                       " bytes at arena offset " + strCat(offset) + ")";
    if (offset > exe.arenaBytes || nbytes > exe.arenaBytes - offset)
      return makeError(opWhere(exe.ops[op]) + ": " + what +
                       " does not fit the plan's arena of " +
                       strCat(exe.arenaBytes) + " bytes");
    storages.emplace_back();
    Storage &st = storages.back();
    if (nbytes > 0) {
      auto next = owners.lower_bound(offset);
      auto clash = owners.end();
      if (next != owners.end() && next->first < offset + nbytes)
        clash = next;
      else if (next != owners.begin() && std::prev(next)->second.end > offset)
        clash = std::prev(next);
      if (clash != owners.end())
        return makeError(opWhere(exe.ops[op]) + ": its " + what + " overlaps " +
                         ownerText(clash->first, clash->second) +
                         ", which is still alive: the memory plan is wrong");
      owners.emplace(offset, ArenaOwner{offset + nbytes, &st, op, result});
    }
    st.data = arena + offset;
    st.nbytes = nbytes;
    st.device = exe.dev;
    st.ownedByRun = true;
    st.inArena = true;
    st.released = true; // the arena's, not the allocator's
    live += nbytes;
    peak = std::max(peak, live);
    arenaLive += alignedArenaBytes(nbytes);
    arenaPeak = std::max(arenaPeak, arenaLive);
    return &st;
  }
  /// A planned storage freed: its bytes go back to the plan.
  void leaveArena(Storage &st) {
    auto it = owners.find(static_cast<char *>(st.data) - arena);
    if (it != owners.end() && it->second.storage == &st)
      owners.erase(it);
    arenaLive -= alignedArenaBytes(st.nbytes);
  }
  /// --check-frees: every tensor argument of `instr` in the arena lies
  /// within bytes its own storage owns.
  Error checkOwners(const Instr &instr) const {
    for (unsigned i = 0; i < instr.numArgs; ++i) {
      const ArgRef &a = exe.args[instr.argBegin + i];
      if (a.slot < 0)
        continue;
      const Tensor &t = slots[a.slot];
      if (!t.storage || !t.storage->inArena || t.numel() == 0)
        continue;
      int64_t last = 0;
      for (int64_t d = 0; d < t.rank(); ++d)
        last += (t.shape[d] - 1) * std::max<int64_t>(t.strides[d], 0);
      int64_t lo = t.bytes() - arena;
      int64_t hi = lo + (last + 1) * int64_t(dtypeSize(t.dtype));
      auto it = owners.upper_bound(lo);
      if (it != owners.begin() && std::prev(it)->second.end > lo)
        --it;
      if (it != owners.end() && it->first <= lo &&
          it->second.storage == t.storage && hi <= it->second.end)
        continue;
      // The first bytes in [lo, hi) another live storage owns, if any.
      while (it != owners.end() && it->first < hi &&
             it->second.storage == t.storage)
        ++it;
      const OpInfoRT &info = exe.ops[instr.op];
      std::string text = opWhere(info) + " reads " + info.valueNames[i] +
                         " (argument #" + strCat(i) + ") at arena bytes " +
                         strCat(lo) + " to " + strCat(hi) + ", ";
      if (it != owners.end() && it->first < hi)
        text += "which overlap " + ownerText(it->first, it->second);
      else
        text += "past its own storage, where no live storage is";
      return makeError(text + ": a view kernel or the memory plan is wrong");
    }
    return Error::success();
  }
  Storage *newStorage(int64_t nbytes, bool ownedByRun) {
    storages.emplace_back();
    Storage &st = storages.back();
    st.nbytes = nbytes;
    st.device = exe.dev;
    st.ownedByRun = ownedByRun;
    st.data = alloc.allocate(nbytes);
    ++allocations;
    if (!st.data)
      return nullptr;
    if (ownedByRun) {
      live += nbytes;
      peak = std::max(peak, live);
    }
    return &st;
  }
};

/// The number of elements from a view's first to its last, or an error.
Expected<int64_t> viewExtent(const std::string &name, const Shape &shape,
                             const Shape &strides) {
  if (strides.size() != shape.size())
    return makeError("input '" + name + "' has " + strCat(strides.size()) +
                     " strides for " + strCat(shape.size()) + " dimensions");
  int64_t last = 0;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0)
      return int64_t(0);
    if (strides[i] < 0)
      return makeError("input '" + name + "' has a negative stride (" +
                       strCat(strides[i]) + " in dimension " + strCat(i) +
                       "); pass a contiguous copy");
    std::optional<int64_t> step = checkedMul(shape[i] - 1, strides[i]);
    std::optional<int64_t> sum = step ? checkedAdd(last, *step) : std::nullopt;
    if (!sum)
      return makeError("input '" + name + "' has strides that overflow");
    last = *sum;
  }
  return last + 1;
}

/// Copies input `view` into a new storage of the run for `spec`'s slot: a
/// memcpy for contiguous memory where the device reads it, a copy on the
/// device from a strided view of its own memory, a gather on the host for
/// a strided host view that goes to another device.
Error bindInput(Executable &exe, RunState &state,
                const Executable::ArgSpec &spec, const InputView &view) {
  Allocator &alloc = *exe.alloc;
  Device host;
  bool onHost = view.device == host;
  if (!onHost && !(view.device == exe.dev))
    return makeError("input '" + spec.name + "' is on " + view.device.str() +
                     " but @" + exe.name + " runs on " + exe.dev.str());
  Tensor src;
  Storage lent;
  src.storage = &lent;
  src.dtype = view.dtype;
  src.shape = view.shape;
  src.strides = view.strides.empty() ? Tensor::contiguousStrides(view.shape)
                                     : view.strides;
  auto extent = viewExtent(spec.name, src.shape, src.strides);
  if (!extent)
    return extent.takeError();
  std::optional<int64_t> lentBytes =
      checkedMul(*extent, int64_t(dtypeSize(view.dtype)));
  if (!lentBytes)
    return makeError("input '" + spec.name + "' has strides that overflow");
  lent.data = const_cast<void *>(view.data);
  lent.nbytes = *lentBytes;
  lent.device = view.device;
  if (!lent.data && lent.nbytes)
    return makeError("input '" + spec.name + "' has no data");

  // A declared (verified) type: its bytes fit.
  int64_t nbytes = *checkedTensorBytes(spec.shape, dtypeSize(spec.dtype));
  // Contiguous host memory the CPU reads as it is, and no op of the run
  // writes: read in place, as PyTorch reads its arguments. (A copy would
  // cost a pass over the input and its page faults on every call.) Kernels
  // load elements of their dtype, so the address must be aligned to it.
  if (onHost && exe.dev == host && nbytes > 0 && src.isContiguous() &&
      reinterpret_cast<uintptr_t>(view.data) % dtypeSize(view.dtype) == 0 &&
      !exe.inputsWritten()[&spec - exe.inputSpecs.data()]) {
    state.slots[spec.slot] =
        denseTensor(state.borrow(lent.data, nbytes), spec.dtype, spec.shape);
    return Error::success();
  }
  Storage *st = state.newStorage(nbytes, /*ownedByRun=*/false);
  if (!st)
    return makeError(cannotAllocate(alloc, nbytes) + " for input '" +
                     spec.name + "'");
  Tensor &slot = state.slots[spec.slot];
  slot = denseTensor(st, spec.dtype, spec.shape);
  if (onHost && src.isContiguous()) {
    alloc.copyFromHost(st->data, view.data, nbytes);
    return Error::success();
  }
  if (!onHost || exe.dev == host) {
    if (!alloc.copyStrided(src, slot))
      return makeError("copying input '" + spec.name + "' on " + exe.dev.str() +
                       " failed");
    return Error::success();
  }
  // Strided host memory for a device: gathered on the host, then one copy.
  HostTensor dense;
  dense.dtype = spec.dtype;
  dense.shape = spec.shape;
  if (Error err = allocateHostData(dense, nbytes, "input '" + spec.name + "'"))
    return err;
  Storage denseStorage;
  denseStorage.data = dense.data.data();
  denseStorage.nbytes = nbytes;
  Tensor denseView = denseTensor(&denseStorage, spec.dtype, spec.shape);
  cpu::copyTensor(src, denseView);
  alloc.copyFromHost(st->data, dense.data.data(), nbytes);
  return Error::success();
}

} // namespace

Tensor KernelContext::tiedCopy(const Tensor &src,
                               std::span<const int64_t> shape) {
  auto &state = *static_cast<RunState *>(runState);
  Tensor out;
  Storage *st = state.newStorage(src.nbytes(), /*ownedByRun=*/true);
  if (!st) {
    fail(cannotAllocate(*exe->alloc, src.nbytes()) + " (a reshape's copy)");
    return out;
  }
  // A copy of a param or constant lives to the end of the run; any other
  // copy goes when its source's storage is freed.
  if (!src.storage->persistent) {
    st->tiedNext = src.storage->tiedNext;
    src.storage->tiedNext = st;
  }
  out.storage = st;
  out.dtype = src.dtype;
  out.shape = src.shape;
  out.strides = Tensor::contiguousStrides(src.shape);
  if (!exe->alloc->copyStrided(src, out))
    fail("copying on " + exe->dev.str() + " failed");
  out.shape.assign(shape.begin(), shape.end());
  out.strides = Tensor::contiguousStrides(shape);
  return out;
}

void *KernelContext::scratch(size_t nbytes) {
  auto *state = static_cast<RunState *>(runState);
  if (state && nbytes <= size_t(kMaxArenaBytes)) {
    int64_t aligned = (int64_t(nbytes) + kScratchAlignment - 1) /
                      kScratchAlignment * kScratchAlignment;
    state->callScratch += aligned;
    // From the call's slot in the arena when it has room: a call's blocks
    // go one after another and all go back when it returns.
    if (state->arena) {
      const Executable::ScratchSlot &slot = exe->arenaScratchSlots[state->call];
      if (aligned <= slot.bytes - state->scratchUsed &&
          slot.offset + slot.bytes <= state->arenaAllocated) {
        void *p = state->arena + slot.offset + state->scratchUsed;
        state->scratchUsed += aligned;
        return p;
      }
    }
    ++state->allocations;
  }
  void *p = exe->alloc->allocate(nbytes);
  if (!p) {
    fail(cannotAllocate(*exe->alloc, nbytes) + " (kernel scratch)");
    return nullptr;
  }
  scratchBlocks.push_back({p, nbytes});
  return p;
}

std::string Executable::recordedErrorText(const DeviceErrorRecord &r) const {
  // A record naming no op of this executable is memory gone wrong; still
  // the run failed, and the message says what the kernel found.
  std::string where = r.op >= 0 && size_t(r.op) < ops.size()
                          ? opWhere(ops[r.op])
                          : "op #" + strCat(r.op);
  return where + ": " + deviceErrorMessage(r);
}

Error Executable::recordedDeviceError() {
  DeviceErrorRecord r;
  if (Error err = alloc->readErrorRecord(r))
    return err;
  if (r.code == 0)
    return Error::success();
  return makeError(recordedErrorText(r));
}

Error Executable::execute(const InputViews &inputTensors,
                          const RunOptions &options, const OutputSink &sink) {
  if (!alloc)
    return makeError("@" + name + " was built to be saved, not run");
  if (!paramsLoaded) {
    if (!paramSpecs.empty())
      return makeError("parameters are not loaded: call loadParams first (" +
                       strCat(paramSpecs.size()) + " expected)");
    if (Error err = loadParams({}))
      return err;
  }
  alloc->activate();
  // The run's memory limit, restored when the run ends however it ends.
  struct LimitScope {
    Allocator &alloc;
    std::optional<int64_t> saved;
    ~LimitScope() { alloc.setLimit(saved); }
  } limitScope{*alloc, alloc->limitBytes()};
  if (options.memoryLimitBytes)
    alloc->setLimit(options.memoryLimitBytes);
  // Profiling: the run's record, and the device's timer where its kernels
  // run on their own clock. Everything below records only when `prof` is
  // set: two clock reads and an append per op.
  Profiler::RunRecord *prof = nullptr;
  DeviceTimer *timer = nullptr;
  if (options.profiler && options.profiler->isActive()) {
    auto record = options.profiler->beginRun(*this);
    if (!record)
      return record.takeError();
    prof = *record;
    timer = options.profiler->timerOf(*prof);
    prof->beginNs = profileClockNs();
  }
  struct EndOfRun {
    Profiler::RunRecord *prof;
    ~EndOfRun() {
      if (prof)
        prof->endNs = profileClockNs();
    }
  } endOfRun{prof};

  // Where this run placed scratch in the arena (next runs' arena is
  // larger), the allocator's cache holds this run's arena and the scratch
  // it took from the allocator, which no later run asks for again: given
  // back once the run has released them (declared before the run's state,
  // so destroyed after it).
  struct ReleaseCache {
    Allocator *alloc = nullptr;
    ~ReleaseCache() {
      if (alloc)
        alloc->releaseCache();
    }
  } releaseCache;
  RunState state(*this);
  state.slots.resize(numSlots);
  for (size_t s = 0; s < persistentSlots.size(); ++s)
    if (persistentSlots[s].storage)
      state.slots[s] = persistentSlots[s];

  // Bind inputs by name.
  for (const auto &[name, t] : inputTensors) {
    bool known = std::any_of(inputSpecs.begin(), inputSpecs.end(),
                             [&](const ArgSpec &a) { return a.name == name; });
    if (!known) {
      std::string list;
      for (const ArgSpec &a : inputSpecs)
        list += (list.empty() ? "" : ", ") + a.name;
      return makeError("unknown input '" + name +
                       "'; the graph's inputs are: " +
                       (list.empty() ? std::string("(none)") : list));
    }
  }
  for (const ArgSpec &spec : inputSpecs) {
    auto it = inputTensors.find(spec.name);
    if (it == inputTensors.end())
      return makeError("missing input '" + spec.name + "' (" +
                       dtypeName(spec.dtype) + shapeToString(spec.shape) + ")");
    const InputView &view = it->second;
    if (Error err =
            checkBinding("input", spec.name, view.dtype, view.shape, spec))
      return err;
    if (Error err = bindInput(*this, state, spec, view))
      return err;
  }

  std::call_once(epiloguesOnce, [this] { planEpilogues(); });
  if (Error err = state.allocateArena())
    return err;
  KernelContext ctx;
  ctx.exe = this;
  ctx.runState = &state;
  ctx.slots = &state.slots;
  ctx.seed = options.seed;
  alloc->resetPeak();
  // Queued before the run's kernels, so that an error a previous run left
  // in the record is not this run's.
  if (Error err = alloc->clearErrorRecord())
    return err;
  auto counter = [&](int64_t ns) {
    prof->counters.push_back(
        {ns, state.live, alloc->allocatedBytes(), state.arenaLive});
  };
  if (prof)
    counter(profileClockNs());

  // Whether the last call's kernel applied its epilogue, which the next
  // call (fusedIntoPrevious) then skips.
  bool epilogueApplied = false;
  for (const Instr &instr : instrs) {
    if (instr.kind == Instr::Kind::Free) {
      Storage *st = state.slots[instr.freeSlot].storage;
      int64_t freedBytes = 0;
      // Freeing a storage frees the copies tied to it.
      for (Storage *s = st; s; s = s->tiedNext) {
        if (s->freed)
          return makeError(opWhere(ops[instr.op]) + ": double free");
        // What a verified graph never does, and a saved executable from
        // elsewhere might: free a parameter's or a constant's storage.
        if (s->persistent)
          return makeError(opWhere(ops[instr.op]) + " frees " +
                           ops[instr.op].valueNames[0] +
                           ", which shares a parameter's or constant's "
                           "storage");
        s->freed = true;
        freedBytes += s->nbytes;
        if (s->ownedByRun)
          state.live -= s->nbytes;
        if (s->inArena)
          state.leaveArena(*s);
        if (options.checkFrees && !s->borrowed)
          alloc->poison(s->data, s->nbytes); // released at the end
        else
          state.release(*s);
      }
      ++state.numFrees;
      if (prof) {
        int64_t now = profileClockNs();
        prof->frees.push_back({instr.op, now, freedBytes});
        counter(now);
      }
      continue;
    }
    int64_t beginNs = prof ? profileClockNs() : 0;
    ctx.instr = &instr;
    state.call = &instr - instrs.data();
    ctx.tier = KernelTier::Portable;
    const bool fused = instr.fusedIntoPrevious && epilogueApplied;
    ctx.epilogueApplied = false;
    // Always, not only with checkFrees: a flag per operand costs nothing
    // next to a kernel, and a saved executable that frees a storage while
    // a view of it lives on (no verified graph does) gets this error
    // instead of a read of released memory. checkFrees adds the poisoning.
    for (unsigned i = 0; i < instr.numArgs; ++i) {
      const ArgRef &a = args[instr.argBegin + i];
      if (a.slot >= 0 && state.slots[a.slot].storage->freed)
        return makeError(opWhere(ops[instr.op]) + " reads " +
                         ops[instr.op].valueNames[i] + " (argument #" +
                         strCat(i) + ") after its storage was freed");
    }
    bool allocated = false;
    for (unsigned r = 0; r < instr.numResults; ++r) {
      const ResultRef &res = results[instr.resultBegin + r];
      if (!res.fresh)
        continue;
      allocated = true;
      // A verified type: its bytes fit (CheckedMath.h's limit).
      std::optional<int64_t> nbytes =
          checkedTensorBytes(res.shape, dtypeSize(res.dtype));
      if (!nbytes)
        return makeError(opWhere(ops[instr.op]) + ": result type " +
                         dtypeName(res.dtype) + shapeToString(res.shape) +
                         " is over TraceIR's tensor size limit");
      Storage *st;
      // An empty result (batch norm backward's unasked gradients) takes no
      // memory: in a planned run it points into the arena too.
      if (state.arena && (res.arenaOffset >= 0 || *nbytes == 0)) {
        auto placed = state.placeInArena(
            *nbytes, std::max<int64_t>(res.arenaOffset, 0), instr.op, r);
        if (!placed)
          return placed.takeError();
        st = *placed;
      } else {
        st = state.newStorage(*nbytes, true);
        if (!st)
          return makeError(opWhere(ops[instr.op]) + ": " +
                           cannotAllocate(*alloc, *nbytes));
      }
      state.slots[res.slot] = denseTensor(st, res.dtype, res.shape);
    }
    if (options.checkFrees && state.arena)
      if (Error err = state.checkOwners(instr))
        return err;
    if (prof && allocated)
      counter(beginNs);
    int64_t launchNs = beginNs;
    int64_t liveAtLaunch = state.live;
    int32_t deviceBegin = -1;
    if (timer) {
      launchNs = profileClockNs();
      deviceBegin = static_cast<int32_t>(timer->record());
    }
    // Kernels allocate through the context; a host container a kernel
    // grows itself may still throw, and that too is the op's error.
    try {
      if (fused) {
        // The in-place activation is in its input already: its result
        // is that input, as the op's own kernel would leave it.
        ctx.result(0) = ctx.tensor(0);
        ctx.ranTier(KernelTier::Fused);
      } else {
        instr.fn(ctx);
      }
    } catch (const std::bad_alloc &) {
      ctx.fail("out of host memory (std::bad_alloc)");
    }
    if (timer)
      timer->record();
    for (auto &[p, n] : ctx.scratchBlocks)
      alloc->deallocate(p, n);
    ctx.scratchBlocks.clear();
    if (state.arena &&
        state.callScratch > arenaScratchSlots[state.call].bytes &&
        !ctx.failed())
      state.placeScratch();
    state.callScratch = state.scratchUsed = 0;
    epilogueApplied = ctx.epilogueApplied && instr.epilogue.clamp;
    if (prof) {
      int64_t endNs = profileClockNs();
      prof->ops.push_back(
          {instr.op, beginNs, endNs, launchNs, deviceBegin, ctx.tier});
      // A view-or-copy kernel that had to copy allocated inside the call.
      if (state.live != liveAtLaunch)
        counter(endNs);
    }
    if (ctx.failed()) {
      // An error an earlier kernel recorded on the device came first (and
      // may be why this call failed: its data was left unwritten). Waiting
      // for the device costs nothing next to a failed run. Where the record
      // cannot be read (a kernel faulted), the call's own error, naming its
      // op, says more.
      DeviceErrorRecord r;
      if (!alloc->readErrorRecord(r) && r.code != 0)
        return makeError(recordedErrorText(r));
      return makeError(opWhere(ops[instr.op]) + ": " + ctx.error);
    }
    // View results share a storage; copies a view-or-copy op had to make
    // are tied to its input's storage by the kernel.
  }

  // The one wait for the errors the device's kernels recorded (none on the
  // CPU, whose kernels failed their calls at once): before any output is
  // handed over.
  if (Error err = recordedDeviceError())
    return err;
  for (size_t i = 0; i < outputSlots.size(); ++i) {
    const Tensor &t = state.slots[outputSlots[i]];
    if (!t.storage || t.storage->freed)
      return makeError("output #" + strCat(i) +
                       " was freed before the graph returned");
    if (Error err = sink(i, t))
      return err;
  }

  report.device = dev;
  report.peakBytes = state.peak;
  report.liveBytesAtEnd = state.live;
  report.allocatedPeakBytes = alloc->peakAllocatedBytes();
  report.numFrees = state.numFrees;
  report.plannedArenaBytes = arenaBytes;
  report.arenaScratchBytes =
      state.arena
          ? state.arenaAllocated - std::min(arenaBytes, state.arenaAllocated)
          : 0;
  report.lowerBoundBytes = state.arenaPeak;
  report.allocations = state.allocations;
  report.arenaAllocations = state.arenaAllocations;
  // The outputs' storages the run allocated apart, each once.
  std::vector<const Storage *> outputStorages;
  for (int32_t slot : outputSlots) {
    const Storage *st = state.slots[slot].storage;
    if (st->ownedByRun && !st->inArena &&
        std::find(outputStorages.begin(), outputStorages.end(), st) ==
            outputStorages.end())
      outputStorages.push_back(st);
  }
  report.outputAllocations = outputStorages.size();
  if (state.placedScratch)
    releaseCache.alloc = alloc.get();
  return Error::success();
}

Error Executable::copyOutToHost(const Tensor &t, void *dst,
                                const std::string &what) {
  int64_t nbytes = t.nbytes();
  if (t.isContiguous()) {
    alloc->copyToHost(dst, t.bytes(), nbytes);
    return Error::success();
  }
  // Gather on the device first, then copy the contiguous result.
  Storage tmp;
  tmp.nbytes = nbytes;
  tmp.device = dev;
  tmp.data = alloc->allocate(nbytes);
  if (!tmp.data)
    return makeError(cannotAllocate(*alloc, nbytes) + " gathering " + what);
  Tensor dense = denseTensor(&tmp, t.dtype, t.shape);
  bool copied = alloc->copyStrided(t, dense);
  if (copied)
    alloc->copyToHost(dst, tmp.data, nbytes);
  alloc->deallocate(tmp.data, nbytes);
  if (!copied)
    return makeError("copying " + what + " on " + dev.str() + " failed");
  return Error::success();
}

const std::vector<bool> &Executable::inputsWritten() {
  std::call_once(inputsWrittenOnce, [&] {
    // Each slot's storage root: a non-fresh result shares its first
    // argument's storage (the rule buildExecutable and loadExecutable check).
    // Program order defines every view before its uses, so one pass does.
    std::vector<int32_t> root(numSlots);
    for (size_t i = 0; i < numSlots; ++i)
      root[i] = static_cast<int32_t>(i);
    std::vector<bool> written(numSlots, false);
    for (const Instr &instr : instrs) {
      if (instr.kind != Instr::Kind::Call)
        continue;
      std::string_view op = ops[instr.op].name;
      for (unsigned i = 0; i < instr.numArgs; ++i) {
        int32_t slot = args[instr.argBegin + i].slot;
        if (slot >= 0 && views::mayWriteOperand(op, i))
          written[root[slot]] = true;
      }
      int32_t first = instr.numArgs ? args[instr.argBegin].slot : -1;
      for (unsigned r = 0; r < instr.numResults; ++r) {
        const ResultRef &res = results[instr.resultBegin + r];
        if (!res.fresh && first >= 0)
          root[res.slot] = root[first];
      }
    }
    for (const ArgSpec &spec : inputSpecs)
      inputsWrittenFlags.push_back(written[spec.slot]);
  });
  return inputsWrittenFlags;
}

Expected<std::vector<HostTensor>> Executable::run(const NamedTensors &inputs,
                                                  const RunOptions &options) {
  InputViews views;
  for (const auto &[name, t] : inputs) {
    InputView &v = views[name];
    v.dtype = t.dtype;
    v.shape = t.shape;
    v.data = t.data.data();
    if (Error err = checkHostTensor("input", name, t))
      return err;
  }
  std::vector<HostTensor> outputs(outputSlots.size());
  Error err = execute(views, options, [&](size_t i, const Tensor &t) -> Error {
    HostTensor &h = outputs[i];
    h.dtype = t.dtype;
    h.shape = t.shape;
    std::string what = "output #" + strCat(i);
    if (Error err = allocateHostData(h, t.nbytes(), what))
      return err;
    return copyOutToHost(t, h.data.data(), what);
  });
  if (err)
    return err;
  return outputs;
}

Expected<std::vector<OutputBuffer>>
Executable::runViews(const InputViews &inputs, const RunOptions &options,
                     bool outputsOnDevice) {
  std::vector<OutputBuffer> outputs(outputSlots.size());
  Device host;
  // A device's outputs come to the host unless asked to stay; the CPU's
  // are on the host already.
  bool toHost = !outputsOnDevice && !(dev == host);
  Error err = execute(inputs, options, [&](size_t i, const Tensor &t) -> Error {
    OutputBuffer &out = outputs[i];
    out.dtype = t.dtype;
    out.shape = t.shape;
    out.device = toHost ? host : dev;
    int64_t nbytes = t.nbytes();
    std::string what = "output #" + strCat(i);
    // Exported memory is outside any allocator's counts: one CPU allocator
    // serves every executable's host outputs.
    static const std::unique_ptr<Allocator> hostMemory = createCPUAllocator();
    auto exported = [&]() -> Error {
      out.data = (toHost ? hostMemory : alloc)
                     ->allocateExported(static_cast<size_t>(nbytes));
      if (!out.data)
        return makeError("cannot allocate " + strCat(nbytes) + " bytes on " +
                         out.device.str() + " for " + what);
      return Error::success();
    };
    if (toHost) {
      if (Error err = exported())
        return err;
      return copyOutToHost(t, out.data.get(), what);
    }
    // A dense storage of the run's own goes out as it is; the first output
    // takes it and any other output over it is copied from it.
    Storage *own = t.storage;
    if (own->ownedByRun && !own->persistent && !own->borrowed &&
        !own->released && t.offset == 0 && own->nbytes == nbytes &&
        t.isContiguous()) {
      out.data = alloc->adopt(own->data, static_cast<size_t>(own->nbytes));
      if (out.data) {
        own->released = true;
        return Error::success();
      }
    }
    // On the executable's own device (the CPU's is the host): one copy,
    // which also gathers a strided output.
    if (Error err = exported())
      return err;
    Storage st;
    st.data = out.data.get();
    st.nbytes = nbytes;
    st.device = dev;
    Tensor dense = denseTensor(&st, t.dtype, t.shape);
    if (!alloc->copyStrided(t, dense))
      return makeError("copying " + what + " on " + dev.str() + " failed");
    return Error::success();
  });
  if (err)
    return err;
  // Kernels and copies may still be queued: the caller reads the outputs on
  // a stream of its own.
  if (outputsOnDevice && !(dev == host))
    if (Error err = alloc->synchronize())
      return err;
  return outputs;
}

Expected<std::unique_ptr<Executable>> Executable::create(Device device,
                                                         bool withAllocator) {
  static std::atomic<uint64_t> nextUid{1};
  auto exe = std::make_unique<Executable>();
  exe->dev = device;
  exe->uid = nextUid++;
  if (!withAllocator) {
    // Saved, never run.
  } else if (device.kind == Device::Kind::CPU) {
    exe->alloc = createCPUAllocator();
  } else {
    auto alloc = createCUDAAllocator(device.index);
    if (!alloc)
      return alloc.takeError();
    exe->alloc = std::move(*alloc);
  }
  return exe;
}

std::string MemoryReport::toJSON() const {
  return formatString(
      "{\"devices\": [{\"device\": \"%s\", \"peak_bytes\": %lld, "
      "\"predicted_peak_bytes\": %lld, \"prediction_is_lower_bound\": %s, "
      "\"allocated_peak_bytes\": %lld, \"live_bytes_at_end\": %lld, "
      "\"frees\": %lld, \"planned_arena_bytes\": %lld, "
      "\"arena_scratch_bytes\": %lld, \"lower_bound_bytes\": %lld, "
      "\"allocations\": %lld, \"arena_allocations\": %lld, "
      "\"output_allocations\": %lld}]}",
      device.str().c_str(), (long long)peakBytes, (long long)predictedPeakBytes,
      predictionIsLowerBound ? "true" : "false", (long long)allocatedPeakBytes,
      (long long)liveBytesAtEnd, (long long)numFrees,
      (long long)plannedArenaBytes, (long long)arenaScratchBytes,
      (long long)lowerBoundBytes, (long long)allocations,
      (long long)arenaAllocations, (long long)outputAllocations);
}

std::string MemoryReport::toText() const {
  std::string s = formatString(
      "memory on %s: peak %lld bytes measured, %lld bytes predicted%s "
      "(%s); allocator peak %lld bytes; %lld bytes live at the end (outputs); "
      "%lld frees; %lld allocator calls (%lld for outputs)",
      device.str().c_str(), (long long)peakBytes, (long long)predictedPeakBytes,
      predictionIsLowerBound ? " (lower bound)" : "",
      peakBytes == predictedPeakBytes ? "equal" : "DIFFERENT",
      (long long)allocatedPeakBytes, (long long)liveBytesAtEnd,
      (long long)numFrees, (long long)allocations,
      (long long)outputAllocations);
  if (arenaAllocations)
    s +=
        formatString("; planned arena %lld bytes (bound %lld) + %lld bytes "
                     "of scratch, in %lld allocation",
                     (long long)plannedArenaBytes, (long long)lowerBoundBytes,
                     (long long)arenaScratchBytes, (long long)arenaAllocations);
  return s;
}
