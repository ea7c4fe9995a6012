//===- Scalars.cpp - Python scalars as MLIR attributes --------------------===//

#include "TraceIR/Dialect/Scalars.h"
#include "TraceIR/Dialect/TraceDialect.h"
#include "TraceIR/Support/NestingDepth.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace mlir;
using namespace mlir::trace;

static bool isI64(Attribute attr) {
  auto i = dyn_cast<IntegerAttr>(attr);
  return i && i.getType().isSignlessInteger(64);
}

static bool isF64(Attribute attr) {
  auto f = dyn_cast<FloatAttr>(attr);
  return f && f.getType().isF64();
}

/// `depth` tuples and lists enclose `attr`.
static bool isScalarAttrAt(Attribute attr, int depth) {
  if (!attr)
    return false;
  if (isa<BoolAttr, StringAttr, NoneAttr>(attr) || isI64(attr) || isF64(attr))
    return true;
  if (depth >= traceir::kMaxScalarDepth)
    return false;
  ArrayAttr elems;
  if (auto list = dyn_cast<ListAttr>(attr))
    elems = list.getElements();
  else
    elems = dyn_cast<ArrayAttr>(attr);
  return elems && llvm::all_of(elems, [&](Attribute e) {
           return isScalarAttrAt(e, depth + 1);
         });
}

bool mlir::trace::isScalarAttr(Attribute attr) {
  return isScalarAttrAt(attr, 0);
}

std::string mlir::trace::formatFloat(double value) {
  // Python's repr: the shortest %g precision that reads back exactly.
  char buf[64];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, value);
    if (std::strtod(buf, nullptr) == value)
      break;
  }
  std::string text = buf;
  // MLIR's float literals need a '.' (Python's repr has none in "1e-05").
  if (text.find('.') == std::string::npos) {
    size_t e = text.find_first_of("eE");
    text.insert(e == std::string::npos ? text.size() : e, ".0");
  }
  return text;
}

static void printList(llvm::raw_ostream &os, ArrayAttr elems, char open,
                      char close, bool isTuple) {
  os << open;
  llvm::interleaveComma(elems, os,
                        [&](Attribute elem) { printScalar(os, elem); });
  if (isTuple && elems.size() == 1)
    os << ',';
  os << close;
}

void mlir::trace::printScalar(llvm::raw_ostream &os, Attribute attr) {
  if (isa<NoneAttr>(attr)) {
    os << "None";
  } else if (auto b = dyn_cast<BoolAttr>(attr)) {
    os << (b.getValue() ? "True" : "False");
  } else if (isI64(attr)) {
    os << cast<IntegerAttr>(attr).getInt();
  } else if (auto f = dyn_cast<FloatAttr>(attr)) {
    double v = f.getValueAsDouble();
    if (std::isfinite(v)) {
      os << formatFloat(v);
    } else {
      llvm::APInt bits = f.getValue().bitcastToAPInt();
      os << llvm::format_hex(bits.getZExtValue(), 18, /*Upper=*/true);
      os << " : f64";
    }
  } else if (auto s = dyn_cast<StringAttr>(attr)) {
    os << '"';
    llvm::printEscapedString(s.getValue(), os);
    os << '"';
  } else if (auto list = dyn_cast<ListAttr>(attr)) {
    printList(os, list.getElements(), '[', ']', /*isTuple=*/false);
  } else if (auto tuple = dyn_cast<ArrayAttr>(attr)) {
    printList(os, tuple, '(', ')', /*isTuple=*/true);
  } else {
    os << "<not a scalar: " << attr << ">";
  }
}

std::string mlir::trace::scalarToString(Attribute attr) {
  std::string text;
  llvm::raw_string_ostream os(text);
  printScalar(os, attr);
  return text;
}

// How many tuples and lists enclose the scalar being parsed on this thread
// (parseScalar and parseScalarSequence recurse through each other).
static thread_local int scalarDepth = 0;

static ParseResult parseScalarSequence(AsmParser &parser, char close,
                                       SmallVectorImpl<Attribute> &elems,
                                       bool &sawTrailingComma) {
  traceir::NestingGuard guard(scalarDepth);
  if (guard.tooDeep())
    return parser.emitError(parser.getCurrentLocation(),
                            "tuples and lists nested deeper than ")
           << traceir::kMaxScalarDepth << " levels";
  sawTrailingComma = false;
  auto parseClose = [&]() {
    return close == ')' ? parser.parseOptionalRParen()
                        : parser.parseOptionalRSquare();
  };
  if (succeeded(parseClose()))
    return success();
  while (true) {
    Attribute elem;
    if (parseScalar(parser, elem))
      return failure();
    elems.push_back(elem);
    if (succeeded(parseClose()))
      return success();
    if (parser.parseComma())
      return failure();
    if (succeeded(parseClose())) {
      sawTrailingComma = true;
      return success();
    }
  }
}

OptionalParseResult mlir::trace::parseOptionalScalar(AsmParser &parser,
                                                     Attribute &result) {
  MLIRContext *ctx = parser.getContext();
  Builder b(ctx);
  if (succeeded(parser.parseOptionalKeyword("None"))) {
    result = NoneAttr::get(ctx);
    return success();
  }
  if (succeeded(parser.parseOptionalKeyword("True"))) {
    result = b.getBoolAttr(true);
    return success();
  }
  if (succeeded(parser.parseOptionalKeyword("False"))) {
    result = b.getBoolAttr(false);
    return success();
  }
  std::string str;
  if (succeeded(parser.parseOptionalString(&str))) {
    result = b.getStringAttr(str);
    return success();
  }
  SmallVector<Attribute> elems;
  bool trailingComma;
  if (succeeded(parser.parseOptionalLParen())) {
    if (parseScalarSequence(parser, ')', elems, trailingComma))
      return failure();
    result = b.getArrayAttr(elems);
    return success();
  }
  if (succeeded(parser.parseOptionalLSquare())) {
    if (parseScalarSequence(parser, ']', elems, trailingComma))
      return failure();
    result = ListAttr::get(ctx, b.getArrayAttr(elems));
    return success();
  }
  // Numbers: an untyped integer literal parses as i64 and a float literal as
  // f64; a hexadecimal literal needs `: f64` to be a float.
  SMLoc loc = parser.getCurrentLocation();
  Attribute attr;
  OptionalParseResult parsed = parser.parseOptionalAttribute(attr);
  if (!parsed.has_value())
    return std::nullopt;
  if (failed(*parsed))
    return failure();
  if (!isI64(attr) && !isF64(attr))
    return parser.emitError(loc, "expected a Python scalar (int, float, bool, "
                                 "None, str, tuple or list), got ")
           << attr;
  result = attr;
  return success();
}

ParseResult mlir::trace::parseScalar(AsmParser &parser, Attribute &result) {
  SMLoc loc = parser.getCurrentLocation();
  OptionalParseResult parsed = parseOptionalScalar(parser, result);
  if (!parsed.has_value())
    return parser.emitError(loc, "expected a Python scalar (int, float, bool, "
                                 "None, str, tuple or list)");
  return *parsed;
}

bool mlir::trace::isNone(Attribute attr) {
  return isa_and_nonnull<NoneAttr>(attr);
}

std::optional<int64_t> mlir::trace::getInt(Attribute attr) {
  if (attr && isI64(attr))
    return cast<IntegerAttr>(attr).getInt();
  return std::nullopt;
}

std::optional<double> mlir::trace::getNumber(Attribute attr) {
  if (!attr)
    return std::nullopt;
  if (isI64(attr))
    return static_cast<double>(cast<IntegerAttr>(attr).getInt());
  if (isF64(attr))
    return cast<FloatAttr>(attr).getValueAsDouble();
  return std::nullopt;
}

std::optional<bool> mlir::trace::getBool(Attribute attr) {
  if (auto b = dyn_cast_or_null<BoolAttr>(attr))
    return b.getValue();
  // PyTorch accepts 0/1 for bool flags.
  if (auto i = getInt(attr); i && (*i == 0 || *i == 1))
    return *i == 1;
  return std::nullopt;
}

std::optional<llvm::SmallVector<int64_t>>
mlir::trace::getIntList(Attribute attr) {
  if (auto i = getInt(attr))
    return llvm::SmallVector<int64_t>{*i};
  ArrayAttr elems;
  if (auto list = dyn_cast_or_null<ListAttr>(attr))
    elems = list.getElements();
  else
    elems = dyn_cast_or_null<ArrayAttr>(attr);
  if (!elems)
    return std::nullopt;
  llvm::SmallVector<int64_t> out;
  for (Attribute e : elems) {
    auto i = getInt(e);
    if (!i)
      return std::nullopt;
    out.push_back(*i);
  }
  return out;
}

traceir::ScalarValue mlir::trace::toScalarValue(Attribute attr) {
  using K = traceir::ScalarValue::Kind;
  traceir::ScalarValue v;
  if (isNone(attr)) {
    v.kind = K::None;
  } else if (auto b = dyn_cast<BoolAttr>(attr)) {
    v.kind = K::Bool;
    v.b = b.getValue();
  } else if (auto i = dyn_cast<IntegerAttr>(attr)) {
    v.kind = K::Int;
    v.i = i.getInt();
  } else if (auto f = dyn_cast<FloatAttr>(attr)) {
    v.kind = K::Float;
    v.f = f.getValueAsDouble();
  } else if (auto s = dyn_cast<StringAttr>(attr)) {
    v.kind = K::String;
    v.s = s.getValue().str();
  } else if (auto list = dyn_cast<ListAttr>(attr)) {
    v.kind = K::List;
    for (Attribute e : list.getElements())
      v.elements.push_back(toScalarValue(e));
  } else if (auto tuple = dyn_cast<ArrayAttr>(attr)) {
    v.kind = K::Tuple;
    for (Attribute e : tuple)
      v.elements.push_back(toScalarValue(e));
  } else {
    // Not a scalar (the verifier rejects these): its text, as a string.
    v.kind = K::String;
    v.s = scalarToString(attr);
  }
  return v;
}
