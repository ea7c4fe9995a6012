//===- SafeTensors.cpp - safetensors reading and writing ------------------===//
//
// The format (huggingface/safetensors): an 8-byte little-endian header
// length N, N bytes of JSON mapping names to {dtype, shape, data_offsets}
// (plus an optional "__metadata__" of strings), then the data. The JSON is
// parsed with LLVM's JSON library.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/HostTensor.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>

using namespace traceir;

static llvm::Error fileError(llvm::StringRef path, const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 path + ": " + msg);
}

llvm::Expected<NamedTensors> traceir::readSafetensors(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return fileError(path, "cannot read: " + buffer.getError().message());
  llvm::StringRef bytes = (*buffer)->getBuffer();
  if (bytes.size() < 8)
    return fileError(path, "not a safetensors file: shorter than its 8-byte "
                           "header length");
  uint64_t headerLen = 0;
  for (int i = 7; i >= 0; --i)
    headerLen = headerLen << 8 | static_cast<uint8_t>(bytes[i]);
  if (headerLen > bytes.size() - 8)
    return fileError(path, "header length " + llvm::Twine(headerLen) +
                               " runs past the end of the " +
                               llvm::Twine(bytes.size()) + "-byte file");
  llvm::StringRef header = bytes.substr(8, headerLen);
  llvm::StringRef data = bytes.substr(8 + headerLen);
  llvm::Expected<llvm::json::Value> json = llvm::json::parse(header);
  if (!json)
    return fileError(path, "invalid JSON header: " +
                               llvm::toString(json.takeError()));
  const llvm::json::Object *obj = json->getAsObject();
  if (!obj)
    return fileError(path, "the header is not a JSON object");

  NamedTensors out;
  for (const auto &[key, value] : *obj) {
    std::string name = key.str();
    if (name == "__metadata__")
      continue;
    auto bad = [&](const llvm::Twine &msg) {
      return fileError(path, "tensor '" + name + "': " + msg);
    };
    const llvm::json::Object *entry = value.getAsObject();
    if (!entry)
      return bad("entry is not an object");
    std::optional<llvm::StringRef> dtypeName = entry->getString("dtype");
    if (!dtypeName)
      return bad("missing \"dtype\"");
    std::optional<DType> dtype = dtypeFromSafetensors(*dtypeName);
    if (!dtype)
      return bad("unsupported dtype \"" + *dtypeName + "\"");
    const llvm::json::Array *shape = entry->getArray("shape");
    const llvm::json::Array *offsets = entry->getArray("data_offsets");
    if (!shape || !offsets || offsets->size() != 2)
      return bad("needs \"shape\" and a two-element \"data_offsets\"");
    HostTensor t;
    t.dtype = *dtype;
    uint64_t numel = 1;
    for (const llvm::json::Value &d : *shape) {
      std::optional<int64_t> v = d.getAsInteger();
      if (!v || *v < 0)
        return bad("shape entries must be non-negative integers");
      t.shape.push_back(*v);
      if (*v != 0 && numel > UINT64_MAX / static_cast<uint64_t>(*v))
        return bad("shape is too large");
      numel *= *v;
    }
    std::optional<int64_t> begin = (*offsets)[0].getAsInteger();
    std::optional<int64_t> end = (*offsets)[1].getAsInteger();
    if (!begin || !end || *begin < 0 || *end < *begin ||
        static_cast<uint64_t>(*end) > data.size())
      return bad("data_offsets [" + llvm::Twine(begin.value_or(-1)) + ", " +
                 llvm::Twine(end.value_or(-1)) + "] are outside the " +
                 llvm::Twine(data.size()) + "-byte data section");
    uint64_t nbytes = *end - *begin;
    if (numel > UINT64_MAX / dtypeSize(t.dtype) ||
        nbytes != numel * dtypeSize(t.dtype))
      return bad("data_offsets span " + llvm::Twine(nbytes) +
                 " bytes but shape " + shapeToString(t.shape) + " of " +
                 dtypeSafetensorsName(t.dtype) + " needs " +
                 llvm::Twine(numel * dtypeSize(t.dtype)));
    t.data.assign(data.begin() + *begin, data.begin() + *end);
    out.emplace(std::move(name), std::move(t));
  }
  return out;
}

llvm::Error traceir::writeSafetensors(llvm::StringRef path,
                                      const NamedTensors &tensors) {
  llvm::json::Object header;
  uint64_t offset = 0;
  for (const auto &[name, t] : tensors) {
    llvm::json::Array shape;
    for (int64_t d : t.shape)
      shape.push_back(d);
    header[name] = llvm::json::Object{
        {"dtype", dtypeSafetensorsName(t.dtype)},
        {"shape", std::move(shape)},
        {"data_offsets", llvm::json::Array{offset, offset + t.data.size()}}};
    offset += t.data.size();
  }
  std::string json;
  llvm::raw_string_ostream(json) << llvm::json::Value(std::move(header));
  // Pad the header with spaces to 8 bytes, as the reference writer does, so
  // the data section stays aligned.
  json.append((8 - json.size() % 8) % 8, ' ');

  llvm::SmallString<128> tmp;
  int fd;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueFile(path + ".tmp-%%%%%%", fd, tmp))
    return fileError(path, "cannot create a temporary file: " + ec.message());
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    uint64_t len = json.size();
    for (int i = 0; i < 8; ++i)
      os << static_cast<char>((len >> (8 * i)) & 0xff);
    os << json;
    for (const auto &entry : tensors)
      os.write(entry.second.data.data(), entry.second.data.size());
    os.close();
    if (os.has_error()) {
      std::string msg = os.error().message();
      os.clear_error();
      llvm::sys::fs::remove(tmp);
      return fileError(path, "write failed: " + msg);
    }
  }
  if (std::error_code ec = llvm::sys::fs::rename(tmp, path)) {
    llvm::sys::fs::remove(tmp);
    return fileError(path, "cannot move the finished file into place: " +
                               ec.message());
  }
  return llvm::Error::success();
}
