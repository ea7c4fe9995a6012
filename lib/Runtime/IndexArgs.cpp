//===- IndexArgs.cpp - Reading the indexing ops' calls --------------------===//
//
// One reading per op for both devices: the arguments decoded with
// Support/OpArgs.h (the registry's own rules), the operands' dtypes and the
// result checked (a saved executable states its own types), then the
// Indexing.h map laid out over the operands' strides.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/IndexArgs.h"
#include "TraceIR/Runtime/KernelArgs.h"
#include "TraceIR/Support/ViewAlgebra.h"

#include <algorithm>
#include <cmath>

using namespace traceir;

namespace {
/// Fails the call unless `t` is an int64 or int32 tensor.
bool indexDtype(KernelContext &ctx, const Tensor &t, const char *what) {
  if (t.dtype == DType::I64 || t.dtype == DType::I32)
    return true;
  ctx.fail(strCat(what) + " must be int64 or int32, got " + dtypeName(t.dtype));
  return false;
}

/// Runs a shape rule of Support/OpArgs.h, failing the call with its
/// refusal.
template <typename F> bool checked(KernelContext &ctx, F rule) {
  std::string why;
  if (rule(why))
    return true;
  ctx.fail(why);
  return false;
}

/// Fails the call unless every tensor has at most kIxMaxRank dims.
bool checkRanks(KernelContext &ctx, std::initializer_list<size_t> ranks) {
  for (size_t r : ranks)
    if (r > size_t(kIxMaxRank)) {
      ctx.fail("tensors of rank " + strCat(r) +
               " are not supported by the indexing kernels (at most " +
               strCat(kIxMaxRank) + ")");
      return false;
    }
  return true;
}

/// Fails the call unless result 0 has `shape` and self's dtype.
bool checkResult(KernelContext &ctx, std::span<const int64_t> shape) {
  if (!checkResultShape(ctx, 0, shape))
    return false;
  if (ctx.result(0).dtype == ctx.tensor(0).dtype)
    return true;
  ctx.fail(strCat("the result is ") + dtypeName(ctx.result(0).dtype) +
           ", not self's " + dtypeName(ctx.tensor(0).dtype));
  return false;
}

/// The iteration space, the base and the other side of a map.
void setEnds(IxMap &m, std::span<const int64_t> space, const Tensor &base,
             const Tensor &other) {
  m = IxMap();
  m.rank = static_cast<int32_t>(space.size());
  std::copy(space.begin(), space.end(), m.shape);
  m.base = base.bytes();
  m.other = other.bytes();
  m.dtype = static_cast<int32_t>(base.dtype);
  m.elementSize = static_cast<int32_t>(dtypeSize(base.dtype));
}

/// gather's and scatter's map: over index's shape, picking along `dim` of
/// `base` (of self's shape); the index and base dims coincide elsewhere.
void alongDim(IndexCall &call, const Tensor &base, const Tensor &index,
              int64_t dim) {
  IxMap &m = call.map;
  for (int64_t d = 0; d < index.rank(); ++d)
    m.baseStrides[d] = d == dim || d >= base.rank() ? 0 : base.strides[d];
  m.numIndices = 1;
  IxIndex &x = m.idx[0];
  x.data = index.bytes();
  x.dtype = static_cast<int32_t>(index.dtype);
  std::copy(index.strides.begin(), index.strides.end(), x.strides);
  x.size = base.rank() ? base.shape[dim] : 1;
  x.stride = base.rank() ? base.strides[dim] : 0;
  call.numel = index.numel();
  call.checks = {{&index, dim, x.size, false}};
}

/// The index tensors of index.Tensor and index_put (arguments [1, end)),
/// read and laid out over self.
struct Advanced {
  std::vector<int64_t> dims;
  IndexLayout layout;
};
bool readAdvanced(KernelContext &ctx, unsigned end, Advanced &a) {
  const Tensor &self = ctx.tensor(0);
  if (!decodeArgs(ctx, decodeIndexEntries, 1u, end, self.rank(), a.dims))
    return false;
  std::vector<std::vector<int64_t>> shapes;
  for (int64_t d : a.dims) {
    const Tensor &t = ctx.tensor(1 + d);
    if (!indexDtype(ctx, t, "an index tensor") ||
        !checkRanks(ctx, {t.shape.size()}))
      return false;
    shapes.emplace_back(t.shape.begin(), t.shape.end());
  }
  return checked(ctx,
                 [&](std::string &why) {
                   return indexLayout(self.shape, a.dims, shapes, a.layout,
                                      why);
                 }) &&
         checkRanks(ctx, {a.layout.result.size(), self.shape.size()});
}

/// Lays advanced indexing out over the result space: the broadcast dims
/// (serial, for a scatter) take the index tensors' broadcast strides, the
/// others walk `base`'s remaining dims in order.
void advancedMap(KernelContext &ctx, IndexCall &call, const Advanced &a,
                 const Tensor &base) {
  IxMap &m = call.map;
  const std::vector<int64_t> &b = a.layout.broadcast;
  int64_t pos = a.layout.position, nb = b.size();
  std::vector<int64_t> rest;
  for (int64_t d = 0; d < base.rank(); ++d)
    if (std::find(a.dims.begin(), a.dims.end(), d) == a.dims.end())
      rest.push_back(d);
  size_t k = 0;
  for (int64_t j = 0; j < m.rank; ++j) {
    bool broadcast = j >= pos && j < pos + nb;
    m.serial[j] = broadcast;
    m.baseStrides[j] = broadcast ? 0 : base.strides[rest[k++]];
  }
  m.numIndices = static_cast<int32_t>(a.dims.size());
  call.checks.clear();
  for (size_t i = 0; i < a.dims.size(); ++i) {
    const Tensor &t = ctx.tensor(1 + a.dims[i]);
    IxIndex &x = m.idx[i];
    x.data = t.bytes();
    x.dtype = static_cast<int32_t>(t.dtype);
    for (int64_t e = 0; e < t.rank(); ++e)
      if (t.shape[e] != 1)
        x.strides[pos + nb - t.rank() + e] = t.strides[e];
    x.size = base.shape[a.dims[i]];
    x.stride = base.strides[a.dims[i]];
    call.checks.push_back({&t, a.dims[i], x.size, true});
  }
  call.numel = 1;
  for (int64_t j = 0; j < m.rank; ++j)
    call.numel *= m.shape[j];
}

/// A scalar converted as PyTorch's fill does: to int64 by truncation for
/// an integer dtype (0 where it does not fit), nonzero for bool.
void setValue(IxMap &m, const Scalar &s) {
  m.scalar = true;
  m.valueD = s.number();
  if (s.kind == Scalar::Kind::Int)
    m.valueI = s.i;
  else if (m.dtype == Bool)
    m.valueI = m.valueD != 0;
  else if (std::isfinite(m.valueD) && std::fabs(m.valueD) < 9.2e18)
    m.valueI = static_cast<int64_t>(m.valueD);
  else
    m.valueI = 0;
}
} // namespace

bool traceir::indexSelectCall(KernelContext &ctx, IndexCall &call) {
  const Tensor &self = ctx.tensor(0), &index = ctx.tensor(2);
  Tensor &out = ctx.result(0);
  int64_t dim;
  std::vector<int64_t> shape;
  if (!decodeArgs(ctx, readInt, 1u, "dim", dim, std::optional<int64_t>()) ||
      !indexDtype(ctx, index, "index") ||
      !checked(ctx,
               [&](std::string &why) {
                 return indexSelectShape(self.shape, index.shape, dim, shape,
                                         why);
               }) ||
      !checkResult(ctx, shape) || !checkRanks(ctx, {self.shape.size()}))
    return false;
  setEnds(call.map, out.shape, self, out);
  IxMap &m = call.map;
  for (int64_t d = 0; d < self.rank(); ++d)
    m.baseStrides[d] = d == dim ? 0 : self.strides[d];
  m.numIndices = 1;
  IxIndex &x = m.idx[0];
  x.data = index.bytes();
  x.dtype = static_cast<int32_t>(index.dtype);
  if (self.rank() > 0) {
    x.strides[dim] = index.rank() ? index.strides[0] : 0;
    x.size = self.shape[dim];
    x.stride = self.strides[dim];
  } else {
    x.size = 1;
  }
  call.numel = out.numel();
  call.checks = {{&index, dim, x.size, false}};
  return true;
}

bool traceir::gatherCall(KernelContext &ctx, IndexCall &call) {
  const Tensor &self = ctx.tensor(0), &index = ctx.tensor(2);
  Tensor &out = ctx.result(0);
  int64_t dim;
  if (!decodeArgs(ctx, readInt, 1u, "dim", dim, std::optional<int64_t>()) ||
      !indexDtype(ctx, index, "index") ||
      !checked(ctx,
               [&](std::string &why) {
                 return checkGatherScatter(self.shape, index.shape, nullptr,
                                           dim, why);
               }) ||
      !checkResult(ctx, index.shape) || !checkRanks(ctx, {index.shape.size()}))
    return false;
  setEnds(call.map, out.shape, self, out);
  alongDim(call, self, index, dim);
  return true;
}

bool traceir::indexCall(KernelContext &ctx, IndexCall &call) {
  Advanced a;
  if (!readAdvanced(ctx, ctx.numArgs(), a) ||
      !checkResult(ctx, a.layout.result))
    return false;
  setEnds(call.map, a.layout.result, ctx.tensor(0), ctx.result(0));
  advancedMap(ctx, call, a, ctx.tensor(0));
  // A gather: every point reads on its own.
  std::fill(call.map.serial, call.map.serial + kIxMaxRank, false);
  return true;
}

bool traceir::scatterCall(KernelContext &ctx, ScatterOp op, IndexCall &call) {
  const Tensor &self = ctx.tensor(0), &index = ctx.tensor(2);
  Tensor &out = ctx.result(0);
  int64_t dim;
  bool value = op == ScatterOp::Scatter && !ctx.isTensor(3);
  const Tensor *src = value ? nullptr : &ctx.tensor(3);
  if (value && ctx.scalar(3).kind != Scalar::Kind::Int &&
      ctx.scalar(3).kind != Scalar::Kind::Float &&
      ctx.scalar(3).kind != Scalar::Kind::Bool) {
    ctx.fail("argument #3 (src) must be a tensor or a number");
    return false;
  }
  std::vector<int64_t> srcShape;
  if (src)
    srcShape = src->shape;
  if (!decodeArgs(ctx, readInt, 1u, "dim", dim, std::optional<int64_t>()) ||
      !indexDtype(ctx, index, "index") ||
      !checked(ctx,
               [&](std::string &why) {
                 return checkGatherScatter(self.shape, index.shape,
                                           src ? &srcShape : nullptr, dim, why);
               }) ||
      !checkResult(ctx, self.shape) || !checkRanks(ctx, {index.shape.size()}))
    return false;
  if (src && src->dtype != self.dtype) {
    ctx.fail(strCat("src must have self's dtype ") + dtypeName(self.dtype) +
             ", got " + dtypeName(src->dtype));
    return false;
  }
  setEnds(call.map, index.shape, out, src ? *src : out);
  IxMap &m = call.map;
  alongDim(call, out, index, dim);
  if (index.rank() > 0)
    m.serial[dim] = true;
  if (src)
    std::copy(src->strides.begin(), src->strides.end(), m.otherStrides);
  else
    setValue(m, ctx.scalar(3));
  call.scatter = true;
  if (op == ScatterOp::ScatterAdd)
    m.reduce = IxReduce::Sum;
  if (op != ScatterOp::ScatterReduce)
    return true;
  ScatterReduce r;
  if (!decodeArgs(ctx, decodeScatterReduce, 4u, r) ||
      !decodeArgs(ctx, readBool, 5u, "include_self", m.includeSelf,
                  std::optional<bool>(true)))
    return false;
  if (r == ScatterReduce::Mean && self.dtype == DType::Bool) {
    ctx.fail("reduce=\"mean\" takes no bool tensor");
    return false;
  }
  m.reduce = r == ScatterReduce::Sum    ? IxReduce::Sum
             : r == ScatterReduce::Prod ? IxReduce::Prod
             : r == ScatterReduce::Mean ? IxReduce::Mean
             : r == ScatterReduce::Amax ? IxReduce::Max
                                        : IxReduce::Min;
  call.mean = r == ScatterReduce::Mean;
  m.counts = static_cast<int64_t *>(
      ctx.scratch(std::max<int64_t>(out.numel(), 1), sizeof(int64_t)));
  return m.counts != nullptr;
}

bool traceir::indexPutCall(KernelContext &ctx, IndexCall &call) {
  const Tensor &self = ctx.tensor(0);
  Tensor &out = ctx.result(0);
  unsigned v;
  bool accumulate;
  Advanced a;
  if (!decodeArgs(ctx, decodeIndexPut, ctx.numArgs(), v, accumulate) ||
      !readAdvanced(ctx, v, a) || !checkResult(ctx, self.shape))
    return false;
  const Tensor &values = ctx.tensor(v);
  if (values.dtype != self.dtype) {
    ctx.fail(strCat("values must have self's dtype ") + dtypeName(self.dtype) +
             ", got " + dtypeName(values.dtype));
    return false;
  }
  const std::vector<int64_t> &r = a.layout.result;
  if (!broadcastsTo(values.shape, r)) {
    ctx.fail("values " + shapeToString(values.shape) +
             " do not broadcast to the indexed shape " + shapeToString(r));
    return false;
  }
  setEnds(call.map, r, out, values);
  advancedMap(ctx, call, a, out);
  IxMap &m = call.map;
  int64_t lead = int64_t(r.size()) - values.rank();
  for (int64_t e = 0; e < values.rank(); ++e)
    if (values.shape[e] != 1)
      m.otherStrides[lead + e] = values.strides[e];
  m.reduce = accumulate ? IxReduce::Sum : IxReduce::Assign;
  call.scatter = true;
  return true;
}

void traceir::failIndexRange(KernelContext &ctx, const IxCheck &check,
                             int64_t value) {
  ctx.fail(deviceErrorMessage(deviceError(DeviceErrorCode::IndexRange, value,
                                          check.size, 0, check.dim)));
}

namespace {
/// The part of the result `layout` picks, which src must match in shape.
bool scatterView(KernelContext &ctx, std::string_view op,
                 const views::ViewArgs &args, std::span<const int64_t> shape,
                 Tensor &view) {
  const Tensor &src = ctx.tensor(1);
  Tensor &out = ctx.result(0);
  if (!checkResultShape(ctx, 0, ctx.tensor(0).shape))
    return false;
  views::Layout layout{out.shape, out.strides, out.offset};
  if (std::optional<std::string> bad =
          views::checkViewArgs(op, layout, args, shape)) {
    ctx.fail(*bad);
    return false;
  }
  if (src.shape != std::vector<int64_t>(shape.begin(), shape.end())) {
    ctx.fail("src " + shapeToString(src.shape) + " must have the shape " +
             shapeToString(shape) + " of the part of self it replaces");
    return false;
  }
  std::optional<views::Layout> l = views::applyView(op, layout, args, shape);
  if (!l || l->offset == views::Layout::kOutOfRange) {
    ctx.fail("the part of self src replaces does not fit its storage");
    return false;
  }
  view = out;
  view.shape = l->shape;
  view.strides = l->strides;
  view.offset = l->offset;
  return true;
}
} // namespace

bool traceir::sliceScatterView(KernelContext &ctx, Tensor &view) {
  const Tensor &self = ctx.tensor(0);
  int64_t dim, start, end, step;
  if (!decodeArgs(ctx, readInt, 2u, "dim", dim, std::optional<int64_t>(0)) ||
      !decodeArgs(ctx, readInt, 3u, "start", start,
                  std::optional<int64_t>(0)) ||
      !decodeArgs(ctx, readInt, 4u, "end", end,
                  std::optional<int64_t>(INT64_MAX)) ||
      !decodeArgs(ctx, readInt, 5u, "step", step, std::optional<int64_t>(1)))
    return false;
  if (self.rank() == 0 || dim < -self.rank() || dim >= self.rank() ||
      step <= 0) {
    ctx.fail("slice_scatter(dim=" + strCat(dim) + ", step=" + strCat(step) +
             ") does not apply to self " + shapeToString(self.shape));
    return false;
  }
  int64_t d = views::wrapDim(dim, self.rank());
  std::vector<int64_t> shape = self.shape;
  shape[d] = views::sliceLength(shape[d], start, end, step);
  return scatterView(ctx, "slice", views::ViewArgs{{d, start, step}, false},
                     shape, view);
}

bool traceir::selectScatterView(KernelContext &ctx, Tensor &view) {
  const Tensor &self = ctx.tensor(0);
  int64_t dim, index;
  if (!decodeArgs(ctx, readInt, 2u, "dim", dim, std::optional<int64_t>()) ||
      !decodeArgs(ctx, readInt, 3u, "index", index, std::optional<int64_t>()))
    return false;
  if (self.rank() == 0 || dim < -self.rank() || dim >= self.rank()) {
    ctx.fail("select_scatter(dim=" + strCat(dim) + ") does not apply to self " +
             shapeToString(self.shape));
    return false;
  }
  int64_t d = views::wrapDim(dim, self.rank());
  std::vector<int64_t> shape = self.shape;
  shape.erase(shape.begin() + d);
  return scatterView(ctx, "select", views::ViewArgs{{d, index}, false}, shape,
                     view);
}

bool traceir::maskedScatterCall(KernelContext &ctx, MaskedScatterLaunch &L) {
  const Tensor &self = ctx.tensor(0), &mask = ctx.tensor(1),
               &src = ctx.tensor(2);
  Tensor &out = ctx.result(0);
  if (mask.dtype != DType::Bool) {
    ctx.fail(strCat("mask must be a bool tensor, got ") +
             dtypeName(mask.dtype));
    return false;
  }
  if (src.dtype != self.dtype || out.dtype != self.dtype) {
    ctx.fail(strCat("source and the result must have self's dtype ") +
             dtypeName(self.dtype) + ", got " + dtypeName(src.dtype) + " and " +
             dtypeName(out.dtype));
    return false;
  }
  if (!broadcastsTo(self.shape, out.shape) ||
      !broadcastsTo(mask.shape, out.shape)) {
    ctx.fail("self " + shapeToString(self.shape) + " and mask " +
             shapeToString(mask.shape) + " do not broadcast to the result " +
             shapeToString(out.shape));
    return false;
  }
  if (out.rank() > kMsMaxRank || src.rank() > kMsMaxRank) {
    ctx.fail("supports at most " + strCat(kMsMaxRank) + " dims");
    return false;
  }
  L = MaskedScatterLaunch();
  L.out = out.bytes();
  L.elementSize = static_cast<int32_t>(dtypeSize(out.dtype));
  L.rank = static_cast<int32_t>(out.rank());
  L.numel = out.numel();
  for (int64_t d = 0; d < out.rank(); ++d)
    L.shape[d] = out.shape[d];
  auto broadcast = [&](const Tensor &t, int64_t *strides) {
    int64_t lead = out.rank() - t.rank();
    for (int64_t d = 0; d < out.rank(); ++d) {
      int64_t td = d - lead;
      strides[d] = td < 0 || t.shape[td] == 1 ? 0 : t.strides[td];
    }
  };
  L.self = self.bytes();
  broadcast(self, L.selfStrides);
  L.mask = mask.bytes();
  broadcast(mask, L.maskStrides);
  L.source = src.bytes();
  L.sourceRank = static_cast<int32_t>(src.rank());
  for (int64_t d = 0; d < src.rank(); ++d) {
    L.sourceShape[d] = src.shape[d];
    L.sourceStrides[d] = src.strides[d];
  }
  L.sourceNumel = src.numel();
  return true;
}

void traceir::failMaskedScatterCount(KernelContext &ctx, int64_t trues,
                                     int64_t sourceNumel) {
  ctx.fail("source has " + strCat(sourceNumel) +
           " elements, fewer than the mask's " + strCat(trues) +
           " True positions (PyTorch: Number of elements of source < number "
           "of ones in mask)");
}
