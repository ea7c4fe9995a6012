//===- OpRegistry.h - What TraceIR knows about PyOp names -------*- C++ -*-===//
//
// One table, keyed by the canonical (ATen) name of a trace.pyop and expanded
// from TraceIR/Ops.def (the one list of ops), says what the compiler and
// runtime know of it: shape and dtype inference, which result
// aliases which operand (views, in-place ops), whether it mutates an operand
// and whether it draws random numbers. Names missing from the table stay
// legal; analyses treat them conservatively (see `OpInfo` users).
//
// docs/OpRegistry.md is generated from this table by
// `trace-translate --print-op-registry`; a lit test keeps the two in sync.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_DIALECT_OPREGISTRY_H
#define TRACEIR_DIALECT_OPREGISTRY_H

#include "TraceIR/Support/OpArgs.h"

#include "mlir/IR/Attributes.h"
#include "mlir/IR/TypeRange.h"
#include "mlir/IR/Types.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace mlir {
class MLIRContext;
class OpOperand;
class Value;
class ShapedType;
namespace trace {

class PyOp;

/// A PyOp's original argument list, re-interleaved from its tensor operand
/// types and its out-of-band scalars through `cconv`. Argument `i` is a
/// tensor (`type(i)` non-null) or a scalar (`scalar(i)` non-null). Reading
/// past the end yields "absent", which the inference functions treat like
/// PyTorch's defaults.
class PyArgs {
public:
  PyArgs(llvm::StringRef cconv, TypeRange tensorTypes,
         llvm::ArrayRef<Attribute> scalars);

  unsigned size() const { return slots.size(); }
  bool present(unsigned i) const { return i < slots.size(); }
  bool isTensor(unsigned i) const { return present(i) && slots[i] >= 0; }
  /// The tensor type of argument `i`, or null.
  Type type(unsigned i) const {
    return isTensor(i) ? tensorTypes[slots[i]] : Type();
  }
  /// The scalar of argument `i`, or null (also for a tensor argument).
  Attribute scalar(unsigned i) const {
    return present(i) && slots[i] < 0 ? scalars[-slots[i] - 1] : Attribute();
  }
  /// The tensor operand index of argument `i`, or -1.
  int operandIndex(unsigned i) const { return isTensor(i) ? slots[i] : -1; }
  /// Whether argument `i` is absent or None.
  bool isNoneOrAbsent(unsigned i) const;
  unsigned numTensors() const { return tensorTypes.size(); }
  TypeRange getTensorTypes() const { return tensorTypes; }

private:
  llvm::SmallVector<int, 8> slots; // >= 0: operand index; < 0: -(scalar+1)
  TypeRange tensorTypes;
  llvm::ArrayRef<Attribute> scalars;
};

/// `args` as the argument decoders of Support/OpArgs.h read a call, so that
/// the registry's inference and the lowering decode an op family's
/// arguments with the runtime's own decoders: each scalar attribute
/// decoded as buildExecutable does (toScalarValue, decodeScalar).
traceir::ListCallArgs callArgs(const PyArgs &args);

/// Collects the message of a failed inference; verifiers and the importer
/// attach it to their own location.
struct InferError {
  std::string message;
};

/// Infers the result types of a call from its arguments. Returns false and
/// fills `err` when the arguments are malformed or their shapes disagree.
using InferFn = bool (*)(const PyArgs &args, MLIRContext *ctx,
                         llvm::SmallVectorImpl<Type> &results, InferError &err);
/// The tensor operand that result `resultIndex` shares storage with, or -1
/// when the result is a fresh allocation.
using AliasFn = int (*)(const PyArgs &args, unsigned resultIndex);
/// A flag that depends on the call's scalars (e.g. dropout's `train`).
using FlagFn = bool (*)(const PyArgs &args);

struct OpInfo {
  llvm::StringLiteral name;
  /// The argument list, in PyTorch's order, for the docs.
  llvm::StringLiteral signature;
  InferFn infer;
  AliasFn alias;
  /// Whether the op writes into one of its operands (in-place, running
  /// statistics). A write counts as a use of that storage.
  FlagFn mutates;
  /// Whether the op draws random numbers (not CSE-able, not removable).
  FlagFn random;
  /// One line for the docs on aliasing and effects.
  llvm::StringLiteral aliasDoc;
  llvm::StringLiteral effectsDoc;
  /// Its reference kernel on the CPU and on CUDA, as Ops.def says
  /// ("kernel", "elementwise", "view (CPU's)", "alias": its canonical op's;
  /// empty for none).
  llvm::StringLiteral cpuKernel, cudaKernel;
  /// The TraceToLinalg family that lowers it ("Conv"; "alias": as its
  /// canonical op), or empty and why the runtime's kernel runs it instead.
  llvm::StringLiteral lowering, notLowered;
};

/// torch.promote_types for two element types of PyTorch dtypes: the higher
/// category (bool < integer < floating < complex) wins; within a category
/// the wider type; f16 with bf16 gives f32; a signed and an unsigned
/// integer of one width give the next wider signed one; a complex with a
/// wider float widens the complex. A null type is no constraint.
Type promoteTypes(Type a, Type b);
/// torch.result_type of arguments [firstTyped, n) of a call, tensors and
/// Python numbers: dimensioned tensors decide; a 0-d tensor or a number only
/// lifts the dtype into a higher category (an int tensor times 0.5 is f32,
/// an f32 tensor times a 0-d f64 tensor stays f32). A None or absent
/// argument (clamp's missing bound) takes no part. Null for an argument
/// that is none of these, or of an element type PyTorch has no dtype for. The
/// registry's inference and the lowering both compute with it.
Type resultDtype(const PyArgs &args, unsigned n, MLIRContext *ctx,
                 unsigned firstTyped = 0);

/// How many arguments of `signature` (an OpInfo's) have no default: the
/// operands of an elementwise op ("self, other, alpha=1": 2).
unsigned countRequiredArgs(llvm::StringRef signature);

/// The entry for `name`, or null for an op the registry does not know.
const OpInfo *lookupOp(llvm::StringRef name);
/// Every entry, sorted by name.
llvm::ArrayRef<OpInfo> getAllOps();
/// The in-place form of `name`, a pure op that the shared elementwise
/// kernels run (`exp` -> `exp_`, `mul` -> `mul_`): Ops.def's row named
/// `name` + "_" that writes and returns its first argument, takes the same
/// arguments and runs on the same elementwise kernels, so that it computes
/// what `name` does wherever `name`'s result has its first argument's type.
/// Null where there is none.
const OpInfo *lookupInPlaceVariant(llvm::StringRef name);
/// The op whose kernels and lowering serve `name`: the canonical op of an
/// alias of Ops.def (mm -> matmul, _log_softmax -> log_softmax), else
/// `name` itself.
llvm::StringRef canonicalOpName(llvm::StringRef name);

/// How a PyOp result relates to storage, from the registry.
enum class AliasKind {
  Fresh,     ///< a new storage
  MustAlias, ///< shares the storage of operand `operand`
  MayAlias,  ///< unknown op: may share the storage of any tensor operand
};
struct ResultAlias {
  AliasKind kind;
  int operand = -1;
};
/// Aliasing of every result of `op` (one registry lookup for all of them).
void getResultAliases(PyOp op, llvm::SmallVectorImpl<ResultAlias> &out);
/// Aliasing of one result of `op`.
ResultAlias getResultAlias(PyOp op, unsigned resultIndex);

/// The value that owns the memory `v` refers to: follows results that must
/// alias an operand (views, in-place ops) up to a block argument, a constant
/// or a result that is not a must-alias (fresh, or of an unknown op).
Value getStorageRoot(Value v);

/// Calls `fn` on every use of the storage that `root` owns: the uses of
/// `root` and, transitively, of every PyOp result that must alias the used
/// operand (views, in-place results). Results of unknown ops, which only may
/// alias, are not followed: `fn` sees the unknown op's use and decides. Each
/// use is visited once, with no hashing.
void walkStorageUses(Value root, llvm::function_ref<void(OpOperand &)> fn);

/// Whether `op` is an op the registry does not know that has tensor operands
/// and results: each result may alias any operand.
bool isMayAliasOp(Operation *op);

/// The bytes one element of `elementType` takes as TraceIR counts them: its
/// bit width rounded up to whole bytes (i1 is 1 byte), twice its part's for
/// a complex type, 8 for index, 1 for a type without a bit width.
int64_t elementByteSize(Type elementType);

/// Why the tensor type `type` is not representable in TraceIR, as the tail
/// of a sentence ("holds 2^64 elements of 4 bytes, over TraceIR's limit of
/// 2^48 bytes (281474976710656)"), or empty when it is: a static dim is
/// negative, or the static dims' element count (dynamic dims are not
/// counted) times elementByteSize is over traceir::kMaxTensorBytes (see
/// Support/CheckedMath.h). Non-tensor and unranked types are representable.
/// The verifier checks every tensor type of the dialect's ops with it, and
/// shape inference every type it infers, so code after verification may
/// multiply a tensor's dims without overflow.
std::string tensorSizeError(Type type);

/// Writes docs/OpRegistry.md's content.
void printOpRegistryMarkdown(llvm::raw_ostream &os);

} // namespace trace
} // namespace mlir

#endif // TRACEIR_DIALECT_OPREGISTRY_H
