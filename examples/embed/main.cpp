//===- main.cpp - Running a saved TraceIR executable from C++ -------------===//
//
//   embed model.trx [params.safetensors]
//
// Loads the executable, its parameters, feeds every input ones (as its
// declared type says), runs it and prints each output's type, its first
// values and the memory report.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/ExecutableFile.h"

#include <cstring>
#include <iostream>

using namespace traceir;

/// A tensor of `spec`'s type filled with ones (floats) or zeros (integers).
static HostTensor ones(const Executable::ArgSpec &spec) {
  HostTensor t;
  t.dtype = spec.dtype;
  t.shape = spec.shape;
  t.data.assign(t.numel() * dtypeSize(t.dtype), 0);
  if (t.dtype == DType::F32)
    for (int64_t i = 0; i < t.numel(); ++i)
      t.as<float>()[i] = 1.0f;
  return t;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    std::cerr << "usage: embed model.trx [params.safetensors]\n";
    return 2;
  }
  auto exe = loadExecutable(argv[1]);
  if (!exe) {
    std::cerr << "embed: " << exe.takeError().message() << "\n";
    return 1;
  }
  NamedTensors params;
  if (argc > 2) {
    auto read = readSafetensors(argv[2]);
    if (!read) {
      std::cerr << "embed: " << read.takeError().message() << "\n";
      return 1;
    }
    params = std::move(*read);
  }
  if (Error err = (*exe)->loadParams(params)) {
    std::cerr << "embed: " << err.message() << "\n";
    return 1;
  }
  NamedTensors inputs;
  for (const Executable::ArgSpec &spec : (*exe)->inputSpecs)
    inputs.emplace(spec.name, ones(spec));
  auto outputs = (*exe)->run(inputs);
  if (!outputs) {
    std::cerr << "embed: " << outputs.takeError().message() << "\n";
    return 1;
  }
  for (size_t i = 0; i < outputs->size(); ++i) {
    const HostTensor &t = (*outputs)[i];
    std::cout << "output" << i << ": " << dtypeName(t.dtype)
              << shapeToString(t.shape);
    if (t.dtype == DType::F32)
      for (int64_t k = 0; k < std::min<int64_t>(t.numel(), 4); ++k)
        std::cout << " " << t.as<float>()[k];
    std::cout << "\n";
  }
  std::cout << (*exe)->memoryReport().toText() << "\n";
  return 0;
}
