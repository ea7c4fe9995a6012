//===- CompilerBindings.cpp - The compiler half of _traceir ---------------===//
//
// The held module (TraceIR/API/IR.h): parsing, walking, passes, and
// building or saving an executable from it. The full build's only (it
// links MLIR). Values cross as plain tuples, which traceir.ir wraps in
// its Graph, Node and Value classes.
//
//===----------------------------------------------------------------------===//

#include "Bindings.h"
#include "TraceIR/API/IR.h"

#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

namespace nb = nanobind;
using namespace traceir;
using namespace traceir::bindings;

namespace {

/// A Python scalar of a pyop as Python holds it.
nb::object toPython(const ScalarValue &v) {
  using K = ScalarValue::Kind;
  switch (v.kind) {
  case K::None:
    return nb::none();
  case K::Bool:
    return nb::bool_(v.b);
  case K::Int:
    return nb::int_(v.i);
  case K::Float:
    return nb::float_(v.f);
  case K::String:
    return nb::str(v.s.c_str(), v.s.size());
  case K::List: {
    nb::list l;
    for (const ScalarValue &e : v.elements)
      l.append(toPython(e));
    return l;
  }
  case K::Tuple: {
    nb::list l;
    for (const ScalarValue &e : v.elements)
      l.append(toPython(e));
    return nb::tuple(l);
  }
  }
  return nb::none();
}

nb::tuple toPython(const api::ValueRef &v) {
  return nb::make_tuple(v.node, v.index, v.isArg);
}

api::ValueRef toValueRef(const nb::tuple &t) {
  if (t.size() != 3)
    raise("a value handle is (node, index, is_arg)");
  api::ValueRef v;
  v.node = nb::cast<int64_t>(t[0]);
  v.index = nb::cast<int32_t>(t[1]);
  v.isArg = nb::cast<bool>(t[2]);
  return v;
}

/// (text, ranked, shape, dtype)
nb::tuple toPython(const api::TypeInfo &t) {
  nb::list shape;
  for (int64_t d : t.shape)
    shape.append(d);
  return nb::make_tuple(t.text, t.ranked, nb::tuple(shape), t.dtype);
}

} // namespace

void traceir::bindings::bindCompiler(nb::module_ &m) {
  nb::class_<api::IRModule>(m, "IRModule")
      .def_static(
          "parse",
          [](const std::string &text, const std::string &name) {
            return unwrap(api::IRModule::parse(text, name));
          },
          nb::arg("text"), nb::arg("name") = "<string>",
          "Parses and verifies a module (errors name file:line:col).")
      .def_static(
          "import_anf",
          [](const std::string &text, const std::string &name) {
            return unwrap(api::IRModule::importANF(text, name));
          },
          nb::arg("text"), nb::arg("name") = "<string>")
      .def("clone", &api::IRModule::clone)
      .def("print", &api::IRModule::print)
      .def("verify",
           [](api::IRModule &m) {
             std::string err = m.verify();
             if (!err.empty())
               raise(err);
           })
      .def("run_passes",
           [](api::IRModule &m, const std::string &pipeline) {
             std::string err = m.runPasses(pipeline);
             if (!err.empty())
               raise(err);
           })
      .def_prop_ro("generation", &api::IRModule::generation)
      .def("graphs", &api::IRModule::graphs)
      .def("graph_name",
           [](api::IRModule &m, int64_t g) { return unwrap(m.graphName(g)); })
      .def("graph_args",
           [](api::IRModule &m, int64_t g) {
             nb::list out;
             for (const api::GraphArg &a : unwrap(m.graphArgs(g)))
               out.append(nb::make_tuple(a.name, a.isParam, a.donated,
                                         toPython(a.type)));
             return out;
           })
      .def("graph_nodes",
           [](api::IRModule &m, int64_t g) { return unwrap(m.graphNodes(g)); })
      .def(
          "node",
          [](api::IRModule &m, int64_t id) {
            api::NodeInfo n = unwrap(m.node(id));
            nb::list args, scalars, results;
            for (const api::CallArg &a : n.args)
              args.append(a.isTensor
                              ? nb::make_tuple(true, toPython(a.value))
                              : nb::make_tuple(false, toPython(a.scalar)));
            for (const ScalarValue &s : n.scalars)
              scalars.append(toPython(s));
            for (const api::TypeInfo &t : n.results)
              results.append(toPython(t));
            return nb::make_tuple(n.kind, n.target, args, n.cconv,
                                  nb::tuple(scalars), results, n.location,
                                  n.graph);
          },
          "(kind, target, args, cconv, scalars, result types, location, "
          "graph); each arg is (True, value handle) or (False, scalar).")
      .def("value_type",
           [](api::IRModule &m, const nb::tuple &v) {
             return toPython(unwrap(m.valueType(toValueRef(v))));
           })
      .def("users", [](api::IRModule &m, const nb::tuple &v) {
        return unwrap(m.users(toValueRef(v)));
      });

  m.def("op_signature", &api::opSignature, nb::arg("op"),
        "The op registry's argument list for `op`, or \"\" if unknown.");
  m.def(
      "create_executable",
      [](api::IRModule &module, const std::string &graph,
         const std::string &device, bool compileGpuKernels,
         const std::string &gpuBinary) {
        return unwrap(api::Executable::create(module, graph, device,
                                              compileGpuKernels, gpuBinary));
      },
      nb::arg("module"), nb::arg("graph") = "", nb::arg("device") = "cpu",
      nb::arg("compile_gpu_kernels") = false, nb::arg("gpu_binary") = "");
  m.def(
      "emit_executable",
      [](api::IRModule &module, const std::string &graph,
         const std::string &device, bool generatedKernels,
         const std::string &chip) {
        std::string bytes = unwrap(
            api::emitExecutable(module, graph, device, generatedKernels, chip));
        return nb::bytes(bytes.data(), bytes.size());
      },
      nb::arg("module"), nb::arg("graph") = "", nb::arg("device") = "cpu",
      nb::arg("generated_kernels") = false, nb::arg("chip") = "sm_90",
      "A saved executable's bytes for `device`, built here without the "
      "device (trace-translate --emit-executable).");
}
