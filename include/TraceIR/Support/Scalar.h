//===- Scalar.h - Python scalars of a call, without MLIR --------*- C++ -*-===//
//
// A trace.pyop's Python scalars travel out of band (Dialect/Scalars.h maps
// them to attributes). Outside MLIR they take two forms: a ScalarValue is
// the scalar as the IR holds it (a tree of None, bool, int, float, str,
// list and tuple), which is what a saved executable stores; a Scalar is its
// decoded form, what kernels and the argument decoders of OpArgs.h read.
// decodeScalar is the one decoder between them: buildExecutable and the
// registry's inference turn each attribute into a ScalarValue and decode
// it, and loading a saved executable decodes the stored ScalarValues, so
// every path reads the same Scalars.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_SUPPORT_SCALAR_H
#define TRACEIR_SUPPORT_SCALAR_H

#include <cstdint>
#include <string>
#include <vector>

namespace traceir {

/// A Python scalar as the IR holds it.
struct ScalarValue {
  enum class Kind : uint8_t { None, Bool, Int, Float, String, List, Tuple };
  Kind kind = Kind::None;
  bool b = false;
  int64_t i = 0;
  double f = 0;
  std::string s;
  std::vector<ScalarValue> elements; ///< List and Tuple

  bool operator==(const ScalarValue &) const = default;
};

/// A Python scalar argument, decoded for kernels.
struct Scalar {
  enum class Kind : uint8_t { None, Int, Float, Bool, String, IntList, Other };
  Kind kind = Kind::None;
  int64_t i = 0;
  double f = 0;
  bool b = false;
  std::string s;
  std::vector<int64_t> ints; ///< an int list or tuple (or one int)
  /// A list or tuple of numbers (ints and floats, not bools) as doubles,
  /// as scale_factors=[2.0, 1.5] reads.
  std::vector<double> numbers;

  bool isNone() const { return kind == Kind::None; }
  /// A number as a double (ints and bools convert).
  double number() const {
    return kind == Kind::Float ? f : kind == Kind::Bool ? double(b) : double(i);
  }
};

/// The decoded form of `value`: an int also reads as a one-element int
/// list; a list or tuple of ints, or of bools (as 0/1), is an IntList; any
/// other list or tuple is Other, with its Python literal in `s`. A list or
/// tuple of ints and floats also has them in `numbers`.
Scalar decodeScalar(const ScalarValue &value);

/// `value` as a Python literal (None, True, -1, 0.5, "s", (1,), [1, 2]).
std::string scalarLiteral(const ScalarValue &value);

} // namespace traceir

#endif // TRACEIR_SUPPORT_SCALAR_H
