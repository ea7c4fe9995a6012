//===- TraceIRModule.cpp - The full build's _traceir extension ------------===//

#include "Bindings.h"

NB_MODULE(_traceir, m) {
  traceir::bindings::bindRuntime(m);
  traceir::bindings::bindCompiler(m);
  traceir::bindings::bindHandles(m);
  m.attr("HAS_COMPILER") = true;
}
