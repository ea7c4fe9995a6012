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
#include "TraceIR/Runtime/Scalar.h"

#include <cstdint>
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
  /// The location as MLIR prints it, without `loc(...)`.
  std::string location;
  int64_t graph = -1;
};

/// A graph argument.
struct GraphArg {
  std::string name; ///< the trace.param or trace.input name
  bool isParam = false;
  bool donated = false;
  TypeInfo type;
};

/// The argument list the op registry documents for `op` (PyTorch's names
/// and defaults, e.g. "input, weight, bias=None"), or an empty string for an
/// op it does not know.
std::string opSignature(const std::string &op);

class IRModule {
public:
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
  Result<TypeInfo> valueType(const ValueRef &value);
  /// The nodes that use `value`, in program order, each once.
  Result<std::vector<int64_t>> users(const ValueRef &value);

  struct Impl;
  std::unique_ptr<Impl> impl;

private:
  IRModule();
};

} // namespace traceir::api

#endif // TRACEIR_API_IR_H
