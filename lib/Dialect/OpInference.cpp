//===- OpInference.cpp - Shape and dtype inference of the registry --------===//
//
// The inference functions the op registry's rows name (Ops.def's INFER
// column, declared in OpRegistryImpl.h) and the helpers they share; the
// dtype promotion they and the lowering compute with (promoteTypes,
// resultDtype); and the tensor size limit every inferred type is checked
// against (tensorSizeError), which the verifier uses too.
//
//===----------------------------------------------------------------------===//

#include "OpRegistryImpl.h"

#include "TraceIR/Dialect/OpRegistry.h"
#include "TraceIR/Dialect/Scalars.h"
#include "TraceIR/Dialect/TraceDialect.h"
#include "TraceIR/Support/CheckedMath.h"
#include "TraceIR/Support/ConvolutionArgs.h"
#include "TraceIR/Support/ViewAlgebra.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/APInt.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::trace;
using namespace mlir::trace::registry;

static constexpr int64_t kDyn = ShapedType::kDynamic;

//===----------------------------------------------------------------------===//
// The tensor size limit
//===----------------------------------------------------------------------===//

int64_t mlir::trace::elementByteSize(Type t) {
  if (auto c = dyn_cast<ComplexType>(t))
    return 2 * elementByteSize(c.getElementType());
  if (isa<IndexType>(t))
    return 8;
  if (t.isIntOrFloat())
    return std::max<int64_t>((t.getIntOrFloatBitWidth() + 7) / 8, 1);
  return 1;
}

/// An element count for a message: 2^k for large powers of two (the usual
/// fuzzed sizes), else the number, which may be beyond int64_t.
static std::string countStr(const llvm::APInt &n) {
  if (n.isPowerOf2() && n.logBase2() >= 16)
    return "2^" + std::to_string(n.logBase2());
  return llvm::toString(n, 10, /*Signed=*/false);
}

std::string mlir::trace::tensorSizeError(Type type) {
  auto ranked = dyn_cast<RankedTensorType>(type);
  if (!ranked)
    return {};
  SmallVector<int64_t, 6> dims;
  for (int64_t d : ranked.getShape()) {
    if (d == ShapedType::kDynamic)
      continue;
    if (d < 0)
      return "has a negative dim " + std::to_string(d);
    dims.push_back(d);
  }
  int64_t eltBytes = elementByteSize(ranked.getElementType());
  if (traceir::checkedTensorBytes(dims, eltBytes))
    return {};
  // Exact arithmetic for the message only: the product of up to 64-bit dims
  // fits in 64 bits per dim.
  llvm::APInt n(64 * (dims.size() + 1), 1), nonZero = n;
  bool zero = false;
  for (int64_t d : dims) {
    llvm::APInt v(n.getBitWidth(), d);
    n *= v;
    if (d)
      nonZero *= v;
    zero |= d == 0;
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  if (zero) {
    os << "holds no elements, but its other dims multiply to "
       << countStr(nonZero) << ", which overflows int64";
    return text;
  }
  os << "holds " << countStr(n) << " elements of " << eltBytes << " byte"
     << (eltBytes == 1 ? "" : "s") << ", over TraceIR's limit of 2^"
     << llvm::Log2_64(traceir::kMaxTensorBytes) << " bytes ("
     << traceir::kMaxTensorBytes << ")";
  return text;
}

//===----------------------------------------------------------------------===//
// Inference helpers
//===----------------------------------------------------------------------===//

namespace mlir::trace::registry {
namespace {
using Shape = SmallVector<int64_t, 6>;

/// Builds the error message; every inference failure goes through it.
struct Err {
  InferError &e;
  template <typename... Ts> bool operator()(const Ts &...parts) {
    llvm::raw_string_ostream os(e.message);
    (os << ... << parts);
    return false;
  }
};

std::string shapeStr(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(shape)) {
    if (i)
      s += ", ";
    s += d == kDyn ? "?" : std::to_string(d);
  }
  return s + "]";
}

/// Everything an inference function needs, with typed accessors that report
/// which argument is wrong.
struct Call {
  const PyArgs &a;
  MLIRContext *ctx;
  SmallVectorImpl<Type> &out;
  Err err;

  /// Argument `i` as a tensor type; fails when it is not a tensor.
  TensorType tensor(unsigned i, const char *what) {
    if (!a.isTensor(i)) {
      err("argument #", i, " (", what, ") must be a tensor");
      return {};
    }
    return cast<TensorType>(a.type(i));
  }
  /// An optional tensor: absent/None gives a null type without failing.
  bool optTensor(unsigned i, const char *what, TensorType &t) {
    t = {};
    if (a.isNoneOrAbsent(i))
      return true;
    t = tensor(i, what);
    return static_cast<bool>(t);
  }
  bool intArg(unsigned i, const char *what, int64_t &v,
              std::optional<int64_t> dflt = std::nullopt) {
    if (a.isNoneOrAbsent(i) && dflt) {
      v = *dflt;
      return true;
    }
    auto x = getInt(a.scalar(i));
    if (!x)
      return err("argument #", i, " (", what, ") must be an int");
    v = *x;
    return true;
  }
  bool boolArg(unsigned i, const char *what, bool &v, bool dflt) {
    if (a.isNoneOrAbsent(i)) {
      v = dflt;
      return true;
    }
    auto x = getBool(a.scalar(i));
    if (!x)
      return err("argument #", i, " (", what, ") must be a bool");
    v = *x;
    return true;
  }
  bool intList(unsigned i, const char *what, SmallVectorImpl<int64_t> &v) {
    auto x = getIntList(a.scalar(i));
    if (!x)
      return err("argument #", i, " (", what,
                 ") must be an int or a tuple/list of ints");
    v.assign(x->begin(), x->end());
    return true;
  }
  /// Normalizes a possibly negative dim against `rank` (PyTorch wraps).
  bool dim(int64_t &d, int64_t rank, const char *what) {
    int64_t r = std::max<int64_t>(rank, 1);
    if (d < -r || d >= r)
      return err(what, " ", d, " is out of range for a tensor of rank ", rank);
    if (d < 0)
      d += r;
    return true;
  }
  /// Appends a result type, or fails when the shape is not representable:
  /// inference never hands out a wrapped or oversized shape, whatever the
  /// scalars were.
  [[nodiscard]] bool push(ArrayRef<int64_t> shape, Type elt) {
    for (int64_t d : shape)
      if (d < 0 && d != kDyn)
        return err("result #", out.size(), " would have shape ",
                   shapeStr(shape), ", with a negative dim");
    auto t = RankedTensorType::get(shape, elt);
    if (std::string why = tensorSizeError(t); !why.empty())
      return err("result #", out.size(), " of shape ", shapeStr(shape), " ",
                 why);
    out.push_back(t);
    return true;
  }
  /// x * y (or x + y) of dims or counts, dynamic when either is; fails
  /// rather than wraps when the scalars make it overflow.
  bool mulDims(int64_t x, int64_t y, int64_t &r, const char *what) {
    return combineDims(x, y, r, what, traceir::checkedMul, " * ");
  }
  bool addDims(int64_t x, int64_t y, int64_t &r, const char *what) {
    return combineDims(x, y, r, what, traceir::checkedAdd, " + ");
  }
  bool combineDims(int64_t x, int64_t y, int64_t &r, const char *what,
                   std::optional<int64_t> (*op)(int64_t, int64_t),
                   const char *sign) {
    if (x == kDyn || y == kDyn) {
      r = kDyn;
      return true;
    }
    std::optional<int64_t> v = op(x, y);
    if (!v)
      return err(what, " ", x, sign, y, " overflows int64");
    r = *v;
    return true;
  }
  bool pushUnranked(Type elt) {
    out.push_back(UnrankedTensorType::get(elt));
    return true;
  }
  Type f32() { return Float32Type::get(ctx); }
  Type i64() { return IntegerType::get(ctx, 64); }
  Type i1() { return IntegerType::get(ctx, 1); }
};

bool isFloatLike(Type t) { return isa<FloatType>(t); }

/// PyTorch's dtype categories: bool < integer < floating < complex; -1 for
/// element types PyTorch has no dtype for.
int category(Type t) {
  if (t.isInteger(1))
    return 0;
  if (isa<IntegerType>(t))
    return 1;
  if (isa<FloatType>(t))
    return 2;
  if (auto c = dyn_cast<ComplexType>(t);
      c && isa<FloatType>(c.getElementType()))
    return 3;
  return -1;
}

unsigned bitWidth(Type t) {
  if (auto c = dyn_cast<ComplexType>(t))
    return c.getElementType().getIntOrFloatBitWidth();
  return t.getIntOrFloatBitWidth();
}

Type promote(Type a, Type b) { return mlir::trace::promoteTypes(a, b); }
} // namespace
} // namespace mlir::trace::registry

Type mlir::trace::promoteTypes(Type a, Type b) {
  if (!a)
    return b;
  if (!b || a == b)
    return a;
  int ca = category(a), cb = category(b);
  if (ca < cb) {
    std::swap(a, b);
    std::swap(ca, cb);
  }
  MLIRContext *ctx = a.getContext();
  if (ca == 3 && cb == 2 && bitWidth(b) > bitWidth(a))
    return ComplexType::get(b);
  if (ca != cb)
    return a;
  unsigned wa = bitWidth(a), wb = bitWidth(b);
  if (ca == 2 && wa == 16 && wb == 16)
    return Float32Type::get(ctx);
  if (ca == 1 && wa == wb && a.isUnsignedInteger() != b.isUnsignedInteger())
    return IntegerType::get(ctx, std::min(2 * wa, 64u));
  return wa >= wb ? a : b;
}

Type mlir::trace::resultDtype(const PyArgs &args, unsigned n, MLIRContext *ctx,
                              unsigned firstTyped) {
  Type dimType, zeroType;
  int scalarCategory = -1;
  for (unsigned i = firstTyped; i < n; ++i) {
    if (args.isNoneOrAbsent(i))
      continue;
    if (args.isTensor(i)) {
      Type elt = cast<ShapedType>(args.type(i)).getElementType();
      if (category(elt) < 0)
        return {};
      auto ranked = dyn_cast<RankedTensorType>(args.type(i));
      if (ranked && ranked.getRank() == 0)
        zeroType = promoteTypes(zeroType, elt);
      else
        dimType = promoteTypes(dimType, elt);
      continue;
    }
    Attribute sc = args.scalar(i);
    int cat = isa_and_nonnull<BoolAttr>(sc) ? 0
              : getInt(sc)                  ? 1
              : getNumber(sc)               ? 2
                                            : -1;
    if (cat < 0)
      return {};
    scalarCategory = std::max(scalarCategory, cat);
  }
  Type elt = dimType ? dimType : zeroType;
  if (dimType && zeroType && category(zeroType) > category(dimType))
    elt = promoteTypes(dimType, zeroType);
  Builder b(ctx);
  if (!elt) // only a condition was a tensor: the numbers decide
    return scalarCategory >= 2   ? Type(b.getF32Type())
           : scalarCategory == 1 ? Type(b.getI64Type())
                                 : Type(b.getI1Type());
  if (scalarCategory > category(elt))
    return scalarCategory == 2 ? Type(b.getF32Type()) : b.getI64Type();
  return elt;
}

namespace mlir::trace::registry {

/// Broadcasts `b` into `a` (NumPy rules); dynamic dims stay dynamic unless
/// the other side pins them.
static bool broadcastInto(Shape &a, ArrayRef<int64_t> b, Err &err) {
  Shape r(std::max(a.size(), b.size()), 1);
  for (size_t i = 0; i < r.size(); ++i) {
    int64_t x = i < a.size() ? a[a.size() - 1 - i] : 1;
    int64_t y = i < b.size() ? b[b.size() - 1 - i] : 1;
    int64_t &o = r[r.size() - 1 - i];
    if (x == 1)
      o = y;
    else if (y == 1 || x == y)
      o = x;
    else if (x == kDyn)
      o = y;
    else if (y == kDyn)
      o = x;
    else
      return err("shapes ", shapeStr(a), " and ", shapeStr(b),
                 " cannot be broadcast together");
  }
  a = std::move(r);
  return true;
}

/// Elementwise over the first `n` arguments (tensors or numbers), with
/// broadcasting and torch.result_type's promotion: dimensioned tensors
/// decide the dtype; a 0-d tensor or a Python number only lifts it into a
/// higher category (an int tensor times 0.5 is f32, an f32 tensor times a
/// 0-d f64 tensor stays f32). Arguments before `firstTyped` broadcast but
/// take no part in the dtype (`where`'s condition). With `optional`, a None
/// or absent argument is skipped (clamp's bounds).
static bool elementwise(Call &c, unsigned n, EltRule rule,
                        unsigned firstTyped = 0, bool optional = false) {
  Shape shape;
  bool ranked = true, anyTensor = false;
  for (unsigned i = 0; i < n; ++i) {
    if (optional && c.a.isNoneOrAbsent(i))
      continue;
    if (c.a.isTensor(i)) {
      auto t = cast<TensorType>(c.a.type(i));
      anyTensor = true;
      Type elt = t.getElementType();
      if (category(elt) < 0)
        return c.err("argument #", i, " has element type ", elt,
                     ", which has no PyTorch dtype");
      if (!t.hasRank()) {
        ranked = false;
        continue;
      }
      if (!broadcastInto(shape, t.getShape(), c.err))
        return false;
      continue;
    }
    Attribute sc = c.a.scalar(i);
    int cat = isa_and_nonnull<BoolAttr>(sc) ? 0
              : getInt(sc)                  ? 1
              : getNumber(sc)               ? 2
                                            : -1;
    if (cat < 0)
      return c.err("argument #", i, " must be a tensor or a number");
  }
  if (!anyTensor)
    return c.err("needs at least one tensor argument");
  Type elt = resultDtype(c.a, n, c.ctx, firstTyped);
  if (rule == EltRule::Float && !isFloatLike(elt) && category(elt) != 3)
    elt = c.f32();
  if (rule == EltRule::Bool)
    elt = c.i1();
  // PyTorch has no kernel of these ops for the dtype: its error, at the
  // trace instead of when the graph runs.
  if (rule == EltRule::NotBool && elt.isInteger(1))
    return c.err("takes no bool tensor (PyTorch has no bool kernel for it)");
  if (rule == EltRule::Integral && category(elt) > 1)
    return c.err("takes integer or bool tensors, got ", elt);
  if (rule == EltRule::IntegerOnly && (category(elt) > 1 || elt.isInteger(1)))
    return c.err("takes integer tensors, got ", elt);
  if (rule == EltRule::FloatOnly && !isFloatLike(elt))
    return c.err("takes floating-point tensors, got ", elt);
  return ranked ? c.push(shape, elt) : c.pushUnranked(elt);
}

/// where(condition, self, other): the condition is bool and broadcasts but
/// does not take part in the dtype.
bool inferWhere(const PyArgs &a, MLIRContext *ctx, SmallVectorImpl<Type> &out,
                InferError &e) {
  Call c{a, ctx, out, Err{e}};
  TensorType cond = c.tensor(0, "condition");
  if (!cond)
    return false;
  if (!cond.getElementType().isInteger(1))
    return c.err("condition must be a bool tensor, got ",
                 cond.getElementType());
  return elementwise(c, 3, EltRule::Promote, /*firstTyped=*/1);
}

template <unsigned N, EltRule R>
bool inferElementwise(const PyArgs &a, MLIRContext *ctx,
                      SmallVectorImpl<Type> &out, InferError &e) {
  Call c{a, ctx, out, Err{e}};
  return elementwise(c, N, R);
}

/// round(self, decimals=0) (round.default and round.decimals): self's type;
/// decimals, an int, needs a floating self (ATen's round.decimals has no
/// integer kernel).
bool inferRound(const PyArgs &a, MLIRContext *ctx, SmallVectorImpl<Type> &out,
                InferError &e) {
  Call c{a, ctx, out, Err{e}};
  int64_t decimals;
  if (!c.intArg(1, "decimals", decimals, 0))
    return false;
  TensorType t = c.tensor(0, "self");
  if (!t)
    return false;
  if (decimals != 0 && !isFloatLike(t.getElementType()))
    return c.err("decimals=", decimals, " takes floating-point tensors, got ",
                 t.getElementType());
  return elementwise(c, 1, EltRule::NotBool);
}

/// div(self, other, rounding_mode=None): true division gives floats even
/// for integer operands; with a rounding mode the dtype is promoted.
bool inferDiv(const PyArgs &a, MLIRContext *ctx, SmallVectorImpl<Type> &out,
              InferError &e) {
  Call c{a, ctx, out, Err{e}};
  return elementwise(c, 2,
                     a.isNoneOrAbsent(2) ? EltRule::Float : EltRule::Promote);
}

bool inferSameAsFirst(const PyArgs &a, MLIRContext *ctx,
                      SmallVectorImpl<Type> &out, InferError &e) {
  Call c{a, ctx, out, Err{e}};
  TensorType t = c.tensor(0, "input");
  if (!t)
    return false;
  out.push_back(t);
  return true;
}

/// dropout(input, p, train): the input's type, once p and train decode.
bool inferDropout(const PyArgs &a, MLIRContext *ctx, SmallVectorImpl<Type> &out,
                  InferError &e) {
  traceir::DropoutArgs dropout;
  std::string why;
  if (!traceir::decodeDropout(callArgs(a), dropout, why)) {
    e.message = why;
    return false;
  }
  return inferSameAsFirst(a, ctx, out, e);
}

/// native_dropout(input, p, train) -> (output, mask): the input's type and
/// a bool mask of its shape.
bool inferNativeDropout(const PyArgs &a, MLIRContext *ctx,
                        SmallVectorImpl<Type> &out, InferError &e) {
  if (!inferDropout(a, ctx, out, e))
    return false;
  auto t = cast<TensorType>(out.back());
  out.push_back(t.clone(IntegerType::get(ctx, 1)));
  return true;
}

/// Runs `body` on the ranked shape of argument 0, or yields an unranked
/// result when its rank is unknown.
template <typename F> static bool onRanked(Call &c, const char *what, F body) {
  TensorType t = c.tensor(0, what);
  if (!t)
    return false;
  if (!t.hasRank())
    return c.pushUnranked(t.getElementType());
  Shape s(t.getShape().begin(), t.getShape().end());
  return body(s, t.getElementType());
}

#define INFER(NAME)                                                            \
  bool NAME(const PyArgs &a, MLIRContext *ctx, SmallVectorImpl<Type> &out,     \
            InferError &e)
#define CALL                                                                   \
  Call c {                                                                     \
    a, ctx, out, Err { e }                                                     \
  }

//===--- Linear algebra ---------------------------------------------------===//

/// torch.matmul's rules for ranks 1 and 2 and batched broadcasting.
static bool matmulShapes(Call &c, ArrayRef<int64_t> x, ArrayRef<int64_t> y,
                         Shape &r) {
  if (x.empty() || y.empty())
    return c.err("both arguments must have rank >= 1, got ", shapeStr(x),
                 " and ", shapeStr(y));
  Shape xs(x.begin(), x.end()), ys(y.begin(), y.end());
  bool xv = xs.size() == 1, yv = ys.size() == 1;
  if (xv)
    xs.insert(xs.begin(), 1);
  if (yv)
    ys.push_back(1);
  int64_t k1 = xs.back(), k2 = ys[ys.size() - 2];
  if (k1 != kDyn && k2 != kDyn && k1 != k2)
    return c.err("contraction sizes differ: ", shapeStr(x), " @ ", shapeStr(y));
  Shape xb(xs.begin(), xs.end() - 2), yb(ys.begin(), ys.end() - 2);
  if (!broadcastInto(xb, yb, c.err))
    return false;
  r = xb;
  if (!xv)
    r.push_back(xs[xs.size() - 2]);
  if (!yv)
    r.push_back(ys.back());
  return true;
}

INFER(inferMatmul) {
  CALL;
  TensorType x = c.tensor(0, "self"), y = c.tensor(1, "other");
  if (!x || !y)
    return false;
  Type elt = promote(x.getElementType(), y.getElementType());
  if (!x.hasRank() || !y.hasRank())
    return c.pushUnranked(elt);
  Shape r;
  return matmulShapes(c, x.getShape(), y.getShape(), r) && c.push(r, elt);
}

template <unsigned Rank> INFER(inferMatmulOfRank) { // mm (2) and bmm (3)
  CALL;
  TensorType x = c.tensor(0, "self"), y = c.tensor(1, "mat2");
  if (!x || !y)
    return false;
  if (x.hasRank() && x.getRank() != Rank)
    return c.err("self must have rank ", Rank, ", got ",
                 shapeStr(x.getShape()));
  if (y.hasRank() && y.getRank() != Rank)
    return c.err("mat2 must have rank ", Rank, ", got ",
                 shapeStr(y.getShape()));
  // bmm does not broadcast its batch dim.
  if (Rank == 3 && x.hasRank() && y.hasRank() && x.getDimSize(0) != kDyn &&
      y.getDimSize(0) != kDyn && x.getDimSize(0) != y.getDimSize(0))
    return c.err("batch sizes differ: ", shapeStr(x.getShape()), " and ",
                 shapeStr(y.getShape()));
  return inferMatmul(a, ctx, out, e);
}

INFER(inferLinear) {
  CALL;
  TensorType x = c.tensor(0, "input"), w = c.tensor(1, "weight"), b;
  if (!x || !w || !c.optTensor(2, "bias", b))
    return false;
  Type elt = x.getElementType();
  if (!x.hasRank() || !w.hasRank())
    return c.pushUnranked(elt);
  if (w.getRank() != 2 && w.getRank() != 1)
    return c.err("weight must have rank 1 or 2, got ", shapeStr(w.getShape()));
  Shape wt(w.getShape().rbegin(), w.getShape().rend()); // weight.t()
  Shape r;
  if (!matmulShapes(c, x.getShape(), wt, r))
    return false;
  if (b && b.hasRank() && !broadcastInto(r, b.getShape(), c.err))
    return false;
  return c.push(r, elt);
}

INFER(inferAddmm) {
  CALL;
  TensorType b = c.tensor(0, "self"), x = c.tensor(1, "mat1"),
             y = c.tensor(2, "mat2");
  if (!b || !x || !y)
    return false;
  if (!x.hasRank() || !y.hasRank())
    return c.pushUnranked(x.getElementType());
  if (x.getRank() != 2 || y.getRank() != 2)
    return c.err("mat1 and mat2 must have rank 2, got ", shapeStr(x.getShape()),
                 " and ", shapeStr(y.getShape()));
  Shape r;
  if (!matmulShapes(c, x.getShape(), y.getShape(), r))
    return false;
  Shape bs = b.hasRank() ? Shape(b.getShape()) : Shape();
  Shape chk = bs;
  if (!broadcastInto(chk, r, c.err))
    return false;
  if (failed(verifyCompatibleShape(chk, r)))
    return c.err("self ", shapeStr(bs), " does not broadcast to the product ",
                 shapeStr(r));
  return c.push(r, x.getElementType());
}

/// Fails unless query, key and value share one floating dtype.
static bool attentionDtypes(Call &c, TensorType q, TensorType k, TensorType v) {
  Type elt = q.getElementType();
  if (k.getElementType() != elt || v.getElementType() != elt)
    return c.err("query, key and value must have the same dtype, got ", elt,
                 ", ", k.getElementType(), " and ", v.getElementType());
  if (!isFloatLike(elt))
    return c.err("query, key and value must be floating point, got ", elt);
  return true;
}

/// Fails unless attention mask `m` broadcasts to the scores' shape.
static bool maskBroadcasts(Call &c, TensorType m, const Shape &scores) {
  Shape chk = scores;
  if (!broadcastInto(chk, m.getShape(), c.err))
    return false;
  if (failed(verifyCompatibleShape(chk, scores)))
    return c.err("attn_mask ", shapeStr(m.getShape()),
                 " does not broadcast to the attention scores ",
                 shapeStr(scores));
  return true;
}

/// scaled_dot_product_attention(query, key, value, attn_mask=None,
/// dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False): query
/// [..., L, E], key [..., S, E], value [..., S, Ev] -> [..., L, Ev]; the
/// batch dims broadcast, the mask (bool, or the query's dtype) broadcasts to
/// [..., L, S]. enable_gqa is accepted when the heads already match (the
/// runtime rejects it; see NNArgs.h).
INFER(inferAttention) {
  CALL;
  TensorType q = c.tensor(0, "query"), k = c.tensor(1, "key"),
             v = c.tensor(2, "value"), m;
  if (!q || !k || !v || !c.optTensor(3, "attn_mask", m))
    return false;
  Type elt = q.getElementType();
  if (!attentionDtypes(c, q, k, v))
    return false;
  if (m && !m.getElementType().isInteger(1) && m.getElementType() != elt)
    return c.err("attn_mask must be bool or have the query's dtype ", elt,
                 ", got ", m.getElementType());
  if (!a.isNoneOrAbsent(4) && !getNumber(a.scalar(4)))
    return c.err("argument #4 (dropout_p) must be a number");
  if (auto p = getNumber(a.scalar(4)); p && !(*p >= 0 && *p <= 1))
    return c.err("dropout_p must be in [0, 1], got ", *p);
  bool causal, gqa;
  if (!c.boolArg(5, "is_causal", causal, false) ||
      !c.boolArg(7, "enable_gqa", gqa, false))
    return false;
  if (!a.isNoneOrAbsent(6) && !getNumber(a.scalar(6)))
    return c.err("argument #6 (scale) must be a number or None");
  if (causal && m)
    return c.err("an explicit attn_mask must not be set when is_causal=True");
  if (!q.hasRank() || !k.hasRank() || !v.hasRank())
    return c.pushUnranked(elt);
  ArrayRef<int64_t> qs = q.getShape(), ks = k.getShape(), vs = v.getShape();
  if (qs.size() < 2 || ks.size() < 2 || vs.size() < 2)
    return c.err("query, key and value must have rank >= 2, got ", shapeStr(qs),
                 ", ", shapeStr(ks), " and ", shapeStr(vs));
  auto differ = [](int64_t x, int64_t y) {
    return x != kDyn && y != kDyn && x != y;
  };
  if (differ(qs.back(), ks.back()))
    return c.err("query ", shapeStr(qs), " and key ", shapeStr(ks),
                 " must have the same embedding size (last dim)");
  if (differ(ks[ks.size() - 2], vs[vs.size() - 2]))
    return c.err("key ", shapeStr(ks), " and value ", shapeStr(vs),
                 " must have the same sequence length (dim -2)");
  Shape batch(qs.begin(), qs.end() - 2);
  if (!broadcastInto(batch, ks.drop_back(2), c.err) ||
      !broadcastInto(batch, vs.drop_back(2), c.err))
    return false;
  int64_t L = qs[qs.size() - 2], S = ks[ks.size() - 2];
  if (m && m.hasRank()) {
    Shape scores = batch;
    scores.append({L, S});
    if (!maskBroadcasts(c, m, scores))
      return false;
  }
  Shape r = batch;
  r.append({L, vs.back()});
  return c.push(r, elt);
}

/// _scaled_dot_product_flash_attention_for_cpu(query, key, value,
/// dropout_p=0.0, is_causal=False, *, attn_mask=None, scale=None) ->
/// (output, logsumexp): query [N, H, L, E], key [N, H, S, E], value [N, H,
/// S, E] (rank 4 and one head size, as ATen's kernel asks); output [N, H, L,
/// E] in the query's dtype and logsumexp [N, H, L] of the scaled, masked scores
/// in its accumulation dtype (float32, float64 for float64). ATen's kernel
/// takes no dropout and a mask only of the query's dtype.
INFER(inferFlashAttentionForCpu) {
  CALL;
  TensorType q = c.tensor(0, "query"), k = c.tensor(1, "key"),
             v = c.tensor(2, "value"), m;
  if (!q || !k || !v || !c.optTensor(5, "attn_mask", m))
    return false;
  Type elt = q.getElementType();
  if (!attentionDtypes(c, q, k, v))
    return false;
  if (m && m.getElementType() != elt)
    return c.err("attn_mask must have the query's dtype ", elt, ", got ",
                 m.getElementType());
  auto p = getNumber(a.scalar(3));
  if (!a.isNoneOrAbsent(3) && !p)
    return c.err("argument #3 (dropout_p) must be a number");
  if (p && *p != 0)
    return c.err("dropout_p must be 0 (ATen's CPU kernel has no dropout), got ",
                 *p);
  bool causal;
  if (!c.boolArg(4, "is_causal", causal, false))
    return false;
  if (!a.isNoneOrAbsent(6) && !getNumber(a.scalar(6)))
    return c.err("argument #6 (scale) must be a number or None");
  if (causal && m)
    return c.err("an explicit attn_mask must not be set when is_causal=True");
  Type acc = elt.isF64() ? elt : c.f32();
  if (!q.hasRank() || !k.hasRank() || !v.hasRank()) {
    c.pushUnranked(elt);
    return c.pushUnranked(acc);
  }
  ArrayRef<int64_t> qs = q.getShape(), ks = k.getShape(), vs = v.getShape();
  if (qs.size() != 4 || ks.size() != 4 || vs.size() != 4)
    return c.err("query, key and value must have rank 4 ([N, H, L, E]), got ",
                 shapeStr(qs), ", ", shapeStr(ks), " and ", shapeStr(vs));
  auto differ = [](int64_t x, int64_t y) {
    return x != kDyn && y != kDyn && x != y;
  };
  for (int d = 0; d < 2; ++d)
    if (differ(qs[d], ks[d]) || differ(qs[d], vs[d]))
      return c.err("query ", shapeStr(qs), ", key ", shapeStr(ks),
                   " and value ", shapeStr(vs),
                   " must have the same batch and heads (dims 0 and 1)");
  if (differ(qs[3], ks[3]) || differ(qs[3], vs[3]))
    return c.err("query ", shapeStr(qs), ", key ", shapeStr(ks), " and value ",
                 shapeStr(vs), " must have the same head size (last dim)");
  if (differ(ks[2], vs[2]))
    return c.err("key ", shapeStr(ks), " and value ", shapeStr(vs),
                 " must have the same sequence length (dim 2)");
  if (m && m.hasRank() &&
      !maskBroadcasts(c, m, Shape{qs[0], qs[1], qs[2], ks[2]}))
    return false;
  return c.push({qs[0], qs[1], qs[2], vs[3]}, elt) &&
         c.push({qs[0], qs[1], qs[2]}, acc);
}

//===--- Reductions and normalizations ----------------------------------===//

/// A ScalarType argument as the exporters print it ("torch.float32"; the
/// bare name works too); None gives a null type.
static bool dtypeArg(Call &c, unsigned i, const char *what, Type &t) {
  t = {};
  if (c.a.isNoneOrAbsent(i))
    return true;
  auto s = dyn_cast_or_null<StringAttr>(c.a.scalar(i));
  StringRef name = s ? s.getValue() : StringRef();
  name.consume_front("torch.");
  MLIRContext *ctx = c.ctx;
  t = llvm::StringSwitch<Type>(name)
          .Cases({"float32", "float"}, Float32Type::get(ctx))
          .Cases({"float64", "double"}, Float64Type::get(ctx))
          .Cases({"float16", "half"}, Float16Type::get(ctx))
          .Case("bfloat16", BFloat16Type::get(ctx))
          .Cases({"int64", "long"}, IntegerType::get(ctx, 64))
          .Cases({"int32", "int"}, IntegerType::get(ctx, 32))
          .Cases({"int16", "short"}, IntegerType::get(ctx, 16))
          .Case("int8", IntegerType::get(ctx, 8))
          .Case("uint8", IntegerType::get(ctx, 8, IntegerType::Unsigned))
          .Case("bool", IntegerType::get(ctx, 1))
          .Default(Type());
  if (!t)
    return c.err("argument #", i, " (", what,
                 ") must be None or a dtype such as \"torch.float32\"");
  return true;
}

/// The shape of a reduction of `s` over `reduced`, keepdim's 1s kept.
static Shape reducedShape(const Shape &s, const std::vector<bool> &reduced,
                          bool keep) {
  Shape r;
  for (size_t i = 0; i < s.size(); ++i)
    if (!reduced[i])
      r.push_back(s[i]);
    else if (keep)
      r.push_back(1);
  return r;
}

/// sum/mean/amax/amin/prod/any/argmax/argmin/max/min(self, dim, keepdim,
/// dtype):
/// `dim` read as `F` says (traceir::DimArg); None reduces all.
template <ReduceDtype R, traceir::DimArg F> INFER(inferReduce) {
  CALL;
  return onRanked(c, "self", [&](Shape &s, Type elt) {
    bool keep;
    if (!c.boolArg(2, "keepdim", keep, false))
      return false;
    // max.dim and min.dim take one dim, never None.
    int64_t d;
    if (R == ReduceDtype::ValueIndex && !c.intArg(1, "dim", d))
      return false;
    std::vector<bool> reduced;
    std::string why;
    if (!traceir::decodeReducedDims(callArgs(a), 1, s.size(), F, reduced, why))
      return c.err(why);
    // amax, amin, argmax, argmin, max.dim and min.dim have no identity:
    // PyTorch refuses an empty group even where the result is empty.
    if ((R == ReduceDtype::Same || R == ReduceDtype::Index ||
         R == ReduceDtype::ValueIndex) &&
        !traceir::checkReducedNonEmpty(s, reduced, why))
      return c.err(why);
    Shape r = reducedShape(s, reduced, keep);
    // dtype= casts the input first, as PyTorch does.
    Type dtype;
    if ((R == ReduceDtype::Float || R == ReduceDtype::Sum) &&
        !dtypeArg(c, 3, "dtype", dtype))
      return false;
    if (dtype)
      elt = dtype;
    if (R == ReduceDtype::Float && !isFloatLike(elt))
      return c.err("mean needs a floating point input or dtype, got ", elt);
    if (R == ReduceDtype::Sum && !dtype && category(elt) <= 1)
      elt = c.i64();
    // any gives bool, but keeps uint8 (PyTorch's legacy mask dtype).
    if (R == ReduceDtype::Bool && !elt.isUnsignedInteger(8))
      elt = c.i1();
    if (R == ReduceDtype::Index) {
      if (elt.isInteger(1)) // as PyTorch, which has no order on bools
        return c.err("does not support bool input");
      elt = c.i64();
    }
    if (R == ReduceDtype::ValueIndex) // (values, indices)
      return c.push(r, elt) && c.push(r, c.i64());
    return c.push(r, elt);
  });
}

/// sort(self, dim=-1, descending=False) and topk(self, k, dim=-1,
/// largest=True, sorted=True) -> (values, indices): self's shape with k
/// along dim (sort: all), the values in self's dtype, i64 positions.
template <bool Topk> INFER(inferSort) {
  CALL;
  return onRanked(c, "self", [&](Shape &s, Type elt) {
    traceir::SortArgs sa;
    std::string why;
    if (!traceir::decodeSort(callArgs(a), s, Topk, sa, why))
      return c.err(why);
    if (!s.empty())
      s[sa.dim] = sa.k;
    return c.push(s, elt) && c.push(s, c.i64());
  });
}

/// var(self, dim=None, *, correction=None, keepdim=False), var.correction:
/// a floating input's variance over dims read as sum's, in its dtype.
INFER(inferVar) {
  CALL;
  return onRanked(c, "self", [&](Shape &s, Type elt) {
    std::vector<bool> reduced;
    std::string why;
    double correction;
    if (!traceir::decodeReducedDims(callArgs(a), 1, s.size(),
                                    traceir::DimArg::List, reduced, why) ||
        !traceir::readNumber(callArgs(a), 2, "correction", correction, 1.0,
                             why))
      return c.err(why);
    bool keep;
    if (!c.boolArg(3, "keepdim", keep, false))
      return false;
    if (!isFloatLike(elt))
      return c.err("std and var only support floating point dtypes, got ", elt);
    return c.push(reducedShape(s, reduced, keep), elt);
  });
}

/// _to_copy(self, dtype=None, layout, device, pin_memory, non_blocking,
/// memory_format): a copy of self's shape in `dtype` (self's when None);
/// the device and layout arguments are the runtime's business.
INFER(inferToCopy) {
  CALL;
  return onRanked(c, "self", [&](Shape &s, Type elt) {
    Type dtype;
    if (!dtypeArg(c, 1, "dtype", dtype))
      return false;
    return c.push(s, dtype ? dtype : elt);
  });
}

/// The dtype a tensor made from the Python number at argument `i` gets
/// without a dtype=: bool, int64, or the default float32 (torch.full's).
static bool numberDtype(Call &c, unsigned i, const char *what, Type &t) {
  Attribute v = c.a.scalar(i);
  if (isa_and_nonnull<BoolAttr>(v))
    t = IntegerType::get(c.ctx, 1);
  else if (getInt(v))
    t = c.i64();
  else if (getNumber(v))
    t = c.f32();
  else
    return c.err("argument #", i, " (", what, ") must be a number");
  return true;
}

/// full(size, fill_value, dtype=None, ...): `size` of non-negative dims.
INFER(inferFull) {
  CALL;
  SmallVector<int64_t> size;
  Type dflt, dtype;
  if (!c.intList(0, "size", size) || !numberDtype(c, 1, "fill_value", dflt) ||
      !dtypeArg(c, 2, "dtype", dtype))
    return false;
  for (int64_t d : size)
    if (d < 0)
      return c.err("size ", shapeStr(size), " has a negative dim");
  return c.push(size, dtype ? dtype : dflt);
}

/// full_like(self, fill_value, dtype=None, ...): self's shape, and its
/// dtype unless dtype= says another.
INFER(inferFullLike) {
  CALL;
  return onRanked(c, "self", [&](Shape &s, Type elt) {
    Type dflt, dtype;
    if (!numberDtype(c, 1, "fill_value", dflt) ||
        !dtypeArg(c, 2, "dtype", dtype))
      return false;
    return c.push(s, dtype ? dtype : elt);
  });
}

/// scalar_tensor(s, dtype=None, ...): a 0-d tensor, float32 unless dtype=
/// says otherwise (even for an int, as torch.scalar_tensor).
INFER(inferScalarTensor) {
  CALL;
  Type dflt, dtype;
  if (!numberDtype(c, 0, "s", dflt) || !dtypeArg(c, 1, "dtype", dtype))
    return false;
  return c.push({}, dtype ? dtype : c.f32());
}

/// The tensor factories without values: empty(size, dtype=None, ...),
/// empty_strided(size, stride, dtype=None, ...), rand and randn(size,
/// dtype=None, ...): `size` of non-negative dims in `dtype` (float32 when
/// None), which rand and randn (`Random`) need floating. empty_strided's
/// stride, one non-negative int per dim, is a layout TraceIR's contiguous
/// results do not keep: the values are unspecified, so no reader can tell.
template <bool Strided, bool Random> INFER(inferFactory) {
  CALL;
  SmallVector<int64_t> size, stride;
  Type dtype;
  unsigned d = Strided ? 2 : 1;
  if (!c.intList(0, "size", size) ||
      (Strided && !c.intList(1, "stride", stride)) ||
      !dtypeArg(c, d, "dtype", dtype))
    return false;
  for (int64_t x : size)
    if (x < 0)
      return c.err("size ", shapeStr(size), " has a negative dim");
  if (Strided && stride.size() != size.size())
    return c.err("stride ", shapeStr(stride),
                 " must have one entry per dim of size ", shapeStr(size));
  for (int64_t x : stride)
    if (x < 0)
      return c.err("stride ", shapeStr(stride), " has a negative entry");
  if (!dtype)
    dtype = c.f32();
  if (Random && !isFloatLike(dtype))
    return c.err("draws floating point values, got dtype ", dtype);
  return c.push(size, dtype);
}

/// randperm(n, dtype=None, ...): [n] in dtype (int64 when None), n >= 0
/// and within randpermMaxN of the dtype.
INFER(inferRandperm) {
  CALL;
  int64_t n;
  Type dtype;
  if (!c.intArg(0, "n", n) || !dtypeArg(c, 1, "dtype", dtype))
    return false;
  if (n < 0)
    return c.err("n must be non-negative, got ", n);
  if (!dtype)
    dtype = c.i64();
  using traceir::RandpermDtype;
  std::optional<RandpermDtype> rd;
  if (dtype.isUnsignedInteger(8))
    rd = RandpermDtype::U8;
  else if (dtype.isInteger(1))
    return c.err("randperm has no bool kernel (dtype=torch.bool)");
  else if (dtype.isInteger(8))
    rd = RandpermDtype::I8;
  else if (dtype.isInteger(16))
    rd = RandpermDtype::I16;
  else if (dtype.isInteger(32))
    rd = RandpermDtype::I32;
  else if (dtype.isInteger(64))
    rd = RandpermDtype::I64;
  else if (dtype.isF16())
    rd = RandpermDtype::F16;
  else if (dtype.isBF16())
    rd = RandpermDtype::BF16;
  else if (dtype.isF32())
    rd = RandpermDtype::F32;
  else if (dtype.isF64())
    rd = RandpermDtype::F64;
  else
    return c.err("takes an integer or floating dtype, got ", dtype);
  if (n > traceir::randpermMaxN(*rd))
    return c.err("n = ", n, " is too large for dtype ",
                 traceir::randpermDtypeName(*rd), " (at most ",
                 traceir::randpermMaxN(*rd),
                 ": every value 0..n-1 must be exact)");
  return c.push({n}, dtype);
}

/// arange(start, end, step=1, dtype=None, ...), arange.start_step: a 1-D
/// tensor of decodeArange's length, int64 from ints and float32 from a
/// float unless dtype= says another (not bool, which PyTorch refuses).
INFER(inferArange) {
  CALL;
  Type dtype;
  if (!dtypeArg(c, 3, "dtype", dtype))
    return false;
  if (dtype && dtype.isInteger(1))
    return c.err("arange has no bool kernel (dtype=torch.bool)");
  traceir::ArangeKind kind = !dtype ? traceir::ArangeKind::Default
                             : dtype.isInteger(64) ? traceir::ArangeKind::Int64
                             : isa<IntegerType>(dtype)
                                 ? traceir::ArangeKind::Integer
                                 : traceir::ArangeKind::Floating;
  traceir::ArangeArgs r;
  std::string why;
  if (!traceir::decodeArange(callArgs(a), kind, r, why))
    return c.err(why);
  if (!dtype)
    dtype = r.kind == traceir::ArangeKind::Int64 ? c.i64() : c.f32();
  return c.push({r.size}, dtype);
}

/// softmax/log_softmax(self, dim, dtype=None): dtype= casts the input
/// first, as PyTorch does, and must be floating.
INFER(inferSoftmax) {
  CALL;
  return onRanked(c, "self", [&](Shape &s, Type elt) {
    int64_t d;
    Type dtype;
    if (!c.intArg(1, "dim", d) || !c.dim(d, s.size(), "dim") ||
        !dtypeArg(c, 2, "dtype", dtype))
      return false;
    if (dtype && !isFloatLike(dtype))
      return c.err("dtype must be floating, got ", dtype);
    return c.push(s, dtype ? dtype : isFloatLike(elt) ? elt : c.f32());
  });
}

/// clamp(self, min=None, max=None): the bounds are numbers (clamp.default)
/// or tensors that broadcast (clamp.Tensor), at least one given; the dtype
/// is torch.result_type of self and the given bounds (an int tensor clamped
/// to 0.5 is f32).
INFER(inferClamp) {
  CALL;
  if (a.isNoneOrAbsent(1) && a.isNoneOrAbsent(2))
    return c.err("at least one of 'min' or 'max' must not be None");
  return elementwise(c, 3, EltRule::Promote, 0, /*optional=*/true);
}

/// copy(self, src, non_blocking=False): self's type, src broadcast into it.
INFER(inferCopy) {
  CALL;
  TensorType self = c.tensor(0, "self"), src = c.tensor(1, "src");
  if (!self || !src)
    return false;
  if (auto s = dyn_cast<RankedTensorType>(self)) {
    if (auto t = dyn_cast<RankedTensorType>(src)) {
      Shape shape(s.getShape());
      if (!broadcastInto(shape, t.getShape(), c.err))
        return false;
      if (ArrayRef<int64_t>(shape) != s.getShape())
        return c.err("src of shape ", shapeStr(t.getShape()),
                     " does not broadcast to self's ", shapeStr(s.getShape()));
    }
  }
  out.push_back(self);
  return true;
}

/// cumsum and cumprod (self, dim, dtype=None): self's shape; dtype= casts
/// the input first, else integers and bools accumulate in i64, as
/// PyTorch's.
INFER(inferCumsum) {
  CALL;
  return onRanked(c, "self", [&](Shape &s, Type elt) {
    int64_t d;
    Type dtype;
    if (!c.intArg(1, "dim", d) || !c.dim(d, s.size(), "dim") ||
        !dtypeArg(c, 2, "dtype", dtype))
      return false;
    if (dtype)
      elt = dtype;
    else if (category(elt) <= 1)
      elt = c.i64();
    return c.push(s, elt);
  });
}

/// layer_norm(input, normalized_shape, weight, bias, eps, cudnn_enable) and
/// native_layer_norm, which also returns mean and rstd.
template <bool Native> INFER(inferLayerNorm) {
  CALL;
  return onRanked(c, "input", [&](Shape &s, Type elt) {
    SmallVector<int64_t> norm;
    if (!c.intList(1, "normalized_shape", norm))
      return false;
    if (norm.size() > s.size())
      return c.err("normalized_shape ", shapeStr(norm),
                   " is longer than input ", shapeStr(s));
    ArrayRef<int64_t> tail = ArrayRef<int64_t>(s).take_back(norm.size());
    for (auto [x, y] : llvm::zip(tail, norm))
      if (x != kDyn && x != y)
        return c.err("normalized_shape ", shapeStr(norm),
                     " does not match the trailing dims of input ",
                     shapeStr(s));
    for (unsigned i : {2u, 3u}) {
      TensorType t;
      if (!c.optTensor(i, i == 2 ? "weight" : "bias", t))
        return false;
      if (t && t.hasRank() && failed(verifyCompatibleShape(t.getShape(), norm)))
        return c.err(i == 2 ? "weight " : "bias ", shapeStr(t.getShape()),
                     " must have normalized_shape ", shapeStr(norm));
    }
    if (!c.push(s, elt))
      return false;
    if (!Native)
      return true;
    Shape stat(s.begin(), s.end() - norm.size());
    stat.append(norm.size(), 1);
    return c.push(stat, elt) && c.push(stat, elt);
  });
}

/// native_group_norm(input, weight, bias, N, C, HxW, group, eps) -> (out,
/// mean, rstd): a floating input [N, C, *] with HxW elements in *; out has
/// its shape, mean and rstd [N, group].
INFER(inferGroupNorm) {
  CALL;
  traceir::GroupNormArgs g;
  std::string why;
  if (!traceir::decodeGroupNorm(callArgs(a), g, why))
    return c.err(why);
  return onRanked(c, "input", [&](Shape &s, Type elt) {
    if (!isFloatLike(elt))
      return c.err("input must be floating point, got ", elt);
    int64_t hxw = 1;
    bool dyn = false;
    for (size_t d = 2; d < s.size(); ++d) {
      dyn |= s[d] == kDyn;
      hxw *= s[d] == kDyn ? 1 : s[d];
    }
    auto differs = [](int64_t x, int64_t y) { return x != kDyn && x != y; };
    if (s.size() < 2 || differs(s[0], g.N) || differs(s[1], g.C) ||
        (!dyn && hxw != g.HxW))
      return c.err("input ", shapeStr(s), " is not [N=", g.N, ", C=", g.C,
                   ", *] with HxW=", g.HxW, " elements in *");
    for (unsigned i : {1u, 2u}) {
      TensorType t;
      if (!c.optTensor(i, i == 1 ? "weight" : "bias", t))
        return false;
      if (t && t.hasRank() &&
          failed(verifyCompatibleShape(t.getShape(), {g.C})))
        return c.err(i == 1 ? "weight " : "bias ", shapeStr(t.getShape()),
                     " must have shape [C=", g.C, "]");
    }
    return c.push(s, elt) && c.push({g.N, g.group}, elt) &&
           c.push({g.N, g.group}, elt);
  });
}

/// The results of a norm's backward pass: grad_input of `x`'s type, grad_weight
/// and grad_bias of `param`'s shape and of dtypes `wElt` and `bElt`; a
/// result output_mask leaves out is an empty [0] tensor (ATen's undefined
/// one), as convolution_backward's.
static bool pushNormGrads(Call &c, TensorType x, ArrayRef<int64_t> param,
                          Type wElt, Type bElt,
                          const std::array<bool, 3> &mask) {
  Shape none = {0};
  Type elt = x.getElementType();
  return (mask[0]
              ? (x.hasRank() ? c.push(x.getShape(), elt) : c.pushUnranked(elt))
              : c.push(none, elt)) &&
         c.push(mask[1] ? Shape(param) : none, wElt) &&
         c.push(mask[2] ? Shape(param) : none, bElt);
}

/// grad_out and input of one floating dtype and compatible shapes.
static bool gradLikeInput(Call &c, TensorType g, TensorType x) {
  if (!isFloatLike(x.getElementType()) ||
      g.getElementType() != x.getElementType())
    return c.err("grad_out and input must have one floating dtype, got ",
                 g.getElementType(), " and ", x.getElementType());
  if (g.hasRank() && x.hasRank() && failed(verifyCompatibleShape(g, x)))
    return c.err("grad_out ", shapeStr(g.getShape()), " must match input ",
                 shapeStr(x.getShape()));
  return true;
}

/// A saved statistic (mean or rstd) of `rows` elements, when both are known.
static bool statistic(Call &c, unsigned i, const char *what, int64_t rows) {
  TensorType t = c.tensor(i, what);
  if (!t)
    return false;
  if (!isFloatLike(t.getElementType()))
    return c.err(what, " must be floating point, got ", t.getElementType());
  if (t.hasStaticShape() && rows != kDyn && t.getNumElements() != rows)
    return c.err(what, " ", shapeStr(t.getShape()), " must hold ", rows,
                 " elements, one per normalized row");
  return true;
}

/// native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd,
/// weight, bias, output_mask) -> (grad_input, grad_weight, grad_bias): the
/// input's type, then normalized_shape of the weight's and the bias's
/// dtypes. A grad_weight (grad_bias) asked for needs a weight (bias), as
/// ATen's.
INFER(inferLayerNormBackward) {
  CALL;
  TensorType g = c.tensor(0, "grad_out"), x = c.tensor(1, "input");
  if (!g || !x || !gradLikeInput(c, g, x))
    return false;
  std::vector<int64_t> norm;
  std::array<bool, 3> mask{};
  std::string why;
  if (!traceir::decodeLayerNormBackward(callArgs(a), norm, mask, why))
    return c.err(why);
  int64_t rows = kDyn;
  if (x.hasRank()) {
    ArrayRef<int64_t> s = x.getShape();
    if (norm.size() > s.size())
      return c.err("normalized_shape ", shapeStr(norm),
                   " is longer than input ", shapeStr(s));
    for (auto [d, n] : llvm::zip(s.take_back(norm.size()), norm))
      if (d != kDyn && d != n)
        return c.err("normalized_shape ", shapeStr(norm),
                     " does not match the trailing dims of input ",
                     shapeStr(s));
    rows = 1;
    for (int64_t d : s.drop_back(norm.size()))
      if (rows != kDyn && !c.mulDims(rows, d, rows, "the rows"))
        return false;
  }
  if (!statistic(c, 3, "mean", rows) || !statistic(c, 4, "rstd", rows))
    return false;
  TensorType w, b;
  if (!c.optTensor(5, "weight", w) || !c.optTensor(6, "bias", b))
    return false;
  for (auto [t, what] : {std::pair{w, "weight"}, std::pair{b, "bias"}})
    if (t && t.hasRank() && failed(verifyCompatibleShape(t.getShape(), norm)))
      return c.err(what, " ", shapeStr(t.getShape()),
                   " must have normalized_shape ", shapeStr(norm));
  if ((mask[1] && !w) || (mask[2] && !b))
    return c.err("output_mask asks for the gradient of a ",
                 mask[1] && !w ? "weight" : "bias", " that is None");
  Type elt = x.getElementType();
  return pushNormGrads(c, x, norm, w ? w.getElementType() : elt,
                       b ? b.getElementType() : elt, mask);
}

/// native_group_norm_backward(grad_out, input, mean, rstd, weight, N, C,
/// HxW, group, output_mask) -> (grad_input, grad_weight, grad_bias): the
/// input's type, then [C] of the weight's dtype (the input's when None).
INFER(inferGroupNormBackward) {
  CALL;
  TensorType g = c.tensor(0, "grad_out"), x = c.tensor(1, "input");
  if (!g || !x || !gradLikeInput(c, g, x))
    return false;
  traceir::GroupNormArgs gn;
  std::array<bool, 3> mask{};
  std::string why;
  if (!traceir::decodeGroupNormBackward(callArgs(a), gn, mask, why))
    return c.err(why);
  if (x.hasRank()) {
    ArrayRef<int64_t> s = x.getShape();
    int64_t hxw = 1;
    bool dyn = false;
    for (size_t d = 2; d < s.size(); ++d) {
      dyn |= s[d] == kDyn;
      hxw *= s[d] == kDyn ? 1 : s[d];
    }
    auto differs = [](int64_t u, int64_t v) { return u != kDyn && u != v; };
    if (s.size() < 2 || differs(s[0], gn.N) || differs(s[1], gn.C) ||
        (!dyn && hxw != gn.HxW))
      return c.err("input ", shapeStr(s), " is not [N=", gn.N, ", C=", gn.C,
                   ", *] with HxW=", gn.HxW, " elements in *");
  }
  int64_t rows;
  if (!c.mulDims(gn.N, gn.group, rows, "N * group") ||
      !statistic(c, 2, "mean", rows) || !statistic(c, 3, "rstd", rows))
    return false;
  TensorType w;
  if (!c.optTensor(4, "weight", w))
    return false;
  if (w && w.hasRank() && failed(verifyCompatibleShape(w.getShape(), {gn.C})))
    return c.err("weight ", shapeStr(w.getShape()),
                 " must have shape [C=", gn.C, "]");
  Type elt = w ? w.getElementType() : x.getElementType();
  return pushNormGrads(c, x, {gn.C}, elt, elt, mask);
}

/// Checks an optional per-channel tensor of batch norm.
static bool channelVector(Call &c, unsigned i, const char *what,
                          int64_t channels) {
  TensorType t;
  if (!c.optTensor(i, what, t))
    return false;
  if (t && t.hasRank() &&
      (t.getRank() != 1 || (channels != kDyn && t.getDimSize(0) != kDyn &&
                            t.getDimSize(0) != channels)))
    return c.err(what, " must have shape [", channels, "], got ",
                 shapeStr(t.getShape()));
  return true;
}

/// batch_norm / native_batch_norm(input, weight, bias, running_mean,
/// running_var, training, momentum, eps).
template <bool Native> INFER(inferBatchNorm) {
  CALL;
  return onRanked(c, "input", [&](Shape &s, Type elt) {
    if (s.size() < 2)
      return c.err("input must have rank >= 2 (N, C, ...), got ", shapeStr(s));
    int64_t ch = s[1];
    if (!channelVector(c, 1, "weight", ch) ||
        !channelVector(c, 2, "bias", ch) ||
        !channelVector(c, 3, "running_mean", ch) ||
        !channelVector(c, 4, "running_var", ch))
      return false;
    traceir::BatchNormArgs bn;
    std::string why;
    if (!traceir::decodeBatchNorm(callArgs(a), bn, why))
      return c.err(why);
    if (a.isNoneOrAbsent(3) != a.isNoneOrAbsent(4))
      return c.err("running_mean and running_var must either both be None "
                   "or neither be None");
    if (!bn.training && a.isNoneOrAbsent(3))
      return c.err("eval mode needs running_mean and running_var");
    return c.push(s, elt) &&
           (!Native || (c.push({ch}, elt) && c.push({ch}, elt)));
  });
}

/// native_batch_norm_backward(grad_out, input, weight, running_mean,
/// running_var, save_mean, save_invstd, train, eps, output_mask)
/// -> (grad_input, grad_weight, grad_bias).
INFER(inferBatchNormBackward) {
  CALL;
  TensorType g = c.tensor(0, "grad_out"), x = c.tensor(1, "input");
  if (!g || !x)
    return false;
  if (!x.hasRank())
    return c.err("input must be ranked");
  if (x.getRank() < 2)
    return c.err("input must have rank >= 2 (N, C, ...), got ",
                 shapeStr(x.getShape()));
  if (g.hasRank() && failed(verifyCompatibleShape(g, x)))
    return c.err("grad_out ", shapeStr(g.getShape()), " must match input ",
                 shapeStr(x.getShape()));
  int64_t ch = x.getDimSize(1);
  static const char *names[] = {"weight", "running_mean", "running_var",
                                "save_mean", "save_invstd"};
  for (unsigned i = 2; i <= 6; ++i)
    if (!channelVector(c, i, names[i - 2], ch))
      return false;
  return c.push(x.getShape(), x.getElementType()) &&
         c.push({ch}, x.getElementType()) && c.push({ch}, x.getElementType());
}

/// batchnorm_double_backward(input, gamma, ggI, ggG, ggB, gO, running_mean,
/// running_var, training, eps, save_mean, save_invstd, output_mask)
/// -> (gI, gG, ggO), as in PyTorch's autograd.
INFER(inferBatchNormDoubleBackward) {
  CALL;
  TensorType x = c.tensor(0, "input"), go = c.tensor(5, "grad_out");
  if (!x || !go)
    return false;
  if (!x.hasRank() || x.getRank() < 2)
    return c.err("input must have rank >= 2 (N, C, ...)");
  int64_t ch = x.getDimSize(1);
  TensorType ggi;
  if (!c.optTensor(2, "ggI", ggi))
    return false;
  for (TensorType t : {go, ggi})
    if (t && t.hasRank() && failed(verifyCompatibleShape(t, x)))
      return c.err("grad tensors must match input ", shapeStr(x.getShape()),
                   ", got ", shapeStr(t.getShape()));
  static const char *names[] = {"gamma",        "",           "ggG", "ggB", "",
                                "running_mean", "running_var"};
  for (unsigned i : {1u, 3u, 4u, 6u, 7u})
    if (!channelVector(c, i, names[i - 1], ch))
      return false;
  if (!channelVector(c, 10, "save_mean", ch) ||
      !channelVector(c, 11, "save_invstd", ch))
    return false;
  return c.push(x.getShape(), x.getElementType()) &&
         c.push({ch}, x.getElementType()) &&
         c.push(x.getShape(), x.getElementType());
}

//===--- Views
//-------------------------------------------------------------===//

INFER(inferView) { // view/reshape(self, shape)
  CALL;
  TensorType t = c.tensor(0, "self");
  if (!t)
    return false;
  SmallVector<int64_t> shape;
  if (!c.intList(1, "shape", shape))
    return false;
  int64_t known = 1, inferIdx = -1;
  bool dynamic = !t.hasStaticShape();
  for (auto [i, d] : llvm::enumerate(shape)) {
    if (d == -1) {
      if (inferIdx >= 0)
        return c.err("only one dimension of shape ", shapeStr(shape),
                     " can be -1");
      inferIdx = i;
    } else if (d < 0) {
      return c.err("invalid dimension ", d, " in shape ", shapeStr(shape));
    } else if (llvm::MulOverflow(known, d, known)) {
      return c.err("shape ", shapeStr(shape), " has more than 2^63 elements");
    }
  }
  if (!dynamic) {
    // The input's type may come straight from an importer, before the
    // verifier bounded it: its element count must not wrap either.
    std::optional<int64_t> numel = traceir::checkedNumel(t.getShape());
    if (!numel)
      return c.err("input ", shapeStr(t.getShape()),
                   " has more than 2^63 elements");
    int64_t n = *numel;
    if (inferIdx >= 0) {
      if (known == 0 || n % known)
        return c.err("shape ", shapeStr(shape), " is invalid for input ",
                     shapeStr(t.getShape()), " of ", n, " elements");
      shape[inferIdx] = n / known;
    } else if (known != n) {
      return c.err("shape ", shapeStr(shape), " is invalid for input ",
                   shapeStr(t.getShape()), " of ", n, " elements");
    }
  } else if (inferIdx >= 0) {
    shape[inferIdx] = kDyn;
  }
  return c.push(shape, t.getElementType());
}

INFER(inferTranspose) {
  CALL;
  return onRanked(c, "self", [&](Shape &s, Type elt) {
    int64_t d0, d1;
    if (!c.intArg(1, "dim0", d0) || !c.intArg(2, "dim1", d1) ||
        !c.dim(d0, s.size(), "dim0") || !c.dim(d1, s.size(), "dim1"))
      return false;
    if (!s.empty())
      std::swap(s[d0], s[d1]);
    return c.push(s, elt);
  });
}

INFER(inferT) {
  CALL;
  return onRanked(c, "self", [&](Shape &s, Type elt) {
    if (s.size() > 2)
      return c.err("t() expects a tensor of rank <= 2, got ", shapeStr(s));
    std::reverse(s.begin(), s.end());
    return c.push(s, elt);
  });
}

INFER(inferPermute) {
  CALL;
  return onRanked(c, "self", [&](Shape &s, Type elt) {
    SmallVector<int64_t> dims;
    if (!c.intList(1, "dims", dims))
      return false;
    if (dims.size() != s.size())
      return c.err("dims ", shapeStr(dims), " must list all ", s.size(),
                   " dimensions");
    Shape r;
    SmallVector<bool> seen(s.size(), false);
    for (int64_t d : dims) {
      if (!c.dim(d, s.size(), "dim"))
        return false;
      if (seen[d])
        return c.err("dim ", d, " appears twice in ", shapeStr(dims));
      seen[d] = true;
      r.push_back(s[d]);
    }
    return c.push(r, elt);
  });
}

INFER(inferUnsqueeze) {
  CALL;
  return onRanked(c, "self", [&](Shape &s, Type elt) {
    int64_t d;
    if (!c.intArg(1, "dim", d) || !c.dim(d, s.size() + 1, "dim"))
      return false;
    s.insert(s.begin() + d, 1);
    return c.push(s, elt);
  });
}

/// squeeze(self, dim=None): only size-1 dims go; None squeezes all of them
/// and an empty list none.
INFER(inferSqueeze) {
  CALL;
  return onRanked(c, "self", [&](Shape &s, Type elt) {
    SmallVector<int64_t> dims;
    bool all = a.isNoneOrAbsent(1);
    if (!all && !c.intList(1, "dim", dims))
      return false;
    SmallVector<bool> drop(s.size(), false), seen(s.size(), false);
    if (all)
      for (size_t i = 0; i < s.size(); ++i)
        drop[i] = s[i] == 1;
    for (int64_t d : dims) {
      if (!c.dim(d, s.size(), "dim"))
        return false;
      if (s.empty())
        continue;
      if (seen[d])
        return c.err("dim ", d, " appears more than once in the list of dims");
      seen[d] = true;
      drop[d] = s[d] == 1;
    }
    Shape r;
    for (size_t i = 0; i < s.size(); ++i)
      if (!drop[i])
        r.push_back(s[i]);
    return c.push(r, elt);
  });
}

INFER(inferFlatten) { // flatten(self, start_dim=0, end_dim=-1)
  CALL;
  return onRanked(c, "self", [&](Shape &s, Type elt) {
    int64_t st, en;
    if (!c.intArg(1, "start_dim", st, 0) || !c.intArg(2, "end_dim", en, -1) ||
        !c.dim(st, s.size(), "start_dim") || !c.dim(en, s.size(), "end_dim"))
      return false;
    if (s.empty())
      return c.push({1}, elt);
    if (st > en)
      return c.err("start_dim ", st, " comes after end_dim ", en);
    int64_t n = 1;
    for (int64_t i = st; i <= en; ++i)
      if (!c.mulDims(n, s[i], n, "flattened size"))
        return false;
    Shape r(s.begin(), s.begin() + st);
    r.push_back(n);
    r.append(s.begin() + en + 1, s.end());
    return c.push(r, elt);
  });
}

/// unflatten(self, dim, sizes): splits dim into `sizes` (one may be -1),
/// always a view (PyTorch calls view). Messages follow PyTorch's.
INFER(inferUnflatten) {
  CALL;
  return onRanked(c, "self", [&](Shape &s, Type elt) {
    int64_t d;
    SmallVector<int64_t> sizes;
    if (!c.intArg(1, "dim", d) || !c.intList(2, "sizes", sizes))
      return false;
    int64_t rank = s.size();
    if (rank == 0)
      return c.err("unflatten: cannot unflatten a 0-dim tensor");
    if (d < -rank || d >= rank)
      return c.err("Dimension out of range (expected to be in range of [",
                   -rank, ", ", rank - 1, "], but got ", d, ")");
    if (d < 0)
      d += rank;
    if (sizes.empty())
      return c.err("unflatten: sizes must be non-empty");
    int64_t known = 1, inferIdx = -1;
    for (auto [i, n] : llvm::enumerate(sizes)) {
      if (n == -1) {
        if (inferIdx >= 0)
          return c.err("unflatten: only one dimension can be inferred, got ",
                       shapeStr(sizes));
        inferIdx = i;
      } else if (n < 0) {
        return c.err("unflatten: invalid shape dimension ", n, " in ",
                     shapeStr(sizes));
      } else if (llvm::MulOverflow(known, n, known)) {
        return c.err("unflatten: sizes ", shapeStr(sizes),
                     " have more than 2^63 elements");
      }
    }
    int64_t have = s[d];
    auto mismatch = [&] {
      return c.err("unflatten: Provided sizes ", shapeStr(sizes),
                   " don't multiply up to the size of dim ", d, " (", have,
                   ") in the input tensor");
    };
    if (have == kDyn) {
      if (inferIdx >= 0)
        sizes[inferIdx] = kDyn;
    } else if (inferIdx >= 0) {
      if (known == 0 && have == 0)
        return c.err("unflatten: cannot reshape a dim of 0 elements into ",
                     shapeStr(sizes),
                     " because the unspecified dimension size -1 can be any "
                     "value and is ambiguous");
      if (known == 0 || have % known)
        return mismatch();
      sizes[inferIdx] = have / known;
    } else if (known != have) {
      return mismatch();
    }
    Shape r(s.begin(), s.begin() + d);
    r.append(sizes.begin(), sizes.end());
    r.append(s.begin() + d + 1, s.end());
    return c.push(r, elt);
  });
}

INFER(inferExpand) { // expand(self, size): -1 keeps a dim
  CALL;
  return onRanked(c, "self", [&](Shape &s, Type elt) {
    SmallVector<int64_t> size;
    if (!c.intList(1, "size", size))
      return false;
    if (size.size() < s.size())
      return c.err("size ", shapeStr(size), " has fewer dims than self ",
                   shapeStr(s));
    Shape r(size.begin(), size.end());
    size_t off = size.size() - s.size();
    for (size_t i = 0; i < r.size(); ++i) {
      int64_t have = i >= off ? s[i - off] : 1;
      if (r[i] == -1) {
        if (i < off)
          return c.err("-1 is not allowed for a new leading dim in ",
                       shapeStr(size));
        r[i] = have;
      } else if (r[i] < 0) {
        return c.err("invalid size ", r[i], " in ", shapeStr(size),
                     "; only -1 (keep the dim) may be negative");
      } else if (have != 1 && have != kDyn && have != r[i]) {
        return c.err("cannot expand ", shapeStr(s), " to ", shapeStr(size));
      }
    }
    return c.push(r, elt);
  });
}

INFER(inferSelect) { // select(self, dim, index)
  CALL;
  return onRanked(c, "self", [&](Shape &s, Type elt) {
    int64_t d, idx;
    if (s.empty())
      return c.err("select() cannot be applied to a 0-dim tensor");
    if (!c.intArg(1, "dim", d) || !c.intArg(2, "index", idx) ||
        !c.dim(d, s.size(), "dim"))
      return false;
    if (s[d] != kDyn && (idx < -s[d] || idx >= s[d]))
      return c.err("index ", idx, " is out of range for dim ", d, " of size ",
                   s[d]);
    s.erase(s.begin() + d);
    return c.push(s, elt);
  });
}

/// The length of `start:end:step` over a dim of size `n` (dynamic stays
/// dynamic).
static int64_t sliceLength(int64_t n, int64_t start, int64_t end,
                           int64_t step) {
  return n == kDyn ? kDyn : traceir::views::sliceLength(n, start, end, step);
}

INFER(inferSlice) { // slice(self, dim=0, start=None, end=None, step=1)
  CALL;
  return onRanked(c, "self", [&](Shape &s, Type elt) {
    int64_t d, st, en, step;
    if (s.empty())
      return c.err("slice() cannot be applied to a 0-dim tensor");
    if (!c.intArg(1, "dim", d, 0) || !c.intArg(2, "start", st, 0) ||
        !c.intArg(3, "end", en, INT64_MAX) || !c.intArg(4, "step", step, 1) ||
        !c.dim(d, s.size(), "dim"))
      return false;
    if (step <= 0)
      return c.err("slice step must be positive, got ", step);
    s[d] = sliceLength(s[d], st, en, step);
    return c.push(s, elt);
  });
}

INFER(inferNarrow) { // narrow(self, dim, start, length)
  CALL;
  return onRanked(c, "self", [&](Shape &s, Type elt) {
    int64_t d, st, len;
    if (s.empty())
      return c.err("narrow() cannot be applied to a 0-dim tensor");
    if (!c.intArg(1, "dim", d) || !c.intArg(2, "start", st) ||
        !c.intArg(3, "length", len) || !c.dim(d, s.size(), "dim"))
      return false;
    if (len < 0)
      return c.err("narrow() length must be non-negative, got ", len);
    // start + length of hostile ints would wrap past the dim's end.
    if (s[d] != kDyn && !traceir::checkedNarrowStart(s[d], st, len))
      return c.err("narrow(", d, ", ", st, ", ", len,
                   ") is out of range for dim of size ", s[d]);
    s[d] = len;
    return c.push(s, elt);
  });
}

/// diagonal(self, offset=0, dim1=0, dim2=1): dims dim1 and dim2 become one
/// last dim, the diagonal's (ViewAlgebra's layout, whose checks the
/// runtime repeats).
INFER(inferDiagonal) {
  CALL;
  return onRanked(c, "self", [&](Shape &s, Type elt) {
    int64_t offset, d1, d2;
    if (s.size() < 2)
      return c.err("diagonal needs at least 2 dims, got a tensor of rank ",
                   s.size());
    if (!c.intArg(1, "offset", offset, 0) || !c.intArg(2, "dim1", d1, 0) ||
        !c.intArg(3, "dim2", d2, 1))
      return false;
    int64_t given1 = d1, given2 = d2;
    if (!c.dim(d1, s.size(), "dim1") || !c.dim(d2, s.size(), "dim2"))
      return false;
    if (d1 == d2)
      return c.err("diagonal dimensions cannot be identical ", given1, ", ",
                   given2);
    int64_t n1 = s[d1], n2 = s[d2];
    Shape r;
    for (int64_t k = 0, e = s.size(); k < e; ++k)
      if (k != d1 && k != d2)
        r.push_back(s[k]);
    r.push_back(n1 == kDyn || n2 == kDyn
                    ? kDyn
                    : traceir::views::diagonalLength(n1, n2, offset));
    return c.push(r, elt);
  });
}

/// as_strided(self, size, stride, storage_offset=None): a view of `size`
/// over self's storage. Only the arguments themselves are checked here:
/// the storage under self may be larger than self (self may be a view),
/// so the runtime checks the view against the storage it has.
INFER(inferAsStrided) {
  CALL;
  TensorType t = c.tensor(0, "self");
  if (!t)
    return false;
  SmallVector<int64_t> size, stride;
  if (!c.intList(1, "size", size) || !c.intList(2, "stride", stride))
    return false;
  if (size.size() != stride.size())
    return c.err("mismatch in length of strides and shape: size ",
                 shapeStr(size), " and stride ", shapeStr(stride));
  for (auto [n, st] : llvm::zip(size, stride)) {
    if (n < 0)
      return c.err("size ", shapeStr(size), " has a negative dim");
    if (st < 0)
      return c.err("negative strides are not supported, got stride ",
                   shapeStr(stride));
  }
  int64_t offset;
  if (!c.intArg(3, "storage_offset", offset, 0))
    return false;
  if (offset < 0)
    return c.err("invalid storage offset ", offset);
  return c.push(size, t.getElementType());
}

INFER(inferCat) { // cat(tensors..., dim=0)
  CALL;
  unsigned n = 0;
  while (a.isTensor(n))
    ++n;
  if (n == 0)
    return c.err("needs at least one tensor");
  int64_t d;
  if (!c.intArg(n, "dim", d, 0))
    return false;
  if (a.present(n + 1))
    return c.err("expects tensors followed by one dim, got ", a.size(),
                 " arguments");
  Shape r;
  Type elt;
  bool first = true;
  for (unsigned i = 0; i < n; ++i) {
    auto t = cast<TensorType>(a.type(i));
    elt = promote(elt, t.getElementType());
    if (!t.hasRank())
      return c.pushUnranked(elt);
    Shape s(t.getShape());
    if (s.empty())
      return c.err("tensor #", i, " is 0-dim; cat needs tensors of rank >= 1");
    // PyTorch skips legacy empty 1-D tensors in cat.
    if (s.size() == 1 && s[0] == 0 && n > 1)
      continue;
    if (first) {
      if (!c.dim(d, s.size(), "dim"))
        return false;
      r = s;
      first = false;
      continue;
    }
    if (s.size() != r.size())
      return c.err("tensor #", i, " has rank ", s.size(), " but tensor #0 has ",
                   r.size());
    for (size_t k = 0; k < s.size(); ++k) {
      if (k == (size_t)d) {
        if (!c.addDims(r[k], s[k], r[k], "concatenated size"))
          return false;
      } else if (r[k] != kDyn && s[k] != kDyn && r[k] != s[k]) {
        return c.err("tensor #", i, " ", shapeStr(s),
                     " does not match the others outside dim ", d);
      }
    }
  }
  if (first)
    r.assign({0});
  return c.push(r, elt);
}

//===--- Indexing ---------------------------------------------------------===//

/// An int64 or int32 index tensor, as every indexing op takes.
static bool checkIndexDtype(Call &c, TensorType t, const char *what) {
  Type elt = t.getElementType();
  auto it = dyn_cast<IntegerType>(elt);
  if (it && !it.isUnsigned() && (it.getWidth() == 64 || it.getWidth() == 32))
    return true;
  if (elt.isInteger(1) || elt.isUnsignedInteger(8))
    return c.err(what, " must be int64 or int32, got ", elt,
                 " (boolean masks are not supported: the result's shape "
                 "would depend on the mask's values)");
  return c.err(what, " must be int64 or int32, got ", elt);
}

/// Runs a decoder of Support/OpArgs.h, its refusal as the error.
template <typename F> static bool decoded(Call &c, F decode) {
  std::string why;
  if (decode(why))
    return true;
  return c.err(why);
}

INFER(inferIndexSelect) { // index_select(self, dim, index)
  CALL;
  TensorType idx = c.tensor(2, "index");
  if (!idx || !checkIndexDtype(c, idx, "index"))
    return false;
  return onRanked(c, "self", [&](Shape &s, Type elt) {
    int64_t d;
    if (!c.intArg(1, "dim", d))
      return false;
    if (!idx.hasRank())
      return c.pushUnranked(elt);
    std::vector<int64_t> r;
    return decoded(c,
                   [&](std::string &why) {
                     return traceir::indexSelectShape(s, idx.getShape(), d, r,
                                                      why);
                   }) &&
           c.push(r, elt);
  });
}

INFER(inferGather) { // gather(self, dim, index, sparse_grad=False)
  CALL;
  TensorType idx = c.tensor(2, "index");
  bool sparse;
  if (!idx || !checkIndexDtype(c, idx, "index") ||
      !c.boolArg(3, "sparse_grad", sparse, false))
    return false;
  return onRanked(c, "self", [&](Shape &s, Type elt) {
    int64_t d;
    if (!c.intArg(1, "dim", d))
      return false;
    if (!idx.hasRank())
      return c.pushUnranked(elt);
    return decoded(c,
                   [&](std::string &why) {
                     return traceir::checkGatherScatter(s, idx.getShape(),
                                                        nullptr, d, why);
                   }) &&
           c.push(idx.getShape(), elt);
  });
}

/// scatter(self, dim, index, src or value), scatter_add and scatter_reduce:
/// self's type, once index (int64 or int32) and src (self's dtype, shapes as
/// checkGatherScatter says) or a number check.
static bool scatterLike(Call &c, bool valueAllowed) {
  TensorType idx = c.tensor(2, "index"), src;
  if (!idx || !checkIndexDtype(c, idx, "index"))
    return false;
  if (valueAllowed && !c.a.isTensor(3)) {
    Attribute v = c.a.scalar(3);
    if (!isa_and_nonnull<BoolAttr>(v) && !getNumber(v))
      return c.err("argument #3 (src) must be a tensor or a number");
  } else if (!(src = c.tensor(3, "src"))) {
    return false;
  }
  return onRanked(c, "self", [&](Shape &s, Type elt) {
    int64_t d;
    if (!c.intArg(1, "dim", d))
      return false;
    if (src && src.getElementType() != elt)
      return c.err("src must have self's dtype ", elt, ", got ",
                   src.getElementType());
    if (idx.hasRank() && (!src || src.hasRank())) {
      std::vector<int64_t> srcShape;
      if (src)
        srcShape.assign(src.getShape().begin(), src.getShape().end());
      if (!decoded(c, [&](std::string &why) {
            return traceir::checkGatherScatter(
                s, idx.getShape(), src ? &srcShape : nullptr, d, why);
          }))
        return false;
    }
    return c.push(s, elt);
  });
}

INFER(inferScatter) { // scatter.src and scatter.value
  CALL;
  return scatterLike(c, true);
}

INFER(inferScatterAdd) { // scatter_add(self, dim, index, src)
  CALL;
  return scatterLike(c, false);
}

/// scatter_reduce.two(self, dim, index, src, reduce, include_self=True).
INFER(inferScatterReduce) {
  CALL;
  traceir::ScatterReduce r;
  bool includeSelf;
  if (!decoded(c,
               [&](std::string &why) {
                 return traceir::decodeScatterReduce(callArgs(a), 4, r, why);
               }) ||
      !c.boolArg(5, "include_self", includeSelf, true))
    return false;
  TensorType self = c.tensor(0, "self");
  if (self && r == traceir::ScatterReduce::Mean &&
      self.getElementType().isInteger(1))
    return c.err("reduce=\"mean\" takes no bool tensor (PyTorch has no bool "
                 "kernel for it)");
  return scatterLike(c, false);
}

/// Advanced indexing's layout, unless an index tensor is unranked.
struct IndexLayoutOut {
  traceir::IndexLayout layout;
  bool ranked = true;
};

/// Advanced indexing of `s` by the None or tensor entries at arguments
/// [1, end).
static bool indexResult(Call &c, Shape &s, unsigned end, IndexLayoutOut &l) {
  std::vector<int64_t> dims;
  if (!decoded(c, [&](std::string &why) {
        return traceir::decodeIndexEntries(callArgs(c.a), 1, end, s.size(),
                                           dims, why);
      }))
    return false;
  std::vector<std::vector<int64_t>> shapes;
  l.ranked = true;
  for (int64_t d : dims) {
    auto t = cast<TensorType>(c.a.type(1 + d));
    if (!checkIndexDtype(c, t, "an index tensor"))
      return false;
    if (!t.hasRank()) {
      l.ranked = false;
      continue;
    }
    shapes.emplace_back(t.getShape().begin(), t.getShape().end());
  }
  if (!l.ranked)
    return true;
  return decoded(c, [&](std::string &why) {
    return traceir::indexLayout(s, dims, shapes, l.layout, why);
  });
}

INFER(inferIndex) { // index.Tensor(self, indices...): None or tensors
  CALL;
  return onRanked(c, "self", [&](Shape &s, Type elt) {
    IndexLayoutOut l;
    if (!indexResult(c, s, a.size(), l))
      return false;
    return l.ranked ? c.push(l.layout.result, elt) : c.pushUnranked(elt);
  });
}

/// index_put(self, indices..., values, accumulate=False): self's type; values
/// of self's dtype broadcast to what self[indices] would be.
INFER(inferIndexPut) {
  CALL;
  unsigned v;
  bool accumulate;
  if (!decoded(c, [&](std::string &why) {
        return traceir::decodeIndexPut(callArgs(a), a.size(), v, accumulate,
                                       why);
      }))
    return false;
  return onRanked(c, "self", [&](Shape &s, Type elt) {
    IndexLayoutOut l;
    if (!indexResult(c, s, v, l))
      return false;
    auto values = cast<TensorType>(a.type(v));
    if (values.getElementType() != elt)
      return c.err("values must have self's dtype ", elt, ", got ",
                   values.getElementType());
    if (l.ranked && values.hasRank()) {
      ArrayRef<int64_t> v = values.getShape(), t = l.layout.result;
      bool fits = v.size() <= t.size();
      for (size_t k = 1; fits && k <= v.size(); ++k) {
        int64_t x = v[v.size() - k], y = t[t.size() - k];
        fits = x == 1 || x == y || x == kDyn || y == kDyn;
      }
      if (!fits)
        return c.err("values ", shapeStr(v),
                     " do not broadcast to the indexed shape ", shapeStr(t));
    }
    return c.push(s, elt);
  });
}

/// masked_scatter(self, mask, source): self and the bool mask broadcast
/// together (the result's shape), source has self's dtype and any shape;
/// whether it has as many elements as the mask has Trues only a run knows.
INFER(inferMaskedScatter) {
  CALL;
  TensorType self = c.tensor(0, "self"), mask = c.tensor(1, "mask"),
             src = c.tensor(2, "source");
  if (!self || !mask || !src)
    return false;
  Type elt = self.getElementType();
  if (!mask.getElementType().isInteger(1))
    return c.err("mask must be a bool tensor, got ", mask.getElementType());
  if (src.getElementType() != elt)
    return c.err("source must have self's dtype ", elt, ", got ",
                 src.getElementType());
  if (!self.hasRank() || !mask.hasRank())
    return c.pushUnranked(elt);
  Shape s(self.getShape().begin(), self.getShape().end());
  if (!broadcastInto(s, mask.getShape(), c.err))
    return false;
  return c.push(s, elt);
}

/// slice_scatter(self, src, dim=0, start=None, end=None, step=1): self's
/// type; src (any dtype, cast) shaped as self's slice.
INFER(inferSliceScatter) {
  CALL;
  TensorType src = c.tensor(1, "src");
  if (!src)
    return false;
  return onRanked(c, "self", [&](Shape &s, Type elt) {
    int64_t d, st, en, step;
    if (s.empty())
      return c.err("slice_scatter() cannot be applied to a 0-dim tensor");
    if (!c.intArg(2, "dim", d, 0) || !c.intArg(3, "start", st, 0) ||
        !c.intArg(4, "end", en, INT64_MAX) || !c.intArg(5, "step", step, 1) ||
        !c.dim(d, s.size(), "dim"))
      return false;
    if (step <= 0)
      return c.err("slice step must be positive, got ", step);
    Shape slice = s;
    slice[d] = sliceLength(s[d], st, en, step);
    if (src.hasRank() && failed(verifyCompatibleShape(src.getShape(), slice)))
      return c.err("src ", shapeStr(src.getShape()),
                   " must have the slice's shape ", shapeStr(slice));
    return c.push(s, elt);
  });
}

/// select_scatter(self, src, dim, index): self's type; src (any dtype,
/// cast) shaped as self without dim.
INFER(inferSelectScatter) {
  CALL;
  TensorType src = c.tensor(1, "src");
  if (!src)
    return false;
  return onRanked(c, "self", [&](Shape &s, Type elt) {
    int64_t d, idx;
    if (s.empty())
      return c.err("select_scatter() cannot be applied to a 0-dim tensor");
    if (!c.intArg(2, "dim", d) || !c.intArg(3, "index", idx) ||
        !c.dim(d, s.size(), "dim"))
      return false;
    if (s[d] != kDyn && (idx < -s[d] || idx >= s[d]))
      return c.err("index ", idx, " is out of range for dim ", d, " of size ",
                   s[d]);
    Shape slice = s;
    slice.erase(slice.begin() + d);
    if (src.hasRank() && failed(verifyCompatibleShape(src.getShape(), slice)))
      return c.err("src ", shapeStr(src.getShape()),
                   " must have the selected shape ", shapeStr(slice));
    return c.push(s, elt);
  });
}

//===--- Neural-network layers --------------------------------------------===//

/// embedding(weight, indices, padding_idx=-1, scale_grad_by_freq, sparse).
INFER(inferEmbedding) {
  CALL;
  TensorType w = c.tensor(0, "weight"), idx = c.tensor(1, "indices");
  if (!w || !idx)
    return false;
  if (!isa<IntegerType>(idx.getElementType()))
    return c.err("indices must be integers, got ", idx.getElementType());
  if (!w.hasRank() || !idx.hasRank())
    return c.pushUnranked(w.getElementType());
  if (w.getRank() != 2)
    return c.err("weight must have rank 2, got ", shapeStr(w.getShape()));
  Shape r(idx.getShape());
  r.push_back(w.getDimSize(1));
  return c.push(r, w.getElementType());
}

/// embedding_dense_backward(grad_output, indices, num_weights, padding_idx,
/// scale_grad_by_freq) -> [num_weights, D] of grad_output's dtype, for
/// grad_output indices.shape + [D] (floating or integer, as ATen's CPU).
INFER(inferEmbeddingDenseBackward) {
  CALL;
  TensorType g = c.tensor(0, "grad_output"), idx = c.tensor(1, "indices");
  if (!g || !idx)
    return false;
  Type elt = g.getElementType();
  if (!isFloatLike(elt) && (!isa<IntegerType>(elt) || elt.isInteger(1)))
    return c.err("grad_output must be floating point or integer, got ", elt);
  if (!isa<IntegerType>(idx.getElementType()) ||
      idx.getElementType().isInteger(1))
    return c.err("indices must be integers, got ", idx.getElementType());
  traceir::EmbeddingBackwardArgs eb;
  std::string why;
  if (!traceir::decodeEmbeddingDenseBackward(callArgs(a), eb, why))
    return c.err(why);
  if (!g.hasRank())
    return c.push({eb.numWeights, kDyn}, elt);
  ArrayRef<int64_t> gs = g.getShape();
  if (gs.empty())
    return c.err("grad_output must have rank >= 1, got []");
  if (idx.hasRank() &&
      (idx.getRank() + 1 != g.getRank() ||
       failed(verifyCompatibleShape(gs.drop_back(), idx.getShape()))))
    return c.err("grad_output ", shapeStr(gs), " must be indices.shape ",
                 shapeStr(idx.getShape()), " + [D]");
  return c.push({eb.numWeights, gs.back()}, elt);
}

//===--- Distances, bags of embeddings and grid sampling ------------------===//

/// Fails unless `t` is f32 or f64, which ATen's cdist and pdist take.
static bool distanceDtype(Call &c, const char *what, TensorType t) {
  Type elt = t.getElementType();
  if (!elt.isF32() && !elt.isF64())
    return c.err(what, " must be f32 or f64 (as PyTorch's), got ", elt);
  return true;
}

/// _cdist_forward(x1, x2, p, compute_mode): x1 [*, P, M] and x2 [*, R, M]
/// of one dtype, their batch dims broadcast, to [*, P, R].
INFER(inferCdistForward) {
  CALL;
  TensorType x1 = c.tensor(0, "x1"), x2 = c.tensor(1, "x2");
  if (!x1 || !x2)
    return false;
  traceir::DistanceArgs d;
  std::string why;
  if (!traceir::decodeCdist(callArgs(a), d, why))
    return c.err(why);
  if (!distanceDtype(c, "x1", x1))
    return false;
  if (x2.getElementType() != x1.getElementType())
    return c.err("x1 and x2 must have one dtype, got ", x1.getElementType(),
                 " and ", x2.getElementType());
  if (!x1.hasRank() || !x2.hasRank())
    return c.pushUnranked(x1.getElementType());
  ArrayRef<int64_t> s1 = x1.getShape(), s2 = x2.getShape();
  if (s1.size() < 2 || s2.size() < 2)
    return c.err("only supports at least 2D tensors, got ", shapeStr(s1),
                 " and ", shapeStr(s2));
  if (s1.back() != kDyn && s2.back() != kDyn && s1.back() != s2.back())
    return c.err("X1 and X2 must have the same number of columns. X1: ",
                 s1.back(), " X2: ", s2.back());
  Shape r(s1.drop_back(2));
  if (!broadcastInto(r, s2.drop_back(2), c.err))
    return false;
  r.push_back(s1[s1.size() - 2]);
  r.push_back(s2[s2.size() - 2]);
  return c.push(r, x1.getElementType());
}

/// _pdist_forward(self, p=2): self [N, M] to [N * (N - 1) / 2].
INFER(inferPdistForward) {
  CALL;
  TensorType x = c.tensor(0, "self");
  if (!x)
    return false;
  traceir::DistanceArgs d;
  std::string why;
  if (!traceir::decodePdist(callArgs(a), d, why))
    return c.err(why);
  if (!distanceDtype(c, "self", x))
    return false;
  if (!x.hasRank())
    return c.pushUnranked(x.getElementType());
  if (x.getRank() != 2)
    return c.err("only supports 2D tensors, got: ", shapeStr(x.getShape()));
  int64_t n = x.getDimSize(0), pairs = kDyn;
  if (n != kDyn && !c.mulDims(n, n > 0 ? n - 1 : 0, pairs, "pairs"))
    return false;
  return c.push(Shape{pairs == kDyn ? kDyn : pairs / 2}, x.getElementType());
}

/// _embedding_bag(weight, indices, offsets, ...) -> (output [B, D],
/// offset2bag [N] (or [0] where the fast sum path leaves it empty),
/// bag_size [B], max_indices [B, D] (max) or [B]), B the number of offsets
/// (less one with include_last_offset); the index results in the common
/// type of indices and offsets.
static bool inferEmbeddingBagIn(Call &c, const PyArgs &a, MLIRContext *ctx,
                                bool forwardOnly) {
  TensorType w = c.tensor(0, "weight"), idx = c.tensor(1, "indices"),
             off = c.tensor(2, "offsets"), psw;
  if (!w || !idx || !off || !c.optTensor(6, "per_sample_weights", psw))
    return false;
  traceir::EmbeddingBagArgs eb;
  std::string why;
  if (!traceir::decodeEmbeddingBag(callArgs(a), eb, why))
    return c.err(why);
  Type elt = w.getElementType();
  if (!isFloatLike(elt))
    return c.err("weight must be floating, got ", elt);
  auto isIndex = [](Type t) {
    return t.isSignlessInteger(64) || t.isSignlessInteger(32);
  };
  Type it = idx.getElementType(), ot = off.getElementType();
  if (!isIndex(it) || !isIndex(ot))
    return c.err("indices and offsets must be i32 or i64, got ", it, " and ",
                 ot);
  Type index = it.isSignlessInteger(64) || ot.isSignlessInteger(64)
                   ? c.i64()
                   : IntegerType::get(ctx, 32);
  if (psw && psw.getElementType() != elt)
    return c.err("per_sample_weights must have the weight's dtype ", elt,
                 ", got ", psw.getElementType());
  if (!w.hasRank() || !idx.hasRank() || !off.hasRank()) {
    c.pushUnranked(elt);
    for (int i = 0; i < 3; ++i)
      c.pushUnranked(index);
    return true;
  }
  if (w.getRank() != 2)
    return c.err("weight must be 2-D, got ", shapeStr(w.getShape()));
  if (idx.getRank() != 1 || off.getRank() != 1)
    return c.err("indices and offsets must be 1-D, got ",
                 shapeStr(idx.getShape()), " and ", shapeStr(off.getShape()));
  int64_t n = idx.getDimSize(0), bags = off.getDimSize(0), D = w.getDimSize(1);
  if (eb.includeLastOffset && bags == 0)
    return c.err("include_last_offset: number of offset should be at least 1");
  if (eb.includeLastOffset && bags != kDyn)
    --bags;
  if (psw && psw.hasRank() &&
      (psw.getRank() != 1 ||
       failed(verifyCompatibleShape(psw.getShape(), {n}))))
    return c.err("per_sample_weights must be 1-D of the indices' length, got ",
                 shapeStr(psw.getShape()));
  bool skip = eb.skipsOffset2bag(elt.isF32() || elt.isF16());
  // The forward-only op's bag_size has one per offset (PyTorch's meta
  // function's shape).
  int64_t sizes = forwardOnly ? off.getDimSize(0) : bags;
  return c.push(Shape{bags, D}, elt) && c.push(Shape{skip ? 0 : n}, index) &&
         c.push(Shape{sizes}, index) &&
         c.push(eb.mode == 2 ? Shape{bags, D} : Shape{bags}, index);
}

INFER(inferEmbeddingBag) {
  CALL;
  return inferEmbeddingBagIn(c, a, ctx, false);
}

/// _embedding_bag_forward_only: _embedding_bag's results, but bag_size has
/// one element per offset, as PyTorch's meta function says (the last is 0
/// with include_last_offset).
INFER(inferEmbeddingBagForwardOnly) {
  CALL;
  return inferEmbeddingBagIn(c, a, ctx, true);
}

/// grid_sampler_2d(input, grid, interpolation_mode, padding_mode,
/// align_corners): input [N, C, H, W] sampled at grid [N, OH, OW, 2] to
/// [N, C, OH, OW].
INFER(inferGridSampler2d) {
  CALL;
  TensorType x = c.tensor(0, "input"), g = c.tensor(1, "grid");
  if (!x || !g)
    return false;
  traceir::GridSamplerArgs gs;
  std::string why;
  if (!traceir::decodeGridSampler(callArgs(a), gs, why))
    return c.err(why);
  Type elt = x.getElementType();
  if (!isFloatLike(elt) || g.getElementType() != elt)
    return c.err("input and grid must have one floating dtype, got ", elt,
                 " and ", g.getElementType());
  if (!x.hasRank() || !g.hasRank())
    return c.pushUnranked(elt);
  ArrayRef<int64_t> xs = x.getShape(), gsh = g.getShape();
  auto mismatch = [](int64_t u, int64_t v) {
    return u != kDyn && v != kDyn && u != v;
  };
  if (xs.size() != 4 || gsh.size() != 4 || mismatch(gsh[3], 2) ||
      mismatch(xs[0], gsh[0]))
    return c.err("expected input [N, C, H, W] and grid [N, H_out, W_out, 2], "
                 "got ",
                 shapeStr(xs), " and ", shapeStr(gsh));
  if (xs[2] == 0 || xs[3] == 0)
    return c.err("expected input to have non-empty spatial dimensions, but "
                 "input has sizes ",
                 shapeStr(xs));
  return c.push(Shape{xs[0] != kDyn ? xs[0] : gsh[0], xs[1], gsh[1], gsh[2]},
                elt);
}

/// Whether checkedWindowOutput failed because the padded input or the
/// dilated kernel overflows (rather than the kernel being too large), for
/// the message. Stride, padding and dilation are known to be valid.
static bool windowOverflows(int64_t in, int64_t kernel, int64_t pad,
                            int64_t dilation) {
  std::optional<int64_t> twoPad = traceir::checkedMul(pad, 2);
  return !twoPad || !traceir::checkedMul(dilation, kernel - 1) ||
         !traceir::checkedAdd(in, *twoPad);
}

/// Fails unless input `x`, weight `w` and bias `b` (if any) of a
/// convolution share one dtype that convolutionTakesDtype takes.
static bool convolutionDtypes(Call &c, TensorType x, TensorType w,
                              TensorType b) {
  Type elt = x.getElementType();
  for (TensorType t : {w, b})
    if (t && t.getElementType() != elt)
      return c.err("input, weight and bias must have one dtype, got ", elt,
                   " and ", t.getElementType());
  std::string name, why;
  llvm::raw_string_ostream os(name);
  os << elt;
  if (!traceir::convolutionTakesDtype(isFloatLike(elt),
                                      elt.isSignlessInteger(64), name, why))
    return c.err(why);
  return true;
}

/// conv2d(input, weight, bias, stride=1, padding=0, dilation=1, groups=1):
/// input, weight and bias of one dtype, which convolutionTakesDtype takes.
INFER(inferConv2d) {
  CALL;
  TensorType x = c.tensor(0, "input"), w = c.tensor(1, "weight"), b;
  if (!x || !w || !c.optTensor(2, "bias", b))
    return false;
  if (!convolutionDtypes(c, x, w, b))
    return false;
  if (!x.hasRank() || !w.hasRank())
    return c.pushUnranked(x.getElementType());
  bool batched = x.getRank() == 4;
  if (x.getRank() != 3 && !batched)
    return c.err("input must be [N, C, H, W] or [C, H, W], got ",
                 shapeStr(x.getShape()));
  if (w.getRank() != 4)
    return c.err("weight must be [O, C/groups, kH, kW], got ",
                 shapeStr(w.getShape()));
  traceir::Conv2dArgs conv;
  std::string why;
  if (!traceir::decodeConv2d(callArgs(a), conv, why))
    return c.err(why);
  int64_t groups = conv.groups;
  ArrayRef<int64_t> xs = x.getShape(), ws = w.getShape();
  size_t off = batched ? 1 : 0;
  int64_t cin = xs[off];
  int64_t want;
  if (!c.mulDims(ws[1], groups, want, "input channels"))
    return false;
  if (cin != kDyn && want != kDyn && cin != want)
    return c.err("input has ", cin, " channels but weight ", shapeStr(ws),
                 " with groups=", groups, " expects ", want);
  if (ws[0] != kDyn && ws[0] % groups != 0)
    return c.err("weight ", shapeStr(ws), " has ", ws[0],
                 " output channels, not divisible by groups=", groups);
  if (b && b.hasRank() &&
      (b.getRank() != 1 ||
       (b.getDimSize(0) != kDyn && ws[0] != kDyn && b.getDimSize(0) != ws[0])))
    return c.err("bias must have shape [", ws[0], "], got ",
                 shapeStr(b.getShape()));
  Shape r;
  if (batched)
    r.push_back(xs[0]);
  r.push_back(ws[0]);
  for (int k = 0; k < 2; ++k) {
    int64_t in = xs[off + 1 + k];
    if (in == kDyn || ws[2 + k] == kDyn) {
      r.push_back(conv.same ? in : kDyn);
      continue;
    }
    // The one window formula, checked: a padding or dilation of 2^62 must
    // not wrap into a plausible size.
    std::optional<int64_t> o = conv.outputSize(k, in, ws[2 + k]);
    if (!o)
      return conv.same || windowOverflows(in, ws[2 + k], conv.padding[k],
                                          conv.dilation[k])
                 ? c.err("kernel ", shapeStr(ws), " with padding ",
                         conv.same ? "'same'" : shapeStr(conv.padding),
                         " and dilation ", shapeStr(conv.dilation),
                         " overflows int64 on input ", shapeStr(xs))
                 : c.err("kernel ", shapeStr(ws), " (dilation ",
                         shapeStr(conv.dilation),
                         ") is larger than the padded input ", shapeStr(xs));
    r.push_back(*o);
  }
  return c.push(r, x.getElementType());
}

/// convolution_backward(grad_output, input, weight, bias_sizes, stride,
/// padding, dilation, transposed, output_padding, groups, output_mask) ->
/// (grad_input, grad_weight, grad_bias) of a 2-D convolution: the input's,
/// the weight's and [O] types; a result output_mask leaves out is an empty
/// [0] tensor (ATen's undefined one).
INFER(inferConvolutionBackward) {
  CALL;
  TensorType g = c.tensor(0, "grad_output"), x = c.tensor(1, "input"),
             w = c.tensor(2, "weight");
  if (!g || !x || !w)
    return false;
  traceir::ConvolutionBackwardArgs cb;
  std::string why;
  if (!traceir::decodeConvolutionBackward(callArgs(a), cb, why))
    return c.err(why);
  Type elt = x.getElementType();
  if (g.getElementType() != elt || w.getElementType() != elt)
    return c.err("grad_output, input and weight must have one dtype, got ",
                 g.getElementType(), ", ", elt, " and ", w.getElementType());
  if (!x.hasRank() || !w.hasRank())
    return c.err("input and weight must be ranked");
  if (x.getRank() != 4 || w.getRank() != 4)
    return c.err("supports 2-D convolutions: input [N, C, H, W] and weight "
                 "[O, C/groups, kH, kW], got ",
                 shapeStr(x.getShape()), " and ", shapeStr(w.getShape()));
  ArrayRef<int64_t> xs = x.getShape(), ws = w.getShape();
  int64_t groups = cb.conv.groups, want;
  if (!c.mulDims(ws[1], groups, want, "input channels"))
    return false;
  if (xs[1] != kDyn && want != kDyn && xs[1] != want)
    return c.err("input has ", xs[1], " channels but weight ", shapeStr(ws),
                 " with groups=", groups, " expects ", want);
  if (ws[0] != kDyn && ws[0] % groups != 0)
    return c.err("weight ", shapeStr(ws), " has ", ws[0],
                 " output channels, not divisible by groups=", groups);
  Shape fwd = {xs[0], ws[0]};
  for (int k = 0; k < 2; ++k) {
    std::optional<int64_t> o;
    if (xs[2 + k] != kDyn && ws[2 + k] != kDyn &&
        !(o = cb.conv.outputSize(k, xs[2 + k], ws[2 + k])))
      return c.err("kernel ", shapeStr(ws), " does not fit the padded input ",
                   shapeStr(xs));
    fwd.push_back(o.value_or(kDyn));
  }
  if (g.hasRank() && failed(verifyCompatibleShape(g.getShape(), fwd)))
    return c.err("grad_output ", shapeStr(g.getShape()),
                 " is not the convolution's output ", shapeStr(fwd));
  Shape none = {0};
  return c.push(cb.mask[0] ? Shape(xs) : none, elt) &&
         c.push(cb.mask[1] ? Shape(ws) : none, elt) &&
         c.push(cb.mask[2] ? Shape{ws[0]} : none, elt);
}

/// The dtypes a pool's inference takes: floating and i64 (the average
/// pools, as PyTorch's CPU), or any but bool (the max pools).
enum class PoolElts { FloatOrI64, NotBool };

/// "[N, C, H, W] or [C, H, W]" (N = 2) or "[N, C, D, H, W] or [C, D, H, W]".
static const char *poolShapes(size_t spatial) {
  return spatial == 3 ? "[N, C, D, H, W] or [C, D, H, W]"
                      : "[N, C, H, W] or [C, H, W]";
}

/// max_pool2d(input, kernel_size, stride=kernel_size, padding=0,
/// dilation=1, ceil_mode=False), avg_pool2d(input, kernel_size,
/// stride=kernel_size, padding=0, ceil_mode=False, count_include_pad=True,
/// divisor_override=None) and their 3-D forms: `decode`'s window over the
/// last N dims of an input of N + 1 or N + 2 dims.
template <size_t N, typename Args, typename Decoder>
static bool inferWindowPool(Call &c, const PyArgs &a, Decoder decode,
                            PoolElts elts, bool indices = false) {
  return onRanked(c, "input", [&](Shape &s, Type elt) {
    if (s.size() != N + 1 && s.size() != N + 2)
      return c.err("input must be ", poolShapes(N), ", got ", shapeStr(s));
    if (elts == PoolElts::FloatOrI64 && !isFloatLike(elt) &&
        !elt.isSignlessInteger(64))
      return c.err("takes floating-point or i64 tensors, got ", elt);
    if (elts == PoolElts::NotBool && elt.isInteger(1))
      return c.err("does not take bool tensors");
    Args pool;
    std::string why;
    if (!decode(callArgs(a), pool, why))
      return c.err(why);
    for (size_t i = 0; i < N; ++i) {
      int64_t &in = s[s.size() - N + i];
      if (in == kDyn)
        continue;
      std::optional<int64_t> o = pool.outputSize(i, in);
      if (!o)
        return windowOverflows(in, pool.kernel[i], pool.padding[i],
                               pool.dilation[i])
                   ? c.err("pooling window ", shapeStr(pool.kernel),
                           " with padding ", shapeStr(pool.padding),
                           " and dilation ", shapeStr(pool.dilation),
                           " overflows int64 on input ", shapeStr(s))
                   : c.err("pooling window ", shapeStr(pool.kernel),
                           " (dilation ", shapeStr(pool.dilation),
                           ") is larger than the padded input ", shapeStr(s));
      in = *o;
    }
    return c.push(s, elt) && (!indices || c.push(s, c.i64()));
  });
}

INFER(inferMaxPool2d) {
  CALL;
  return inferWindowPool<2, traceir::MaxPool2dArgs>(
      c, a, traceir::decodeMaxPool2d, PoolElts::NotBool);
}

/// max_pool2d_with_indices: max_pool2d's result and the i64 position of
/// each maximum within its input plane.
INFER(inferMaxPool2dWithIndices) {
  CALL;
  return inferWindowPool<2, traceir::MaxPool2dArgs>(
      c, a, traceir::decodeMaxPool2d, PoolElts::NotBool, /*indices=*/true);
}

/// max_pool3d_with_indices: the 3-D max pool of any dtype but bool, and the
/// i64 position (d * H + h) * W + w of each maximum within its input volume.
INFER(inferMaxPool3dWithIndices) {
  CALL;
  return inferWindowPool<3, traceir::MaxPool3dArgs>(
      c, a, traceir::decodeMaxPool3d, PoolElts::NotBool, /*indices=*/true);
}

/// The result shape of 2-D window pool `pool` over `x` (dynamic dims stay
/// dynamic): the shape a pooling backward's grad_output must have.
template <typename Pool>
static bool pooledShape(Call &c, TensorType x, const Pool &pool, Shape &want) {
  want.assign(x.getShape().begin(), x.getShape().end());
  for (int i = 0; i < 2; ++i) {
    int64_t &in = want[want.size() - 2 + i];
    if (in == kDyn)
      continue;
    std::optional<int64_t> o = pool.outputSize(i, in);
    if (!o)
      return c.err("pooling window ", shapeStr(pool.kernel),
                   " does not fit the padded input ", shapeStr(x.getShape()));
    in = *o;
  }
  return true;
}

/// max_pool2d_with_indices_backward(grad_output, self, kernel_size, stride,
/// padding, dilation, ceil_mode, indices) -> grad_input of self's type;
/// grad_output and indices have the forward's result shape.
INFER(inferMaxPool2dWithIndicesBackward) {
  CALL;
  TensorType g = c.tensor(0, "grad_output"), x = c.tensor(1, "self"),
             idx = c.tensor(7, "indices");
  if (!g || !x || !idx)
    return false;
  if (!isFloatLike(x.getElementType()) ||
      g.getElementType() != x.getElementType())
    return c.err("grad_output and self must have one floating dtype, got ",
                 g.getElementType(), " and ", x.getElementType());
  if (!idx.getElementType().isSignlessInteger(64))
    return c.err("indices must be i64, got ", idx.getElementType());
  if (!x.hasRank())
    return c.pushUnranked(x.getElementType());
  traceir::MaxPool2dArgs pool;
  std::string why;
  if (!traceir::decodeMaxPool2dBackward(callArgs(a), pool, why))
    return c.err(why);
  if (x.getRank() != 3 && x.getRank() != 4)
    return c.err("self must be [N, C, H, W] or [C, H, W], got ",
                 shapeStr(x.getShape()));
  // The forward's result shape.
  Shape want;
  if (!pooledShape(c, x, pool, want))
    return false;
  for (TensorType t : {g, idx})
    if (t.hasRank() && failed(verifyCompatibleShape(t.getShape(), want)))
      return c.err("grad_output and indices must have the pooled shape ",
                   shapeStr(want), ", got ", shapeStr(t.getShape()));
  return c.push(x.getShape(), x.getElementType());
}

INFER(inferAvgPool2d) {
  CALL;
  return inferWindowPool<2, traceir::AvgPool2dArgs>(
      c, a, traceir::decodeAvgPool2d, PoolElts::FloatOrI64);
}

INFER(inferAvgPool3d) {
  CALL;
  return inferWindowPool<3, traceir::AvgPool3dArgs>(
      c, a, traceir::decodeAvgPool3d, PoolElts::FloatOrI64);
}

/// avg_pool2d_backward(grad_output, self, kernel_size, stride, padding,
/// ceil_mode, count_include_pad, divisor_override) -> grad_input of self's
/// type (floating or i64, as the forward); grad_output has the forward's
/// result shape.
INFER(inferAvgPool2dBackward) {
  CALL;
  TensorType g = c.tensor(0, "grad_output"), x = c.tensor(1, "self");
  if (!g || !x)
    return false;
  Type elt = x.getElementType();
  if ((!isFloatLike(elt) && !elt.isSignlessInteger(64)) ||
      g.getElementType() != elt)
    return c.err("grad_output and self must have one floating or i64 dtype, "
                 "got ",
                 g.getElementType(), " and ", elt);
  traceir::AvgPool2dArgs pool;
  std::string why;
  if (!traceir::decodeAvgPool2dBackward(callArgs(a), pool, why))
    return c.err(why);
  if (!x.hasRank())
    return c.pushUnranked(elt);
  if (x.getRank() != 3 && x.getRank() != 4)
    return c.err("self must be [N, C, H, W] or [C, H, W], got ",
                 shapeStr(x.getShape()));
  // The forward's result shape.
  Shape want;
  if (!pooledShape(c, x, pool, want))
    return false;
  if (g.hasRank() && failed(verifyCompatibleShape(g.getShape(), want)))
    return c.err("grad_output must have the pooled shape ", shapeStr(want),
                 ", got ", shapeStr(g.getShape()));
  return c.push(x.getShape(), elt);
}

/// The shape `s` (dynamic dims as kDyn) as the decoders read it, unknown
/// sizes negative, and back.
static std::vector<int64_t> knownSizes(ArrayRef<int64_t> s) {
  std::vector<int64_t> v(s.begin(), s.end());
  for (int64_t &d : v)
    d = d == kDyn ? -1 : d;
  return v;
}
static Shape dynSizes(ArrayRef<int64_t> v) {
  Shape s(v.begin(), v.end());
  for (int64_t &d : s)
    d = d < 0 ? kDyn : d;
  return s;
}

/// col2im(self, output_size, kernel_size, dilation, padding, stride)
/// (F.fold): [N, C * kH * kW, L] or [C * kH * kW, L] of a floating or bool
/// dtype to [N, C, oH, oW] (or [C, oH, oW]), decoded by decodeCol2im.
INFER(inferCol2im) {
  CALL;
  return onRanked(c, "self", [&](Shape &s, Type elt) {
    if (!isFloatLike(elt) && !elt.isInteger(1))
      return c.err("takes floating-point or bool tensors, got ", elt);
    traceir::Col2imArgs col;
    std::string why;
    if (!traceir::decodeCol2im(callArgs(a), knownSizes(s), col, why))
      return c.err(why);
    return c.push(dynSizes(col.result), elt);
  });
}

/// constant_pad_nd(self, pad, value=0) (N = 0) and reflection_padNd /
/// replication_padNd(self, padding), decoded by decodePad.
template <traceir::PadMode M, int N> INFER(inferPad) {
  CALL;
  return onRanked(c, "self", [&](Shape &s, Type elt) {
    if (M != traceir::PadMode::Constant && elt.isInteger(1))
      return c.err("takes no bool tensor (PyTorch has no bool kernel for it)");
    traceir::PadArgs pad;
    std::string why;
    if (!traceir::decodePad(callArgs(a), M, N, knownSizes(s), pad, why))
      return c.err(why);
    return c.push(dynSizes(pad.resultShape), elt);
  });
}

/// upsample_nearest2d.vec(input, output_size, scale_factors) and
/// upsample_bilinear2d.vec(input, output_size, align_corners,
/// scale_factors), decoded by decodeUpsample2d: floating or u8 inputs, as
/// PyTorch's CPU kernels (u8 bilinear in fixed point, Resample.h).
template <bool Bilinear> INFER(inferUpsample2d) {
  CALL;
  return onRanked(c, "input", [&](Shape &s, Type elt) {
    if (!isFloatLike(elt) && !elt.isUnsignedInteger(8))
      return c.err("takes floating-point or u8 tensors, got ", elt);
    traceir::UpsampleArgs up;
    std::string why;
    if (!traceir::decodeUpsample2d(callArgs(a), Bilinear, knownSizes(s), up,
                                   why))
      return c.err(why);
    s[2] = up.size[0] < 0 ? kDyn : up.size[0];
    s[3] = up.size[1] < 0 ? kDyn : up.size[1];
    return c.push(s, elt);
  });
}

/// flip(self, dims): each dim at most once.
INFER(inferFlip) {
  CALL;
  return onRanked(c, "self", [&](Shape &s, Type elt) {
    std::vector<bool> flipped;
    std::string why;
    if (!traceir::decodeReducedDims(callArgs(a), 1, s.size(),
                                    traceir::DimArg::ListEmptyMarksNone,
                                    flipped, why))
      return c.err(why);
    return c.push(s, elt);
  });
}

/// repeat(self, repeats), decoded by decodeRepeat.
INFER(inferRepeat) {
  CALL;
  return onRanked(c, "self", [&](Shape &s, Type elt) {
    std::vector<int64_t> shape;
    std::string why;
    if (!traceir::decodeRepeat(callArgs(a), knownSizes(s), shape, why))
      return c.err(why);
    return c.push(dynSizes(shape), elt);
  });
}

/// convolution(input, weight, bias, stride, padding, dilation, transposed,
/// output_padding, groups): 1 to 3 spatial dims, from the weight's rank;
/// the shape and the dtypes (one for all operands, convolutionTakesDtype's)
/// are ConvolutionArgs.h's, which the kernels check alike.
INFER(inferConvolution) {
  CALL;
  TensorType x = c.tensor(0, "input"), w = c.tensor(1, "weight"), b;
  if (!x || !w || !c.optTensor(2, "bias", b))
    return false;
  if (!convolutionDtypes(c, x, w, b))
    return false;
  Type elt = x.getElementType();
  if (!x.hasRank() || !w.hasRank())
    return c.pushUnranked(elt);
  std::string why;
  int spatial = traceir::convolutionSpatialDims(w.getRank(), why);
  traceir::ConvolutionArgs conv;
  if (!spatial || !traceir::decodeConvolution(callArgs(a), spatial, conv, why))
    return c.err(why);
  std::optional<int64_t> biasSize;
  if (b && b.hasRank()) {
    if (b.getRank() != 1)
      return c.err("bias must be 1-D, got ", shapeStr(b.getShape()));
    biasSize = b.getDimSize(0) == kDyn ? -1 : b.getDimSize(0);
  }
  std::vector<int64_t> shape;
  if (!traceir::convolutionShape(conv, knownSizes(x.getShape()),
                                 knownSizes(w.getShape()), biasSize, shape,
                                 why))
    return c.err(why);
  return c.push(dynSizes(shape), elt);
}

/// adaptive_avg_pool2d(input, output_size) (N = 2: positive sizes) and
/// _adaptive_avg_pool3d(self, output_size) (N = 3: non-negative ones, as
/// PyTorch): an int or N entries, None keeping the input's size.
template <size_t N> static bool inferAdaptiveAvgPool(Call &c, const PyArgs &a) {
  return onRanked(c, "input", [&](Shape &s, Type elt) {
    if (s.size() != N + 1 && s.size() != N + 2)
      return c.err("input must be ", poolShapes(N), ", got ", shapeStr(s));
    if (N == 3 && !isFloatLike(elt))
      return c.err("takes floating-point tensors, got ", elt);
    ArrayAttr elems = dyn_cast_or_null<ArrayAttr>(a.scalar(1));
    if (auto l = dyn_cast_or_null<ListAttr>(a.scalar(1)))
      elems = l.getElements();
    SmallVector<Attribute, 3> sizes;
    if (elems)
      sizes.assign(elems.begin(), elems.end());
    else if (getInt(a.scalar(1)))
      sizes.assign(N, a.scalar(1));
    if (sizes.size() != N)
      return c.err(N == 3 ? "argument #1 (output_size) must be an int or a "
                            "triple"
                          : "argument #1 (output_size) must be an int or a "
                            "pair");
    for (size_t i = 0; i < N; ++i) {
      if (isNone(sizes[i]))
        continue; // None keeps the input size
      auto v = getInt(sizes[i]);
      if (!v || *v < (N == 3 ? 0 : 1))
        return c.err(N == 3 ? "output_size entries must be non-negative ints "
                              "or None"
                            : "output_size entries must be positive ints or "
                              "None");
      s[s.size() - N + i] = *v;
    }
    return c.push(s, elt);
  });
}

INFER(inferAdaptiveAvgPool2d) { // adaptive_avg_pool2d(input, output_size)
  CALL;
  return inferAdaptiveAvgPool<2>(c, a);
}

INFER(inferAdaptiveAvgPool3d) { // _adaptive_avg_pool3d(self, output_size)
  CALL;
  return inferAdaptiveAvgPool<3>(c, a);
}

/// _adaptive_avg_pool2d_backward(grad_output, self) -> grad_input of self's
/// type: a floating self [N, C, H, W] or [C, H, W], grad_output of its dtype
/// and leading dims with a nonzero output size.
INFER(inferAdaptiveAvgPool2dBackward) {
  CALL;
  TensorType g = c.tensor(0, "grad_output"), x = c.tensor(1, "self");
  if (!g || !x)
    return false;
  Type elt = x.getElementType();
  if (!isFloatLike(elt) || g.getElementType() != elt)
    return c.err("grad_output and self must have one floating dtype, got ",
                 g.getElementType(), " and ", elt);
  if (!x.hasRank())
    return c.pushUnranked(elt);
  ArrayRef<int64_t> xs = x.getShape();
  if (xs.size() != 3 && xs.size() != 4)
    return c.err("self must be [N, C, H, W] or [C, H, W], got ", shapeStr(xs));
  if (g.hasRank()) {
    ArrayRef<int64_t> gs = g.getShape();
    if (gs.size() != xs.size() ||
        failed(verifyCompatibleShape(gs.drop_back(2), xs.drop_back(2))))
      return c.err("grad_output ", shapeStr(gs),
                   " must have the leading dims of self ", shapeStr(xs));
    for (int64_t d : gs.take_back(2))
      if (d == 0)
        return c.err("grad_output ", shapeStr(gs),
                     " must have a nonzero output size");
  }
  return c.push(xs, elt);
}

/// lstm(input, h0, c0, weights..., has_biases, num_layers, dropout, train,
/// bidirectional, batch_first) -> (output, h_n, c_n) when Lstm, else
/// gru(input, h0, weights..., ...) -> (output, h_n). Per layer and direction
/// the weights are w_ih, w_hh[, b_ih, b_hh].
template <bool Lstm> INFER(inferRnn) {
  CALL;
  unsigned nt = 0;
  while (a.isTensor(nt))
    ++nt;
  // The states (h0, and c0 for lstm) follow the input; the weights them.
  unsigned states = Lstm ? 2 : 1;
  TensorType x = c.tensor(0, "input"), h0 = c.tensor(1, "h0");
  TensorType c0 = Lstm ? c.tensor(2, "c0") : h0;
  if (!x || !h0 || !c0)
    return false;
  bool hasBiases, train, bidir, batchFirst;
  int64_t layers;
  if (!c.boolArg(nt, "has_biases", hasBiases, true) ||
      !c.intArg(nt + 1, "num_layers", layers) ||
      !c.boolArg(nt + 3, "train", train, false) ||
      !c.boolArg(nt + 4, "bidirectional", bidir, false) ||
      !c.boolArg(nt + 5, "batch_first", batchFirst, false))
    return false;
  auto dropout = getNumber(a.scalar(nt + 2));
  if (!dropout)
    return c.err("argument #", nt + 2, " (dropout) must be a number");
  if (*dropout < 0 || *dropout > 1)
    return c.err("dropout must be in [0, 1], got ", *dropout);
  int64_t dirs = bidir ? 2 : 1, perLayer = hasBiases ? 4 : 2;
  if (layers <= 0)
    return c.err("num_layers must be positive, got ", layers);
  // num_layers is the caller's int: the count of weights it implies may not
  // fit, and must not wrap to the count given.
  int64_t given = (int64_t)nt - 1 - states;
  std::optional<int64_t> want = traceir::checkedMul(layers, dirs * perLayer);
  if (!want)
    return c.err("num_layers=", layers, " needs more than 2^63 weight ",
                 "tensors, got ", given);
  if (given != *want)
    return c.err("expects ", *want, " weight tensors for num_layers=", layers,
                 ", got ", given);
  const char *tensors = Lstm ? "input, h0 and c0" : "input and h0";
  if (!x.hasRank() || !h0.hasRank() || !c0.hasRank())
    return c.err(tensors, " must be ranked");
  if (x.getRank() != 3 || h0.getRank() != 3 || c0.getRank() != 3)
    return c.err(tensors, " must have rank 3");
  int64_t hidden = h0.getDimSize(2);
  int64_t seq = x.getDimSize(batchFirst ? 1 : 0),
          batch = x.getDimSize(batchFirst ? 0 : 1);
  if (failed(verifyCompatibleShape(h0, c0)))
    return c.err("h0 ", shapeStr(h0.getShape()), " and c0 ",
                 shapeStr(c0.getShape()), " differ");
  // layers * dirs (and the weight indices below) cannot overflow: their
  // product with perLayer is the number of weights given.
  if ((h0.getDimSize(0) != kDyn && h0.getDimSize(0) != layers * dirs) ||
      (batch != kDyn && h0.getDimSize(1) != kDyn && h0.getDimSize(1) != batch))
    return c.err("h0 must be [", layers * dirs, ", ", batch, ", H], got ",
                 shapeStr(h0.getShape()));
  // Every weight, per layer and direction, in nn.LSTM's (nn.GRU's)
  // _flat_weights order: w_ih [GH, in], w_hh [GH, H], b_ih [GH], b_hh [GH],
  // G = 4 (3) gates, where `in` is the input size for layer 0 and D*H above
  // it.
  Type elt = x.getElementType();
  int64_t inSize = x.getDimSize(2);
  static const char *names[] = {"w_ih", "w_hh", "b_ih", "b_hh"};
  for (int64_t l = 0; l < layers; ++l) {
    int64_t in = inSize;
    if (l > 0 && !c.mulDims(dirs, hidden, in, "layer input size"))
      return false;
    for (int64_t dir = 0; dir < dirs; ++dir) {
      for (int64_t k = 0; k < perLayer; ++k) {
        unsigned arg = 1 + states + (l * dirs + dir) * perLayer + k;
        auto w = cast<TensorType>(a.type(arg));
        if (w.getElementType() != elt)
          return c.err(names[k], " of layer ", l, " is ", w.getElementType(),
                       " but the input is ", elt);
        if (!w.hasRank())
          continue;
        int64_t gates;
        if (!c.mulDims(Lstm ? 4 : 3, hidden, gates, "gate size"))
          return false;
        Shape want = k == 0   ? Shape{gates, in}
                     : k == 1 ? Shape{gates, hidden}
                              : Shape{gates};
        if (failed(verifyCompatibleShape(w.getShape(), want)))
          return c.err(names[k], " of layer ", l,
                       dir ? " (reverse direction)" : "", " must be ",
                       shapeStr(want), ", got ", shapeStr(w.getShape()));
      }
    }
  }
  int64_t features;
  if (!c.mulDims(dirs, hidden, features, "output features"))
    return false;
  Shape o =
      batchFirst ? Shape{batch, seq, features} : Shape{seq, batch, features};
  return c.push(o, elt) && c.push(h0.getShape(), elt) &&
         (!Lstm || c.push(c0.getShape(), elt));
}

/// nll_loss(self, target, weight=None, reduction=Mean(1), ignore_index)
/// and cross_entropy (same head). reduction 0 keeps the target's shape.
template <bool AllowProbabilities> INFER(inferLoss) {
  CALL;
  TensorType x = c.tensor(0, "input"), t = c.tensor(1, "target"), w;
  if (!x || !t || !c.optTensor(2, "weight", w))
    return false;
  traceir::Reduction reduction;
  std::string why;
  if (!traceir::decodeLossReduction(callArgs(a), 3, reduction, why))
    return c.err(why);
  // cross_entropy also takes class probabilities: a float target shaped
  // like the input.
  bool probabilities = AllowProbabilities && isFloatLike(t.getElementType());
  if (w && w.hasRank() && x.hasRank()) {
    int64_t classes = x.getRank() >= 2 ? x.getDimSize(1) : x.getDimSize(0);
    if (w.getRank() != 1 ||
        failed(verifyCompatibleShape(w.getShape(), {classes})))
      return c.err("weight must have shape [", classes,
                   "] (one per class), got ", shapeStr(w.getShape()));
  }
  if (!probabilities && !isa<IntegerType>(t.getElementType()))
    return c.err("target must hold class indices (integers), got ",
                 t.getElementType());
  if (probabilities && x.hasRank() && t.hasRank() &&
      failed(verifyCompatibleShape(x.getShape(), t.getShape())))
    return c.err("probability target ", shapeStr(t.getShape()),
                 " must have the input's shape ", shapeStr(x.getShape()));
  if (x.hasRank() && x.getRank() > 2 && !AllowProbabilities)
    return c.err("nll_loss expects an input of rank 1 or 2, got ",
                 shapeStr(x.getShape()), " (use cross_entropy for images)");
  if (probabilities && reduction == traceir::Reduction::None) {
    if (!x.hasRank())
      return c.pushUnranked(x.getElementType());
    Shape r(x.getShape());
    if (r.size() >= 2)
      r.erase(r.begin() + 1);
    else
      r.clear();
    return c.push(r, x.getElementType());
  }
  if (!probabilities && x.hasRank() && t.hasRank()) {
    Shape want(x.getShape());
    if (want.size() >= 2)
      want.erase(want.begin() + 1);
    else
      want.clear();
    if (failed(verifyCompatibleShape(want, t.getShape())))
      return c.err("target ", shapeStr(t.getShape()), " must have shape ",
                   shapeStr(want), " for input ", shapeStr(x.getShape()));
  }
  if (reduction == traceir::Reduction::None)
    return t.hasRank() ? c.push(t.getShape(), x.getElementType())
                       : c.pushUnranked(x.getElementType());
  return c.push({}, x.getElementType());
}

//===--- Backward ops of the joint training graph -------------------------===//

/// _log_softmax(self, dim, half_to_float): half_to_float (CUDA's f16 in,
/// f32 out) is only defined for an f16 input.
INFER(inferLogSoftmaxInternal) {
  CALL;
  TensorType x = c.tensor(0, "self");
  if (!x)
    return false;
  Type elt = x.getElementType();
  if (!isFloatLike(elt))
    return c.err("_log_softmax is not implemented for ", elt,
                 " (it needs a floating input)");
  bool halfToFloat = false;
  if (!c.boolArg(2, "half_to_float", halfToFloat, false))
    return false;
  if (halfToFloat && !elt.isF16())
    return c.err("conversion is supported for Half type only, got ", elt);
  Type res = halfToFloat ? c.f32() : elt;
  return onRanked(c, "self", [&](Shape &s, Type) {
    int64_t d;
    if (!c.intArg(1, "dim", d) || !c.dim(d, s.size(), "dim"))
      return false;
    return c.push(s, res);
  });
}

/// _log_softmax_backward_data(grad_output, output, dim, input_dtype): the
/// result has input_dtype, which differs from the gradient's only for
/// half_to_float (an f32 gradient of an f16 input).
INFER(inferLogSoftmaxBackward) {
  CALL;
  TensorType g = c.tensor(0, "grad_output"), o = c.tensor(1, "output");
  if (!g || !o)
    return false;
  Type elt = g.getElementType(), in;
  if (!isFloatLike(elt))
    return c.err("_log_softmax_backward_data is not implemented for ", elt,
                 " (it needs a floating gradient)");
  if (o.getElementType() != elt)
    return c.err("expected scalar type ", elt, " but found ",
                 o.getElementType(), " (output)");
  if (!dtypeArg(c, 3, "input_dtype", in))
    return false;
  if (!in)
    return c.err("argument #3 (input_dtype) must be a dtype");
  if (in != elt && !(elt.isF32() && in.isF16()))
    return c.err("expected input and grad types to match, or input to be "
                 "f16 and grad to be f32, got input_dtype ",
                 in, " and grad ", elt);
  if (g.hasRank() && o.hasRank() &&
      failed(verifyCompatibleShape(g.getShape(), o.getShape())))
    return c.err("grad_output ", shapeStr(g.getShape()), " and output ",
                 shapeStr(o.getShape()), " must have the same shape");
  return onRanked(c, "grad_output", [&](Shape &s, Type) {
    int64_t d;
    if (!c.intArg(2, "dim", d) || !c.dim(d, s.size(), "dim"))
      return false;
    return c.push(s, in);
  });
}

/// threshold_backward(grad_output, self, threshold): grad where self >
/// threshold, else 0; broadcasts and promotes like a binary op.
INFER(inferThresholdBackward) {
  CALL;
  if (!c.a.isTensor(0) || !c.a.isTensor(1))
    return c.err("grad_output and self must be tensors");
  if (!getNumber(a.scalar(2)))
    return c.err("argument #2 (threshold) must be a number");
  if (!elementwise(c, 2, EltRule::Promote))
    return false;
  Type elt = cast<TensorType>(out.back()).getElementType();
  if (elt.isInteger(1) || category(elt) == 3) {
    out.pop_back();
    return c.err("threshold_backward is not implemented for ", elt);
  }
  return true;
}

/// ones_like(self, dtype=None, layout=None, device=None, pin_memory=None,
/// memory_format=None): self's shape; the layout must be strided and the
/// memory format preserve/contiguous (results are always contiguous).
INFER(inferOnesLike) {
  CALL;
  TensorType x = c.tensor(0, "self");
  Type elt;
  if (!x || !dtypeArg(c, 1, "dtype", elt))
    return false;
  auto str = [&](unsigned i) {
    auto s = dyn_cast_or_null<StringAttr>(a.scalar(i));
    return s ? s.getValue() : StringRef();
  };
  if (!a.isNoneOrAbsent(2) && str(2) != "torch.strided" && str(2) != "strided")
    return c.err("layout must be None or torch.strided");
  for (unsigned i : {3u, 4u})
    if (!a.isNoneOrAbsent(i) && !isa<StringAttr, BoolAttr>(a.scalar(i)))
      return c.err("argument #", i, i == 3 ? " (device)" : " (pin_memory)",
                   " must be None, a string or a bool");
  StringRef mf = str(5);
  mf.consume_front("torch.");
  if (!a.isNoneOrAbsent(5) && mf != "preserve_format" &&
      mf != "contiguous_format")
    return c.err("memory_format must be None, torch.preserve_format or "
                 "torch.contiguous_format");
  if (!elt)
    elt = x.getElementType();
  return x.hasRank() ? c.push(x.getShape(), elt) : c.pushUnranked(elt);
}

/// nll_loss_forward / nll_loss_backward's common checks: self [N, C] or
/// [C] floating, target [N] or [] of i64 or ui8 class indices, weight [C] of
/// self's dtype. `first` is self's index; reduction follows the weight.
static bool nllLossHead(Call &c, unsigned first, TensorType &x, TensorType &t,
                        traceir::Reduction &reduction) {
  TensorType w;
  x = c.tensor(first, "self");
  t = c.tensor(first + 1, "target");
  if (!x || !t || !c.optTensor(first + 2, "weight", w))
    return false;
  std::string why;
  if (!traceir::decodeLossReduction(callArgs(c.a), first + 3, reduction, why))
    return c.err(why);
  int64_t ignore;
  if (!c.intArg(first + 4, "ignore_index", ignore))
    return false;
  Type elt = x.getElementType();
  if (!isFloatLike(elt))
    return c.err("nll_loss is not implemented for ", elt,
                 " (it needs a floating input)");
  Type te = t.getElementType();
  if (!te.isInteger(64) && !te.isUnsignedInteger(8))
    return c.err("expected target dtype to be Long or Byte, but got ", te);
  if (w && w.getElementType() != elt)
    return c.err("expected scalar type ", elt, " but found ",
                 w.getElementType(), " (weight)");
  if (!x.hasRank())
    return true;
  if (x.getRank() < 1 || x.getRank() > 2)
    return c.err("input tensor should be 1D or 2D, got ",
                 shapeStr(x.getShape()));
  if (t.hasRank() && t.getRank() > 1)
    return c.err("0D or 1D target tensor expected, multi-target not "
                 "supported, got ",
                 shapeStr(t.getShape()));
  int64_t n = x.getRank() == 2 ? x.getDimSize(0) : 1;
  int64_t tn = t.hasRank() && t.getRank() == 1 ? t.getDimSize(0) : 1;
  if (t.hasRank() && n != kDyn && tn != kDyn &&
      (n != tn || (x.getRank() == 2) != (t.getRank() == 1)))
    return c.err("size mismatch (got input: ", shapeStr(x.getShape()),
                 ", target: ", shapeStr(t.getShape()), ")");
  int64_t classes = x.getDimSize(x.getRank() - 1);
  if (w && w.hasRank() &&
      (w.getRank() != 1 ||
       failed(verifyCompatibleShape(w.getShape(), {classes}))))
    return c.err("weight tensor should be defined either for all ", classes,
                 " classes or no classes but got weight tensor of shape: ",
                 shapeStr(w.getShape()));
  return true;
}

/// A tensor of one element, which has at most one dim.
static bool singleElement(TensorType t) {
  return !t.hasRank() ||
         (t.getRank() <= 1 && (t.getRank() == 0 || t.getDimSize(0) == 1 ||
                               t.getDimSize(0) == kDyn));
}

/// nll_loss_forward(self, target, weight, reduction, ignore_index) ->
/// (output, total_weight): output is [N] for reduction 0 on a batch, else
/// a scalar; total_weight is the summed weight of the counted targets.
INFER(inferNllLossForward) {
  CALL;
  TensorType x, t;
  traceir::Reduction reduction;
  if (!nllLossHead(c, 0, x, t, reduction))
    return false;
  Type elt = x.getElementType();
  if (!x.hasRank())
    c.pushUnranked(elt);
  else if (!c.push(reduction == traceir::Reduction::None && x.getRank() == 2
                       ? ArrayRef<int64_t>{x.getDimSize(0)}
                       : ArrayRef<int64_t>{},
                   elt))
    return false;
  return c.push({}, elt);
}

/// nll_loss_backward(grad_output, self, target, weight, reduction,
/// ignore_index, total_weight): the gradient with respect to self.
INFER(inferNllLossBackward) {
  CALL;
  TensorType g = c.tensor(0, "grad_output"), x, t, tw;
  traceir::Reduction reduction;
  if (!g || !nllLossHead(c, 1, x, t, reduction))
    return false;
  if (!(tw = c.tensor(6, "total_weight")))
    return false;
  Type elt = x.getElementType();
  for (auto [v, what] : {std::pair{g, "grad_output"}, {tw, "total_weight"}})
    if (v.getElementType() != elt)
      return c.err("expected scalar type ", elt, " but found ",
                   v.getElementType(), " (", what, ")");
  if (!singleElement(tw))
    return c.err("expected total_weight to be a single element tensor, got: ",
                 shapeStr(tw.getShape()));
  if (x.hasRank() && g.hasRank()) {
    if (reduction == traceir::Reduction::None && x.getRank() == 2) {
      int64_t n = x.getDimSize(0);
      if (g.getRank() != 1 || failed(verifyCompatibleShape(g.getShape(), {n})))
        return c.err("Expected a tensor of dimension 1 and tensor.size[0] == ",
                     n, " but got: ", shapeStr(g.getShape()));
    } else if (!singleElement(g)) {
      return c.err("Expected a single element grad_output tensor, but got: ",
                   shapeStr(g.getShape()));
    }
  }
  out.push_back(x);
  return true;
}

// The instantiations Ops.def's rows name: the table in OpRegistry.cpp takes
// their addresses without seeing the templates' definitions. A row naming
// one that is not here fails to link until it is added.
template InferSig inferElementwise<1>;
template InferSig inferElementwise<1, EltRule::Float>;
template InferSig inferElementwise<1, EltRule::Bool>;
template InferSig inferElementwise<1, EltRule::NotBool>;
template InferSig inferElementwise<1, EltRule::Integral>;
template InferSig inferElementwise<1, EltRule::FloatOnly>;
template InferSig inferElementwise<2>;
template InferSig inferElementwise<2, EltRule::Bool>;
template InferSig inferElementwise<2, EltRule::Float>;
template InferSig inferElementwise<2, EltRule::NotBool>;
template InferSig inferElementwise<2, EltRule::Integral>;
template InferSig inferElementwise<2, EltRule::IntegerOnly>;
template InferSig inferElementwise<2, EltRule::FloatOnly>;
template InferSig inferMatmulOfRank<2>;
template InferSig inferMatmulOfRank<3>;
template InferSig
    inferReduce<ReduceDtype::Bool, traceir::DimArg::ListEmptyMarksNone>;
template InferSig inferReduce<ReduceDtype::Float>;
template InferSig inferReduce<ReduceDtype::Index, traceir::DimArg::One>;
template InferSig inferReduce<ReduceDtype::Same>;
template InferSig inferReduce<ReduceDtype::ValueIndex, traceir::DimArg::One>;
template InferSig inferReduce<ReduceDtype::Sum>;
template InferSig inferReduce<ReduceDtype::Sum, traceir::DimArg::One>;
template InferSig inferFactory<false, false>;
template InferSig inferFactory<true, false>;
template InferSig inferFactory<false, true>;
template InferSig inferSort<false>;
template InferSig inferSort<true>;
template InferSig inferLayerNorm<false>;
template InferSig inferLayerNorm<true>;
template InferSig inferBatchNorm<false>;
template InferSig inferBatchNorm<true>;
template InferSig inferRnn<false>;
template InferSig inferRnn<true>;
template InferSig inferLoss<false>;
template InferSig inferLoss<true>;
template InferSig inferPad<traceir::PadMode::Constant, 0>;
template InferSig inferPad<traceir::PadMode::Reflect, 1>;
template InferSig inferPad<traceir::PadMode::Reflect, 2>;
template InferSig inferPad<traceir::PadMode::Reflect, 3>;
template InferSig inferPad<traceir::PadMode::Replicate, 1>;
template InferSig inferPad<traceir::PadMode::Replicate, 2>;
template InferSig inferPad<traceir::PadMode::Replicate, 3>;
template InferSig inferUpsample2d<false>;
template InferSig inferUpsample2d<true>;

} // namespace mlir::trace::registry
