//===- SafeTensors.cpp - safetensors reading and writing ------------------===//
//
// The format (huggingface/safetensors): an 8-byte little-endian header
// length N, N bytes of JSON (an object, starting with '{', padded with
// trailing spaces) mapping names to {dtype, shape, data_offsets} plus an
// optional "__metadata__" of strings, then the data section, which the
// tensors tile exactly: sorted by offset, each starts where the previous
// ends, the first at 0 and the last at the end of the file.
//
// The reader rejects what the reference reader (safetensors/src/tensor.rs)
// rejects, so a wrong header length cannot shift every value by a byte and
// still "work". The parsing core uses the C++ standard library and
// nlohmann's SAX parser only (the runtime is to lose LLVM): a handler checks
// the schema while the JSON streams by, which bounds the nesting depth and
// catches duplicate names (a DOM keeps one of them silently), and the
// parser itself is iterative, so no header can exhaust the stack as deep
// nesting did with llvm::json. The LLVM types are confined to the public
// wrappers at the end of the file.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/Files.h"
#include "TraceIR/Runtime/HostTensor.h"
#include "TraceIR/Support/CheckedMath.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <memory>
#include <new>
#include <random>
#include <set>
#include <string_view>
#include <tuple>

using namespace traceir;

namespace {

/// The reference reader's limit (MAX_HEADER_SIZE): a larger length is more
/// likely garbage than a header, and would make us allocate it.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;
/// {name: {"shape": [...]}} is all the nesting the format has.
constexpr int kMaxDepth = 3;
constexpr uint64_t kLengthBytes = 8;

/// One tensor's header entry, checked.
struct Record {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;
};

std::string nameText(std::string_view s) { return "'" + std::string(s) + "'"; }

std::string shapeText(const std::vector<uint64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

/// The header length from the file's first 8 bytes, checked against the
/// limit and the file size; an error message, or "" on success.
std::string readHeaderLength(const unsigned char *first8, uint64_t fileSize,
                             uint64_t &length) {
  length = 0;
  for (int i = 7; i >= 0; --i)
    length = length << 8 | first8[i];
  if (length > kMaxHeaderBytes)
    return "header length " + std::to_string(length) + " exceeds the " +
           std::to_string(kMaxHeaderBytes) + "-byte limit";
  // fileSize >= 8 here and length <= 1e8, so neither side can wrap.
  if (length > fileSize - kLengthBytes)
    return "header length " + std::to_string(length) +
           " runs past the end of the " + std::to_string(fileSize) +
           "-byte file";
  return "";
}

/// Walks the nlohmann lexer's input and records how far it has read, so
/// the SAX handler can say at which byte an error is: the SAX interface
/// reports positions for syntax errors only.
struct TrackingIterator {
  using iterator_category = std::forward_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char *;
  using reference = const char &;

  const char *p = nullptr;
  const char **furthest = nullptr;

  reference operator*() const { return *p; }
  TrackingIterator &operator++() {
    *furthest = ++p;
    return *this;
  }
  TrackingIterator operator++(int) {
    TrackingIterator old = *this;
    ++*this;
    return old;
  }
  bool operator==(const TrackingIterator &o) const { return p == o.p; }
  bool operator!=(const TrackingIterator &o) const { return p != o.p; }
};

/// Checks the header's schema event by event. Every handler returns false
/// on the first error, which stops the parse; `error` then says why.
class HeaderHandler {
public:
  using json = nlohmann::json;

  HeaderHandler(const char *begin, const char **furthest)
      : begin(begin), furthest(furthest) {}

  std::string error;
  std::vector<Record> records;
  /// Shapes as written, before they are checked to fit int64_t.
  std::vector<std::vector<uint64_t>> rawShapes;
  std::vector<std::string> dtypes;

  bool null() {
    // serde reads a null "__metadata__" as none, and so do we.
    if (where == In::Top && isMetadata)
      return true;
    return scalar("null");
  }
  bool boolean(bool b) { return scalar(b ? "true" : "false"); }
  bool number_integer(json::number_integer_t v) {
    // nlohmann reports non-negative integers as number_unsigned.
    if (where == In::Array)
      return fail(quotedField() + " has the negative entry " +
                  std::to_string(v) + "; " + arrayRule());
    return scalar(std::to_string(v));
  }
  bool number_unsigned(json::number_unsigned_t v) {
    if (where != In::Array)
      return scalar(std::to_string(v));
    if (field_ == Field::Shape) {
      rawShapes.back().push_back(v);
      return true;
    }
    if (++offsetCount > 2)
      return fail(quotedField() + " has more than two entries; it is [begin, "
                                  "end]");
    (offsetCount == 1 ? records.back().begin : records.back().end) = v;
    return true;
  }
  bool number_float(json::number_float_t, const std::string &text) {
    return scalar(text);
  }
  bool string(std::string &s) {
    if (where == In::Metadata)
      return true;
    if (where == In::Entry && field_ == Field::DType) {
      dtypes.back() = s;
      return true;
    }
    return scalar("\"" + s + "\"");
  }
  bool binary(json::binary_t &) { return scalar("binary data"); }

  bool start_object(std::size_t) { return open(/*isObject=*/true); }
  bool start_array(std::size_t) { return open(/*isObject=*/false); }

  bool key(std::string &k) {
    if (where == In::Top) {
      if (!names.insert(k).second)
        return fail(k == "__metadata__"
                        ? std::string("\"__metadata__\" appears twice")
                        : "tensor " + nameText(k) + " is defined twice");
      isMetadata = k == "__metadata__";
      if (!isMetadata) {
        records.push_back(Record{k, DType::F32, {}, 0, 0});
        rawShapes.emplace_back();
        dtypes.emplace_back();
      }
      return true;
    }
    if (where == In::Metadata) {
      if (!metadataKeys.insert(k).second)
        return fail("\"__metadata__\" has the key " + nameText(k) + " twice");
      metadataKey = k;
      return true;
    }
    // In an entry.
    Field f = k == "dtype"          ? Field::DType
              : k == "shape"        ? Field::Shape
              : k == "data_offsets" ? Field::Offsets
                                    : Field::None;
    if (f == Field::None)
      return fail(tensor() + "unknown field \"" + k +
                  "\"; an entry has exactly \"dtype\", \"shape\" and "
                  "\"data_offsets\"");
    unsigned bit = 1u << static_cast<unsigned>(f);
    if (seenFields & bit)
      return fail(tensor() + "field \"" + k + "\" appears twice");
    seenFields |= bit;
    field_ = f;
    return true;
  }

  bool end_object() {
    --depth;
    if (where == In::Metadata) {
      where = In::Top;
      return true;
    }
    if (where == In::Entry) {
      for (auto [f, name] : {std::pair{Field::DType, "dtype"},
                             {Field::Shape, "shape"},
                             {Field::Offsets, "data_offsets"}})
        if (!(seenFields & 1u << static_cast<unsigned>(f)))
          return fail(tensor() + "missing \"" + name + "\"");
      where = In::Top;
      return true;
    }
    where = In::Done;
    return true;
  }
  bool end_array() {
    --depth;
    if (field_ == Field::Offsets && offsetCount != 2)
      return fail(quotedField() + " has " + std::to_string(offsetCount) +
                  " entries; it is [begin, end]");
    where = In::Entry;
    return true;
  }

  bool parse_error(std::size_t position, const std::string &,
                   const nlohmann::detail::exception &e) {
    // Drop nlohmann's "[json.exception...] parse error at line 1, column
    // 12: " prefix: its position counts from the header, ours from the file.
    std::string what = e.what();
    size_t column = what.find("column ");
    size_t colon =
        column == std::string::npos ? column : what.find(": ", column);
    if (colon != std::string::npos)
      what = what.substr(colon + 2);
    error = "invalid JSON header at byte " +
            std::to_string(kLengthBytes + (position ? position - 1 : 0)) +
            ": " + what;
    return false;
  }

private:
  enum class In { Start, Top, Metadata, Entry, Array, Done };
  enum class Field : unsigned { None, DType, Shape, Offsets };

  const char *begin;
  const char **furthest;
  In where = In::Start;
  int depth = 0;
  bool isMetadata = false;
  Field field_ = Field::None;
  unsigned seenFields = 0;
  unsigned offsetCount = 0;
  std::set<std::string> names, metadataKeys;
  std::string metadataKey;

  /// The file offset of the last byte the lexer read: the end of the token
  /// just reported (or one past it, for a number).
  uint64_t byte() const {
    return kLengthBytes + static_cast<uint64_t>(*furthest - begin) - 1;
  }
  bool fail(const std::string &msg) {
    error = msg + " (at byte " + std::to_string(byte()) + ")";
    return false;
  }
  std::string tensor() const {
    return "tensor " + nameText(records.back().name) + ": ";
  }
  std::string quotedField() const {
    return tensor() +
           (field_ == Field::Shape ? "\"shape\"" : "\"data_offsets\"");
  }
  std::string arrayRule() const {
    return field_ == Field::Shape ? "dims are non-negative integers"
                                  : "offsets are non-negative integers";
  }

  /// A value of the wrong type where `where` expects something else; long
  /// strings are cut short in the message.
  bool scalar(std::string text) {
    if (text.size() > 40)
      text = text.substr(0, 37) + "...";
    switch (where) {
    case In::Start:
      return fail("the header is not a JSON object");
    case In::Top:
      return isMetadata
                 ? fail("\"__metadata__\" is " + text +
                        "; it must be an object of strings")
                 : fail(tensor() + "the entry is " + text + ", not an object");
    case In::Metadata:
      return fail("\"__metadata__\" value " + nameText(metadataKey) + " is " +
                  text + ", not a string");
    case In::Entry:
      return fail(field_ == Field::DType
                      ? tensor() + "\"dtype\" is " + text + ", not a string"
                      : quotedField() + " is " + text + ", not an array");
    case In::Array:
      return fail(quotedField() + " has the entry " + text + "; " +
                  arrayRule());
    case In::Done:
      break;
    }
    return fail("unexpected " + text);
  }

  bool open(bool isObject) {
    if (++depth > kMaxDepth)
      return fail("the JSON header nests deeper than " +
                  std::to_string(kMaxDepth) +
                  " levels, all the format has ({name: {\"shape\": [...]}})");
    const char *kind = isObject ? "an object" : "an array";
    switch (where) {
    case In::Start:
      if (!isObject)
        return fail("the header is not a JSON object");
      where = In::Top;
      return true;
    case In::Top:
      if (!isObject)
        return scalar(kind);
      if (isMetadata) {
        metadataKeys.clear();
        where = In::Metadata;
        return true;
      }
      seenFields = 0;
      field_ = Field::None;
      where = In::Entry;
      return true;
    case In::Metadata:
      return scalar(kind);
    case In::Entry:
      if (isObject || field_ == Field::DType)
        return scalar(kind);
      offsetCount = 0;
      where = In::Array;
      return true;
    case In::Array:
    case In::Done:
      break;
    }
    return scalar(kind);
  }
};

/// Parses and checks the header (the N bytes after the length) of a file
/// whose data section has `dataBytes` bytes. On success `out` holds the
/// tensors sorted by offset, which tile the data section exactly.
std::string parseHeader(std::string_view header, uint64_t dataBytes,
                        std::vector<Record> &out) {
  if (header.empty())
    return "the header is empty; it must be a JSON object";
  if (header.front() != '{')
    return "the header does not start with '{' (byte 8 is " +
           std::to_string(static_cast<unsigned char>(header.front())) + ")";
  // nlohmann's lexer takes a NUL byte for the end of the input, which
  // would accept anything after one; JSON text cannot hold a raw NUL.
  if (size_t nul = header.find('\0'); nul != std::string_view::npos)
    return "invalid JSON header at byte " + std::to_string(kLengthBytes + nul) +
           ": a NUL byte, which JSON text cannot hold";
  const char *furthest = header.data();
  HeaderHandler handler(header.data(), &furthest);
  TrackingIterator first{header.data(), &furthest};
  TrackingIterator last{header.data() + header.size(), &furthest};
  // strict: nothing but whitespace may follow the object (the reference's
  // serde_json::from_str allows the same, which covers the space padding).
  if (!nlohmann::json::sax_parse(first, last, &handler,
                                 nlohmann::json::input_format_t::json,
                                 /*strict=*/true, /*ignore_comments=*/false))
    return handler.error.empty() ? "invalid JSON header" : handler.error;

  std::vector<Record> &records = handler.records;
  for (size_t i = 0; i < records.size(); ++i) {
    Record &r = records[i];
    std::string bad = "tensor " + nameText(r.name) + ": ";
    std::optional<DType> dtype = dtypeFromSafetensors(handler.dtypes[i]);
    if (!dtype)
      return bad + "unsupported dtype \"" + handler.dtypes[i] +
             "\" (TraceIR reads BOOL, U8, I8, I16, I32, I64, F16, BF16, F32 "
             "and F64)";
    r.dtype = *dtype;
    const std::vector<uint64_t> &raw = handler.rawShapes[i];
    std::string dtypeText(dtypeSafetensorsName(r.dtype));
    std::optional<int64_t> bytes;
    if (std::all_of(raw.begin(), raw.end(), [](uint64_t d) {
          return d <= static_cast<uint64_t>(INT64_MAX);
        })) {
      r.shape.assign(raw.begin(), raw.end());
      bytes = checkedTensorBytes(r.shape, dtypeSize(r.dtype));
    }
    if (!bytes)
      return bad + "shape " + shapeText(raw) + " of " + dtypeText +
             " is too large: its size overflows or exceeds the " +
             std::to_string(kMaxTensorBytes) + "-byte tensor limit";
    std::string offsets = "data_offsets [" + std::to_string(r.begin) + ", " +
                          std::to_string(r.end) + "]";
    if (r.end < r.begin)
      return bad + offsets + " end before they begin";
    if (r.end > dataBytes)
      return bad + offsets + " are outside the " + std::to_string(dataBytes) +
             "-byte data section";
    if (r.end - r.begin != static_cast<uint64_t>(*bytes))
      return bad + "data_offsets span " + std::to_string(r.end - r.begin) +
             " bytes but shape " + shapeText(raw) + " of " + dtypeText +
             " needs " + std::to_string(*bytes);
  }

  // The reference sorts by (begin, end) and requires each tensor to start
  // where the previous one ends: no gaps, no overlaps.
  std::sort(records.begin(), records.end(),
            [](const Record &a, const Record &b) {
              return std::tie(a.begin, a.end) < std::tie(b.begin, b.end);
            });
  uint64_t cursor = 0;
  for (size_t i = 0; i < records.size(); ++i) {
    const Record &r = records[i];
    std::string bad = "tensor " + nameText(r.name) + ": ";
    if (r.begin > cursor)
      return bad + "starts at data byte " + std::to_string(r.begin) +
             (i ? " but tensor " + nameText(records[i - 1].name) +
                      " before it ends at " + std::to_string(cursor)
                : std::string(" but no tensor covers the bytes before it")) +
             ": the " + std::to_string(r.begin - cursor) +
             " bytes between belong to no tensor";
    if (r.begin < cursor)
      return bad + "data_offsets [" + std::to_string(r.begin) + ", " +
             std::to_string(r.end) + "] overlap tensor " +
             nameText(records[i - 1].name) + ", which ends at " +
             std::to_string(cursor);
    cursor = r.end;
  }
  if (cursor != dataBytes)
    return "the tensors end at data byte " + std::to_string(cursor) +
           " but the data section has " + std::to_string(dataBytes) +
           " bytes: the last " + std::to_string(dataBytes - cursor) +
           " belong to no tensor (is the header length right?)";
  out = std::move(records);
  return "";
}

/// Whether `s` is well-formed UTF-8 (no overlong forms, surrogates or code
/// points past U+10FFFF), as JSON strings must be: nlohmann's dump would
/// otherwise fail on the name.
bool isUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t n;
    uint32_t cp, min;
    if (c >= 0xc2 && c <= 0xdf) {
      n = 1, cp = c & 0x1f, min = 0x80;
    } else if (c >= 0xe0 && c <= 0xef) {
      n = 2, cp = c & 0x0f, min = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
      n = 3, cp = c & 0x07, min = 0x10000;
    } else {
      return false;
    }
    if (s.size() - i <= n)
      return false;
    for (size_t k = 1; k <= n; ++k) {
      auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xc0) != 0x80)
        return false;
      cp = cp << 6 | (cc & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
      return false;
    i += n + 1;
  }
  return true;
}

/// The rank of a dtype in the reference's Dtype enum, which it declares in
/// increasing alignment order.
int referenceDTypeRank(DType dtype) {
  switch (dtype) {
  case DType::Bool:
    return 0;
  case DType::U8:
    return 1;
  case DType::I8:
    return 2;
  case DType::I16:
    return 5;
  case DType::F16:
    return 7;
  case DType::BF16:
    return 8;
  case DType::I32:
    return 9;
  case DType::F32:
    return 11;
  case DType::F64:
    return 12;
  case DType::I64:
    return 13;
  }
  return 0;
}

using Entry = NamedTensors::value_type;

/// The length field and the padded header for `tensors`, and in `order` the
/// tensors as the data section holds them; an error message, or "" on
/// success. Refuses what the reader would refuse, so the writer never
/// produces a file that cannot be read back.
std::string buildHeader(const NamedTensors &tensors, std::string &out,
                        std::vector<const Entry *> &order) {
  order.clear();
  for (const Entry &entry : tensors) {
    const auto &[name, t] = entry;
    std::string bad = "tensor " + nameText(name) + ": ";
    if (name == "__metadata__")
      return bad + "the name is reserved for the file's metadata";
    if (!isUtf8(name))
      return bad + "the name is not valid UTF-8";
    std::vector<int64_t> shape(t.shape.begin(), t.shape.end());
    std::optional<int64_t> bytes =
        checkedTensorBytes(shape, dtypeSize(t.dtype));
    if (!bytes || static_cast<uint64_t>(*bytes) != t.data.size())
      return bad + "holds " + std::to_string(t.data.size()) +
             " bytes, which does not match its shape and dtype";
    order.push_back(&entry);
  }
  // The reference's layout: widest alignment first, then by name, so every
  // tensor starts at a multiple of its element size (the data section
  // starts at a multiple of 8), and its field order; the bytes then match
  // the reference writer's for the same tensors.
  // (std::sort with the name as the tie-break, rather than stable_sort,
  // which libstdc++ 12 implements with a deprecated API clang warns on.)
  std::sort(order.begin(), order.end(), [](const Entry *a, const Entry *b) {
    int ra = referenceDTypeRank(a->second.dtype);
    int rb = referenceDTypeRank(b->second.dtype);
    return ra != rb ? ra > rb : a->first < b->first;
  });
  // The outer object is joined by hand: ordered_json finds each key by a
  // linear search, quadratic in the number of tensors.
  std::string json = "{";
  uint64_t offset = 0;
  for (const Entry *entry : order) {
    const HostTensor &t = entry->second;
    nlohmann::ordered_json info = nlohmann::ordered_json::object();
    info["dtype"] = std::string(dtypeSafetensorsName(t.dtype));
    info["shape"] = std::vector<int64_t>(t.shape.begin(), t.shape.end());
    info["data_offsets"] = {offset, offset + t.data.size()};
    if (json.size() > 1)
      json += ',';
    json += nlohmann::json(entry->first).dump() + ":" + info.dump();
    offset += t.data.size();
  }
  json += '}';
  // Spaces up to a multiple of 8, as the reference writer pads, so the
  // data section stays aligned for every dtype.
  json.append((8 - json.size() % 8) % 8, ' ');
  out.clear();
  for (int i = 0; i < 8; ++i)
    out.push_back(static_cast<char>((uint64_t(json.size()) >> (8 * i)) & 0xff));
  out += json;
  return "";
}

HostTensor makeTensor(const Record &r, const char *bytes) {
  HostTensor t;
  t.dtype = r.dtype;
  t.shape.assign(r.shape.begin(), r.shape.end());
  t.data.assign(bytes, bytes + (r.end - r.begin));
  return t;
}

} // namespace

static Error fileError(std::string_view path, const std::string &msg) {
  return makeError(std::string(path) + ": " + msg);
}

Expected<NamedTensors> traceir::readSafetensorsBuffer(std::string_view bytes,
                                                      std::string_view name) {
  if (bytes.size() < kLengthBytes)
    return fileError(name, "not a safetensors file: shorter than its 8-byte "
                           "header length");
  uint64_t length;
  std::string error =
      readHeaderLength(reinterpret_cast<const unsigned char *>(bytes.data()),
                       bytes.size(), length);
  std::vector<Record> records;
  if (error.empty())
    error = parseHeader(std::string_view(bytes.data() + kLengthBytes, length),
                        bytes.size() - kLengthBytes - length, records);
  if (!error.empty())
    return fileError(name, error);
  const char *data = bytes.data() + kLengthBytes + length;
  NamedTensors out;
  for (const Record &r : records)
    out.emplace(r.name, makeTensor(r, data + r.begin));
  return out;
}

Expected<NamedTensors> traceir::readSafetensors(std::string_view path) {
  // Read the header, then each tensor straight into its own buffer: holding
  // the whole file as well would double the peak memory of loading weights.
  std::string p(path);
  std::unique_ptr<std::FILE, int (*)(std::FILE *)> file(
      std::fopen(p.c_str(), "rb"), &std::fclose);
  if (!file)
    return fileError(path, std::string("cannot read: ") + std::strerror(errno));
  std::error_code ec;
  if (std::filesystem::is_directory(p, ec))
    return fileError(path, "cannot read: it is a directory");
  if (!std::filesystem::is_regular_file(p, ec)) {
    // A pipe (/dev/stdin, a shell's <(...)) has no size to check the
    // header length against: read it all, then parse from memory.
    std::string bytes;
    char chunk[1 << 16];
    size_t n;
    while ((n = std::fread(chunk, 1, sizeof(chunk), file.get())) > 0)
      bytes.append(chunk, n);
    if (std::ferror(file.get()))
      return fileError(path,
                       std::string("cannot read: ") + std::strerror(errno));
    return readSafetensorsBuffer(bytes, path);
  }
  uint64_t size = std::filesystem::file_size(p, ec);
  if (ec)
    return fileError(path, "cannot read: " + ec.message());
  auto readExactly = [&](char *to, uint64_t n) {
    return std::fread(to, 1, n, file.get()) == n;
  };
  auto shortRead = [&] {
    return fileError(path, "cannot read: the file ended early (did it change "
                           "while being read?)");
  };
  if (size < kLengthBytes)
    return fileError(path, "not a safetensors file: shorter than its 8-byte "
                           "header length");
  unsigned char first8[kLengthBytes];
  if (!readExactly(reinterpret_cast<char *>(first8), kLengthBytes))
    return shortRead();
  uint64_t length;
  std::string error = readHeaderLength(first8, size, length);
  if (!error.empty())
    return fileError(path, error);
  std::string header(length, '\0');
  if (!readExactly(header.data(), length))
    return shortRead();
  std::vector<Record> records;
  error = parseHeader(header, size - kLengthBytes - length, records);
  if (!error.empty())
    return fileError(path, error);
  NamedTensors out;
  // Sorted by offset and contiguous: the tensors are read in file order.
  for (const Record &r : records) {
    HostTensor t;
    t.dtype = r.dtype;
    t.shape.assign(r.shape.begin(), r.shape.end());
    try {
      t.data.resize(r.end - r.begin);
    } catch (const std::bad_alloc &) {
      return fileError(path, "tensor '" + r.name + "': cannot allocate " +
                                 std::to_string(r.end - r.begin) +
                                 " bytes on the host");
    }
    if (!readExactly(t.data.data(), t.data.size()))
      return shortRead();
    out.emplace(r.name, std::move(t));
  }
  return out;
}

Expected<std::string>
traceir::serializeSafetensors(const NamedTensors &tensors) {
  std::string out;
  std::vector<const Entry *> order;
  std::string error = buildHeader(tensors, out, order);
  if (!error.empty())
    return makeError(error);
  for (const Entry *entry : order)
    out.append(entry->second.data.data(), entry->second.data.size());
  return out;
}

Error traceir::writeSafetensors(std::string_view path,
                                const NamedTensors &tensors) {
  std::string header;
  std::vector<const Entry *> order;
  std::string error = buildHeader(tensors, header, order);
  if (!error.empty())
    return fileError(path, error);

  std::vector<std::string_view> chunks{header};
  for (const Entry *entry : order)
    chunks.emplace_back(entry->second.data.data(), entry->second.data.size());
  return writeFileAtomically(path, chunks);
}

Error traceir::writeFileAtomically(std::string_view path,
                                   std::span<const std::string_view> chunks) {
  std::string target(path), tmp;
  std::FILE *raw = nullptr;
  std::random_device random;
  for (int attempt = 0; attempt < 16 && !raw; ++attempt) {
    char suffix[16];
    std::snprintf(suffix, sizeof(suffix), ".tmp-%08x", unsigned(random()));
    tmp = target + suffix;
    raw = std::fopen(tmp.c_str(), "wbx");
    if (!raw && errno != EEXIST)
      break;
  }
  if (!raw)
    return fileError(path, std::string("cannot create a temporary file: ") +
                               std::strerror(errno));
  bool ok = true;
  for (std::string_view chunk : chunks)
    ok = ok && std::fwrite(chunk.data(), 1, chunk.size(), raw) == chunk.size();
  int writeErrno = ok ? 0 : errno;
  // fclose flushes: its failure is a write failure too.
  if (std::fclose(raw) != 0 && ok) {
    ok = false;
    writeErrno = errno;
  }
  if (!ok) {
    std::remove(tmp.c_str());
    return fileError(path,
                     std::string("write failed: ") + std::strerror(writeErrno));
  }
  if (std::rename(tmp.c_str(), target.c_str()) != 0) {
    std::string msg = std::strerror(errno);
    std::remove(tmp.c_str());
    return fileError(path, "cannot move the finished file into place: " + msg);
  }
  return Error::success();
}
