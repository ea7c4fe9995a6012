//===- NestingDepth.h - A bound on nesting in parsed input ------*- C++ -*-===//
//
// Every parser TraceIR runs on user input recurses once per nesting level:
// its own (2017 trace literals, scalars, `#trace.list`) and MLIR's (nested
// attributes, types and regions). Input nested thousands deep would overflow
// the stack (8 MiB by default, less on some Python threads), so every entry
// point refuses input nested deeper than kMaxNestingDepth first, with an
// error at the bracket that goes too deep. Real traces and lowered modules
// nest a few dozen levels at most.
//
// Standard library only: the runtime side shares it.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_SUPPORT_NESTINGDEPTH_H
#define TRACEIR_SUPPORT_NESTINGDEPTH_H

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace traceir {

/// The deepest nesting of brackets TraceIR accepts in any MLIR text.
inline constexpr int kMaxNestingDepth = 256;

/// The deepest nesting of a Python scalar (tuples and lists in a 2017 trace
/// or a pyop's scalars). Well below kMaxNestingDepth, so a module holding
/// such a scalar (inside a graph, an op and its attribute dictionary) still
/// prints as text that parses again.
inline constexpr int kMaxScalarDepth = 64;

/// The offset of the first bracket in MLIR text (`(`, `[`, `{`, `<`) that
/// opens level limit + 1, or nullopt. String literals and `//` comments are
/// skipped; `->`, `>=` and `<=` are no brackets. A closing bracket ends a
/// level only when it matches the one that opened it, so no stray `>` or
/// `)` can lower the count while MLIR's parser is still nested: this is an
/// upper bound on what MLIR's parser recurses on, as every nested attribute,
/// type and region opens one of these brackets. Unbalanced brackets are the
/// parser's to report.
inline std::optional<size_t> findTooDeepNesting(std::string_view text,
                                                int limit = kMaxNestingDepth) {
  std::string open; // the opening bracket of each level
  size_t n = text.size();
  for (size_t i = 0; i < n; ++i) {
    char c = text[i];
    char next = i + 1 < n ? text[i + 1] : 0;
    switch (c) {
    case '"':
      // A string literal: skip to its unescaped closing quote.
      for (++i; i < n && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
      break;
    case '/':
      if (next == '/')
        while (i < n && text[i] != '\n')
          ++i;
      break;
    case '-':
    case '>':
    case '<':
      if (next == '>' && c == '-')
        ++i;
      else if (next == '=' && c != '-')
        ++i;
      else if (c == '<') {
        open.push_back(c);
        if (static_cast<int>(open.size()) > limit)
          return i;
      } else if (c == '>' && !open.empty() && open.back() == '<')
        open.pop_back();
      break;
    case '(':
    case '[':
    case '{':
      open.push_back(c);
      if (static_cast<int>(open.size()) > limit)
        return i;
      break;
    case ')':
    case ']':
    case '}': {
      char opener = c == ')' ? '(' : c == ']' ? '[' : '{';
      if (!open.empty() && open.back() == opener)
        open.pop_back();
      break;
    }
    default:
      break;
    }
  }
  return std::nullopt;
}

/// Counts one level of a recursive parser for as long as it lives; the
/// parser checks tooDeep() on entry (against kMaxScalarDepth). The counter
/// belongs to the parse: a member of a parser object, or a thread_local where
/// the parser is a set of free functions, so parses on other threads do not
/// interfere.
class NestingGuard {
public:
  explicit NestingGuard(int &depth) : depth(depth) { ++depth; }
  ~NestingGuard() { --depth; }
  NestingGuard(const NestingGuard &) = delete;
  NestingGuard &operator=(const NestingGuard &) = delete;
  bool tooDeep() const { return depth > kMaxScalarDepth; }

private:
  int &depth;
};

} // namespace traceir

#endif // TRACEIR_SUPPORT_NESTINGDEPTH_H
