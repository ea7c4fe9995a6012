//===- Error.h - Errors on the standard library -----------------*- C++ -*-===//
//
// The runtime reports failures as values, as LLVM's Error and Expected do,
// but it must build and run where there is no LLVM (a GPU server with only
// the CUDA toolkit), so it has its own pair on the C++ standard library.
// They keep LLVM's shape (an Error converts to true when it holds a
// failure; an Expected to true when it holds a value) so code reads the
// same on both sides; the compiler side converts at its boundary
// (Support/LLVMError.h). Unlike llvm::Error, an unchecked Error does not
// abort: [[nodiscard]] makes the compiler warn instead.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_SUPPORT_ERROR_H
#define TRACEIR_SUPPORT_ERROR_H

#include <cassert>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>

namespace traceir {

/// A failure with a message, or success.
class [[nodiscard]] Error {
public:
  Error() = default;
  static Error success() { return Error(); }
  /// A failure saying `message` (which must not be empty).
  static Error failure(std::string message) {
    Error e;
    e.msg = std::make_unique<std::string>(std::move(message));
    return e;
  }
  Error(Error &&) noexcept = default;
  Error &operator=(Error &&) noexcept = default;

  /// True when this is a failure.
  explicit operator bool() const { return msg != nullptr; }
  /// The failure's message ("" on success).
  const std::string &message() const {
    static const std::string empty;
    return msg ? *msg : empty;
  }

private:
  std::unique_ptr<std::string> msg;
};

/// A failure saying `message`.
inline Error makeError(std::string message) {
  return Error::failure(std::move(message));
}

/// The message of `err`, consumed ("" on success): for code that reports
/// it (llvm::toString's counterpart).
inline std::string toString(Error err) { return err.message(); }

/// A T, or the Error that kept it from being made.
template <typename T> class [[nodiscard]] Expected {
public:
  Expected(Error err) : err(std::move(err)) {
    assert(this->err && "an Expected built from success holds no value");
  }
  template <typename U,
            typename = std::enable_if_t<std::is_convertible_v<U &&, T>>>
  Expected(U &&v) : value(std::forward<U>(v)) {}
  template <typename U>
  Expected(Expected<U> &&other)
      : value(other ? std::optional<T>(std::move(*other)) : std::nullopt),
        err(other ? Error() : other.takeError()) {}

  /// True when it holds a value.
  explicit operator bool() const { return value.has_value(); }
  T &operator*() { return *value; }
  const T &operator*() const { return *value; }
  T *operator->() { return &*value; }
  const T *operator->() const { return &*value; }
  T &get() { return *value; }
  /// The failure (success when it holds a value), moved out.
  Error takeError() { return std::move(err); }

private:
  template <typename U> friend class Expected;
  std::optional<T> value;
  Error err;
};

/// Concatenates the text forms of `parts` (as an ostream writes them): the
/// runtime's messages are built with it where LLVM code used Twine.
template <typename... Parts> std::string strCat(const Parts &...parts) {
  std::ostringstream os;
  (os << ... << parts);
  return os.str();
}

/// Reports a broken invariant (a bug, never bad input) and aborts:
/// llvm::report_fatal_error's counterpart.
[[noreturn]] inline void fatalError(const std::string &message) {
  std::fprintf(stderr, "TraceIR fatal error: %s\n", message.c_str());
  std::fflush(stderr);
  std::abort();
}

/// printf into a std::string (formatv's counterpart, for tables).
__attribute__((format(printf, 1, 2))) inline std::string
formatString(const char *format, ...) {
  va_list args, copy;
  va_start(args, format);
  va_copy(copy, args);
  int n = std::vsnprintf(nullptr, 0, format, copy);
  va_end(copy);
  std::string s(n > 0 ? n : 0, '\0');
  if (n > 0)
    std::vsnprintf(s.data(), n + 1, format, args);
  va_end(args);
  return s;
}

} // namespace traceir

#endif // TRACEIR_SUPPORT_ERROR_H
