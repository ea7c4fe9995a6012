//===- SafeTensorsTest.cpp - safetensors reading and writing --------------===//
//
// The reader against hand-made buffers (the cases a lit test cannot make
// easily), and the writer against the reference implementation's own test
// vectors (huggingface/safetensors, tensor.rs).
//
//===----------------------------------------------------------------------===//

#include "TestTensors.h"
#include "TraceIR/Runtime/HostTensor.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include "gtest/gtest.h"

#include <cstring>
#include <string>

using namespace traceir;

namespace {

/// A file of `header` (as given: no padding) followed by `data`.
std::string file(const std::string &header, const std::string &data = "") {
  std::string out;
  for (int i = 0; i < 8; ++i)
    out.push_back(static_cast<char>((uint64_t(header.size()) >> (8 * i))));
  return out + header + data;
}

/// The error readSafetensorsBuffer gives, or "" if it accepts the bytes.
std::string readError(const std::string &bytes) {
  auto r = readSafetensorsBuffer(bytes, "f.st");
  if (r)
    return "";
  return toString(r.takeError());
}

const std::string kEight(8, '\x01');
const std::string kGoodEntry =
    R"({"dtype":"F32","shape":[2],"data_offsets":[0,8]})";

TEST(SafeTensors, AcceptsWhatTheReferenceAccepts) {
  auto ok = [](const std::string &bytes) {
    auto r = readSafetensorsBuffer(bytes, "f.st");
    EXPECT_TRUE(static_cast<bool>(r))
        << (r ? "" : toString(r.takeError())) << " for " << bytes;
  };
  ok(file("{}"));
  ok(file("{}      "));
  // Trailing JSON whitespace, as serde_json allows.
  ok(file("{\"x\":" + kGoodEntry + "} \n\t ", kEight));
  // A null or string-valued __metadata__, zero-size tensors sharing an
  // offset, a 0-d tensor.
  ok(file(R"({"__metadata__":null})"));
  ok(file(R"({"__metadata__":{"format":"pt"},"x":)" + kGoodEntry + "}",
          kEight));
  ok(file(R"({"a":{"dtype":"U8","shape":[0,3],"data_offsets":[0,0]},)"
          R"("b":{"dtype":"U8","shape":[0],"data_offsets":[0,0]},)"
          R"("c":{"dtype":"I32","shape":[],"data_offsets":[0,4]}})",
          "abcd"));
  // Entries in any order: the layout is by offset.
  ok(file(R"({"b":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},)"
          R"("a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}})",
          "xy"));
}

TEST(SafeTensors, RejectsWithAReason) {
  struct Case {
    std::string bytes, error;
  };
  std::string deepObject = std::string(100000, '[');
  Case cases[] = {
      {"1234567", "shorter than its 8-byte header length"},
      {file(""), "the header is empty"},
      {file("[]"), "the header does not start with '{'"},
      {file("\xff{}"), "the header does not start with '{'"},
      // The length itself over the reference's 100 MB limit.
      {std::string("\x01\x00\x00\x00\x01\x00\x00\x00", 8) + "{}",
       "exceeds the 100000000-byte limit"},
      {std::string("\xff\xff\xff\xff\xff\xff\xff\xff", 8) + "{}",
       "header length 18446744073709551615 exceeds"},
      // Deep nesting is refused without recursion wherever it starts.
      {file("{\"x\":" + deepObject), "tensor 'x': the entry is an array"},
      {file("{\"x\":{\"shape\":" + deepObject), "nests deeper than 3 levels"},
      {file("{\"__metadata__\":{\"a\":[[[[[[[[]]]]]]]]}}"),
       "\"__metadata__\" value 'a' is an array, not a string"},
      {file(R"({"__metadata__":[]})"), "must be an object of strings"},
      {file(R"({"__metadata__":{},"__metadata__":{}})"),
       "\"__metadata__\" appears twice"},
      {file(R"({"__metadata__":{"a":"1","a":"2"}})"), "key 'a' twice"},
      {file(R"({"x":3})"), "tensor 'x': the entry is 3, not an object"},
      {file(R"({"x":{"dtype":1}})"), "\"dtype\" is 1, not a string"},
      {file(R"({"x":{"dtype":"F32","dtype":"F32"}})"),
       "field \"dtype\" appears twice"},
      {file(R"({"x":{"shape":{}}})"),
       "f.st: tensor 'x': \"shape\" is an object, not an array"},
      {file(R"({"x":{"dtype":"F32","data_offsets":")" + std::string(1000, 'a') +
            "\"}}"),
       "tensor 'x': \"data_offsets\" is "
       "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...,"
       " not an array"},
      {file(R"({"x":{"shape":[1.5]}})"), "\"shape\" has the entry 1.5"},
      {file(R"({"x":{"shape":[true]}})"), "\"shape\" has the entry true"},
      {file(R"({"x":{"data_offsets":[0,1,2]}})"), "more than two entries"},
      {file(R"({"x":{"data_offsets":[0]}})"), "has 1 entries"},
      {file(R"({"x":{"dtype":"F32","shape":[2]}})"),
       "missing \"data_offsets\""},
      {file(R"({"x":{"dtype":"F32","shape":[18446744073709551615],)"
            R"("data_offsets":[0,8]}})",
            kEight),
       "shape [18446744073709551615] of F32 is too large"},
      // 2^62 elements fit int64_t, but not in bytes.
      {file(R"({"x":{"dtype":"F32","shape":[4611686018427387904],)"
            R"("data_offsets":[0,8]}})",
            kEight),
       "is too large"},
      {file(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})",
            kEight),
       "data_offsets [8, 0] end before they begin"},
      {file(R"({"x":{"dtype":"F32","shape":[0],"data_offsets":[0,0]}})",
            kEight),
       "the last 8 belong to no tensor"},
      {file(R"({"x":)" + kGoodEntry + std::string("}\0", 2), kEight),
       "a NUL byte, which JSON text cannot hold"},
      {file("{\"x\xff\":1}"), "invalid JSON header at byte"},
      {file(R"({"x":)" + kGoodEntry + "} x"), "expected end of input"},
  };
  for (const Case &c : cases) {
    std::string error = readError(c.bytes);
    EXPECT_NE(error.find("f.st: "), std::string::npos) << error;
    EXPECT_NE(error.find(c.error), std::string::npos)
        << "got: " << error << "\nwanted: " << c.error;
  }
}

TEST(SafeTensors, WriterMatchesTheReferenceBytes) {
  // tensor.rs' test_serialization: no padding needed.
  std::vector<float> six = {0, 1, 2, 3, 4, 5};
  NamedTensors a{{"attn.0", f32({1, 2, 3}, six)}};
  auto bytes = serializeSafetensors(a);
  ASSERT_TRUE(static_cast<bool>(bytes)) << toString(bytes.takeError());
  std::string header =
      R"({"attn.0":{"dtype":"F32","shape":[1,2,3],"data_offsets":[0,24]}})";
  std::string data(24, '\0');
  std::memcpy(data.data(), six.data(), 24);
  EXPECT_EQ(*bytes, file(header, data));
  // test_serialization_forced_alignement: 7 spaces of padding.
  NamedTensors b{{"attn0", f32({1, 1, 2, 3}, six)}};
  bytes = serializeSafetensors(b);
  ASSERT_TRUE(static_cast<bool>(bytes));
  EXPECT_EQ(*bytes, file(R"({"attn0":{"dtype":"F32","shape":[1,1,2,3],)"
                         R"("data_offsets":[0,24]}})" +
                             std::string(7, ' '),
                         data));
  // test_empty.
  bytes = serializeSafetensors({});
  ASSERT_TRUE(static_cast<bool>(bytes));
  EXPECT_EQ(*bytes, file("{}      "));
}

TEST(SafeTensors, WriterAlignsAndRoundTrips) {
  // A U8 tensor named first would put the F32 one at an odd offset; the
  // widest dtype goes first, as the reference lays it out.
  HostTensor u8;
  u8.dtype = DType::U8;
  u8.shape = {3};
  u8.data = {'a', 'b', 'c'};
  HostTensor i64;
  i64.dtype = DType::I64;
  i64.shape = {};
  i64.data.assign(8, '\x07');
  NamedTensors tensors{
      {"a.u8", u8}, {"b.f32", f32({2}, {1.5f, -2})}, {"c.i64", i64}};
  auto bytes = serializeSafetensors(tensors);
  ASSERT_TRUE(static_cast<bool>(bytes)) << toString(bytes.takeError());
  uint64_t n = 0;
  std::memcpy(&n, bytes->data(), 8);
  EXPECT_EQ(n % 8, 0u);
  EXPECT_NE(bytes->find(R"("c.i64":{"dtype":"I64","shape":[],)"
                        R"("data_offsets":[0,8]})"),
            std::string::npos);
  EXPECT_NE(bytes->find(R"("data_offsets":[8,16])"), std::string::npos);
  auto back = readSafetensorsBuffer(*bytes, "mem");
  ASSERT_TRUE(static_cast<bool>(back)) << toString(back.takeError());
  ASSERT_EQ(back->size(), 3u);
  for (const auto &[name, t] : tensors) {
    EXPECT_EQ(back->at(name).dtype, t.dtype) << name;
    EXPECT_EQ(back->at(name).shape, t.shape) << name;
    EXPECT_EQ(back->at(name).data, t.data) << name;
  }
}

TEST(SafeTensors, WriterRefusesWhatTheReaderWould) {
  HostTensor shortData = f32({2}, {1, 2});
  shortData.data.pop_back();
  struct Case {
    NamedTensors tensors;
    std::string error;
  } cases[] = {
      {{{"x", shortData}}, "tensor 'x': holds 7 bytes"},
      {{{"__metadata__", f32({1}, {1})}}, "reserved"},
      {{{"bad\xff", f32({1}, {1})}}, "not valid UTF-8"},
      {{{"bad\xc0\x80", f32({1}, {1})}}, "not valid UTF-8"},     // overlong
      {{{"bad\xed\xa0\x80", f32({1}, {1})}}, "not valid UTF-8"}, // surrogate
  };
  for (const Case &c : cases) {
    auto bytes = serializeSafetensors(c.tensors);
    ASSERT_FALSE(static_cast<bool>(bytes));
    std::string error = toString(bytes.takeError());
    EXPECT_NE(error.find(c.error), std::string::npos) << error;
  }
  // Valid multi-byte UTF-8 and characters JSON escapes survive.
  NamedTensors ok{
      {"caf\xc3\xa9 \"q\"\\\n\x01 \xf0\x9f\x98\x80", f32({1}, {1})}};
  auto bytes = serializeSafetensors(ok);
  ASSERT_TRUE(static_cast<bool>(bytes)) << toString(bytes.takeError());
  auto back = readSafetensorsBuffer(*bytes, "mem");
  ASSERT_TRUE(static_cast<bool>(back)) << toString(back.takeError());
  EXPECT_EQ(back->begin()->first, ok.begin()->first);
}

TEST(SafeTensors, RefusedWriteLeavesNoFile) {
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("traceir-st", dir));
  llvm::SmallString<128> path(dir);
  llvm::sys::path::append(path, "t.safetensors");
  HostTensor bad = f32({2}, {1, 2});
  bad.data.pop_back();
  traceir::Error err = writeSafetensors(path.str(), {{"x", bad}});
  ASSERT_TRUE(static_cast<bool>(err));
  EXPECT_NE(toString(std::move(err)).find("t.safetensors: tensor 'x'"),
            std::string::npos);
  std::error_code ec;
  EXPECT_EQ(llvm::sys::fs::directory_iterator(dir, ec),
            llvm::sys::fs::directory_iterator()); // nothing, not even a temp
  // A file the reader refuses, through the file path.
  std::string bytes = file("{\"x\":" + kGoodEntry + "}", kEight + "!");
  {
    std::FILE *f = std::fopen(path.c_str(), "wb");
    ASSERT_TRUE(f);
    std::fwrite(bytes.data(), 1, bytes.size(), f);
    std::fclose(f);
  }
  auto r = readSafetensors(path.str());
  ASSERT_FALSE(static_cast<bool>(r));
  EXPECT_NE(toString(r.takeError()).find("the last 1 belong to no tensor"),
            std::string::npos);
  llvm::sys::fs::remove_directories(dir);
}

} // namespace
