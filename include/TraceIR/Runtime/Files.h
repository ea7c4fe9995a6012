//===- Files.h - Writing the runtime's files safely -------------*- C++ -*-===//

#ifndef TRACEIR_RUNTIME_FILES_H
#define TRACEIR_RUNTIME_FILES_H

#include "TraceIR/Support/Error.h"

#include <span>
#include <string_view>

namespace traceir {

/// Writes `chunks`, one after the other, to `path` through a fresh
/// temporary file beside it ("x": never shared by two writers), renamed
/// into place once complete: a failure never leaves a partial file under
/// `path`. Errors start with the path. Safetensors and saved executables
/// are written with it.
Error writeFileAtomically(std::string_view path,
                          std::span<const std::string_view> chunks);

} // namespace traceir

#endif // TRACEIR_RUNTIME_FILES_H
