//===- ReplayMain.cpp - Run fuzz inputs through a harness, once each ------===//
//
// What a harness links instead of libFuzzer in ordinary builds (g++, the
// ASan/UBSan build CI runs), as LLVM's fuzzers do with DummyFuzzerMain: every
// file named on the command line, or found in a directory named there, goes
// through LLVMFuzzerTestOneInput once. So CI replays the whole corpus and
// every crash found so far under the sanitizers, without a clang build.
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
extern "C" int LLVMFuzzerInitialize(int *argc, char ***argv)
    __attribute__((weak));

int main(int argc, char **argv) {
  if (LLVMFuzzerInitialize)
    LLVMFuzzerInitialize(&argc, &argv);
  std::vector<std::filesystem::path> files;
  for (int i = 1; i < argc; ++i) {
    std::filesystem::path p(argv[i]);
    if (!p.empty() && p.string()[0] == '-')
      continue; // libFuzzer flags, harmless here
    std::error_code ec;
    if (std::filesystem::is_directory(p, ec)) {
      for (const auto &e : std::filesystem::recursive_directory_iterator(p))
        if (e.is_regular_file())
          files.push_back(e.path());
    } else {
      files.push_back(p);
    }
  }
  if (files.empty()) {
    std::fprintf(stderr,
                 "usage: %s FILE_OR_DIR...: runs each input through "
                 "the harness once (a libFuzzer build fuzzes instead)\n",
                 argv[0]);
    return 2;
  }
  std::sort(files.begin(), files.end());
  for (const auto &f : files) {
    std::ifstream in(f, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "cannot read %s\n", f.c_str());
      return 2;
    }
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                            std::istreambuf_iterator<char>());
    // A copy of exactly the input's size, so ASan sees reads past its end.
    std::vector<uint8_t> data(bytes.begin(), bytes.end());
    LLVMFuzzerTestOneInput(data.data(), data.size());
  }
  std::printf("replayed %zu inputs\n", files.size());
  return 0;
}
