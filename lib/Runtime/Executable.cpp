//===- Executable.cpp - Running the flat instruction list -----------------===//

#include "TraceIR/Runtime/Executable.h"
#include "TraceIR/Runtime/CPU/Kernels.h"
#include "TraceIR/Runtime/Profiler.h"
#include "TraceIR/Support/CheckedMath.h"

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

/// Checks a bound tensor against the graph's declared type.
static Error checkBinding(const std::string &what, const std::string &name,
                          const HostTensor &t,
                          const Executable::ArgSpec &spec) {
  if (t.dtype != spec.dtype || t.shape != spec.shape)
    return makeError(what + " '" + name + "' is " + dtypeName(t.dtype) +
                     shapeToString(t.shape) + " but the graph expects " +
                     dtypeName(spec.dtype) + shapeToString(spec.shape));
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
    Tensor view;
    view.storage = st.get();
    view.dtype = t.dtype;
    view.shape = t.shape;
    view.strides = Tensor::contiguousStrides(t.shape);
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
    if (Error err = checkBinding("parameter", spec.name, it->second, spec))
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

void *KernelContext::scratch(size_t nbytes) {
  void *p = exe->alloc->allocate(nbytes);
  if (!p) {
    fail(cannotAllocate(*exe->alloc, nbytes) + " (kernel scratch)");
    return nullptr;
  }
  scratchBlocks.push_back({p, nbytes});
  return p;
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

namespace {
/// Everything one run owns; the destructor returns all memory, so an error
/// anywhere leaves nothing allocated.
struct RunState {
  Executable &exe;
  Allocator &alloc;
  std::deque<Storage> storages;
  std::vector<Tensor> slots;
  int64_t live = 0, peak = 0, numFrees = 0;

  RunState(Executable &exe) : exe(exe), alloc(*exe.alloc) {}
  ~RunState() {
    for (Storage &st : storages)
      release(st);
  }
  void release(Storage &st) {
    if (!st.released && st.data)
      alloc.deallocate(st.data, st.nbytes);
    st.released = true;
  }
  Storage *newStorage(int64_t nbytes, bool ownedByRun) {
    storages.emplace_back();
    Storage &st = storages.back();
    st.nbytes = nbytes;
    st.device = exe.dev;
    st.ownedByRun = ownedByRun;
    st.data = alloc.allocate(nbytes);
    if (!st.data)
      return nullptr;
    if (ownedByRun) {
      live += nbytes;
      peak = std::max(peak, live);
    }
    return &st;
  }
};

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

namespace {
std::string opWhere(const OpInfoRT &op) {
  std::string s = "op '" + op.name + "'";
  if (!op.location.empty())
    s += " at " + op.location;
  return s;
}
} // namespace

Expected<std::vector<HostTensor>>
Executable::run(const NamedTensors &inputTensors, const RunOptions &options) {
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
    if (Error err = checkBinding("input", spec.name, it->second, spec))
      return err;
    Storage *st =
        state.newStorage(it->second.data.size(), /*ownedByRun=*/false);
    if (!st)
      return makeError(cannotAllocate(*alloc, it->second.data.size()) +
                       " for input '" + spec.name + "'");
    alloc->copyFromHost(st->data, it->second.data.data(), st->nbytes);
    Tensor &slot = state.slots[spec.slot];
    slot.storage = st;
    slot.dtype = spec.dtype;
    slot.shape = spec.shape;
    slot.strides = Tensor::contiguousStrides(spec.shape);
  }

  KernelContext ctx;
  ctx.exe = this;
  ctx.runState = &state;
  ctx.slots = &state.slots;
  ctx.seed = options.seed;
  alloc->resetPeak();
  if (prof)
    prof->counters.push_back(
        {profileClockNs(), state.live, alloc->allocatedBytes()});

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
        if (options.checkFrees)
          alloc->poison(s->data, s->nbytes); // released at the end
        else
          state.release(*s);
      }
      ++state.numFrees;
      if (prof) {
        int64_t now = profileClockNs();
        prof->frees.push_back({instr.op, now, freedBytes});
        prof->counters.push_back({now, state.live, alloc->allocatedBytes()});
      }
      continue;
    }
    int64_t beginNs = prof ? profileClockNs() : 0;
    ctx.instr = &instr;
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
      Storage *st = state.newStorage(*nbytes, true);
      if (!st)
        return makeError(opWhere(ops[instr.op]) + ": " +
                         cannotAllocate(*alloc, *nbytes));
      Tensor &t = state.slots[res.slot];
      t.storage = st;
      t.dtype = res.dtype;
      t.shape = res.shape;
      t.strides = Tensor::contiguousStrides(res.shape);
      t.offset = 0;
    }
    if (prof && allocated)
      prof->counters.push_back({beginNs, state.live, alloc->allocatedBytes()});
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
      instr.fn(ctx);
    } catch (const std::bad_alloc &) {
      ctx.fail("out of host memory (std::bad_alloc)");
    }
    if (timer)
      timer->record();
    for (auto &[p, n] : ctx.scratchBlocks)
      alloc->deallocate(p, n);
    ctx.scratchBlocks.clear();
    if (prof) {
      int64_t endNs = profileClockNs();
      prof->ops.push_back({instr.op, beginNs, endNs, launchNs, deviceBegin});
      // A view-or-copy kernel that had to copy allocated inside the call.
      if (state.live != liveAtLaunch)
        prof->counters.push_back({endNs, state.live, alloc->allocatedBytes()});
    }
    if (ctx.failed())
      return makeError(opWhere(ops[instr.op]) + ": " + ctx.error);
    // View results share a storage; copies a view-or-copy op had to make
    // are tied to its input's storage by the kernel.
  }

  std::vector<HostTensor> outputs;
  outputs.reserve(outputSlots.size());
  for (int32_t slot : outputSlots) {
    const Tensor &t = state.slots[slot];
    if (!t.storage || t.storage->freed)
      return makeError("output #" + strCat(outputs.size()) +
                       " was freed before the graph returned");
    HostTensor h;
    h.dtype = t.dtype;
    h.shape = t.shape;
    if (Error err = allocateHostData(h, t.nbytes(),
                                     "output #" + strCat(outputs.size())))
      return err;
    if (t.isContiguous()) {
      alloc->copyToHost(h.data.data(), t.bytes(), h.data.size());
    } else {
      // Gather on the device first, then copy the contiguous result.
      Storage *tmp = state.newStorage(t.nbytes(), /*ownedByRun=*/false);
      if (!tmp)
        return makeError(cannotAllocate(*alloc, t.nbytes()) +
                         " gathering output #" + strCat(outputs.size()));
      Tensor dense = t;
      dense.storage = tmp;
      dense.offset = 0;
      dense.strides = Tensor::contiguousStrides(t.shape);
      if (!alloc->copyStrided(t, dense))
        return makeError("copying an output on " + dev.str() + " failed");
      alloc->copyToHost(h.data.data(), tmp->data, h.data.size());
    }
    outputs.push_back(std::move(h));
  }

  report.device = dev;
  report.peakBytes = state.peak;
  report.liveBytesAtEnd = state.live;
  report.allocatedPeakBytes = alloc->peakAllocatedBytes();
  report.numFrees = state.numFrees;
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
      "\"frees\": %lld}]}",
      device.str().c_str(), (long long)peakBytes, (long long)predictedPeakBytes,
      predictionIsLowerBound ? "true" : "false", (long long)allocatedPeakBytes,
      (long long)liveBytesAtEnd, (long long)numFrees);
}

std::string MemoryReport::toText() const {
  return formatString(
      "memory on %s: peak %lld bytes measured, %lld bytes predicted%s "
      "(%s); allocator peak %lld bytes; %lld bytes live at the end (outputs); "
      "%lld frees",
      device.str().c_str(), (long long)peakBytes, (long long)predictedPeakBytes,
      predictionIsLowerBound ? " (lower bound)" : "",
      peakBytes == predictedPeakBytes ? "equal" : "DIFFERENT",
      (long long)allocatedPeakBytes, (long long)liveBytesAtEnd,
      (long long)numFrees);
}
