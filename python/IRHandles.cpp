//===- IRHandles.cpp - traceir.ir's Node and Value, natively --------------===//
//
// The C bases of traceir.ir.Node and traceir.ir.Value. A Node holds what
// walking reads of it (op, target, args, results) as plain fields, read at
// the cost of a slot, as torch.fx's are; a graph's nodes are made, filled
// and listed in one call (walk), from one IRModule::nodes call, instead of
// a call and a few tuples per node from Python.
//
// The fields are a cache of the held module, kept true by ir.py: after each
// edit it resets the nodes IRModule::takeChanges names (they fill again on
// the next read), and marks erased ones, and every node after a pass
// pipeline, stale: their fields then raise TraceIRError with the reason.
// Nodes are canonical per module (Module._nodes, id -> Node), so there is
// one object to reset.
//
//===----------------------------------------------------------------------===//

#include "Bindings.h"
#include "TraceIR/API/IR.h"

#include <nanobind/stl/string.h>
#include <structmember.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <unordered_map>
#include <vector>

namespace nb = nanobind;
using namespace traceir;
using namespace traceir::bindings;

namespace {

struct NodeObject {
  PyObject ob_base; // PyObject_HEAD
  PyObject *module; ///< the traceir.Module
  PyObject *id;     ///< int
  // Filled together; `op` null: not read yet (or reset by an edit).
  PyObject *op, *target, *args, *results, *graph;
  PyObject *data;  ///< ir.py's lazily read rest (types, location), or null
  PyObject *users; ///< tuple of Nodes, or null until read
  PyObject *stale; ///< the reason (str) the handle is stale, or null
};

struct ValueObject {
  PyObject ob_base; // PyObject_HEAD
  PyObject *module;
  /// The ref (node, index, is_arg), kept apart: `_ref` makes the tuple when
  /// asked, as a tuple per value would be another object for the GC.
  PyObject *node;
  int32_t index;
  bool isArg;
};

/// The classes instances are made of: traceir.ir.Node and Value (set by
/// _register_handles), subclasses of the bases below.
PyTypeObject *nodeClass = nullptr, *valueClass = nullptr;

//===----------------------------------------------------------------------===//
// Object basics
//===----------------------------------------------------------------------===//

int nodeTraverse(PyObject *self, visitproc visit, void *arg) {
  auto *n = reinterpret_cast<NodeObject *>(self);
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(n->module);
  Py_VISIT(n->id);
  Py_VISIT(n->op);
  Py_VISIT(n->target);
  Py_VISIT(n->args);
  Py_VISIT(n->results);
  Py_VISIT(n->graph);
  Py_VISIT(n->data);
  Py_VISIT(n->users);
  Py_VISIT(n->stale);
  return 0;
}

/// Drops what was read (the next read fills the node again).
void nodeReset(NodeObject *n) {
  Py_CLEAR(n->op);
  Py_CLEAR(n->target);
  Py_CLEAR(n->args);
  Py_CLEAR(n->results);
  Py_CLEAR(n->graph);
  Py_CLEAR(n->data);
  Py_CLEAR(n->users);
}

int nodeClear(PyObject *self) {
  auto *n = reinterpret_cast<NodeObject *>(self);
  nodeReset(n);
  Py_CLEAR(n->module);
  Py_CLEAR(n->id);
  Py_CLEAR(n->stale);
  return 0;
}

void nodeDealloc(PyObject *self) {
  PyTypeObject *tp = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  nodeClear(self);
  tp->tp_free(self);
  Py_DECREF(tp);
}

PyObject *nodeNew(PyTypeObject *, PyObject *, PyObject *) {
  PyErr_SetString(PyExc_TypeError,
                  "traceir.Node objects come from a graph (graph.nodes, "
                  "graph.pyop, value.node, ...), not from Node(...)");
  return nullptr;
}

int valueTraverse(PyObject *self, visitproc visit, void *arg) {
  auto *v = reinterpret_cast<ValueObject *>(self);
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(v->module);
  Py_VISIT(v->node);
  return 0;
}

int valueClear(PyObject *self) {
  auto *v = reinterpret_cast<ValueObject *>(self);
  Py_CLEAR(v->module);
  Py_CLEAR(v->node);
  return 0;
}

void valueDealloc(PyObject *self) {
  PyTypeObject *tp = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  valueClear(self);
  tp->tp_free(self);
  Py_DECREF(tp);
}

/// A new Value of `module` for (node, index, isArg) (a new reference).
PyObject *makeValue(PyTypeObject *cls, PyObject *module, PyObject *node,
                    int32_t index, bool isArg) {
  auto *v = reinterpret_cast<ValueObject *>(cls->tp_alloc(cls, 0));
  if (!v)
    return nullptr;
  Py_INCREF(module);
  v->module = module;
  Py_INCREF(node);
  v->node = node;
  v->index = index;
  v->isArg = isArg;
  return reinterpret_cast<PyObject *>(v);
}

PyObject *valueNew(PyTypeObject *cls, PyObject *args, PyObject *kwargs) {
  PyObject *module, *ref;
  static const char *names[] = {"module", "ref", nullptr};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO:Value",
                                   const_cast<char **>(names), &module, &ref))
    return nullptr;
  PyObject *t = PySequence_Tuple(ref);
  if (!t)
    return nullptr;
  if (PyTuple_GET_SIZE(t) != 3 || !PyLong_Check(PyTuple_GET_ITEM(t, 0)) ||
      !PyLong_Check(PyTuple_GET_ITEM(t, 1))) {
    Py_DECREF(t);
    PyErr_SetString(PyExc_TypeError,
                    "a value handle is (node, index, is_arg): two ints and a "
                    "bool");
    return nullptr;
  }
  long index = PyLong_AsLong(PyTuple_GET_ITEM(t, 1));
  int isArg = PyObject_IsTrue(PyTuple_GET_ITEM(t, 2));
  if ((index == -1 && PyErr_Occurred()) || isArg < 0) {
    Py_DECREF(t);
    return nullptr;
  }
  if (index < INT32_MIN || index > INT32_MAX) {
    Py_DECREF(t);
    PyErr_SetString(PyExc_OverflowError, "a value index beyond 32 bits");
    return nullptr;
  }
  PyObject *v = makeValue(cls, module, PyTuple_GET_ITEM(t, 0), int32_t(index),
                          isArg != 0);
  Py_DECREF(t);
  return v;
}

PyObject *valueRef(PyObject *self, void *) {
  auto *v = reinterpret_cast<ValueObject *>(self);
  PyObject *index = PyLong_FromLong(v->index);
  if (!index)
    return nullptr;
  PyObject *t = PyTuple_Pack(3, v->node, index, v->isArg ? Py_True : Py_False);
  Py_DECREF(index);
  return t;
}

//===----------------------------------------------------------------------===//
// Filling nodes from the held module
//===----------------------------------------------------------------------===//

/// The IRModule a traceir.Module holds.
api::IRModule &irOf(PyObject *module) {
  nb::object ir = nb::steal(PyObject_GetAttrString(module, "_ir"));
  if (!ir.is_valid())
    throw nb::python_error();
  return nb::cast<api::IRModule &>(ir);
}

/// Python strings for the kinds and targets of one fill, made once each.
class Strings {
public:
  ~Strings() {
    for (auto &[s, o] : made)
      Py_DECREF(o);
  }
  /// A node kind (a new reference): the four of a graph are made once.
  PyObject *kind(const std::string &s) {
    static PyObject *kinds[4] = {PyUnicode_InternFromString("pyop"),
                                 PyUnicode_InternFromString("constant"),
                                 PyUnicode_InternFromString("free"),
                                 PyUnicode_InternFromString("ret")};
    for (PyObject *k : kinds)
      if (k && s == PyUnicode_AsUTF8(k)) {
        Py_INCREF(k);
        return k;
      }
    return get(s);
  }
  /// A new reference.
  PyObject *get(const std::string &s) {
    auto [it, inserted] = made.try_emplace(s, nullptr);
    if (inserted) {
      it->second = PyUnicode_FromStringAndSize(s.data(), Py_ssize_t(s.size()));
      if (!it->second) {
        made.erase(it);
        return nullptr;
      }
      PyUnicode_InternInPlace(&it->second);
    }
    Py_INCREF(it->second);
    return it->second;
  }

private:
  std::unordered_map<std::string, PyObject *> made;
};

/// The nodes of one walk by id: the nodes whose results the args of later
/// ones reuse. Dense where the ids are (a graph's usually are).
class NodeTable {
public:
  void put(int64_t id, NodeObject *n) {
    if (base < 0)
      base = id;
    if (id >= base && id - base < 4 * count + 4096) {
      size_t i = size_t(id - base);
      if (i >= dense.size())
        dense.resize(std::max(i + 1, dense.size() * 2), nullptr);
      dense[i] = n;
    } else {
      sparse[id] = n;
    }
    ++count;
  }
  NodeObject *get(int64_t id) const {
    if (id >= base && id - base < int64_t(dense.size()) &&
        dense[size_t(id - base)])
      return dense[size_t(id - base)];
    auto it = sparse.find(id);
    return it == sparse.end() ? nullptr : it->second;
  }

private:
  int64_t base = -1, count = 0;
  std::vector<NodeObject *> dense;
  std::unordered_map<int64_t, NodeObject *> sparse;
};

/// Sets `n`'s fields from `info`. Tensor args reuse the result Values of the
/// nodes in `table` (filled first: a value is defined before its uses).
bool fill(NodeObject *n, const api::NodeInfo &info, PyObject *graph,
          Strings &strings, const NodeTable *table) {
  PyObject *op = strings.kind(info.kind);
  PyObject *target = info.kind == "pyop" ? strings.get(info.target)
                                         : (Py_INCREF(Py_None), Py_None);
  PyObject *results = PyTuple_New(info.numResults);
  PyObject *args = PyTuple_New(Py_ssize_t(info.args.size()));
  auto fail = [&] {
    Py_XDECREF(op);
    Py_XDECREF(target);
    Py_XDECREF(results);
    Py_XDECREF(args);
    return false;
  };
  if (!op || !target || !results || !args)
    return fail();
  for (int32_t i = 0; i < info.numResults; ++i) {
    PyObject *v = makeValue(valueClass, n->module, n->id, i, false);
    if (!v)
      return fail();
    PyTuple_SET_ITEM(results, i, v);
  }
  for (size_t i = 0; i < info.args.size(); ++i) {
    const api::CallArg &a = info.args[i];
    PyObject *item = nullptr;
    if (!a.isTensor) {
      try {
        item = scalarToPython(a.scalar).release().ptr();
      } catch (nb::python_error &e) {
        e.restore();
      } catch (const std::exception &e) {
        PyErr_SetString(PyExc_RuntimeError, e.what());
      }
    } else {
      NodeObject *def =
          a.value.isArg || !table ? nullptr : table->get(a.value.node);
      if (def && def->results && a.value.index >= 0 &&
          a.value.index < PyTuple_GET_SIZE(def->results)) {
        item = PyTuple_GET_ITEM(def->results, a.value.index);
        Py_INCREF(item);
      } else {
        PyObject *node = PyLong_FromLongLong(a.value.node);
        if (node) {
          item = makeValue(valueClass, n->module, node, a.value.index,
                           a.value.isArg);
          Py_DECREF(node);
        }
      }
    }
    if (!item)
      return fail();
    PyTuple_SET_ITEM(args, Py_ssize_t(i), item);
  }
  Py_XSETREF(n->op, op);
  Py_XSETREF(n->target, target);
  Py_XSETREF(n->results, results);
  Py_XSETREF(n->args, args);
  Py_INCREF(graph);
  Py_XSETREF(n->graph, graph);
  return true;
}

bool setError(const std::string &msg) {
  PyErr_SetString(traceirErrorType(), msg.c_str());
  return false;
}

/// Fills one node from the module (a node read before its graph was walked,
/// or reset by an edit).
bool fillOne(NodeObject *n) {
  try {
    api::IRModule &ir = irOf(n->module);
    int64_t id = PyLong_AsLongLong(n->id);
    if (id == -1 && PyErr_Occurred())
      return false;
    auto infos = ir.nodes({id}, /*full=*/false);
    if (!infos.ok())
      return setError(infos.error);
    const api::NodeInfo &info = infos.value.front();
    nb::object graph = nb::steal(PyLong_FromLongLong(info.graph));
    if (!graph.is_valid())
      return false;
    Strings strings;
    return fill(n, info, graph.ptr(), strings, nullptr);
  } catch (nb::python_error &e) {
    e.restore();
  } catch (const std::exception &e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  }
  return false;
}

/// The getter of the filled fields: raises for a stale node, fills one not
/// read yet.
PyObject *nodeField(PyObject *self, void *offset) {
  auto *n = reinterpret_cast<NodeObject *>(self);
  if (n->stale) {
    PyErr_SetObject(traceirErrorType(), n->stale);
    return nullptr;
  }
  if (!n->op && !fillOne(n))
    return nullptr;
  PyObject *v = *reinterpret_cast<PyObject **>(reinterpret_cast<char *>(n) +
                                               size_t(offset));
  Py_INCREF(v);
  return v;
}

PyGetSetDef field(const char *name, size_t offset, const char *doc) {
  return {name, nodeField, nullptr, doc, reinterpret_cast<void *>(offset)};
}

PyGetSetDef nodeGetSet[] = {
    field("op", offsetof(NodeObject, op),
          "The node's kind, as torch.fx names them where they match: "
          "\"pyop\" (a call; fx's \"call_function\"), \"constant\", "
          "\"free\", \"ret\" (fx's \"output\")."),
    field("target", offsetof(NodeObject, target),
          "The op name of a pyop (\"linear\"); None for the other kinds."),
    field("args", offsetof(NodeObject, args),
          "The argument list as the custom form prints it: tensor Values "
          "and Python scalars (None, bool, int, float, str, tuples and "
          "lists), in call order."),
    field("results", offsetof(NodeObject, results),
          "The result Values, in order."),
    field("_graph", offsetof(NodeObject, graph), "The graph's id."),
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyMemberDef nodeMembers[] = {
    {"_module", T_OBJECT_EX, offsetof(NodeObject, module), READONLY, nullptr},
    {"_id", T_OBJECT_EX, offsetof(NodeObject, id), READONLY, nullptr},
    {"_data", T_OBJECT, offsetof(NodeObject, data), 0, nullptr},
    {"_users", T_OBJECT, offsetof(NodeObject, users), 0, nullptr},
    {"_stale", T_OBJECT, offsetof(NodeObject, stale), 0, nullptr},
    {nullptr, 0, 0, 0, nullptr}};

PyMemberDef valueMembers[] = {
    {"_module", T_OBJECT_EX, offsetof(ValueObject, module), READONLY, nullptr},
    {nullptr, 0, 0, 0, nullptr}};

PyGetSetDef valueGetSet[] = {
    {"_ref", valueRef, nullptr, "(node, index, is_arg)", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

//===----------------------------------------------------------------------===//
// Module functions
//===----------------------------------------------------------------------===//

/// Pauses the cyclic GC while a graph's handles are made: collecting the
/// young generation every 700 of 300,000 new objects (and then the whole
/// heap, torch's included) costs several times the making.
class GCPause {
public:
  GCPause() : was(PyGC_Disable()) {}
  ~GCPause() {
    if (was)
      PyGC_Enable();
  }

private:
  int was;
};

PyObject *registryOf(nb::handle module) {
  PyObject *r = PyObject_GetAttrString(module.ptr(), "_nodes");
  if (!r)
    throw nb::python_error();
  if (!PyDict_Check(r)) {
    Py_DECREF(r);
    throw nb::type_error("Module._nodes is not a dict");
  }
  return r;
}

/// The canonical node `key` (a borrowed reference: the registry holds it).
NodeObject *nodeIn(PyObject *registry, PyObject *module, PyObject *key) {
  PyObject *found = PyDict_GetItemWithError(registry, key);
  if (found) {
    if (PyObject_TypeCheck(found, nodeClass))
      return reinterpret_cast<NodeObject *>(found);
    PyErr_SetString(PyExc_TypeError, "Module._nodes holds a non-Node");
    return nullptr;
  }
  if (PyErr_Occurred())
    return nullptr;
  auto *n = reinterpret_cast<NodeObject *>(nodeClass->tp_alloc(nodeClass, 0));
  if (!n)
    return nullptr;
  Py_INCREF(module);
  n->module = module;
  Py_INCREF(key);
  n->id = key;
  int err = PyDict_SetItem(registry, key, reinterpret_cast<PyObject *>(n));
  Py_DECREF(n); // the registry's reference is the one kept
  return err ? nullptr : n;
}

void checkRegistered() {
  if (!nodeClass || !valueClass)
    throw nb::type_error("traceir.ir has not registered its handle classes");
}

/// The canonical Node of `id` (not filled yet unless read before).
nb::object node(nb::handle module, int64_t id) {
  checkRegistered();
  nb::object registry = nb::steal(registryOf(module));
  nb::object key = nb::steal(PyLong_FromLongLong(id));
  NodeObject *n = nodeIn(registry.ptr(), module.ptr(), key.ptr());
  if (!n)
    throw nb::python_error();
  return nb::borrow(reinterpret_cast<PyObject *>(n));
}

/// The graph's nodes in program order, each filled.
nb::list walk(nb::handle module, int64_t graph) {
  checkRegistered();
  api::IRModule &ir = irOf(module.ptr());
  nb::object registry = nb::steal(registryOf(module));
  nb::object graphKey = nb::steal(PyLong_FromLongLong(graph));
  if (!graphKey.is_valid())
    throw nb::python_error();
  GCPause pause;
  NodeTable table;
  std::vector<NodeObject *> nodes;
  Strings strings;
  NodeObject *current = nullptr;
  bool failed = false;
  // No C++ exception crosses the walk: a failure stops it and is raised
  // after.
  std::string err = ir.walkGraph(
      graph, /*full=*/false,
      [&](int64_t id) {
        PyObject *key = PyLong_FromLongLong(id);
        current = key ? nodeIn(registry.ptr(), module.ptr(), key) : nullptr;
        Py_XDECREF(key);
        if (!current) {
          failed = true;
          return false;
        }
        return !current->op && !current->stale;
      },
      [&](int64_t id, const api::NodeInfo *info) {
        if (failed)
          return false;
        nodes.push_back(current);
        table.put(id, current);
        if (info && !fill(current, *info, graphKey.ptr(), strings, &table)) {
          failed = true;
          return false;
        }
        return true;
      });
  if (failed)
    throw nb::python_error();
  if (!err.empty())
    raise(err);
  nb::list out = nb::steal<nb::list>(PyList_New(Py_ssize_t(nodes.size())));
  for (size_t i = 0; i < nodes.size(); ++i) {
    Py_INCREF(nodes[i]);
    PyList_SET_ITEM(out.ptr(), Py_ssize_t(i),
                    reinterpret_cast<PyObject *>(nodes[i]));
  }
  return out;
}

/// Sets the users of every node of the graph (IRModule::graphUsers).
void fillUsers(nb::handle module, int64_t graph) {
  checkRegistered();
  api::IRModule &ir = irOf(module.ptr());
  std::vector<int64_t> ids = unwrap(ir.graphNodes(graph));
  std::vector<std::vector<int64_t>> users = unwrap(ir.graphUsers(graph));
  if (users.size() != ids.size())
    raise("graphUsers and graphNodes disagree");
  nb::object registry = nb::steal(registryOf(module));
  GCPause pause;
  NodeTable table;
  std::vector<NodeObject *> nodes(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    nb::object key = nb::steal(PyLong_FromLongLong(ids[i]));
    if (!key.is_valid() ||
        !(nodes[i] = nodeIn(registry.ptr(), module.ptr(), key.ptr())))
      throw nb::python_error();
    table.put(ids[i], nodes[i]);
  }
  for (size_t i = 0; i < ids.size(); ++i) {
    PyObject *t = PyTuple_New(Py_ssize_t(users[i].size()));
    if (!t)
      throw nb::python_error();
    for (size_t k = 0; k < users[i].size(); ++k) {
      NodeObject *u = table.get(users[i][k]);
      if (!u) {
        Py_DECREF(t);
        raise("a user of a node is not of its graph");
      }
      Py_INCREF(u);
      PyTuple_SET_ITEM(t, Py_ssize_t(k), reinterpret_cast<PyObject *>(u));
    }
    Py_XSETREF(nodes[i]->users, t);
  }
}

/// Applies IRModule::takeChanges to the module's nodes: resets the changed
/// ones, marks the erased ones stale ("node erased") and drops them from
/// the registry.
void applyChanges(nb::handle module) {
  checkRegistered();
  api::IRModule &ir = irOf(module.ptr());
  api::IRModule::Changes changes = ir.takeChanges();
  if (changes.changed.empty() && changes.erased.empty())
    return;
  nb::object registry = nb::steal(registryOf(module));
  for (int64_t id : changes.changed) {
    nb::object key = nb::steal(PyLong_FromLongLong(id));
    PyObject *n = PyDict_GetItemWithError(registry.ptr(), key.ptr());
    if (n && PyObject_TypeCheck(n, nodeClass))
      nodeReset(reinterpret_cast<NodeObject *>(n));
    else if (PyErr_Occurred())
      throw nb::python_error();
  }
  nb::object reason = nb::str("node erased");
  for (int64_t id : changes.erased) {
    nb::object key = nb::steal(PyLong_FromLongLong(id));
    PyObject *n = PyDict_GetItemWithError(registry.ptr(), key.ptr());
    if (!n) {
      if (PyErr_Occurred())
        throw nb::python_error();
      continue;
    }
    auto *node = reinterpret_cast<NodeObject *>(n);
    nodeReset(node);
    Py_INCREF(reason.ptr());
    Py_XSETREF(node->stale, reason.ptr());
    if (PyDict_DelItem(registry.ptr(), key.ptr()))
      throw nb::python_error();
  }
}

/// Marks every node of the registry stale with `reason` and empties it (a
/// pass pipeline rewrote the module).
void markAllStale(nb::handle module, const std::string &reason) {
  checkRegistered();
  nb::object registry = nb::steal(registryOf(module));
  nb::object why = nb::str(reason.c_str(), reason.size());
  // A list of them first: resetting drops references, and nothing may
  // change the dict while it is iterated.
  nb::object nodes = nb::steal(PyDict_Values(registry.ptr()));
  if (!nodes.is_valid())
    throw nb::python_error();
  PyDict_Clear(registry.ptr());
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(nodes.ptr()); ++i) {
    PyObject *value = PyList_GET_ITEM(nodes.ptr(), i);
    if (!PyObject_TypeCheck(value, nodeClass))
      continue;
    auto *n = reinterpret_cast<NodeObject *>(value);
    nodeReset(n);
    Py_INCREF(why.ptr());
    Py_XSETREF(n->stale, why.ptr());
  }
}

PyTypeObject *makeType(const char *name, int basicsize, PyType_Slot *slots) {
  PyType_Spec spec = {
      name, basicsize, 0,
      Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC, slots};
  PyObject *t = PyType_FromSpec(&spec);
  if (!t)
    throw nb::python_error();
  return reinterpret_cast<PyTypeObject *>(t);
}

} // namespace

void traceir::bindings::bindHandles(nb::module_ &m) {
  PyType_Slot nodeSlots[] = {
      {Py_tp_doc, const_cast<char *>("The native part of traceir.ir.Node.")},
      {Py_tp_dealloc, reinterpret_cast<void *>(nodeDealloc)},
      {Py_tp_traverse, reinterpret_cast<void *>(nodeTraverse)},
      {Py_tp_clear, reinterpret_cast<void *>(nodeClear)},
      {Py_tp_new, reinterpret_cast<void *>(nodeNew)},
      {Py_tp_members, nodeMembers},
      {Py_tp_getset, nodeGetSet},
      {0, nullptr}};
  PyType_Slot valueSlots[] = {
      {Py_tp_doc, const_cast<char *>("The native part of traceir.ir.Value.")},
      {Py_tp_dealloc, reinterpret_cast<void *>(valueDealloc)},
      {Py_tp_traverse, reinterpret_cast<void *>(valueTraverse)},
      {Py_tp_clear, reinterpret_cast<void *>(valueClear)},
      {Py_tp_new, reinterpret_cast<void *>(valueNew)},
      {Py_tp_members, valueMembers},
      {Py_tp_getset, valueGetSet},
      {0, nullptr}};
  m.attr("_NodeBase") = nb::steal(reinterpret_cast<PyObject *>(
      makeType("traceir._traceir._NodeBase", sizeof(NodeObject), nodeSlots)));
  m.attr("_ValueBase") = nb::steal(reinterpret_cast<PyObject *>(makeType(
      "traceir._traceir._ValueBase", sizeof(ValueObject), valueSlots)));

  m.def(
      "_register_handles",
      [](nb::handle node, nb::handle value) {
        nb::handle nodeBase =
            nb::module_::import_("traceir._traceir").attr("_NodeBase");
        nb::handle valueBase =
            nb::module_::import_("traceir._traceir").attr("_ValueBase");
        if (!PyType_Check(node.ptr()) || !PyType_Check(value.ptr()) ||
            !PyType_IsSubtype(
                reinterpret_cast<PyTypeObject *>(node.ptr()),
                reinterpret_cast<PyTypeObject *>(nodeBase.ptr())) ||
            !PyType_IsSubtype(
                reinterpret_cast<PyTypeObject *>(value.ptr()),
                reinterpret_cast<PyTypeObject *>(valueBase.ptr())))
          throw nb::type_error("_register_handles(Node, Value) takes "
                               "subclasses of _NodeBase and _ValueBase");
        // Held for the interpreter's life, as the classes are.
        Py_INCREF(node.ptr());
        Py_INCREF(value.ptr());
        Py_XDECREF(reinterpret_cast<PyObject *>(nodeClass));
        Py_XDECREF(reinterpret_cast<PyObject *>(valueClass));
        nodeClass = reinterpret_cast<PyTypeObject *>(node.ptr());
        valueClass = reinterpret_cast<PyTypeObject *>(value.ptr());
      },
      "Which classes traceir.ir's handles are made of.");
  m.def("_node", &node, nb::arg("module"), nb::arg("id"),
        "The module's canonical Node of `id`.");
  m.def("_walk", &walk, nb::arg("module"), nb::arg("graph"),
        "The graph's nodes in program order, filled.");
  m.def("_fill_users", &fillUsers, nb::arg("module"), nb::arg("graph"),
        "Sets the users of every node of the graph.");
  m.def("_apply_changes", &applyChanges, nb::arg("module"),
        "Brings the module's nodes up to date with its last edits.");
  m.def("_mark_all_stale", &markAllStale, nb::arg("module"), nb::arg("reason"));
}
