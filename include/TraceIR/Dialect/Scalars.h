//===- Scalars.h - Python scalars as MLIR attributes ------------*- C++ -*-===//
//
// A trace.pyop keeps the Python scalars of a call out of band. They map to
// attributes as follows, so every one round-trips exactly:
//   int -> IntegerAttr (i64)      float -> FloatAttr (f64)
//   bool -> BoolAttr              None -> #trace.none
//   str -> StringAttr             tuple -> ArrayAttr
//   list -> #trace.list<[...]>
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_DIALECT_SCALARS_H
#define TRACEIR_DIALECT_SCALARS_H

#include "TraceIR/Support/Scalar.h"

#include "mlir/IR/Attributes.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>

namespace mlir::trace {

/// Whether `attr` encodes a Python scalar (recursively for tuples and lists).
bool isScalarAttr(Attribute attr);

/// Prints `attr` as a Python literal: `None`, `True`, `-1`, `0.2`, `"s"`,
/// `(1,)`, `[1, 2]`. Floats print the shortest decimal that reads back to the
/// same double, always with a `.` or an exponent so they stay floats; a
/// non-finite float prints as the hexadecimal `0x7FF0000000000000 : f64`
/// because MLIR's parser has no literal for it.
void printScalar(llvm::raw_ostream &os, Attribute attr);
std::string scalarToString(Attribute attr);

/// The shortest decimal text of a finite double that parses back to it
/// exactly, with a `.` or an exponent (Python's repr, e.g. `1e-05`, `2.0`).
std::string formatFloat(double value);

/// Parses one Python-literal scalar as printed by printScalar.
ParseResult parseScalar(AsmParser &parser, Attribute &result);
/// Parses a scalar if the next token can start one (not an SSA operand).
OptionalParseResult parseOptionalScalar(AsmParser &parser, Attribute &result);

// Typed readers used by shape inference and the runtime.
bool isNone(Attribute attr);
std::optional<int64_t> getInt(Attribute attr);
std::optional<double> getNumber(Attribute attr); ///< int or float
std::optional<bool> getBool(Attribute attr);
/// An int, or a tuple/list of ints (as PyTorch accepts `dim=1` or `(1, 2)`).
std::optional<llvm::SmallVector<int64_t>> getIntList(Attribute attr);

/// The scalar `attr` as code without MLIR holds it: the runtime, a saved
/// executable, and the argument decoders of Support/OpArgs.h (the verifier
/// checked that it is one, see isScalarAttr; anything else comes as its
/// text, a string).
traceir::ScalarValue toScalarValue(Attribute attr);

} // namespace mlir::trace

#endif // TRACEIR_DIALECT_SCALARS_H
