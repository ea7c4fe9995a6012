//===- ANFImporter.cpp - Import the 2017 text trace form ------------------===//
//
// A hand-written recursive-descent reader: the 2017 form is a line-oriented
// text of its own (not MLIR), small enough that a lexer generator or MLIR's
// AsmParser would not fit it better.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Import/ANFImporter.h"
#include "TraceIR/Dialect/OpRegistry.h"
#include "TraceIR/Dialect/ParseSource.h"
#include "TraceIR/Dialect/Scalars.h"
#include "TraceIR/Dialect/TraceDialect.h"
#include "TraceIR/Support/CheckedMath.h"
#include "TraceIR/Support/NestingDepth.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/SourceMgr.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

using namespace mlir;
using namespace mlir::trace;

namespace {

/// An argument of a traced call: a tensor variable or a Python scalar.
struct Arg {
  Value tensor;
  Attribute scalar;
  llvm::SMLoc loc;
};

/// A variable: one tensor, or a tuple of tensors (a tuple input).
struct Var {
  SmallVector<Value, 1> elems;
  bool isTuple = false;
  Location defLoc;
};

/// How a 2017 name maps onto a registry op: its argument list, arity and a
/// rewrite of the arguments into the canonical (ATen) order.
struct NameMapping {
  llvm::StringLiteral name;
  llvm::StringLiteral canonical;
  llvm::StringLiteral arguments;
  unsigned minArgs, maxArgs;
  llvm::StringLiteral note;
};

const NameMapping kNameTable[] = {
    {"Embedding", "embedding",
     "indices, weight, padding_idx, max_norm, norm_type, scale_grad_by_freq, "
     "sparse",
     2, 7,
     "reordered to (weight, indices, padding_idx, scale_grad_by_freq, "
     "sparse); padding_idx None becomes -1; max_norm must be None"},
    {"Dropout", "dropout", "input, p, train, inplace", 1, 4,
     "(input, p, train); inplace=True maps to `dropout_`"},
    {"Linear", "linear", "input, weight, bias", 2, 3, "bias may be None"},
    {"Index", "select", "tuple or tensor, index", 2, 2,
     "on a tuple: resolved statically to the element (no op); on a tensor: "
     "`select(t, 0, index)`, a view"},
    {"Add", "add", "a, b", 2, 2, "either may be a number"},
    {"Sub", "sub", "a, b", 2, 2, "either may be a number"},
    {"Mul", "mul", "a, b", 2, 2, "either may be a number"},
    {"Div", "div", "a, b", 2, 2, "either may be a number"},
    {"Tanh", "tanh", "a", 1, 1, ""},
    {"Sigmoid", "sigmoid", "a", 1, 1, ""},
    {"ReLU", "relu", "a", 1, 1, ""},
    {"Exp", "exp", "a", 1, 1, ""},
    {"Log", "log", "a", 1, 1, ""},
    {"Neg", "neg", "a", 1, 1, ""},
    {"MatMul", "matmul", "a, b", 2, 2, ""},
    {"View", "view", "a, shape tuple", 2, 2, ""},
    {"Transpose", "transpose", "a, dim0, dim1", 3, 3, ""},
    {"Softmax", "softmax", "a, dim", 2, 2, ""},
    {"LogSoftmax", "log_softmax", "a, dim", 2, 2, ""},
    {"Concat", "cat", "tensors..., dim", 2, ~0u, ""},
    {"BatchNorm", "batch_norm",
     "input, weight, bias, running_mean, running_var, training, momentum, eps",
     8, 8, "weight and bias may be None"},
    {"LSTM", "lstm",
     "input, h0, c0, then per layer w_ih, w_hh, b_ih, b_hh, then num_layers, "
     "dropout, train",
     6, ~0u,
     "results: output, h_n, c_n; becomes (input, h0, c0, weights..., "
     "has_biases, num_layers, dropout, train, bidirectional=False, "
     "batch_first=False); 2 weights per layer mean no biases"},
};

const NameMapping *lookupName(StringRef name) {
  for (const NameMapping &m : kNameTable)
    if (m.name == name)
      return &m;
  return nullptr;
}

class Importer {
public:
  Importer(llvm::SourceMgr &sm, MLIRContext *ctx)
      : sm(sm), ctx(ctx), b(ctx),
        buffer(sm.getMemoryBuffer(sm.getMainFileID())->getBuffer()),
        fileName(b.getStringAttr(
            sm.getMemoryBuffer(sm.getMainFileID())->getBufferIdentifier())) {}

  OwningOpRef<ModuleOp> run();

private:
  //===--- Diagnostics ---------------------------------------------------===//
  Location locOf(const char *p) {
    auto [line, col] = sm.getLineAndColumn(llvm::SMLoc::getFromPointer(p));
    return FileLineColLoc::get(fileName, line, col);
  }
  InFlightDiagnostic error(const char *p) { return emitError(locOf(p)); }
  InFlightDiagnostic error() { return error(cur); }

  //===--- Lexing within the current line --------------------------------===//
  void skipSpace() {
    while (cur < lineEnd && (*cur == ' ' || *cur == '\t' || *cur == '\r'))
      ++cur;
  }
  bool atEnd() {
    skipSpace();
    return cur >= lineEnd;
  }
  bool consume(char c) {
    skipSpace();
    if (cur < lineEnd && *cur == c) {
      ++cur;
      return true;
    }
    return false;
  }
  LogicalResult expect(char c, const char *what) {
    if (consume(c))
      return success();
    return error() << "expected " << what;
  }
  static bool isWordChar(char c) {
    return isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
  }
  /// A bare word: [A-Za-z0-9_.]+.
  StringRef word() {
    skipSpace();
    const char *start = cur;
    while (cur < lineEnd && isWordChar(*cur))
      ++cur;
    return StringRef(start, cur - start);
  }
  bool peekWord(StringRef w) {
    skipSpace();
    const char *save = cur;
    bool match = word() == w;
    cur = save;
    return match;
  }
  /// `%name`; the name may be digits or a word.
  FailureOr<StringRef> varName() {
    skipSpace();
    if (cur >= lineEnd || *cur != '%')
      return (error() << "expected a variable like %0", failure());
    ++cur;
    StringRef name = word();
    if (name.empty())
      return (error() << "expected a variable name after '%'", failure());
    return name;
  }

  FailureOr<Type> parseTensorType();
  FailureOr<Attribute> parseLiteral();
  FailureOr<Attribute> parseNumber();
  FailureOr<Attribute> parseString();

  //===--- Lines
  //-----------------------------------------------------------===//
  LogicalResult parseLine();
  LogicalResult parseGraphLine(const char *kwLoc);
  LogicalResult parseParamOrInput(bool isParam, const char *kwLoc);
  LogicalResult parseInstruction();
  LogicalResult parseRet(const char *kwLoc);
  LogicalResult parseArg(Arg &arg);
  LogicalResult emitCall(StringRef name, const char *nameLoc,
                         SmallVectorImpl<Arg> &args,
                         ArrayRef<std::pair<StringRef, const char *>> lhs,
                         ArrayRef<Type> declared, const char *typeLoc);
  LogicalResult define(StringRef name, const char *loc, Var var);
  FailureOr<Value> lookupTensor(StringRef name, const char *loc);

  llvm::SourceMgr &sm;
  MLIRContext *ctx;
  Builder b;
  /// How many tuples and lists enclose the literal being parsed.
  int literalDepth = 0;
  StringRef buffer;
  StringAttr fileName;
  const char *cur = nullptr, *lineEnd = nullptr;

  std::string graphName = "main";
  const char *graphLoc = nullptr;
  bool sawInstruction = false, sawRet = false;
  unsigned numInputs = 0;
  llvm::StringMap<Var> vars;

  // Graph arguments, in declaration order (tuple inputs flattened).
  SmallVector<Type> argTypes;
  SmallVector<NamedAttrList> argAttrs;
  SmallVector<Location> argLocs;
  OwningOpRef<ModuleOp> module;
  GraphOp graph;
  Block *body = nullptr;
  OpBuilder opBuilder{ctx};
};

FailureOr<Type> Importer::parseTensorType() {
  const char *start = (skipSpace(), cur);
  StringRef dtype = word();
  Type elt = llvm::StringSwitch<Type>(dtype)
                 .Case("f16", b.getF16Type())
                 .Case("bf16", b.getBF16Type())
                 .Case("f32", b.getF32Type())
                 .Case("f64", b.getF64Type())
                 .Case("i8", b.getIntegerType(8))
                 .Case("i16", b.getIntegerType(16))
                 .Case("i32", b.getIntegerType(32))
                 .Case("i64", b.getIntegerType(64))
                 .Case("u8", b.getIntegerType(8, /*isSigned=*/false))
                 .Case("bool", b.getI1Type())
                 .Default(Type());
  if (!elt) {
    if (dtype.empty())
      error(start) << "expected a tensor type like f32[35,20]";
    else
      error(start) << "unknown dtype '" << dtype
                   << "' (expected f16, bf16, f32, f64, i8, i16, i32, i64, "
                      "u8 or bool)";
    return failure();
  }
  if (failed(expect('[', "'[' after the dtype")))
    return failure();
  SmallVector<int64_t> shape;
  if (!consume(']')) {
    do {
      skipSpace();
      if (consume('?')) {
        shape.push_back(ShapedType::kDynamic);
        continue;
      }
      const char *dimLoc = cur;
      StringRef dim = word();
      int64_t v;
      if (dim.empty() || dim.getAsInteger(10, v) || v < 0)
        return (error(dimLoc) << "expected a dimension size or '?'", failure());
      shape.push_back(v);
    } while (consume(','));
    if (failed(expect(']', "']' to close the shape")))
      return failure();
  }
  auto type = RankedTensorType::get(shape, elt);
  // Inference runs on these types before the module is verified: bound them
  // here, with the verifier's own check, and point at the type.
  if (std::string why = tensorSizeError(type); !why.empty())
    return (error(start) << "tensor type " << type << " " << why, failure());
  return Type(type);
}

FailureOr<Attribute> Importer::parseNumber() {
  skipSpace();
  const char *start = cur;
  const char *p = cur;
  if (p < lineEnd && (*p == '-' || *p == '+'))
    ++p;
  const char *digits = p;
  // inf and nan are how Python prints non-finite floats.
  for (StringRef special : {"inf", "nan"})
    if (StringRef(p, lineEnd - p).starts_with(special) &&
        (p + 3 == lineEnd || !isWordChar(p[3]))) {
      cur = p + 3;
      double v = special == "inf" ? INFINITY : NAN;
      return Attribute(b.getF64FloatAttr(*start == '-' ? -v : v));
    }
  bool isFloat = false;
  while (p < lineEnd && isdigit(static_cast<unsigned char>(*p)))
    ++p;
  if (p < lineEnd && *p == '.') {
    isFloat = true;
    ++p;
    while (p < lineEnd && isdigit(static_cast<unsigned char>(*p)))
      ++p;
  }
  if (p == digits || (p == digits + 1 && *digits == '.'))
    return (error(start) << "malformed literal: expected a number", failure());
  if (p < lineEnd && (*p == 'e' || *p == 'E')) {
    isFloat = true;
    ++p;
    if (p < lineEnd && (*p == '-' || *p == '+'))
      ++p;
    const char *expDigits = p;
    while (p < lineEnd && isdigit(static_cast<unsigned char>(*p)))
      ++p;
    if (p == expDigits)
      return (error(start) << "malformed literal: exponent has no digits",
              failure());
  }
  if (p < lineEnd && isWordChar(*p))
    return (error(start) << "malformed literal '"
                         << StringRef(start, p + 1 - start) << "'",
            failure());
  std::string text(start, p - start);
  cur = p;
  errno = 0;
  if (isFloat) {
    double v = std::strtod(text.c_str(), nullptr);
    return Attribute(b.getF64FloatAttr(v));
  }
  long long v = std::strtoll(text.c_str(), nullptr, 10);
  if (errno == ERANGE)
    return (error(start) << "integer literal " << text
                         << " does not fit in 64 bits",
            failure());
  return Attribute(b.getI64IntegerAttr(v));
}

FailureOr<Attribute> Importer::parseString() {
  const char *start = cur;
  char quote = *cur++;
  std::string value;
  while (true) {
    if (cur >= lineEnd)
      return (error(start) << "unterminated string literal", failure());
    char c = *cur++;
    if (c == quote)
      break;
    if (c != '\\') {
      value.push_back(c);
      continue;
    }
    if (cur >= lineEnd)
      return (error(start) << "unterminated string literal", failure());
    char e = *cur++;
    switch (e) {
    case '\\':
    case '\'':
    case '"':
      value.push_back(e);
      break;
    case 'n':
      value.push_back('\n');
      break;
    case 't':
      value.push_back('\t');
      break;
    case 'r':
      value.push_back('\r');
      break;
    case '0':
      value.push_back('\0');
      break;
    case 'x': {
      unsigned v;
      if (lineEnd - cur < 2 || StringRef(cur, 2).getAsInteger(16, v))
        return (error(cur - 2) << "malformed \\x escape", failure());
      value.push_back(static_cast<char>(v));
      cur += 2;
      break;
    }
    default:
      return (error(cur - 2) << "unsupported escape '\\" << e << "'",
              failure());
    }
  }
  return Attribute(b.getStringAttr(value));
}

FailureOr<Attribute> Importer::parseLiteral() {
  skipSpace();
  const char *start = cur;
  if (cur >= lineEnd)
    return (error() << "expected an argument", failure());
  char c = *cur;
  if (c == '\'' || c == '"')
    return parseString();
  if (c == '(' || c == '[') {
    traceir::NestingGuard guard(literalDepth);
    if (guard.tooDeep())
      return (error(start) << "tuples and lists nested deeper than "
                           << traceir::kMaxScalarDepth << " levels",
              failure());
    ++cur;
    char close = c == '(' ? ')' : ']';
    SmallVector<Attribute> elems;
    bool trailingComma = false;
    while (!consume(close)) {
      FailureOr<Attribute> elem = parseLiteral();
      if (failed(elem))
        return failure();
      elems.push_back(*elem);
      trailingComma = consume(',');
      if (trailingComma)
        continue;
      skipSpace();
      if (cur >= lineEnd || *cur != close)
        return (error(start) << "expected ',' or '" << close << "' in the "
                             << (c == '(' ? "tuple" : "list") << " opened here",
                failure());
    }
    // As in Python, parentheses around one element without a comma only
    // group: `(1)` is 1, `(1,)` is a tuple.
    if (c == '(' && elems.size() == 1 && !trailingComma)
      return elems.front();
    ArrayAttr arr = b.getArrayAttr(elems);
    return c == '(' ? Attribute(arr) : Attribute(ListAttr::get(ctx, arr));
  }
  if (isalpha(static_cast<unsigned char>(c))) {
    StringRef w = word();
    if (w == "True")
      return Attribute(b.getBoolAttr(true));
    if (w == "False")
      return Attribute(b.getBoolAttr(false));
    if (w == "None")
      return Attribute(NoneAttr::get(ctx));
    if (w == "inf" || w == "nan") {
      cur = start;
      return parseNumber();
    }
    return (error(start) << "malformed literal '" << w
                         << "' (expected a variable, a number, True, False, "
                            "None, a string, a tuple or a list)",
            failure());
  }
  return parseNumber();
}

LogicalResult Importer::define(StringRef name, const char *loc, Var var) {
  auto [it, inserted] = vars.try_emplace(name, var);
  if (!inserted) {
    auto diag = error(loc) << "redefinition of %" << name;
    diag.attachNote(it->second.defLoc) << "previous definition is here";
    return diag;
  }
  return success();
}

FailureOr<Value> Importer::lookupTensor(StringRef name, const char *loc) {
  auto it = vars.find(name);
  if (it == vars.end())
    return (error(loc) << "unknown variable %" << name, failure());
  if (it->second.isTuple)
    return (error(loc) << "%" << name << " is a tuple of "
                       << it->second.elems.size()
                       << " tensors; take an element with Index first",
            failure());
  return it->second.elems.front();
}

LogicalResult Importer::parseArg(Arg &arg) {
  skipSpace();
  arg.loc = llvm::SMLoc::getFromPointer(cur);
  if (cur < lineEnd && *cur == '%') {
    const char *loc = cur;
    FailureOr<StringRef> name = varName();
    if (failed(name))
      return failure();
    FailureOr<Value> v = lookupTensor(*name, loc);
    if (failed(v))
      return failure();
    arg.tensor = *v;
    return success();
  }
  FailureOr<Attribute> lit = parseLiteral();
  if (failed(lit))
    return failure();
  arg.scalar = *lit;
  return success();
}

LogicalResult Importer::parseGraphLine(const char *kwLoc) {
  if (graphLoc)
    return error(kwLoc) << "a second 'graph' line; a trace holds one graph";
  if (!argTypes.empty() || sawInstruction)
    return error(kwLoc) << "'graph' must be the first line";
  graphLoc = kwLoc;
  const char *nameLoc = (skipSpace(), cur);
  StringRef name = word();
  if (name.empty())
    return error(nameLoc) << "expected the graph's name after 'graph'";
  graphName = name.str();
  if (!atEnd())
    return error() << "unexpected text after the graph's name";
  return success();
}

LogicalResult Importer::parseParamOrInput(bool isParam, const char *kwLoc) {
  if (sawInstruction)
    return error(kwLoc) << "'" << (isParam ? "param" : "input")
                        << "' declarations must come before the instructions";
  const char *varLoc = (skipSpace(), cur);
  FailureOr<StringRef> var = varName();
  if (failed(var) || failed(expect(':', "':' and a type after the variable")))
    return failure();
  SmallVector<Type> types;
  bool isTuple = false;
  const char *typeLoc = (skipSpace(), cur);
  if (consume('(')) {
    if (isParam)
      return error(typeLoc) << "a parameter is a single tensor, not a tuple";
    isTuple = true;
    do {
      FailureOr<Type> t = parseTensorType();
      if (failed(t))
        return failure();
      types.push_back(*t);
    } while (consume(','));
    if (failed(expect(')', "')' to close the tuple type")))
      return failure();
  } else {
    FailureOr<Type> t = parseTensorType();
    if (failed(t))
      return failure();
    types.push_back(*t);
  }
  const char *nameLoc = (skipSpace(), cur);
  std::string name;
  bool donated = false;
  if (!atEnd()) {
    StringRef w = word();
    if (w.empty())
      return error(nameLoc) << "expected a name";
    if (w == "donated" && !isParam) {
      donated = true;
      if (!atEnd())
        return error() << "unexpected text; expected the end of the line "
                          "after 'donated'";
    } else {
      name = w.str();
      if (!atEnd()) {
        const char *dLoc = cur;
        if (word() != "donated" || isParam || !atEnd())
          return error(dLoc) << "unexpected text; expected "
                             << (isParam ? "the end of the line"
                                         : "'donated' or the end of the line");
        donated = true;
      }
    }
  }
  if (isParam && name.empty())
    return error(nameLoc) << "a param line must end with the parameter's name";
  if (!isParam && name.empty())
    name = "input" + std::to_string(numInputs);
  if (!isParam)
    ++numInputs;

  Var v{{}, isTuple, locOf(varLoc)};
  for (auto [i, t] : llvm::enumerate(types)) {
    v.elems.push_back(body->addArgument(t, locOf(varLoc)));
    argTypes.push_back(t);
    argLocs.push_back(locOf(varLoc));
    NamedAttrList attrs;
    std::string argName = isTuple ? name + "." + std::to_string(i) : name;
    attrs.set(isParam ? TraceDialect::kParamAttrName
                      : TraceDialect::kInputAttrName,
              b.getStringAttr(argName));
    if (donated)
      attrs.set(TraceDialect::kDonatedAttrName, b.getUnitAttr());
    argAttrs.push_back(attrs);
  }
  return define(*var, varLoc, std::move(v));
}

LogicalResult
Importer::emitCall(StringRef name, const char *nameLoc,
                   SmallVectorImpl<Arg> &args,
                   ArrayRef<std::pair<StringRef, const char *>> lhs,
                   ArrayRef<Type> declared, const char *typeLoc) {
  Location loc = locOf(nameLoc);
  std::string opName = name.str();
  if (const NameMapping *m = lookupName(name)) {
    if (args.size() < m->minArgs || args.size() > m->maxArgs)
      return error(nameLoc)
             << name << " expects "
             << (m->minArgs == m->maxArgs ? std::to_string(m->minArgs)
                 : m->maxArgs == ~0u ? std::to_string(m->minArgs) + " or more"
                                     : std::to_string(m->minArgs) + " to " +
                                           std::to_string(m->maxArgs))
             << " arguments (" << m->arguments << "), got " << args.size();
    opName = m->canonical.str();
    auto scalarArg = [&](Attribute a) { return Arg{Value(), a, {}}; };
    if (name == "Index") {
      // A tuple was resolved at parse time (see parseInstruction); here the
      // first argument is a tensor.
      args.insert(args.begin() + 1, scalarArg(b.getI64IntegerAttr(0)));
    } else if (name == "Embedding") {
      static const char *const names[] = {"indices",     "weight",
                                          "padding_idx", "max_norm",
                                          "norm_type",   "scale_grad_by_freq",
                                          "sparse"};
      for (unsigned i = 2; i < args.size(); ++i)
        if (args[i].tensor)
          return error(args[i].loc.getPointer())
                 << "Embedding's " << names[i]
                 << " must be a Python scalar, not a tensor";
      args.resize(7, scalarArg(NoneAttr::get(ctx)));
      if (!isNone(args[3].scalar))
        return error(args[3].loc.getPointer())
               << "Embedding with max_norm is not supported (it renormalizes "
                  "the weight in place); expected None";
      Attribute pad = args[2].scalar;
      if (!pad || isNone(pad))
        pad = b.getI64IntegerAttr(-1);
      Attribute scale =
          isNone(args[5].scalar) ? b.getBoolAttr(false) : args[5].scalar;
      Attribute sparse =
          isNone(args[6].scalar) ? b.getBoolAttr(false) : args[6].scalar;
      args.assign(SmallVector<Arg>{args[1], args[0], scalarArg(pad),
                                   scalarArg(scale), scalarArg(sparse)});
    } else if (name == "Dropout") {
      if (args.size() == 4) {
        auto inplace = getBool(args[3].scalar);
        if (!inplace)
          return error(args[3].loc.getPointer())
                 << "Dropout's inplace must be True or False";
        if (*inplace)
          opName = "dropout_";
        args.pop_back();
      }
    } else if (name == "LSTM") {
      // input, h0, c0, weights..., num_layers, dropout, train
      if (args.size() < 6)
        return error(nameLoc) << "LSTM needs at least 6 arguments";
      size_t nw = args.size() - 6;
      auto layers = getInt(args[args.size() - 3].scalar);
      if (!layers || *layers <= 0)
        return error(args[args.size() - 3].loc.getPointer())
               << "LSTM's num_layers must be a positive int";
      // num_layers is the trace's int: 4 * num_layers may not fit, and a
      // wrapped count could even match the weights given.
      std::optional<int64_t> withBiases = traceir::checkedMul(4, *layers);
      if (!withBiases)
        return error(nameLoc) << "LSTM with num_layers=" << *layers
                              << " expects 4 * num_layers weights, which "
                                 "overflows int64; got "
                              << nw;
      int64_t withoutBiases = *withBiases / 2;
      bool hasBiases = static_cast<int64_t>(nw) == *withBiases;
      if (!hasBiases && static_cast<int64_t>(nw) != withoutBiases)
        return error(nameLoc)
               << "LSTM with num_layers=" << *layers << " expects "
               << *withBiases << " weights (or " << withoutBiases
               << " without biases), got " << nw;
      args.insert(args.end() - 3, scalarArg(b.getBoolAttr(hasBiases)));
      args.push_back(scalarArg(b.getBoolAttr(false)));
      args.push_back(scalarArg(b.getBoolAttr(false)));
    }
  }

  SmallVector<Value> tensors;
  SmallVector<Attribute> scalars;
  std::string cconv;
  for (Arg &a : args) {
    if (a.tensor) {
      tensors.push_back(a.tensor);
      cconv.push_back('t');
    } else {
      scalars.push_back(a.scalar);
      cconv.push_back('s');
    }
  }

  SmallVector<Type> resultTypes;
  const OpInfo *info = lookupOp(opName);
  if (info) {
    PyArgs pyArgs(cconv, TypeRange(ValueRange(tensors)), scalars);
    InferError err;
    if (!info->infer(pyArgs, ctx, resultTypes, err))
      return error(nameLoc) << name << ": " << err.message;
    if (resultTypes.size() != lhs.size())
      return error(nameLoc)
             << name << " has " << resultTypes.size() << " result"
             << (resultTypes.size() == 1 ? "" : "s") << " but " << lhs.size()
             << " variable" << (lhs.size() == 1 ? " is" : "s are") << " bound";
    if (!declared.empty()) {
      if (declared.size() != resultTypes.size())
        return error(typeLoc) << declared.size() << " result types given for "
                              << resultTypes.size() << " results";
      for (auto [i, pair] : llvm::enumerate(llvm::zip(declared, resultTypes)))
        if (std::get<0>(pair) != std::get<1>(pair))
          return error(typeLoc)
                 << "result #" << i << " is declared " << std::get<0>(pair)
                 << " but " << name << " gives " << std::get<1>(pair);
    }
  } else {
    if (declared.empty())
      return error(nameLoc)
             << "unknown op '" << name
             << "': its result types cannot be inferred; annotate them, as in "
                "'%r = "
             << name << " %x : f32[3,4]'";
    if (declared.size() != lhs.size())
      return error(typeLoc) << declared.size() << " result types given for "
                            << lhs.size() << " bound variables";
    resultTypes.assign(declared.begin(), declared.end());
  }

  auto op = PyOp::create(opBuilder, loc, resultTypes, opName, tensors, scalars,
                         cconv);
  for (auto [i, l] : llvm::enumerate(lhs))
    if (failed(define(l.first, l.second,
                      Var{{op->getResult(i)}, false, locOf(l.second)})))
      return failure();
  return success();
}

LogicalResult Importer::parseInstruction() {
  sawInstruction = true;
  if (sawRet)
    return error() << "instruction after Ret; Ret must be last";
  SmallVector<std::pair<StringRef, const char *>> lhs;
  do {
    const char *loc = (skipSpace(), cur);
    FailureOr<StringRef> name = varName();
    if (failed(name))
      return failure();
    lhs.push_back({*name, loc});
  } while (consume(','));
  if (failed(expect('=', "'=' after the bound variables")))
    return failure();
  const char *nameLoc = (skipSpace(), cur);
  StringRef opName = word();
  if (opName.empty() || !isalpha(static_cast<unsigned char>(opName[0])))
    return error(nameLoc) << "expected an op name";

  SmallVector<Arg> args;
  skipSpace();
  if (cur < lineEnd && *cur != ':') {
    do {
      Arg a;
      skipSpace();
      // Index on a tuple variable resolves statically to the element.
      if (opName == "Index" && args.empty() && cur < lineEnd && *cur == '%') {
        const char *loc = cur;
        FailureOr<StringRef> var = varName();
        if (failed(var))
          return failure();
        auto it = vars.find(*var);
        if (it == vars.end())
          return error(loc) << "unknown variable %" << *var;
        if (it->second.isTuple) {
          if (failed(expect(',', "',' and an index")))
            return failure();
          const char *idxLoc = (skipSpace(), cur);
          FailureOr<Attribute> idx = parseNumber();
          if (failed(idx))
            return failure();
          auto i = getInt(*idx);
          int64_t n = it->second.elems.size();
          if (!i)
            return error(idxLoc) << "a tuple index must be an int, got "
                                 << scalarToString(*idx);
          if (*i < -n || *i >= n)
            return error(idxLoc) << "index " << scalarToString(*idx)
                                 << " is out of range for tuple %" << *var
                                 << " of " << n << " elements";
          if (!atEnd())
            return error() << "unexpected text after Index's arguments";
          if (lhs.size() != 1)
            return error(lhs[1].second) << "Index binds one variable";
          Value elem = it->second.elems[*i < 0 ? *i + n : *i];
          return define(lhs[0].first, lhs[0].second,
                        Var{{elem}, false, locOf(lhs[0].second)});
        }
        a.tensor = it->second.elems.front();
        a.loc = llvm::SMLoc::getFromPointer(loc);
      } else if (failed(parseArg(a))) {
        return failure();
      }
      args.push_back(a);
    } while (consume(','));
  }
  SmallVector<Type> declared;
  const char *typeLoc = nullptr;
  if (consume(':')) {
    typeLoc = (skipSpace(), cur);
    bool paren = consume('(');
    do {
      FailureOr<Type> t = parseTensorType();
      if (failed(t))
        return failure();
      declared.push_back(*t);
    } while (consume(','));
    if (paren && failed(expect(')', "')' to close the result types")))
      return failure();
  }
  if (!atEnd())
    return error() << "unexpected text after the instruction";
  return emitCall(opName, nameLoc, args, lhs, declared, typeLoc);
}

LogicalResult Importer::parseRet(const char *kwLoc) {
  if (sawRet)
    return error(kwLoc) << "a second Ret";
  sawInstruction = true;
  sawRet = true;
  SmallVector<Value> results;
  if (!atEnd()) {
    do {
      skipSpace();
      const char *loc = cur;
      if (cur >= lineEnd || *cur != '%')
        return error(loc) << "Ret takes variables only";
      FailureOr<StringRef> name = varName();
      if (failed(name))
        return failure();
      auto it = vars.find(*name);
      if (it == vars.end())
        return error(loc) << "unknown variable %" << *name;
      // A returned tuple is returned element by element.
      results.append(it->second.elems.begin(), it->second.elems.end());
    } while (consume(','));
    if (!atEnd())
      return error() << "unexpected text after Ret's variables";
  }
  RetOp::create(opBuilder, locOf(kwLoc), results);
  return success();
}

LogicalResult Importer::parseLine() {
  skipSpace();
  if (cur >= lineEnd)
    return success();
  if (*cur == '%')
    return parseInstruction();
  const char *kwLoc = cur;
  StringRef kw = word();
  if (kw == "graph")
    return parseGraphLine(kwLoc);
  if (kw == "param")
    return parseParamOrInput(/*isParam=*/true, kwLoc);
  if (kw == "input")
    return parseParamOrInput(/*isParam=*/false, kwLoc);
  if (kw == "Ret")
    return parseRet(kwLoc);
  return error(kwLoc) << "expected 'graph', 'param', 'input', an instruction "
                         "'%x = Op ...' or 'Ret'";
}

OwningOpRef<ModuleOp> Importer::run() {
  ctx->loadDialect<TraceDialect>();
  module = ModuleOp::create(FileLineColLoc::get(fileName, 1, 1));
  // Arguments are added while the declarations are read; the graph's type is
  // fixed once Ret gives the results.
  OpBuilder mb(ctx);
  mb.setInsertionPointToEnd(module->getBody());
  graph = GraphOp::create(mb, FileLineColLoc::get(fileName, 1, 1), "main",
                          mb.getFunctionType({}, {}));
  body = &graph.getBody().front();
  opBuilder.setInsertionPointToEnd(body);

  const char *p = buffer.begin(), *end = buffer.end();
  while (p < end) {
    const char *nl = static_cast<const char *>(memchr(p, '\n', end - p));
    const char *eol = nl ? nl : end;
    // '#' starts a comment outside string literals.
    const char *q = p;
    char quote = 0;
    for (; q < eol; ++q) {
      if (quote) {
        // An escape never swallows the end of the line.
        if (*q == '\\' && q + 1 < eol)
          ++q;
        else if (*q == quote)
          quote = 0;
      } else if (*q == '\'' || *q == '"') {
        quote = *q;
      } else if (*q == '#') {
        break;
      }
    }
    cur = p;
    lineEnd = q;
    if (failed(parseLine()))
      return nullptr;
    p = nl ? nl + 1 : end;
  }
  if (!sawRet) {
    emitError(locOf(end)) << "missing Ret: the trace must end with 'Ret "
                             "%results...'";
    return nullptr;
  }
  auto ret = cast<RetOp>(body->back());
  graph.setSymName(graphName);
  graph.setFunctionType(
      b.getFunctionType(argTypes, TypeRange(ret.getOperandTypes())));
  for (auto [i, attrs] : llvm::enumerate(argAttrs))
    graph.setArgAttrs(i, attrs.getDictionary(ctx));
  if (graphLoc)
    graph->setLoc(locOf(graphLoc));
  if (failed(verify(*module)))
    return nullptr;
  return std::move(module);
}

} // namespace

OwningOpRef<ModuleOp> mlir::trace::importANFTrace(llvm::SourceMgr &sourceMgr,
                                                  MLIRContext *context) {
  return Importer(sourceMgr, context).run();
}

llvm::SmallVector<llvm::StringRef> mlir::trace::getANFTargetOps() {
  llvm::SmallVector<llvm::StringRef> out;
  for (const NameMapping &m : kNameTable)
    out.push_back(m.canonical);
  return out;
}

void mlir::trace::printANFNameTable(llvm::raw_ostream &os) {
  os << "| 2017 name | 2017 arguments | TraceIR op | notes |\n"
     << "| --- | --- | --- | --- |\n";
  for (const NameMapping &m : kNameTable)
    os << "| `" << m.name << "` | " << m.arguments << " | `" << m.canonical
       << "` | " << m.note << " |\n";
}

void mlir::trace::registerTraceTranslations() {
  TranslateToMLIRRegistration importANF(
      "import-anf", "Import a 2017 PyTorch text trace (ANF) as a trace.graph",
      [](llvm::SourceMgr &sourceMgr, MLIRContext *context) {
        return OwningOpRef<Operation *>(
            importANFTrace(sourceMgr, context).release());
      },
      [](DialectRegistry &registry) { registry.insert<TraceDialect>(); });

  registerFromMLIRTranslation(
      "print-op-registry",
      "Ignore the input module; print the op registry and the 2017 name "
      "table as Markdown (docs/OpRegistry.md)",
      [](Operation *, llvm::raw_ostream &os) {
        printOpRegistryMarkdown(os);
        os << "\n## 2017 trace names\n\n"
           << "`trace-translate --import-anf` maps the 2017 tracer's names "
              "onto the registry's ops. A name not in this table is looked up "
              "in the registry as it is, and otherwise imported as a generic "
              "`trace.pyop` that needs annotated result types.\n\n";
        printANFNameTable(os);
        return success();
      },
      [](DialectRegistry &registry) { registry.insert<TraceDialect>(); });
}
