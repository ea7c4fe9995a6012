//===- Tensor.cpp - Runtime tensors, storages and devices -----------------===//

#include "TraceIR/Runtime/Tensor.h"
#include "TraceIR/Runtime/Allocator.h"
#include "TraceIR/Runtime/BlockCache.h"
#include "TraceIR/Runtime/CPU/Kernels.h"
#include "TraceIR/Runtime/CPU/Parallel.h"
#include "TraceIR/Runtime/HostTensor.h"
#include "TraceIR/Support/CheckedMath.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

using namespace traceir;

size_t traceir::dtypeSize(DType dtype) {
  switch (dtype) {
  case DType::F64:
  case DType::I64:
    return 8;
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::F16:
  case DType::BF16:
  case DType::I16:
    return 2;
  case DType::I8:
  case DType::U8:
  case DType::Bool:
    return 1;
  }
  return 1;
}

const char *traceir::dtypeName(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "f32";
  case DType::F64:
    return "f64";
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  case DType::I64:
    return "i64";
  case DType::I32:
    return "i32";
  case DType::I16:
    return "i16";
  case DType::I8:
    return "i8";
  case DType::U8:
    return "u8";
  case DType::Bool:
    return "bool";
  }
  return "?";
}

const char *traceir::dtypeSafetensorsName(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "F32";
  case DType::F64:
    return "F64";
  case DType::F16:
    return "F16";
  case DType::BF16:
    return "BF16";
  case DType::I64:
    return "I64";
  case DType::I32:
    return "I32";
  case DType::I16:
    return "I16";
  case DType::I8:
    return "I8";
  case DType::U8:
    return "U8";
  case DType::Bool:
    return "BOOL";
  }
  return "?";
}

std::optional<DType> traceir::dtypeFromSafetensors(std::string_view name) {
  // The inverse of dtypeSafetensorsName, with std::string_view alone: the
  // safetensors reader's core is free of LLVM.
  for (DType d : {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I64,
                  DType::I32, DType::I16, DType::I8, DType::U8, DType::Bool})
    if (std::string_view(dtypeSafetensorsName(d)) == name)
      return d;
  return std::nullopt;
}

std::optional<Device> Device::parse(std::string_view text) {
  if (text == "cpu")
    return Device{Kind::CPU, 0};
  if (text == "cuda")
    return Device{Kind::CUDA, 0};
  constexpr std::string_view prefix = "cuda:";
  if (text.starts_with(prefix)) {
    text.remove_prefix(prefix.size());
    // A decimal index, as LLVM's getAsInteger read it: digits only, no
    // sign, no overflow.
    if (text.empty() || text.size() > 9)
      return std::nullopt;
    int index = 0;
    for (char c : text) {
      if (c < '0' || c > '9')
        return std::nullopt;
      index = index * 10 + (c - '0');
    }
    return Device{Kind::CUDA, index};
  }
  return std::nullopt;
}

std::string Device::str() const {
  return kind == Kind::CPU ? "cpu" : "cuda:" + std::to_string(index);
}

/// Every runtime shape comes from a verified type (the verifier bounds
/// tensor sizes, see CheckedMath.h) or from a view the view kernels checked
/// against its storage, so this never fails; a broken invariant stops here
/// instead of wrapping into a small size and reading out of bounds.
static int64_t numelOf(std::span<const int64_t> shape) {
  std::optional<int64_t> n = checkedNumel(shape);
  if (!n)
    fatalError("runtime tensor shape " + shapeToString(shape) +
               " overflows int64; it should not have verified");
  return *n;
}

int64_t Tensor::numel() const { return numelOf(shape); }

int64_t Tensor::nbytes() const {
  std::optional<int64_t> n = checkedMul(numel(), dtypeSize(dtype));
  if (!n)
    fatalError("runtime tensor bytes overflow int64");
  return *n;
}

bool Tensor::isContiguous() const {
  Shape expected;
  if (!checkedContiguousStrides(shape, expected))
    return false;
  for (int64_t i = 0; i < rank(); ++i)
    if (shape[i] != 1 && strides[i] != expected[i])
      return false;
  return true;
}

Shape Tensor::contiguousStrides(std::span<const int64_t> shape) {
  Shape strides;
  if (!checkedContiguousStrides(shape, strides))
    numelOf(shape); // reports the shape
  return strides;
}

bool traceir::broadcastsTo(std::span<const int64_t> from,
                           std::span<const int64_t> to) {
  if (from.size() > to.size())
    return false;
  size_t off = to.size() - from.size();
  for (size_t d = 0; d < from.size(); ++d)
    if (from[d] != 1 && from[d] != to[off + d])
      return false;
  return true;
}

std::string traceir::shapeToString(std::span<const int64_t> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

int64_t HostTensor::numel() const { return numelOf(shape); }

Error traceir::allocateHostData(HostTensor &t, int64_t nbytes,
                                const std::string &what) {
  try {
    t.data.resize(nbytes);
  } catch (const std::bad_alloc &) {
    return makeError("cannot allocate " + strCat(nbytes) +
                     " bytes on the host for " + what);
  }
  return Error::success();
}

//===----------------------------------------------------------------------===//
// CPU allocator
//===----------------------------------------------------------------------===//

Allocator::~Allocator() = default;

namespace {

/// Blocks handed over to callers (adopt) come back here when the caller's
/// last copy goes, from whatever thread drops it; the allocator takes them
/// into its cache at its next allocation, on the run's thread, so its counts
/// are only ever changed there. Shared with the owners, which may outlive
/// the allocator (then they free their block).
struct ReturnedBlocks {
  std::mutex mutex;
  std::vector<std::pair<void *, size_t>> blocks; // (block, its size)
  size_t bytes = 0;
  /// The most the cache may hold (the allocator's peak): blocks the caller
  /// kept in numbers and frees at once beyond it are freed.
  std::atomic<size_t> cap{0};
  bool closed = false; // the allocator is gone
};

/// memcpy split over the kernels' threads as their elementwise loops split
/// a float tensor of the same bytes: an input the run copies (because an op
/// writes it) then sits in the caches of the threads that go on to work on
/// each part (an in-place op at two threads took 15 us instead of 8 when
/// one thread had copied all of it), and the copy itself runs on them all.
void parallelCopy(void *dst, const void *src, size_t nbytes) {
  if (!nbytes)
    return;
  constexpr int64_t kFloat = sizeof(float);
  cpu::parallelFor(static_cast<int64_t>(nbytes), cpu::grainSize() * kFloat,
                   [&](int64_t b, int64_t e) {
                     std::memcpy(static_cast<char *>(dst) + b,
                                 static_cast<const char *>(src) + b,
                                 static_cast<size_t>(e - b));
                   });
}

class CPUAllocator final : public Allocator {
public:
  static constexpr size_t kAlign = 64;
  /// Blocks below this come and go through malloc's own bins, which reuse
  /// them already; large blocks come from mmap or the top of the heap,
  /// which glibc unmaps or trims on free depending on its history (a
  /// 6.4 MB result page-faulted on all of its 1568 pages on every call in
  /// one process and on none in another): kept here, a run's second call
  /// reuses warm memory, as PyTorch's caching allocators do.
  static constexpr size_t kMinCached = size_t(64) << 10;
  static size_t rounded(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

  CPUAllocator() : returned(std::make_shared<ReturnedBlocks>()) {}
  ~CPUAllocator() override {
    releaseCache();
    std::lock_guard<std::mutex> lock(returned->mutex);
    returned->closed = true;
    for (auto &[p, size] : returned->blocks)
      std::free(p);
    returned->blocks.clear();
  }

  void *allocate(size_t nbytes) override {
    limitHit = false;
    if (nbytes > SIZE_MAX - kAlign)
      return nullptr; // rounding would wrap
    size_t size = rounded(std::max<size_t>(nbytes, 1));
    const bool cacheable = kCacheHostBlocks && size >= kMinCached;
    if (cacheable) {
      takeReturned();
      if (void *p = cache.take(size))
        return p;
    }
    if (!fitsLimitReleasingCache(size))
      return nullptr;
    void *p = std::aligned_alloc(kAlign, size);
    if (!p && !cache.empty()) {
      releaseCache(); // retry once with the cache returned to the system
      p = std::aligned_alloc(kAlign, size);
    }
    if (!p)
      return nullptr;
    if (cacheable)
      blockSize[p] = size;
    noteAllocated(size);
    return p;
  }
  void deallocate(void *ptr, size_t nbytes) override {
    if (!ptr)
      return;
    auto it = blockSize.find(ptr);
    if (it != blockSize.end()) {
      cache.put(ptr, it->second); // still counted: held from the system
      noteCap();
      return;
    }
    std::free(ptr);
    noteAllocated(-static_cast<int64_t>(rounded(std::max<size_t>(nbytes, 1))));
  }
  void releaseCache() override {
    takeReturned();
    cache.drain([this](void *p, size_t size) {
      blockSize.erase(p);
      std::free(p);
      noteAllocated(-static_cast<int64_t>(size));
    });
  }
  Device device() const override { return Device{}; }
  void copyFromHost(void *dst, const void *src, size_t nbytes) override {
    parallelCopy(dst, src, nbytes);
  }
  void copyToHost(void *dst, const void *src, size_t nbytes) override {
    parallelCopy(dst, src, nbytes);
  }
  void poison(void *ptr, size_t nbytes) override {
    std::memset(ptr, 0xFF, nbytes);
  }
  bool copyStrided(const Tensor &src, Tensor &dst) override {
    cpu::copyTensor(src, dst);
    return true;
  }
  std::shared_ptr<void> allocateExported(size_t nbytes) override {
    if (nbytes > SIZE_MAX - kAlign)
      return nullptr;
    void *p = std::aligned_alloc(kAlign, rounded(std::max<size_t>(nbytes, 1)));
    if (!p)
      return nullptr;
    return std::shared_ptr<void>(p, [](void *q) { std::free(q); });
  }
  std::shared_ptr<void> adopt(void *ptr, size_t nbytes) override {
    // The owner is made before it owns anything: shared_ptr's constructor
    // with a deleter frees the pointer when its control block cannot be
    // allocated, and then the run would free it again.
    struct Owner {
      void *p = nullptr;
      size_t size = 0;                      // a cacheable block's size
      std::shared_ptr<ReturnedBlocks> back; // where it returns
      ~Owner() {
        if (back) {
          std::lock_guard<std::mutex> lock(back->mutex);
          if (!back->closed && back->bytes + size <= back->cap.load()) {
            back->blocks.emplace_back(p, size);
            back->bytes += size;
            return;
          }
        }
        std::free(p);
      }
    };
    std::shared_ptr<Owner> owner;
    try {
      owner = std::make_shared<Owner>();
    } catch (const std::bad_alloc &) {
      return nullptr;
    }
    owner->p = ptr;
    // What the block counts for: a cached block taken for a smaller request
    // counts at its own size.
    size_t counted = rounded(std::max<size_t>(nbytes, 1));
    auto it = blockSize.find(ptr);
    if (it != blockSize.end()) {
      counted = owner->size = it->second;
      owner->back = returned;
      blockSize.erase(it);
    }
    noteAllocated(-static_cast<int64_t>(counted));
    noteCap();
    return std::shared_ptr<void>(owner, ptr);
  }

private:
  /// Takes the blocks callers returned into the cache, counted again.
  void takeReturned() {
    std::vector<std::pair<void *, size_t>> blocks;
    {
      std::lock_guard<std::mutex> lock(returned->mutex);
      if (returned->blocks.empty())
        return;
      blocks.swap(returned->blocks);
      returned->bytes = 0;
    }
    for (auto &[p, size] : blocks) {
      blockSize[p] = size;
      cache.put(p, size);
      noteAllocated(static_cast<int64_t>(size));
    }
    noteCap();
  }
  /// Returned blocks may fill the cache up to the most this allocator ever
  /// held (sampled here: runs reset the peak).
  void noteCap() {
    everPeak = std::max(everPeak, static_cast<size_t>(peakAllocatedBytes()));
    returned->cap.store(everPeak > cache.bytes() ? everPeak - cache.bytes()
                                                 : 0);
  }

  BlockCache cache;                             // free blocks
  std::unordered_map<void *, size_t> blockSize; // every cacheable block
  size_t everPeak = 0;
  std::shared_ptr<ReturnedBlocks> returned;
};
} // namespace

std::unique_ptr<Allocator> traceir::createCPUAllocator() {
  return std::make_unique<CPUAllocator>();
}

bool traceir::isFloatingDType(DType dtype) {
  return dtype == DType::F32 || dtype == DType::F64 || dtype == DType::F16 ||
         dtype == DType::BF16;
}
