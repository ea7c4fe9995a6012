//===- BlockCache.h - Freed blocks kept by size -----------------*- C++ -*-===//
//
// The CPU and CUDA allocators keep freed blocks for reuse (Allocator.h):
// both hand out a cached block of the size asked for or up to twice it,
// and give them all back at once. Not thread-safe: each allocator calls it
// from the thread that runs.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_RUNTIME_BLOCKCACHE_H
#define TRACEIR_RUNTIME_BLOCKCACHE_H

#include <cstddef>
#include <map>

namespace traceir {

/// Whether the CPU allocator keeps freed host blocks for reuse. Not under
/// AddressSanitizer: a block kept is never freed, so ASan would no longer
/// see a kernel that reads a storage after its free.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kCacheHostBlocks = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kCacheHostBlocks = false;
#else
constexpr bool kCacheHostBlocks = true;
#endif
#else
constexpr bool kCacheHostBlocks = true;
#endif

class BlockCache {
public:
  /// A cached block of at least `size` bytes and at most twice that (so
  /// little is wasted), taken out of the cache; null if there is none.
  void *take(size_t size) {
    auto it = blocks.lower_bound(size);
    if (it == blocks.end() || it->first > 2 * size)
      return nullptr;
    void *p = it->second;
    total -= it->first;
    blocks.erase(it);
    return p;
  }
  void put(void *p, size_t size) {
    blocks.emplace(size, p);
    total += size;
  }
  /// Empties the cache, calling release(p, size) for each block.
  template <typename F> void drain(F release) {
    for (auto &[size, p] : blocks)
      release(p, size);
    blocks.clear();
    total = 0;
  }
  bool empty() const { return blocks.empty(); }
  /// The bytes of the blocks cached.
  size_t bytes() const { return total; }

private:
  std::multimap<size_t, void *> blocks;
  size_t total = 0;
};

} // namespace traceir

#endif // TRACEIR_RUNTIME_BLOCKCACHE_H
