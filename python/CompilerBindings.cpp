//===- CompilerBindings.cpp - The compiler half of _traceir ---------------===//
//
// Parsing, pass pipelines, the ANF importer, and building or saving an
// executable from MLIR text: the full build's only (it links MLIR).
//
//===----------------------------------------------------------------------===//

#include "Bindings.h"

#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>

namespace nb = nanobind;
using namespace traceir;
using namespace traceir::bindings;

void traceir::bindings::bindCompiler(nb::module_ &m) {
  m.def(
      "parse",
      [](const std::string &text, const std::string &name) {
        return unwrap(api::parse(text, name));
      },
      nb::arg("text"), nb::arg("name") = "<string>",
      "Parses and verifies a module; returns its printed form.");
  m.def(
      "run_passes",
      [](const std::string &text, const std::string &pipeline,
         const std::string &name) {
        return unwrap(api::runPasses(text, pipeline, name));
      },
      nb::arg("text"), nb::arg("pipeline"), nb::arg("name") = "<string>");
  m.def(
      "import_anf",
      [](const std::string &text, const std::string &name) {
        return unwrap(api::importANF(text, name));
      },
      nb::arg("text"), nb::arg("name") = "<string>");
  m.def(
      "create_executable",
      [](const std::string &text, const std::string &graph,
         const std::string &device, const std::string &name,
         bool compileGpuKernels, const std::string &gpuBinary) {
        return unwrap(api::Executable::create(text, graph, device, name,
                                              compileGpuKernels, gpuBinary));
      },
      nb::arg("text"), nb::arg("graph") = "", nb::arg("device") = "cpu",
      nb::arg("name") = "<string>", nb::arg("compile_gpu_kernels") = false,
      nb::arg("gpu_binary") = "");
  m.def(
      "emit_executable",
      [](const std::string &text, const std::string &graph,
         const std::string &device, const std::string &name,
         bool generatedKernels, const std::string &chip) {
        api::Result<std::string> r = api::emitExecutable(
            text, graph, device, name, generatedKernels, chip);
        std::string bytes = unwrap(std::move(r));
        return nb::bytes(bytes.data(), bytes.size());
      },
      nb::arg("text"), nb::arg("graph") = "", nb::arg("device") = "cpu",
      nb::arg("name") = "<string>", nb::arg("generated_kernels") = false,
      nb::arg("chip") = "sm_90",
      "A saved executable's bytes for `device`, built here without the "
      "device (trace-translate --emit-executable).");
}
