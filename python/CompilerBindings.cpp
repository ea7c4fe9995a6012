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

nb::object traceir::bindings::scalarToPython(const ScalarValue &v) {
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
      l.append(scalarToPython(e));
    return l;
  }
  case K::Tuple: {
    nb::list l;
    for (const ScalarValue &e : v.elements)
      l.append(scalarToPython(e));
    return nb::tuple(l);
  }
  }
  return nb::none();
}

namespace {

nb::object toPython(const ScalarValue &v) { return scalarToPython(v); }

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

/// A Python scalar argument as the IR holds it, or a TypeError naming it.
ScalarValue toScalar(nb::handle o, const std::string &what) {
  using K = ScalarValue::Kind;
  ScalarValue v;
  if (o.is_none()) {
    v.kind = K::None;
  } else if (nb::isinstance<nb::bool_>(o)) {
    v.kind = K::Bool;
    v.b = nb::cast<bool>(o);
  } else if (nb::isinstance<nb::int_>(o)) {
    v.kind = K::Int;
    if (!nb::try_cast<int64_t>(o, v.i))
      throw nb::type_error((what + ": an int beyond 64 bits").c_str());
  } else if (nb::isinstance<nb::float_>(o)) {
    v.kind = K::Float;
    v.f = nb::cast<double>(o);
  } else if (nb::isinstance<nb::str>(o)) {
    v.kind = K::String;
    v.s = nb::cast<std::string>(o);
  } else if (nb::isinstance<nb::tuple>(o) || nb::isinstance<nb::list>(o)) {
    v.kind = nb::isinstance<nb::tuple>(o) ? K::Tuple : K::List;
    if (Py_EnterRecursiveCall(" converting a scalar"))
      throw nb::python_error();
    for (nb::handle e : o)
      v.elements.push_back(toScalar(e, what));
    Py_LeaveRecursiveCall();
  } else {
    throw nb::type_error((what + ": " +
                          nb::cast<std::string>(nb::repr(o.type())) +
                          " is not a tensor Value or a Python scalar (None, "
                          "bool, int, float, str, tuple or list)")
                             .c_str());
  }
  return v;
}

api::InsertPoint toInsertPoint(const nb::tuple &t) {
  if (t.size() != 3)
    raise("an insertion point is (graph, anchor, after)");
  api::InsertPoint at;
  at.graph = nb::cast<int64_t>(t[0]);
  at.anchor = nb::cast<int64_t>(t[1]);
  at.after = nb::cast<bool>(t[2]);
  return at;
}

/// (name, file, line, column), or (node,): a copy of node's location.
api::Location toLocation(const nb::tuple &t) {
  api::Location loc;
  if (t.size() == 1) {
    loc.copyFrom = nb::cast<int64_t>(t[0]);
    return loc;
  }
  if (t.size() != 4)
    raise("a location is (name, file, line, column) or (node,)");
  loc.name = nb::cast<std::string>(t[0]);
  loc.file = nb::cast<std::string>(t[1]);
  loc.line = nb::cast<int>(t[2]);
  loc.column = nb::cast<int>(t[3]);
  return loc;
}

/// (name, file, line, column) where `has` (a location of the importers'
/// form), else None.
nb::object toPython(const api::Location &l, bool has) {
  if (!has)
    return nb::none();
  return nb::make_tuple(l.name, l.file, l.line, l.column);
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
             for (const api::GraphArg &a : unwrap(m.graphArgs(g))) {
               out.append(nb::make_tuple(
                   a.name, a.isParam, a.donated, toPython(a.type),
                   toPython(a.locationParts, a.hasLocationParts)));
             }
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
            return nb::make_tuple(
                n.kind, n.target, args, n.cconv, nb::tuple(scalars), results,
                n.location, n.graph,
                toPython(n.locationParts, n.hasLocationParts));
          },
          "(kind, target, args, cconv, scalars, result types, location, "
          "graph, location parts or None); each arg is (True, value handle) "
          "or (False, scalar).")
      .def("value_type",
           [](api::IRModule &m, const nb::tuple &v) {
             return toPython(unwrap(m.valueType(toValueRef(v))));
           })
      .def("users",
           [](api::IRModule &m, const nb::tuple &v) {
             return unwrap(m.users(toValueRef(v)));
           })
      .def("constant_value",
           [](api::IRModule &m, int64_t node) {
             api::Tensor t = unwrap(m.constantValue(node));
             return nb::make_tuple(
                 t.dtype, nb::tuple(nb::cast(t.shape)),
                 nb::bytes(reinterpret_cast<const char *>(t.data.data()),
                           t.data.size()));
           })
      .def_static(
          "create",
          [](const std::string &name, const nb::tuple &loc) {
            return api::IRModule::create(name, toLocation(loc));
          },
          nb::arg("name"), nb::arg("loc"))
      .def("module_location",
           [](const api::IRModule &m) -> nb::object {
             api::Location l;
             bool has = m.moduleLocation(l);
             return toPython(l, has);
           })
      .def(
          "create_pyop",
          [](api::IRModule &m, const nb::tuple &at, const std::string &target,
             const nb::list &args, const std::vector<std::string> &types,
             const nb::tuple &loc) {
            std::vector<api::CallArg> callArgs;
            size_t i = 0;
            for (nb::handle a : args) {
              api::CallArg c;
              nb::tuple pair = nb::cast<nb::tuple>(a);
              if (pair.size() != 2)
                raise("an argument is (True, value handle) or (False, "
                      "scalar)");
              c.isTensor = nb::cast<bool>(pair[0]);
              if (c.isTensor)
                c.value = toValueRef(nb::cast<nb::tuple>(pair[1]));
              else
                c.scalar = toScalar(pair[1], "argument #" + std::to_string(i) +
                                                 " of '" + target + "'");
              callArgs.push_back(std::move(c));
              ++i;
            }
            return unwrap(m.createPyOp(toInsertPoint(at), target, callArgs,
                                       types, toLocation(loc)));
          },
          "args: [(True, value handle) | (False, scalar)]; types: MLIR "
          "type text, empty to infer; loc: (name, file, line, column).")
      .def("create_constant",
           [](api::IRModule &m, const nb::tuple &at, const std::string &dtype,
              const std::vector<int64_t> &shape, const nb::bytes &data,
              const nb::tuple &loc) {
             std::string bytes(static_cast<const char *>(data.data()),
                               data.size());
             return unwrap(m.createConstant(toInsertPoint(at), dtype, shape,
                                            bytes, toLocation(loc)));
           })
      .def("replace_all_uses_with",
           [](api::IRModule &m, const nb::tuple &from, const nb::tuple &to) {
             std::string err =
                 m.replaceAllUsesWith(toValueRef(from), toValueRef(to));
             if (!err.empty())
               raise(err);
           })
      .def("erase_node",
           [](api::IRModule &m, int64_t node) {
             std::string err = m.eraseNode(node);
             if (!err.empty())
               raise(err);
           })
      .def("eliminate_dead_code",
           [](api::IRModule &m, int64_t graph) {
             return unwrap(m.eliminateDeadCode(graph));
           })
      .def("strip_frees", &api::IRModule::stripFrees)
      .def("add_graph",
           [](api::IRModule &m, const std::string &name, const nb::tuple &loc) {
             return unwrap(m.addGraph(name, toLocation(loc)));
           })
      .def("add_argument",
           [](api::IRModule &m, int64_t graph, const std::string &name,
              bool isParam, bool donated, const std::string &type,
              const nb::tuple &loc) {
             return toPython(unwrap(m.addArgument(graph, name, isParam, donated,
                                                  type, toLocation(loc))));
           })
      .def("set_outputs",
           [](api::IRModule &m, int64_t graph,
              const std::vector<nb::tuple> &values, const nb::tuple &loc) {
             std::vector<api::ValueRef> refs;
             for (const nb::tuple &v : values)
               refs.push_back(toValueRef(v));
             std::string err = m.setOutputs(graph, refs, toLocation(loc));
             if (!err.empty())
               raise(err);
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
