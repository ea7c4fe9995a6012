//===- ExecutableFile.h - Saved executables (.trx) --------------*- C++ -*-===//
//
// Compile here, run anywhere: an Executable built from a trace.graph (on a
// machine with LLVM and MLIR) is saved as one versioned file, and a runtime
// without either loads and runs it. The format (ExecutableFile.fbs, a
// FlatBuffer behind a 16-byte prefix) is documented in
// docs/SavedExecutables.md.
//
// Loading checks what a file can get wrong without the compiler, as the
// safetensors reader does: the magic and version (a newer major version is
// refused with a message), the FlatBuffer's bounds (its Verifier) and the
// alignment of its 8-byte vectors, every slot index, that every slot is
// defined exactly once and before use and freed at most once, every type
// against TraceIR's size limit, that every op has a kernel on the device
// and a result, that each result's fresh flag is what the op does (views
// and in-place ops share their first argument's storage, everything else
// is fresh), and that generated kernels run on a GPU of the chip they were
// compiled for. What needs type inference (MLIR) it cannot check: whether a
// call's result types follow from its operands and scalars. The kernels
// check those they index by before they run (docs/Fuzzing.md).
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_RUNTIME_EXECUTABLEFILE_H
#define TRACEIR_RUNTIME_EXECUTABLEFILE_H

#include "TraceIR/Runtime/Executable.h"

#include <optional>
#include <string>
#include <string_view>

namespace traceir {

/// The format this runtime writes; it reads every minor version of this
/// major one.
inline constexpr uint32_t kExecutableFormatMajor = 1;
inline constexpr uint32_t kExecutableFormatMinor = 1;
/// The prefix of a .trx file: "TRACEIRX", major, minor (little-endian).
inline constexpr size_t kExecutableHeaderBytes = 16;

/// Whether `bytes` starts like a saved executable.
bool looksLikeExecutableFile(std::string_view bytes);

/// `exe` as the bytes of a .trx file; `producer` says what wrote it.
Expected<std::string> serializeExecutable(const Executable &exe,
                                          const std::string &producer);
/// Writes `exe` to `path` through a temporary file renamed into place, so
/// that a failure leaves no partial file.
Error saveExecutable(const Executable &exe, std::string_view path,
                     const std::string &producer);

/// Loads a saved executable from `bytes` (`name` names it in errors). It
/// runs on the device it was built for, or on `device` when given (of the
/// same kind: cuda:1 for a file built for cuda:0).
Expected<std::unique_ptr<Executable>>
loadExecutableBuffer(std::string_view bytes, std::string_view name,
                     std::optional<Device> device = std::nullopt);
Expected<std::unique_ptr<Executable>>
loadExecutable(std::string_view path,
               std::optional<Device> device = std::nullopt);

/// What a saved executable holds, as text (trace-exec --describe): checked
/// as loading checks it, but needing no device.
Expected<std::string> describeExecutable(std::string_view bytes,
                                         std::string_view name);

/// The bytes of the file at `path`, or an error naming it.
Expected<std::string> readFileBytes(std::string_view path);

} // namespace traceir

#endif // TRACEIR_RUNTIME_EXECUTABLEFILE_H
