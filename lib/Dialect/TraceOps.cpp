//===- TraceOps.cpp - trace dialect operations ----------------------------===//

#include "TraceIR/Dialect/OpRegistry.h"
#include "TraceIR/Dialect/Scalars.h"
#include "TraceIR/Dialect/TraceDialect.h"
#include "TraceIR/Support/ArenaCheck.h"
#include "TraceIR/Support/CheckedMath.h"
#include "TraceIR/Support/NestingDepth.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionImplementation.h"
#include "llvm/ADT/StringMap.h"

#include <climits>

using namespace mlir;
using namespace mlir::trace;

//===----------------------------------------------------------------------===//
// GraphOp
//===----------------------------------------------------------------------===//

void GraphOp::build(OpBuilder &builder, OperationState &state, StringRef name,
                    FunctionType type, ArrayRef<DictionaryAttr> argAttrs) {
  state.addAttribute(SymbolTable::getSymbolAttrName(),
                     builder.getStringAttr(name));
  state.addAttribute(getFunctionTypeAttrName(state.name), TypeAttr::get(type));
  Region *body = state.addRegion();
  Block *block = new Block();
  body->push_back(block);
  for (Type t : type.getInputs())
    block->addArgument(t, state.location);
  if (!argAttrs.empty())
    call_interface_impl::addArgAndResultAttrs(
        builder, state, argAttrs, /*resultAttrs=*/{},
        getArgAttrsAttrName(state.name), getResAttrsAttrName(state.name));
}

ParseResult GraphOp::parse(OpAsmParser &parser, OperationState &result) {
  auto buildFuncType =
      [](Builder &builder, ArrayRef<Type> argTypes, ArrayRef<Type> results,
         function_interface_impl::VariadicFlag,
         std::string &) { return builder.getFunctionType(argTypes, results); };
  return function_interface_impl::parseFunctionOp(
      parser, result, /*allowVariadic=*/false,
      getFunctionTypeAttrName(result.name), buildFuncType,
      getArgAttrsAttrName(result.name), getResAttrsAttrName(result.name));
}

void GraphOp::print(OpAsmPrinter &p) {
  function_interface_impl::printFunctionOp(
      p, *this, /*isVariadic=*/false, getFunctionTypeAttrName(),
      getArgAttrsAttrName(), getResAttrsAttrName());
}

static StringRef getStrArgAttr(GraphOp op, unsigned i, StringRef name) {
  if (auto s = op.getArgAttrOfType<StringAttr>(i, name))
    return s.getValue();
  return {};
}

StringRef GraphOp::getParamName(unsigned i) {
  return getStrArgAttr(*this, i, TraceDialect::kParamAttrName);
}

StringRef GraphOp::getInputName(unsigned i) {
  if (isParam(i))
    return {};
  return getStrArgAttr(*this, i, TraceDialect::kInputAttrName);
}

bool GraphOp::isDonated(unsigned i) {
  return static_cast<bool>(getArgAttr(i, TraceDialect::kDonatedAttrName));
}

void GraphOp::getAsmBlockArgumentNames(Region &region,
                                       OpAsmSetValueNameFn setNameFn) {
  // Name arguments after their parameter or input names; the printer makes
  // them valid, unique SSA names.
  for (BlockArgument arg : region.getArguments()) {
    StringRef name = getParamName(arg.getArgNumber());
    if (name.empty())
      name = getInputName(arg.getArgNumber());
    if (!name.empty())
      setNameFn(arg, name);
  }
}

namespace {
/// Diagnostic text for a value: its SSA name would need an AsmState over the
/// whole graph, so name it by what defines it.
std::string describeValue(Value v) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    auto graph = cast<GraphOp>(arg.getOwner()->getParentOp());
    unsigned i = arg.getArgNumber();
    os << "argument #" << i;
    if (StringRef p = graph.getParamName(i); !p.empty())
      os << " (parameter '" << p << "')";
    else if (StringRef n = graph.getInputName(i); !n.empty())
      os << " (input '" << n << "')";
  } else {
    Operation *def = v.getDefiningOp();
    os << "result #" << cast<OpResult>(v).getResultNumber() << " of ";
    if (auto py = dyn_cast<PyOp>(def))
      os << "pyop \"" << py.getOpName() << "\"";
    else
      os << "'" << def->getName() << "'";
  }
  return text;
}
} // namespace

/// The tensor size limit (see tensorSizeError): every tensor type an op of
/// the dialect carries passes through here, so the importer, the passes,
/// the lowering and the runtime may multiply dims without overflow.
static LogicalResult verifyTensorSize(Operation *op, Type type,
                                      const Twine &what) {
  std::string why = tensorSizeError(type);
  if (why.empty())
    return success();
  return op->emitOpError() << what << " type " << type << " " << why;
}

static LogicalResult verifyTensorSizes(Operation *op) {
  for (auto [i, t] : llvm::enumerate(op->getOperandTypes()))
    if (failed(verifyTensorSize(op, t, "operand #" + Twine(i))))
      return failure();
  for (auto [i, t] : llvm::enumerate(op->getResultTypes()))
    if (failed(verifyTensorSize(op, t, "result #" + Twine(i))))
      return failure();
  return success();
}

/// The memory plan (--plan-memory), where the graph has one: every offset
/// is on a fresh, static, unreturned result, aligned and inside the arena,
/// and no two planned storages alive at once share a byte. A storage lives
/// from its op to its trace.free, or to the end of the run without one (as
/// the runtime holds it), through its views and in-place results.
/// `firstOffsets`: the first op with arena offsets (GraphOp::verifyRegions
/// notes it in its one walk over the block), or null.
static LogicalResult verifyArenaPlan(GraphOp graph, Block &block,
                                     Operation *firstOffsets) {
  Operation *op = graph.getOperation();
  auto bytesAttr =
      op->getAttrOfType<IntegerAttr>(TraceDialect::kArenaBytesAttrName);
  auto alignAttr =
      op->getAttrOfType<IntegerAttr>(TraceDialect::kArenaAlignmentAttrName);
  if (!bytesAttr != !alignAttr)
    return graph.emitOpError("has one of '")
           << TraceDialect::kArenaBytesAttrName << "' and '"
           << TraceDialect::kArenaAlignmentAttrName << "' without the other";
  if (!bytesAttr) {
    // No plan (the common case): no walk, only a stray offset to report.
    if (firstOffsets)
      return firstOffsets->emitOpError(
                 "has arena offsets but its graph has no '")
             << TraceDialect::kArenaBytesAttrName << "'";
    return success();
  }
  // Positions of the ops that start and end lifetimes: one pass.
  llvm::DenseMap<Operation *, unsigned> position;
  std::vector<traceir::ArenaBuffer> buffers;
  std::vector<Value> values;
  unsigned pos = 0;
  for (Operation &o : block) {
    unsigned at = pos++;
    if (isa<FreeOp>(o)) {
      position[&o] = at;
      continue;
    }
    auto offsets =
        o.getAttrOfType<DenseI64ArrayAttr>(TraceDialect::kArenaOffsetsAttrName);
    if (!offsets)
      continue;
    SmallVector<ResultAlias, 4> aliases;
    getResultAliases(cast<PyOp>(o), aliases);
    for (auto [i, offset] : llvm::enumerate(offsets.asArrayRef())) {
      if (offset < 0)
        continue;
      Value r = o.getResult(i);
      if (aliases[i].kind != AliasKind::Fresh)
        return o.emitOpError("result #")
               << i << " has an arena offset but is not a fresh storage (a "
               << "view or in-place result takes its storage's)";
      auto type = dyn_cast<RankedTensorType>(r.getType());
      std::optional<int64_t> bytes;
      if (type && type.hasStaticShape())
        bytes = traceir::checkedTensorBytes(
            type.getShape(), elementByteSize(type.getElementType()));
      if (!bytes)
        return o.emitOpError("result #")
               << i << " has an arena offset but no static size";
      const int64_t align = alignAttr.getInt();
      traceir::ArenaBuffer b;
      b.size = (*bytes + align - 1) / align * align;
      b.first = at;
      b.last = UINT_MAX; // its free's, found below, or the end
      b.offset = offset;
      buffers.push_back(b);
      values.push_back(r);
    }
  }
  if (buffers.empty())
    return success();
  for (auto [b, v] : llvm::zip(buffers, values)) {
    bool returned = false;
    walkStorageUses(v, [&](OpOperand &use) {
      if (isa<RetOp>(use.getOwner()))
        returned = true;
      else if (isa<FreeOp>(use.getOwner()))
        b.last = position.lookup(use.getOwner());
    });
    if (returned)
      return graph.emitOpError("returns ")
             << describeValue(v)
             << ", which has an arena offset: returned values are allocated "
                "apart, for the caller to take";
    if (b.last == UINT_MAX)
      b.last = pos - 1;
  }
  if (auto c = traceir::findArenaConflict(buffers, bytesAttr.getInt(),
                                          alignAttr.getInt())) {
    const traceir::ArenaBuffer &a = buffers[c->a], &b = buffers[c->b];
    // No sum: a misplaced offset may be anywhere up to INT64_MAX.
    auto range = [](const traceir::ArenaBuffer &x) {
      return std::to_string(x.size) + " bytes at " + std::to_string(x.offset);
    };
    if (c->kind == traceir::ArenaConflict::Overlap)
      return graph.emitOpError("arena plan: ")
             << describeValue(values[c->a]) << " (" << range(a) << ") and "
             << describeValue(values[c->b]) << " (" << range(b)
             << ") are alive at once and overlap";
    return graph.emitOpError("arena plan: ")
           << describeValue(values[c->a]) << " (" << range(a)
           << ") is not aligned to " << alignAttr.getInt()
           << " inside the arena of " << bytesAttr.getInt() << " bytes";
  }
  return success();
}

// Only the types: the body is checked by verifyRegions, after its ops,
// which rely on these.
LogicalResult GraphOp::verify() {
  for (auto [i, t] : llvm::enumerate(getArgumentTypes())) {
    std::string what = "argument #" + std::to_string(i);
    if (StringRef p = getParamName(i); !p.empty())
      what += " (parameter '" + p.str() + "')";
    else if (StringRef n = getInputName(i); !n.empty())
      what += " (input '" + n.str() + "')";
    if (failed(verifyTensorSize(*this, t, what)))
      return failure();
  }
  for (auto [i, t] : llvm::enumerate(getResultTypes()))
    if (failed(verifyTensorSize(*this, t, "result #" + Twine(i))))
      return failure();
  return success();
}

LogicalResult GraphOp::verifyRegions() {
  Region &body = getBody();
  if (!body.hasOneBlock())
    return emitOpError("body must have exactly one block, found ")
           << body.getBlocks().size()
           << "; a traced graph is a flat ANF instruction list";
  Block &block = body.front();
  if (block.getNumArguments() != getNumArguments())
    return emitOpError("has ")
           << block.getNumArguments() << " block arguments but its type has "
           << getNumArguments();
  for (auto [i, arg] : llvm::enumerate(block.getArguments()))
    if (arg.getType() != getArgumentTypes()[i])
      return emitOpError("block argument #")
             << i << " has type " << arg.getType()
             << " but the graph's type says " << getArgumentTypes()[i];

  // Runtimes bind parameters and inputs by name, so names are unique.
  llvm::StringMap<unsigned> params, inputs;
  for (unsigned i = 0, e = getNumArguments(); i < e; ++i) {
    if (isParam(i) &&
        (isDonated(i) || getArgAttr(i, TraceDialect::kInputAttrName)))
      return emitOpError("argument #")
             << i << ": parameter '" << getParamName(i)
             << "' cannot also be an input or donated; parameters belong to "
                "the caller";
    bool param = isParam(i);
    StringRef name = param ? getParamName(i) : getInputName(i);
    if (name.empty())
      continue;
    auto [it, inserted] = (param ? params : inputs).try_emplace(name, i);
    if (!inserted)
      return emitOpError("arguments #")
             << it->second << " and #" << i << " have the same "
             << (param ? "parameter" : "input") << " name '" << name << "'";
  }

  // Storage lifetimes. A free releases the storage its operand refers to;
  // views (and in-place results) share their base's storage, as the
  // registry says. Only definite errors are rejected: an unknown op's result
  // may or may not alias its operands, so it is not followed. Each free
  // walks the uses of its storage once, and program order comes from the
  // block's op order, so this is linear without any hashing. (One loop over
  // the block: on large graphs the walk over the ops is memory-bound.)
  Operation *firstOffsets = nullptr; // for verifyArenaPlan
  for (Operation &op : block) {
    if (op.getNumRegions() != 0)
      return op.emitOpError("has a nested region, but a trace.graph body must "
                            "be flat (ANF)");
    if (!firstOffsets && op.hasAttr(TraceDialect::kArenaOffsetsAttrName))
      firstOffsets = &op;
    auto free = dyn_cast<FreeOp>(op);
    if (!free)
      continue;
    Value v = free.getTensor();
    Value r = getStorageRoot(v);
    auto via = [&](Value freed) {
      Value base = getStorageRoot(freed);
      return freed == base ? std::string()
                           : " (through a view of " + describeValue(base) + ")";
    };
    if (auto arg = dyn_cast<BlockArgument>(r)) {
      unsigned i = arg.getArgNumber();
      if (isParam(i))
        return free.emitOpError("cannot free parameter '")
               << getParamName(i) << "'" << via(v)
               << ": parameters are owned by the caller";
      if (!isDonated(i))
        return free.emitOpError("cannot free ")
               << describeValue(v) << via(v)
               << ": it is not donated (mark it trace.donated)";
    } else if (isa<ConstantOp>(r.getDefiningOp())) {
      return free.emitOpError("cannot free a constant")
             << via(v) << ": constants belong to the graph, not to a run";
    } else if (isMayAliasOp(r.getDefiningOp())) {
      // It may be a view of an operand, so neither this free nor the
      // operands' frees could be proven single.
      return free.emitOpError("cannot free ")
             << describeValue(v) << via(v)
             << ": an op the registry does not know may return a view of its "
                "operands";
    }
    bool reported = false;
    walkStorageUses(r, [&](OpOperand &use) {
      Operation *user = use.getOwner();
      if (reported || user == free.getOperation())
        return;
      if (auto other = dyn_cast<FreeOp>(user)) {
        // A pair of frees is reported once, at the later one.
        if (other->isBeforeInBlock(free))
          return;
        auto diag = other.emitOpError("double free of the storage of ")
                    << describeValue(other.getTensor())
                    << via(other.getTensor());
        diag.attachNote(free.getLoc()) << "first freed here";
        reported = true;
        return;
      }
      if (free->isBeforeInBlock(user)) {
        auto diag = user->emitOpError("uses ")
                    << describeValue(use.get()) << " (operand #"
                    << use.getOperandNumber()
                    << ") after its storage was freed";
        diag.attachNote(free.getLoc()) << "freed here";
        reported = true;
      }
    });
    if (reported)
      return failure();
  }
  if (block.empty() || !isa<RetOp>(block.back()))
    return emitOpError("body must end with trace.ret");
  return verifyArenaPlan(*this, block, firstOffsets);
}

//===----------------------------------------------------------------------===//
// ConstantOp
//===----------------------------------------------------------------------===//

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

LogicalResult ConstantOp::verify() { return verifyTensorSizes(*this); }

//===----------------------------------------------------------------------===//
// PyOp
//===----------------------------------------------------------------------===//

void PyOp::build(OpBuilder &builder, OperationState &state,
                 TypeRange resultTypes, StringRef opName, ValueRange tensors,
                 ArrayRef<Attribute> scalars, StringRef cconv) {
  state.addOperands(tensors);
  state.addTypes(resultTypes);
  auto &props = state.getOrAddProperties<Properties>();
  props.op_name = builder.getStringAttr(opName);
  props.scalars = builder.getArrayAttr(scalars);
  props.cconv = builder.getStringAttr(cconv);
}

ParseResult PyOp::parse(OpAsmParser &parser, OperationState &result) {
  Builder &b = parser.getBuilder();
  std::string name;
  if (parser.parseString(&name) || parser.parseLParen())
    return failure();
  SmallVector<OpAsmParser::UnresolvedOperand> operands;
  SmallVector<Attribute> scalars;
  std::string cconv;
  if (failed(parser.parseOptionalRParen())) {
    do {
      OpAsmParser::UnresolvedOperand operand;
      OptionalParseResult isOperand = parser.parseOptionalOperand(operand);
      if (isOperand.has_value()) {
        if (failed(*isOperand))
          return failure();
        operands.push_back(operand);
        cconv.push_back('t');
        continue;
      }
      Attribute scalar;
      if (parseScalar(parser, scalar))
        return failure();
      scalars.push_back(scalar);
      cconv.push_back('s');
    } while (succeeded(parser.parseOptionalComma()));
    if (parser.parseRParen())
      return failure();
  }
  SMLoc typeLoc;
  FunctionType fnType;
  if (parser.parseOptionalAttrDict(result.attributes) || parser.parseColon() ||
      parser.getCurrentLocation(&typeLoc) || parser.parseType(fnType))
    return failure();
  if (parser.resolveOperands(operands, fnType.getInputs(), typeLoc,
                             result.operands))
    return failure();
  result.addTypes(fnType.getResults());
  auto &props = result.getOrAddProperties<Properties>();
  props.op_name = b.getStringAttr(name);
  props.scalars = b.getArrayAttr(scalars);
  props.cconv = b.getStringAttr(cconv);
  return success();
}

void PyOp::print(OpAsmPrinter &p) {
  p << ' ';
  p.printString(getOpName());
  p << '(';
  auto tensors = getTensors();
  ArrayRef<Attribute> scalars = getScalars().getValue();
  unsigned t = 0, s = 0;
  llvm::raw_ostream &os = p.getStream();
  StringRef cconv = getCconv();
  for (size_t i = 0, e = cconv.size(); i < e; ++i) {
    if (i)
      os << ", ";
    if (cconv[i] == 't')
      p.printOperand(tensors[t++]);
    else
      printScalar(os, scalars[s++]);
  }
  os << ')';
  p.printOptionalAttrDict(
      (*this)->getAttrs(),
      {getOpNameAttrName(), getScalarsAttrName(), getCconvAttrName()});
  os << " : ";
  p.printFunctionalType(*this);
}

LogicalResult PyOp::verify() {
  // A graph, or the func.func --convert-trace-to-linalg made of one while
  // leaving the ops it could not lower (so the result stays inspectable).
  // The message keeps HasParent's wording for the common case.
  if (!isa_and_nonnull<FunctionOpInterface>((*this)->getParentOp()))
    return emitOpError("expects parent op 'trace.graph' (or a function "
                       "lowered from one)");
  StringRef cconv = getCconv();
  size_t nt = 0, ns = 0;
  for (auto [i, c] : llvm::enumerate(cconv)) {
    if (c == 't')
      ++nt;
    else if (c == 's')
      ++ns;
    else
      return emitOpError("cconv '")
             << cconv << "' has '" << c << "' at position " << i
             << "; only 't' (tensor) and 's' (scalar) are allowed";
  }
  if (nt != getTensors().size() || ns != getScalars().size())
    return emitOpError("cconv '")
           << cconv << "' has " << nt << " 't' and " << ns
           << " 's' but the op has " << getTensors().size()
           << " tensor operands and " << getScalars().size() << " scalars";
  for (auto [i, s] : llvm::enumerate(getScalars()))
    if (!isScalarAttr(s))
      return emitOpError("scalar #")
             << i << " is " << s
             << ", which is not a Python scalar (int as i64, float as f64, "
                "bool, #trace.none, string, tuple or #trace.list, with "
                "tuples and lists nested at most "
             << traceir::kMaxScalarDepth << " deep)";

  // Before inference, which may then rely on its operands' sizes.
  if (failed(verifyTensorSizes(*this)))
    return failure();
  const OpInfo *info = getOpInfo();
  if (!info)
    return success();
  // Verification runs the same inference the importer uses, so a graph that
  // verifies is one the registry can reason about.
  PyArgs args(cconv, getTensors().getTypes(), getScalars().getValue());
  SmallVector<Type, 4> inferred;
  InferError err;
  if (!info->infer(args, getContext(), inferred, err))
    return emitOpError("\"") << getOpName() << "\": " << err.message;
  if (inferred.size() != getNumResults())
    return emitOpError("\"") << getOpName() << "\" has " << inferred.size()
                             << " result" << (inferred.size() == 1 ? "" : "s")
                             << " but " << getNumResults() << " are declared";
  for (auto [i, pair] :
       llvm::enumerate(llvm::zip(inferred, getResultTypes()))) {
    auto [want, got] = pair;
    if (failed(verifyCompatibleShape(want, got)) ||
        cast<ShapedType>(want).getElementType() !=
            cast<ShapedType>(got).getElementType())
      return emitOpError("\"")
             << getOpName() << "\" result #" << i << " is declared " << got
             << " but the arguments give " << want;
  }
  return success();
}

void PyOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  const OpInfo *info = getOpInfo();
  if (!info) {
    // Unknown: it may read, write or draw random numbers.
    effects.emplace_back(MemoryEffects::Read::get());
    effects.emplace_back(MemoryEffects::Write::get());
    return;
  }
  PyArgs args(getCconv(), getTensors().getTypes(), getScalars().getValue());
  if (info->mutates(args) || info->random(args)) {
    effects.emplace_back(MemoryEffects::Read::get());
    effects.emplace_back(MemoryEffects::Write::get());
    return;
  }
  // A plain op reads its operands' storage. Declaring the read keeps CSE from
  // merging two reads across an in-place write or a trace.free (which also
  // declares a write), while an unused read is still removable.
  if (!getTensors().empty())
    effects.emplace_back(MemoryEffects::Read::get());
}

//===----------------------------------------------------------------------===//
// RetOp
//===----------------------------------------------------------------------===//

LogicalResult RetOp::verify() {
  if (failed(verifyTensorSizes(*this)))
    return failure();
  auto graph = cast<GraphOp>((*this)->getParentOp());
  ArrayRef<Type> results = graph.getResultTypes();
  if (getNumOperands() != results.size())
    return emitOpError("returns ")
           << getNumOperands() << " values but graph @" << graph.getSymName()
           << " declares " << results.size() << " results";
  for (auto [i, pair] : llvm::enumerate(llvm::zip(getOperandTypes(), results)))
    if (std::get<0>(pair) != std::get<1>(pair))
      return emitOpError("result #")
             << i << " has type " << std::get<0>(pair) << " but graph @"
             << graph.getSymName() << " declares " << std::get<1>(pair);
  return success();
}

#define GET_OP_CLASSES
#include "TraceIR/Dialect/TraceOps.cpp.inc"
