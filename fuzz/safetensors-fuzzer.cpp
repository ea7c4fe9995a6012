//===- safetensors-fuzzer.cpp - libFuzzer harness for the reader ----------===//
//
// Feeds arbitrary bytes to readSafetensorsBuffer, which touches no file.
// For an accepted input it reads every byte of every tensor (so ASan sees
// any span outside the input) and checks that the writer's in-memory form
// reads back to the same tensors: what the reader accepts, the writer can
// write, and the two agree.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/HostTensor.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>

using namespace traceir;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char *>(data), size);
  Expected<NamedTensors> tensors = readSafetensorsBuffer(bytes, "fuzz");
  if (!tensors) {
    (void)tensors.takeError();
    return 0;
  }
  // The tensors tile the data section, so they cannot hold more bytes than
  // the input; a sum over every byte makes ASan check each one.
  unsigned sum = 0;
  size_t total = 0;
  for (const auto &[name, t] : *tensors) {
    if (static_cast<size_t>(t.numel()) * dtypeSize(t.dtype) != t.data.size())
      std::abort();
    for (char c : t.data)
      sum += static_cast<unsigned char>(c);
    total += t.data.size();
  }
  if (total > size)
    std::abort();

  Expected<std::string> written = serializeSafetensors(*tensors);
  if (!written) // whatever the reader accepts, the writer must write
    std::abort();
  Expected<NamedTensors> back = readSafetensorsBuffer(*written, "again");
  if (!back)
    std::abort();
  if (back->size() != tensors->size())
    std::abort();
  for (const auto &[name, t] : *tensors) {
    auto it = back->find(name);
    if (it == back->end() || it->second.dtype != t.dtype ||
        it->second.shape != t.shape || it->second.data != t.data)
      std::abort();
  }
  // Written twice, the same bytes: the layout depends on the tensors alone.
  Expected<std::string> again = serializeSafetensors(*back);
  if (!again || *again != *written)
    std::abort();
  // An empty asm that takes the sum keeps the reads above from being
  // optimized away.
  asm volatile("" : : "r"(sum));
  return 0;
}
