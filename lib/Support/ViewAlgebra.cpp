//===- ViewAlgebra.cpp - Shapes and strides of views ----------------------===//

#include "TraceIR/Support/ViewAlgebra.h"
#include "TraceIR/Support/CheckedMath.h"

#include "TraceIR/Support/Error.h"

#include <algorithm>
#include <utility>

using namespace traceir::views;

/// Shapes here are of verified types (the verifier bounds tensor sizes, see
/// CheckedMath.h), so their element counts fit; a broken invariant stops
/// here rather than wrapping.
static void overflowed(std::span<const int64_t> shape) {
  std::string s;
  for (int64_t d : shape)
    s += (s.empty() ? "" : "x") + std::to_string(d);
  traceir::fatalError("view algebra: shape " + s +
                      " overflows int64; it should not have verified");
}

Dims traceir::views::contiguousStrides(std::span<const int64_t> shape) {
  Dims strides;
  if (!checkedContiguousStrides(shape, strides))
    overflowed(shape);
  return strides;
}

Layout Layout::contiguous(std::span<const int64_t> shape) {
  return Layout{Dims(shape.begin(), shape.end()), contiguousStrides(shape), 0};
}

int64_t Layout::numel() const {
  std::optional<int64_t> n = checkedNumel(shape);
  if (!n)
    overflowed(shape);
  return *n;
}

bool Layout::isContiguous() const {
  Dims expected;
  if (!checkedContiguousStrides(shape, expected))
    return false;
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] != 1 && strides[i] != expected[i])
      return false;
  return true;
}

int64_t traceir::views::sliceLength(int64_t n, int64_t start, int64_t end,
                                    int64_t step) {
  auto clamp = [&](int64_t v) {
    if (v < 0)
      v += n;
    return std::min(std::max<int64_t>(v, 0), n);
  };
  start = clamp(start);
  end = clamp(end);
  // (end - start + step - 1) / step without overflowing for a huge step.
  return end > start ? 1 + (end - start - 1) / step : 0;
}

int64_t traceir::views::wrapDim(int64_t dim, int64_t rank) {
  int64_t r = std::max<int64_t>(rank, 1);
  return dim < 0 ? dim + r : dim;
}

std::optional<Dims>
traceir::views::viewStrides(const Layout &t, std::span<const int64_t> shape) {
  // PyTorch's at::detail::computeStride: walk the old dims in chunks that
  // are contiguous among themselves and match them to new dims.
  int64_t rank = t.shape.size();
  if (t.numel() == 0 || rank == 0)
    return contiguousStrides(shape);
  Dims newStrides(shape.size(), 0);
  int64_t viewD = static_cast<int64_t>(shape.size()) - 1;
  int64_t chunkBaseStride = t.strides.back();
  // Every product is checked; one that overflows cannot be a stride of
  // the input's storage, so there is no view (the op copies, or fails).
  int64_t tensorNumel = 1, viewNumel = 1;
  for (int64_t d = rank - 1; d >= 0; --d) {
    std::optional<int64_t> tn = checkedMul(tensorNumel, t.shape[d]);
    if (!tn)
      return std::nullopt;
    tensorNumel = *tn;
    if (d == 0 ||
        (t.shape[d - 1] != 1 &&
         t.strides[d - 1] != checkedMul(tensorNumel, chunkBaseStride))) {
      while (viewD >= 0 && (viewNumel < tensorNumel || shape[viewD] == 1)) {
        std::optional<int64_t> stride = checkedMul(viewNumel, chunkBaseStride);
        std::optional<int64_t> vn = checkedMul(viewNumel, shape[viewD]);
        if (!stride || !vn)
          return std::nullopt;
        newStrides[viewD] = *stride;
        viewNumel = *vn;
        --viewD;
      }
      if (viewNumel != tensorNumel)
        return std::nullopt;
      if (d > 0) {
        chunkBaseStride = t.strides[d - 1];
        tensorNumel = 1;
        viewNumel = 1;
      }
    }
  }
  if (viewD != -1)
    return std::nullopt;
  return newStrides;
}

namespace {
enum class ViewKind {
  None,
  View,       // view, reshape, flatten, unflatten: restride to the result
              // shape (unflatten splits one dim, so it always views)
  Contiguous, // the input itself when contiguous
  Identity,   // in-place ops and eval dropout: the input itself
  Transpose,
  T,
  Permute,
  Unsqueeze,
  Squeeze,
  Expand,
  Select,
  Slice,
  Narrow,
  Diagonal,  // diagonal(self, offset, dim1, dim2): the two dims become one
             // of stride stride1 + stride2, appended last
  AsStrided, // as_strided(self, size, stride, storage_offset): the given
             // layout over the input's storage (strides are the storage's,
             // not relative to the input's)
};

// Ops.def's EFFECTS: a view's kind; whether the op is a view that may copy,
// writes its first operand, or (training batch norm) may write its running
// statistics, operands 3 and 4.
#define TRACEIR_VIEW_KIND(EFFECTS) TRACEIR_VIEW_KIND_##EFFECTS
#define TRACEIR_VIEW_KIND_VIEW(KIND) ViewKind::KIND, false, false, false
#define TRACEIR_VIEW_KIND_VIEW_OR_COPY(KIND) ViewKind::KIND, true, false, false
#define TRACEIR_VIEW_KIND_INPLACE ViewKind::None, false, true, false
#define TRACEIR_VIEW_KIND_DROPOUT_INPLACE ViewKind::None, false, true, false
#define TRACEIR_VIEW_KIND_PURE ViewKind::None, false, false, false
#define TRACEIR_VIEW_KIND_BATCH_NORM ViewKind::None, false, false, true
#define TRACEIR_VIEW_KIND_NATIVE_BATCH_NORM ViewKind::None, false, false, true
#define TRACEIR_VIEW_KIND_DROPOUT ViewKind::None, false, false, false
#define TRACEIR_VIEW_KIND_NATIVE_DROPOUT ViewKind::None, false, false, false
#define TRACEIR_VIEW_KIND_RNN ViewKind::None, false, false, false
#define TRACEIR_VIEW_KIND_ATTENTION ViewKind::None, false, false, false
#define TRACEIR_VIEW_KIND_RANDOM ViewKind::None, false, false, false
#define TRACEIR_VIEW_KIND_UNINITIALIZED ViewKind::None, false, false, false

struct OpViewInfo {
  std::string_view name;
  ViewKind kind;
  bool mayCopy, inPlace, writesRunningStats;
};

constexpr OpViewInfo kOpViews[] = {
#define TRACEIR_OP(NAME, EFFECTS, SIGNATURE, INFER, CPU, CUDA, FAST, LOWERING) \
  {#NAME, TRACEIR_VIEW_KIND(EFFECTS)},
#include "TraceIR/Ops.def"
};

/// The row of `op` (Ops.def is sorted by name), or null.
const OpViewInfo *viewInfoOf(std::string_view op) {
  auto it = std::lower_bound(
      std::begin(kOpViews), std::end(kOpViews), op,
      [](const OpViewInfo &v, std::string_view n) { return v.name < n; });
  return it != std::end(kOpViews) && it->name == op ? it : nullptr;
}

ViewKind kindOf(std::string_view op) {
  const OpViewInfo *v = viewInfoOf(op);
  return v ? v->kind : ViewKind::None;
}
} // namespace

bool traceir::views::isViewOp(std::string_view op) {
  return kindOf(op) != ViewKind::None;
}

bool traceir::views::isViewOrCopyOp(std::string_view op) {
  const OpViewInfo *v = viewInfoOf(op);
  return v && v->mayCopy;
}

bool traceir::views::isInPlaceOp(std::string_view op) {
  const OpViewInfo *v = viewInfoOf(op);
  return v && v->inPlace;
}

bool traceir::views::mayWriteOperand(std::string_view op, unsigned arg) {
  const OpViewInfo *v = viewInfoOf(op);
  return v && ((v->inPlace && arg == 0) ||
               (v->writesRunningStats && (arg == 3 || arg == 4)));
}

std::optional<std::string>
traceir::views::checkViewArgs(std::string_view op, const Layout &in,
                              const ViewArgs &args,
                              std::span<const int64_t> resultShape) {
  int64_t rank = in.shape.size();
  auto arg = [&](size_t i, int64_t dflt) {
    return i < args.ints.size() ? args.ints[i] : dflt;
  };
  auto shapeText = [](std::span<const int64_t> shape) {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i)
      s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
  };
  // A dim of a tensor of rank `r` (PyTorch's maybe_wrap_dim: a 0-d tensor
  // takes -1 and 0 where `scalarOk`), wrapped into `d`.
  auto badDim = [&](int64_t dim, int64_t r, bool scalarOk,
                    int64_t &d) -> std::optional<std::string> {
    int64_t lo = -std::max<int64_t>(r, scalarOk ? 1 : 0);
    int64_t hi = std::max<int64_t>(r, scalarOk ? 1 : 0) - 1;
    if (dim < lo || dim > hi)
      return "dim " + std::to_string(dim) + " is out of range for rank " +
             std::to_string(r);
    d = dim < 0 ? dim + std::max<int64_t>(r, 1) : dim;
    return std::nullopt;
  };
  std::optional<int64_t> inNumel = checkedNumel(in.shape);
  if (!inNumel || in.strides.size() != in.shape.size())
    return "the input's layout is invalid";
  int64_t d = 0;
  switch (kindOf(op)) {
  case ViewKind::None:
  case ViewKind::Identity:
  case ViewKind::T:
    return std::nullopt;
  case ViewKind::Contiguous: // a copy, when it copies, has the result's shape
    if (!std::equal(in.shape.begin(), in.shape.end(), resultShape.begin(),
                    resultShape.end()))
      return "result " + shapeText(resultShape) + " is not the input's " +
             shapeText(in.shape);
    return std::nullopt;
  case ViewKind::View: {
    std::optional<int64_t> n = checkedNumel(resultShape);
    if (!n || *n != *inNumel)
      return "shape " + shapeText(resultShape) +
             " is invalid for an input of " + std::to_string(*inNumel) +
             " elements";
    return std::nullopt;
  }
  case ViewKind::Transpose:
    for (size_t i = 0; i < 2; ++i)
      if (auto err = badDim(arg(i, int64_t(i)), rank, true, d))
        return err;
    return std::nullopt;
  case ViewKind::Permute: {
    if (int64_t(args.ints.size()) != rank)
      return "permute takes " + std::to_string(rank) + " dims, got " +
             std::to_string(args.ints.size());
    std::vector<bool> seen(rank, false);
    for (int64_t dim : args.ints) {
      if (auto err = badDim(dim, rank, false, d))
        return err;
      if (seen[d])
        return "permute repeats dim " + std::to_string(dim);
      seen[d] = true;
    }
    return std::nullopt;
  }
  case ViewKind::Unsqueeze:
    return badDim(arg(0, 0), rank + 1, false, d);
  case ViewKind::Squeeze:
    if (!args.none && rank > 0)
      for (int64_t dim : args.ints)
        if (auto err = badDim(dim, rank, true, d))
          return err;
    return std::nullopt;
  case ViewKind::Expand: {
    int64_t off = int64_t(resultShape.size()) - rank;
    if (off < 0)
      return "expand to " + shapeText(resultShape) + " has fewer dims than " +
             "the input's " + shapeText(in.shape);
    for (int64_t k = 0; k < rank; ++k)
      if (in.shape[k] != 1 && in.shape[k] != resultShape[off + k])
        return "the input's " + shapeText(in.shape) + " does not expand to " +
               shapeText(resultShape);
    return std::nullopt;
  }
  case ViewKind::Select: {
    if (rank == 0)
      return std::string("select of a 0-d tensor");
    if (auto err = badDim(arg(0, 0), rank, false, d))
      return err;
    int64_t index = arg(1, 0), n = in.shape[d];
    if (index < -n || index >= n)
      return "index " + std::to_string(index) + " is out of range for dim " +
             std::to_string(d) + " of size " + std::to_string(n);
    return std::nullopt;
  }
  case ViewKind::Slice: {
    if (rank == 0)
      return std::string("slice of a 0-d tensor");
    if (auto err = badDim(arg(0, 0), rank, false, d))
      return err;
    if (arg(2, 1) <= 0)
      return "slice step " + std::to_string(arg(2, 1)) + " is not positive";
    // The result's size along `d` comes from its type: it must fit the
    // elements from `start` on, `step` apart.
    if (int64_t(resultShape.size()) != rank)
      return "slice result " + shapeText(resultShape) + " is not of rank " +
             std::to_string(rank);
    int64_t n = in.shape[d], start = arg(1, 0);
    if (start < 0)
      start += n;
    start = std::min(std::max<int64_t>(start, 0), n);
    int64_t step = arg(2, 1), count = resultShape[d];
    int64_t fits = n == start ? 0 : 1 + (n - start - 1) / step; // no overflow
    for (int64_t k = 0; k < rank; ++k)
      if (k == d ? count < 0 || count > fits : resultShape[k] != in.shape[k])
        return "slice result " + shapeText(resultShape) + " does not fit " +
               "the input's " + shapeText(in.shape);
    return std::nullopt;
  }
  case ViewKind::Narrow: {
    if (rank == 0)
      return std::string("narrow of a 0-d tensor");
    if (auto err = badDim(arg(0, 0), rank, false, d))
      return err;
    int64_t n = in.shape[d], start = arg(1, 0), length = arg(2, 0);
    if (start < -n || start > n)
      return "narrow start " + std::to_string(start) + " is out of range " +
             "for dim " + std::to_string(d) + " of size " + std::to_string(n);
    if (start < 0)
      start += n;
    if (length < 0 || length > n - start)
      return "narrow length " + std::to_string(length) + " from " +
             std::to_string(start) + " passes the end of dim " +
             std::to_string(d) + " of size " + std::to_string(n);
    return std::nullopt;
  }
  case ViewKind::Diagonal: {
    if (rank < 2)
      return "diagonal needs at least 2 dims, got a tensor of rank " +
             std::to_string(rank);
    int64_t d1 = 0, d2 = 0;
    if (auto err = badDim(arg(1, 0), rank, false, d1))
      return err;
    if (auto err = badDim(arg(2, 1), rank, false, d2))
      return err;
    if (d1 == d2)
      return "diagonal dimensions cannot be identical " +
             std::to_string(arg(1, 0)) + ", " + std::to_string(arg(2, 1));
    Dims want;
    for (int64_t k = 0; k < rank; ++k)
      if (k != d1 && k != d2)
        want.push_back(in.shape[k]);
    want.push_back(diagonalLength(in.shape[d1], in.shape[d2], arg(0, 0)));
    if (!std::equal(want.begin(), want.end(), resultShape.begin(),
                    resultShape.end()))
      return "diagonal result " + shapeText(resultShape) + " is not " +
             shapeText(want);
    return std::nullopt;
  }
  case ViewKind::AsStrided: {
    // ints: size, stride, then storage_offset unless `none`.
    size_t n = resultShape.size();
    if (args.ints.size() != 2 * n + (args.none ? 0 : 1))
      return "as_strided takes as many strides as sizes, and the result " +
             shapeText(resultShape) + " has " + std::to_string(n) + " dims";
    std::span<const int64_t> size(args.ints.data(), n),
        stride(args.ints.data() + n, n);
    if (!std::equal(size.begin(), size.end(), resultShape.begin()))
      return "size " + shapeText(size) + " is not the result's " +
             shapeText(resultShape);
    for (size_t k = 0; k < n; ++k) {
      if (size[k] < 0)
        return "size " + shapeText(size) + " has a negative dim";
      // PyTorch refuses them too (as_strided's "Negative strides are not
      // supported"): with them a view could reach below its offset.
      if (stride[k] < 0)
        return "negative strides are not supported, got stride " +
               shapeText(stride);
    }
    if (!args.none && args.ints.back() < 0)
      return "invalid storage offset " + std::to_string(args.ints.back());
    return std::nullopt;
  }
  }
  return std::nullopt;
}

int64_t traceir::views::diagonalLength(int64_t n1, int64_t n2, int64_t offset) {
  // PyTorch's diagonal: min(n1, n2 - offset) for offset >= 0, min(n1 +
  // offset, n2) below, never negative. Either bound past the other size
  // ends the diagonal, which keeps huge offsets from overflowing.
  int64_t len = offset >= 0 ? (offset >= n2 ? 0 : std::min(n1, n2 - offset))
                            : (-offset >= n1 ? 0 : std::min(n1 + offset, n2));
  return std::max<int64_t>(len, 0);
}

std::optional<Layout>
traceir::views::applyView(std::string_view op, const Layout &in,
                          const ViewArgs &args,
                          std::span<const int64_t> resultShape) {
  // Arguments inference would reject index past the layout below (the
  // analysis may see an unverified graph): no view.
  if (checkViewArgs(op, in, args, resultShape))
    return std::nullopt;
  int64_t rank = in.shape.size();
  Layout out = in;
  auto arg = [&](size_t i, int64_t dflt) {
    return i < args.ints.size() ? args.ints[i] : dflt;
  };
  // offset + index * stride: a view past int64 is past every storage, so
  // it gets an offset no storage has (see Layout::kOutOfRange).
  auto advance = [&](int64_t index, int64_t stride) {
    if (out.offset == Layout::kOutOfRange)
      return; // stays out of range: a later step must not bring it back
    std::optional<int64_t> step = checkedMul(index, stride);
    std::optional<int64_t> offset =
        step ? checkedAdd(out.offset, *step) : std::nullopt;
    out.offset = offset ? *offset : Layout::kOutOfRange;
  };
  switch (kindOf(op)) {
  case ViewKind::None:
    return std::nullopt;
  case ViewKind::View: {
    std::optional<Dims> strides = viewStrides(in, resultShape);
    if (!strides)
      return std::nullopt; // reshape/flatten copy; view is an error
    out.shape.assign(resultShape.begin(), resultShape.end());
    out.strides = *strides;
    return out;
  }
  case ViewKind::Contiguous:
    if (!in.isContiguous())
      return std::nullopt;
    return out;
  case ViewKind::Identity:
    return out;
  case ViewKind::Transpose:
    if (rank > 0) {
      int64_t d0 = wrapDim(arg(0, 0), rank), d1 = wrapDim(arg(1, 1), rank);
      std::swap(out.shape[d0], out.shape[d1]);
      std::swap(out.strides[d0], out.strides[d1]);
    }
    return out;
  case ViewKind::T:
    std::reverse(out.shape.begin(), out.shape.end());
    std::reverse(out.strides.begin(), out.strides.end());
    return out;
  case ViewKind::Permute:
    out.shape.clear();
    out.strides.clear();
    for (int64_t d : args.ints) {
      d = wrapDim(d, rank);
      out.shape.push_back(in.shape[d]);
      out.strides.push_back(in.strides[d]);
    }
    return out;
  case ViewKind::Unsqueeze: {
    int64_t d = wrapDim(arg(0, 0), rank + 1);
    // The new dim has size 1, so its stride never moves: any value is
    // right, and PyTorch's shape * stride is taken when it fits.
    int64_t stride =
        d < rank ? checkedMul(in.shape[d], in.strides[d]).value_or(1) : 1;
    out.shape.insert(out.shape.begin() + d, 1);
    out.strides.insert(out.strides.begin() + d, stride);
    return out;
  }
  case ViewKind::Squeeze: {
    std::vector<bool> drop(rank, false);
    if (args.none) {
      for (int64_t d = 0; d < rank; ++d)
        drop[d] = in.shape[d] == 1;
    } else {
      for (int64_t d : args.ints)
        if (rank > 0) {
          d = wrapDim(d, rank);
          drop[d] = in.shape[d] == 1;
        }
    }
    out.shape.clear();
    out.strides.clear();
    for (int64_t d = 0; d < rank; ++d)
      if (!drop[d]) {
        out.shape.push_back(in.shape[d]);
        out.strides.push_back(in.strides[d]);
      }
    return out;
  }
  case ViewKind::Expand: {
    out.shape.assign(resultShape.begin(), resultShape.end());
    out.strides.assign(resultShape.size(), 0);
    int64_t off = resultShape.size() - rank;
    for (int64_t d = 0; d < rank; ++d)
      out.strides[off + d] =
          in.shape[d] == resultShape[off + d] ? in.strides[d] : 0;
    return out;
  }
  case ViewKind::Select: {
    int64_t d = wrapDim(arg(0, 0), rank);
    int64_t index = arg(1, 0);
    if (index < 0)
      index += in.shape[d];
    advance(index, in.strides[d]);
    out.shape.erase(out.shape.begin() + d);
    out.strides.erase(out.strides.begin() + d);
    return out;
  }
  case ViewKind::Slice: {
    // slice(self, dim=0, start=None, end=None, step=1): ints holds dim,
    // start, step (None start as 0).
    int64_t d = wrapDim(arg(0, 0), rank);
    int64_t n = in.shape[d];
    int64_t start = arg(1, 0), step = arg(2, 1);
    if (start < 0)
      start += n;
    start = std::min(std::max<int64_t>(start, 0), n);
    advance(start, in.strides[d]);
    out.shape[d] = resultShape[d];
    // A step past the dim's end leaves one element, whose stride never
    // moves; keep it rather than overflow it.
    if (out.shape[d] > 1) {
      std::optional<int64_t> stride = checkedMul(in.strides[d], step);
      if (!stride)
        out.offset = Layout::kOutOfRange;
      else
        out.strides[d] = *stride;
    }
    return out;
  }
  case ViewKind::Narrow: {
    int64_t d = wrapDim(arg(0, 0), rank);
    int64_t start = arg(1, 0);
    if (start < 0)
      start += in.shape[d];
    advance(start, in.strides[d]);
    out.shape[d] = arg(2, 0);
    return out;
  }
  case ViewKind::Diagonal: {
    int64_t offset = arg(0, 0);
    int64_t d1 = wrapDim(arg(1, 0), rank), d2 = wrapDim(arg(2, 1), rank);
    int64_t len = diagonalLength(in.shape[d1], in.shape[d2], offset);
    // As PyTorch: an empty diagonal keeps the input's offset (its first
    // element may not exist), else it starts at (0, offset) or (-offset, 0).
    if (len > 0 && offset >= 0)
      advance(offset, in.strides[d2]);
    else if (len > 0)
      advance(-offset, in.strides[d1]);
    std::optional<int64_t> stride = checkedAdd(in.strides[d1], in.strides[d2]);
    if (!stride)
      out.offset = Layout::kOutOfRange;
    out.shape.clear();
    out.strides.clear();
    for (int64_t k = 0; k < rank; ++k)
      if (k != d1 && k != d2) {
        out.shape.push_back(in.shape[k]);
        out.strides.push_back(in.strides[k]);
      }
    out.shape.push_back(len);
    out.strides.push_back(stride.value_or(0));
    return out;
  }
  case ViewKind::AsStrided: {
    size_t n = resultShape.size();
    out.shape.assign(args.ints.begin(), args.ints.begin() + n);
    out.strides.assign(args.ints.begin() + n, args.ints.begin() + 2 * n);
    // storage_offset=None keeps the input's (PyTorch's default).
    if (!args.none)
      out.offset = args.ints.back();
    return out;
  }
  }
  return std::nullopt;
}

ViewArgs traceir::views::decodeViewArgs(
    std::string_view op,
    std::function<std::optional<std::vector<int64_t>>(unsigned)> intsAt) {
  ViewArgs args;
  auto append = [&](unsigned i, int64_t dflt) {
    if (auto v = intsAt(i); v && !v->empty())
      args.ints.insert(args.ints.end(), v->begin(), v->end());
    else
      args.ints.push_back(dflt);
  };
  switch (kindOf(op)) {
  case ViewKind::Transpose: // transpose(self, dim0, dim1)
    append(1, 0);
    append(2, 1);
    break;
  case ViewKind::Permute: // permute(self, dims)
    if (auto v = intsAt(1))
      args.ints = *v;
    break;
  case ViewKind::Unsqueeze: // unsqueeze(self, dim)
    append(1, 0);
    break;
  case ViewKind::Squeeze: // squeeze(self, dim=None)
    if (auto v = intsAt(1))
      args.ints = *v;
    else
      args.none = true;
    break;
  case ViewKind::Select: // select(self, dim, index)
    append(1, 0);
    append(2, 0);
    break;
  case ViewKind::Slice: // slice(self, dim=0, start=None, end=None, step=1)
    append(1, 0);
    append(2, 0);
    append(4, 1);
    break;
  case ViewKind::Narrow: // narrow(self, dim, start, length)
    append(1, 0);
    append(2, 0);
    append(3, 0);
    break;
  case ViewKind::Diagonal: // diagonal(self, offset=0, dim1=0, dim2=1)
    append(1, 0);
    append(2, 0);
    append(3, 1);
    break;
  case ViewKind::AsStrided: // as_strided(self, size, stride, offset=None)
    for (unsigned i = 1; i < 3; ++i)
      if (auto v = intsAt(i))
        args.ints.insert(args.ints.end(), v->begin(), v->end());
    if (auto v = intsAt(3); v && v->size() == 1)
      args.ints.push_back(v->front());
    else
      args.none = true;
    break;
  default: // the rest read only the result shape
    break;
  }
  return args;
}
