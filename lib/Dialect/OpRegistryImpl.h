//===- OpRegistryImpl.h - What the registry's rows name ---------*- C++ -*-===//
//
// The functions the rows of the op registry's table (OpRegistry.cpp) name:
// Ops.def's EFFECTS column, defined in OpAliasing.cpp. Private to lib/Dialect;
// the interface is TraceIR/Dialect/OpRegistry.h. Each function's comment is at
// its definition.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_LIB_DIALECT_OPREGISTRYIMPL_H
#define TRACEIR_LIB_DIALECT_OPREGISTRYIMPL_H

#include "TraceIR/Dialect/OpRegistry.h"

#include <type_traits>

namespace mlir::trace::registry {

/// The types of the functions an AliasFn and FlagFn point to.
using AliasSig = std::remove_pointer_t<AliasFn>;
using FlagSig = std::remove_pointer_t<FlagFn>;

//===----------------------------------------------------------------------===//
// Aliasing and effect rules (OpAliasing.cpp)
//===----------------------------------------------------------------------===//

AliasSig aliasNone, aliasFirst, aliasDropout;
FlagSig never, always, attentionRandom, dropoutRandom, batchNormMutates,
    rnnRandom;

} // namespace mlir::trace::registry

#endif // TRACEIR_LIB_DIALECT_OPREGISTRYIMPL_H
