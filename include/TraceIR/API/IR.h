//===- IR.h - A TraceIR module held for language bindings -------*- C++ -*-===//
//
// The module a Python `traceir.Module` holds: parsed once, walked, verified,
// rewritten by passes and compiled in place, printed on demand. Like MLIR's C
// API it hands out opaque handles (integer ids) and standard-library values
// only, so the nanobind extension, which needs RTTI and exceptions, sees no
// LLVM or MLIR header (see API.h).
//
// A handle never dangles: ids are never reused within a module, every call
// resolves its ids and fails with a message instead of touching freed IR
// ("node erased", or "module changed by a pass" for a handle taken before
// a pass pipeline rewrote the module).
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_API_IR_H
#define TRACEIR_API_IR_H

#include "TraceIR/API/API.h"
#include "TraceIR/Support/Scalar.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace traceir::api {

/// A value of a graph: result `index` of node `node`, or, with `isArg`,
/// argument `index` of graph `node` (a parameter or an input).
struct ValueRef {
  int64_t node = -1;
  int32_t index = 0;
  bool isArg = false;
};

/// A value's type, as text ("tensor<2x3xf32>") and in parts.
struct TypeInfo {
  std::string text;
  bool ranked = false;
  /// Dimensions; -1 for a dynamic one.
  std::vector<int64_t> shape;
  /// The element type as the IR prints it ("f32", "i64", "i1", "bf16").
  std::string dtype;
};

/// One argument of a call as the custom form prints it: a tensor operand
/// or a Python scalar.
struct CallArg {
  bool isTensor = false;
  ValueRef value;     ///< isTensor
  ScalarValue scalar; ///< otherwise
};

/// Where a built node comes from: a module path (a NameLoc), a file
/// position, both (the path around the position, as the importers write
/// it), or neither (unknown).
struct Location {
  std::string name;
  std::string file;
  int line = 0, column = 0;
  /// When set, node `copyFrom`'s location exactly (fused, call-site and
  /// all), and the fields above are ignored.
  int64_t copyFrom = -1;
};

/// What walking reads of one node, in one call.
struct NodeInfo {
  /// "pyop", "constant", "free" or "ret" (or the op's full name for any
  /// other op, which only a pass of the MLIR pipeline puts in a graph).
  std::string kind;
  /// The op name of a pyop ("linear"); empty for the others.
  std::string target;
  /// A pyop's re-interleaved argument list; the operands of the others.
  std::vector<CallArg> args;
  std::string cconv;
  std::vector<ScalarValue> scalars;
  std::vector<TypeInfo> results;
  /// How many results it has (set by nodes() without `full` too).
  int32_t numResults = 0;
  /// The location as MLIR prints it, without `loc(...)`.
  std::string location;
  /// The same in parts, where it has the importers' form (a name, a file
  /// position, or a name around a position; `locationParts` false for any
  /// other, such as a fused location).
  Location locationParts;
  bool hasLocationParts = false;
  int64_t graph = -1;
};

/// A graph argument.
struct GraphArg {
  std::string name; ///< the trace.param or trace.input name
  bool isParam = false;
  bool donated = false;
  TypeInfo type;
  /// Its location in parts, as NodeInfo::locationParts.
  Location locationParts;
  bool hasLocationParts = false;
};

/// The argument list the op registry documents for `op` (PyTorch's names
/// and defaults, e.g. "input, weight, bias=None"), or an empty string for an
/// op it does not know.
std::string opSignature(const std::string &op);

/// Where nodes go: before node `anchor` of `graph` (or after it, with
/// `after`); anchor -1 is before the graph's `ret`.
struct InsertPoint {
  int64_t graph = -1;
  int64_t anchor = -1;
  bool after = false;
};

class IRModule {
public:
  /// An empty module, to add graphs to, at `loc` (unknown: `name`:0:0, as
  /// the parser places a module without a location).
  static std::unique_ptr<IRModule> create(const std::string &name,
                                          const Location &loc = {});
  /// The module op's location in parts (false where it has another form).
  bool moduleLocation(Location &parts) const;
  /// Parses and verifies MLIR text (errors name file:line:col).
  static Result<std::unique_ptr<IRModule>>
  parse(const std::string &text, const std::string &sourceName = "<string>");
  /// Imports a 2017 ANF trace, as trace-translate --import-anf.
  static Result<std::unique_ptr<IRModule>>
  importANF(const std::string &text,
            const std::string &sourceName = "<string>");
  ~IRModule();

  /// An independent copy (its own handles).
  std::unique_ptr<IRModule> clone() const;
  /// The module's text, with locations (what trace-opt prints).
  std::string print() const;
  /// Verifies the module; returns the verifier's message (with its
  /// location) or "".
  std::string verify();
  /// Runs a pass pipeline in place ("canonicalize,free-dead-tensors", graph
  /// passes nested under trace.graph). Every handle taken before becomes
  /// stale, whether the pipeline succeeds or not. Returns an error or "".
  std::string runPasses(const std::string &pipeline);
  /// How many times a pipeline has run on this module.
  uint64_t generation() const;

  /// The graphs, in order.
  std::vector<int64_t> graphs();
  Result<std::string> graphName(int64_t graph);
  Result<std::vector<GraphArg>> graphArgs(int64_t graph);
  /// The graph's nodes in program order (`ret` last).
  Result<std::vector<int64_t>> graphNodes(int64_t graph);
  Result<NodeInfo> node(int64_t node);
  /// node() of many nodes in one call. Without `full`, each has its kind,
  /// target, args, numResults and graph only (what walking a graph reads
  /// first), not its cconv, scalars, result types or location.
  Result<std::vector<NodeInfo>> nodes(const std::vector<int64_t> &ids,
                                      bool full);
  /// Visits the graph's nodes in program order, in one pass: `visit(id,
  /// info)` gets what nodes() reads (with `full`, what node() reads) where
  /// `want(id)`, else null; a visit returning false stops the walk. `info`
  /// is valid during the call only.
  std::string
  walkGraph(int64_t graph, bool full, const std::function<bool(int64_t)> &want,
            const std::function<bool(int64_t, const NodeInfo *)> &visit);
  /// For each node of the graph, in program order, the nodes that use any
  /// of its results (in program order, each once): users() of a whole graph
  /// in one pass.
  Result<std::vector<std::vector<int64_t>>> graphUsers(int64_t graph);
  Result<TypeInfo> valueType(const ValueRef &value);
  /// The nodes that use `value`, in program order, each once.
  Result<std::vector<int64_t>> users(const ValueRef &value);
  /// A constant node's value (dtype by safetensors name, row-major bytes).
  Result<Tensor> constantValue(int64_t node);

  // Building and rewriting. Every edit of a graph checks it holds no
  // trace.free (moving values past their frees would be wrong): strip them
  // first, and run free-dead-tensors again after.

  /// A pyop calling `target` with `args` in call order. `resultTypes` (MLIR
  /// type text) are inferred by the registry when empty (an unknown op
  /// needs them). Returns the new node; the op is verified on creation.
  Result<int64_t> createPyOp(const InsertPoint &at, const std::string &target,
                             const std::vector<CallArg> &args,
                             const std::vector<std::string> &resultTypes,
                             const Location &loc);
  /// A constant of `dtype` (a safetensors name: "F32", "I64", "BOOL", ...)
  /// and `shape` holding `bytes` (row-major, little-endian).
  Result<int64_t> createConstant(const InsertPoint &at,
                                 const std::string &dtype,
                                 const std::vector<int64_t> &shape,
                                 const std::string &bytes, const Location &loc);
  /// Replaces every use of `from` by `to` (same graph, `to` defined before
  /// every use), except the uses by `to`'s own node (the usual rewrite
  /// wraps `from` in a new node and makes it the value everyone else reads).
  /// Where the types differ, the users' result types are inferred again
  /// downstream (and the graph's result types follow); if that fails, nothing
  /// changes and the error says where.
  std::string replaceAllUsesWith(const ValueRef &from, const ValueRef &to);
  /// Erases a node none of whose results is used (a trace.free also drops
  /// its graph's memory plan, made for that free).
  std::string eraseNode(int64_t node);
  /// Erases the nodes whose results are unused and that have no effect
  /// (not in-place, not random, known to the registry), until none is left;
  /// returns how many.
  Result<int64_t> eliminateDeadCode(int64_t graph);
  /// Erases every trace.free of the module, and the memory plans
  /// (plan-memory) made for them; returns how many frees.
  int64_t stripFrees();
  /// A new graph `name` with no arguments, returning nothing.
  Result<int64_t> addGraph(const std::string &name, const Location &loc);
  /// Appends an argument of MLIR type `type`: a parameter named by its
  /// state_dict key, or an input (`donated`: the graph may free it).
  Result<ValueRef> addArgument(int64_t graph, const std::string &name,
                               bool isParam, bool donated,
                               const std::string &type, const Location &loc);
  /// Makes the graph return `values` (its result types follow); the ret
  /// gets `loc` unless it is unknown.
  std::string setOutputs(int64_t graph, const std::vector<ValueRef> &values,
                         const Location &loc);

  /// What the edits since the last call changed, for a binding that keeps
  /// what it read of nodes: `changed` nodes may have other arguments,
  /// result types or users (each has a handle out; in no order, possibly
  /// twice); `erased` were erased. A pipeline run empties both (every
  /// handle is stale then).
  struct Changes {
    std::vector<int64_t> changed, erased;
  };
  Changes takeChanges();

  struct Impl;
  std::unique_ptr<Impl> impl;

private:
  IRModule();
};

} // namespace traceir::api

#endif // TRACEIR_API_IR_H
