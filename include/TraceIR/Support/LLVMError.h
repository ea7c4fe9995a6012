//===- LLVMError.h - Between the runtime's errors and LLVM's ----*- C++ -*-===//
//
// The compiler side speaks llvm::Error; the runtime, which builds without
// LLVM, speaks traceir::Error (Support/Error.h). These convert at the
// boundary, keeping the message.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_SUPPORT_LLVMERROR_H
#define TRACEIR_SUPPORT_LLVMERROR_H

#include "TraceIR/Support/Error.h"

#include "llvm/Support/Error.h"

namespace traceir {

inline llvm::Error toLLVM(Error err) {
  if (!err)
    return llvm::Error::success();
  return llvm::createStringError(llvm::inconvertibleErrorCode(), err.message());
}

template <typename T> llvm::Expected<T> toLLVM(Expected<T> value) {
  if (!value)
    return toLLVM(value.takeError());
  return std::move(*value);
}

inline Error fromLLVM(llvm::Error err) {
  if (!err)
    return Error::success();
  return makeError(llvm::toString(std::move(err)));
}

template <typename T> Expected<T> fromLLVM(llvm::Expected<T> value) {
  if (!value)
    return fromLLVM(value.takeError());
  return std::move(*value);
}

} // namespace traceir

#endif // TRACEIR_SUPPORT_LLVMERROR_H
