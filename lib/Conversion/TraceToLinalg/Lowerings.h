//===- Lowerings.h - The lowering families of TraceToLinalg -----*- C++ -*-===//
//
// What the pass's lowering table (TraceToLinalg.cpp) sees: a Call, the
// PyOpLowering interface and one class per op family, which Ops.def's
// LOWERING column names (`LOWERED(Conv)` is ConvLowering). Each family's
// `lower` is defined in the file named above it, with the comment on what
// it lowers and how. Private to lib/Conversion/TraceToLinalg.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_LIB_CONVERSION_TRACETOLINALG_LOWERINGS_H
#define TRACEIR_LIB_CONVERSION_TRACETOLINALG_LOWERINGS_H

#include "TraceIR/Dialect/OpRegistry.h"
#include "TraceIR/Dialect/TraceDialect.h"

#include "mlir/IR/PatternMatch.h"

#include <string>

namespace mlir::trace::trace_to_linalg {

/// One call being lowered: the op, its re-interleaved arguments and its
/// static result types (`resultType` is result 0's, which is all that
/// single-result families need).
struct Call {
  // Op handles are cheap values whose accessors are non-const.
  mutable PyOp op;
  PyArgs args;
  RankedTensorType resultType;
  SmallVector<RankedTensorType> resultTypes;

  Value tensor(unsigned i) const {
    return op.getTensors()[args.operandIndex(i)];
  }
  RankedTensorType tensorType(unsigned i) const {
    return cast<RankedTensorType>(args.type(i));
  }
  Type resultElt() const { return resultType.getElementType(); }
};

/// Lowers the PyOps of one family. `lower` replaces the op and returns
/// success, or returns failure with nothing changed and says why in `why`.
class PyOpLowering {
public:
  virtual ~PyOpLowering() = default;
  /// Whether `lower` replaces every result of an op with several (the
  /// recurrent layers' output and final states); the others replace one.
  virtual bool multipleResults() const { return false; }
  virtual LogicalResult lower(const Call &call, PatternRewriter &rewriter,
                              std::string &why) const = 0;
};

inline LogicalResult fail(std::string &why, const Twine &message) {
  why = message.str();
  return failure();
}

// Elementwise.cpp
class ElementwiseLowering : public PyOpLowering {
public:
  LogicalResult lower(const Call &call, PatternRewriter &rewriter,
                      std::string &why) const override;
};

class ComparisonLowering : public PyOpLowering {
public:
  LogicalResult lower(const Call &call, PatternRewriter &rewriter,
                      std::string &why) const override;
};

// Linear.cpp
class MatmulLowering : public PyOpLowering {
public:
  LogicalResult lower(const Call &call, PatternRewriter &rewriter,
                      std::string &why) const override;
};

// Reduction.cpp
class ReductionLowering : public PyOpLowering {
public:
  /// max.dim and min.dim have two results (values, indices).
  bool multipleResults() const override { return true; }
  LogicalResult lower(const Call &call, PatternRewriter &rewriter,
                      std::string &why) const override;
};

/// cumsum and cumprod along one dim.
class ScanLowering : public PyOpLowering {
public:
  LogicalResult lower(const Call &call, PatternRewriter &rewriter,
                      std::string &why) const override;
};

class SoftmaxLowering : public PyOpLowering {
public:
  LogicalResult lower(const Call &call, PatternRewriter &rewriter,
                      std::string &why) const override;
};

// Normalization.cpp
class LayerNormLowering : public PyOpLowering {
public:
  LogicalResult lower(const Call &call, PatternRewriter &rewriter,
                      std::string &why) const override;
};

class BatchNormLowering : public PyOpLowering {
public:
  LogicalResult lower(const Call &call, PatternRewriter &rewriter,
                      std::string &why) const override;
};

// Convolution.cpp
class ConvLowering : public PyOpLowering {
public:
  LogicalResult lower(const Call &call, PatternRewriter &rewriter,
                      std::string &why) const override;
};

// Pooling.cpp
class PoolLowering : public PyOpLowering {
public:
  LogicalResult lower(const Call &call, PatternRewriter &rewriter,
                      std::string &why) const override;
};

// DataMovement.cpp
class ReshapeLowering : public PyOpLowering {
public:
  LogicalResult lower(const Call &call, PatternRewriter &rewriter,
                      std::string &why) const override;
};

class TransposeLowering : public PyOpLowering {
public:
  LogicalResult lower(const Call &call, PatternRewriter &rewriter,
                      std::string &why) const override;
};

class SliceLowering : public PyOpLowering {
public:
  LogicalResult lower(const Call &call, PatternRewriter &rewriter,
                      std::string &why) const override;
};

class ExpandLowering : public PyOpLowering {
public:
  LogicalResult lower(const Call &call, PatternRewriter &rewriter,
                      std::string &why) const override;
};

class CatLowering : public PyOpLowering {
public:
  LogicalResult lower(const Call &call, PatternRewriter &rewriter,
                      std::string &why) const override;
};

class IdentityLowering : public PyOpLowering {
public:
  LogicalResult lower(const Call &call, PatternRewriter &rewriter,
                      std::string &why) const override;
};

/// full, full_like, scalar_tensor, ones_like: a linalg.fill of the fill
/// value (1 for ones_like).
class FillLowering : public PyOpLowering {
public:
  LogicalResult lower(const Call &call, PatternRewriter &rewriter,
                      std::string &why) const override;
};

/// _to_copy: each element converted to the result's dtype.
class ConvertLowering : public PyOpLowering {
public:
  LogicalResult lower(const Call &call, PatternRewriter &rewriter,
                      std::string &why) const override;
};

class EmbeddingLowering : public PyOpLowering {
public:
  LogicalResult lower(const Call &call, PatternRewriter &rewriter,
                      std::string &why) const override;
};

// Attention.cpp
class AttentionLowering : public PyOpLowering {
public:
  LogicalResult lower(const Call &call, PatternRewriter &rewriter,
                      std::string &why) const override;
};

// RNN.cpp
class RnnLowering : public PyOpLowering {
public:
  bool multipleResults() const override { return true; }
  LogicalResult lower(const Call &call, PatternRewriter &rewriter,
                      std::string &why) const override;
};

} // namespace mlir::trace::trace_to_linalg

#endif // TRACEIR_LIB_CONVERSION_TRACETOLINALG_LOWERINGS_H
