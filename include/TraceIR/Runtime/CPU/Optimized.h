//===- Optimized.h - The CPU's optimized kernel tier ------------*- C++ -*-===//
//
// The optimized CPU kernels (KernelTier.h): each covers some ops, dtypes
// and layouts and returns false for everything else, which the portable
// kernel then runs. They share the portable kernels' argument decoding and
// op semantics (Elementwise.h's ewCompute, instantiated in the dtype's own
// compute type), so the two tiers differ only in loops and precision.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_RUNTIME_CPU_OPTIMIZED_H
#define TRACEIR_RUNTIME_CPU_OPTIMIZED_H

#include "TraceIR/Runtime/Elementwise.h"
#include "TraceIR/Runtime/Tensor.h"

namespace traceir::cpu::optimized {

/// Runs `L` when every tensor operand has the floating result's dtype (f32,
/// f64, f16 or bf16) and the op is one the tier instantiates: typed loops
/// per op and dtype, computing in float for f32, f16 and bf16 (PyTorch's
/// opmath) and double for f64, dims coalesced, the innermost one unit-
/// stride or broadcast where it can be (a loop the compiler vectorizes),
/// threaded by parallelFor. False (nothing written) otherwise.
bool elementwise(const EwLaunch &L);

/// Copies `src` into `dst` (the same dtype and shape, any strides, rank <=
/// kEwMaxRank): the bits, dims coalesced, memcpy where both runs are
/// unit-stride, threaded. False (nothing written) otherwise.
bool copy(const Tensor &src, Tensor &dst);

/// The CPU variant the optimized loops run as: "avx2" (built with AVX2 and
/// FMA, chosen where the CPU has both) or "default" (the target's baseline
/// ISA); TRACEIR_CPU_CAPABILITY=default|avx2 forces one.
const char *capability();

/// The variants, each built from CPU/Optimized/Elementwise.cpp.
namespace base {
bool elementwise(const EwLaunch &L);
bool copy(const Tensor &src, Tensor &dst);
} // namespace base
namespace avx2 { // no copy: the same bits in each variant, base's serves
bool elementwise(const EwLaunch &L);
} // namespace avx2

} // namespace traceir::cpu::optimized

#endif // TRACEIR_RUNTIME_CPU_OPTIMIZED_H
