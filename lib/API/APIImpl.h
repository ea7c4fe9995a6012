//===- APIImpl.h - What the bindings' handles hold --------------*- C++ -*-===//
//
// Private to lib/API: the compiler half (API.cpp) builds an Executable that
// the runtime half (RuntimeAPI.cpp) runs, so both see its Impl.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_LIB_API_APIIMPL_H
#define TRACEIR_LIB_API_APIIMPL_H

#include "TraceIR/API/API.h"
#include "TraceIR/Runtime/Executable.h"
#include "TraceIR/Runtime/Profiler.h"

namespace traceir::api {

struct Executable::Impl {
  std::unique_ptr<traceir::Executable> exe;
};

struct Profiler::Impl {
  std::unique_ptr<traceir::Profiler> profiler =
      std::make_unique<traceir::Profiler>();
  std::string json; ///< the last profile, when kept in memory
};

/// The device named `name`, or an error saying what is expected.
Expected<Device> parseDevice(const std::string &name);

} // namespace traceir::api

#endif // TRACEIR_LIB_API_APIIMPL_H
