//===- ParseSource.cpp - Parsing TraceIR modules from user input ----------===//

#include "TraceIR/Dialect/ParseSource.h"
#include "TraceIR/Support/NestingDepth.h"

#include "mlir/Bytecode/BytecodeReader.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Support/FileUtilities.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/Twine.h"

using namespace mlir;

/// Whether `list` (from a `[`) is `[` integer (`,` integer)* `]` with every
/// integer in int64_t, as DenseI64ArrayAttr::parse reads it; sets `end`.
static bool isI64List(llvm::StringRef text, size_t pos, size_t &end) {
  auto skipSpace = [&] {
    while (pos < text.size() && llvm::isSpace(text[pos]))
      ++pos;
  };
  skipSpace();
  if (pos >= text.size() || text[pos] != '[')
    return false;
  ++pos;
  skipSpace();
  if (pos < text.size() && text[pos] == ']') {
    end = pos + 1;
    return true;
  }
  while (true) {
    // What MLIR's lexer reads as an integer: decimal digits, or 0x and hex
    // digits (no 0b, 0o or suffixes), after an optional '-'; in int64_t.
    bool negative = pos < text.size() && text[pos] == '-';
    if (negative)
      ++pos;
    unsigned radix = 10;
    if (text.substr(pos).starts_with("0x")) {
      radix = 16;
      pos += 2;
    }
    size_t digits = pos;
    while (pos < text.size() && llvm::isAlnum(text[pos]))
      ++pos;
    llvm::StringRef number = text.slice(digits, pos);
    uint64_t magnitude;
    if (number.empty() ||
        !llvm::all_of(number,
                      [&](char d) {
                        return radix == 16 ? llvm::isHexDigit(d)
                                           : llvm::isDigit(d);
                      }) ||
        number.getAsInteger(radix, magnitude) ||
        magnitude > uint64_t(INT64_MAX) + (negative ? 1 : 0))
      return false;
    skipSpace();
    if (pos >= text.size())
      return false;
    if (text[pos] == ']') {
      end = pos + 1;
      return true;
    }
    if (text[pos] != ',')
      return false;
    ++pos;
    skipSpace();
  }
}

/// The offset of a `dimensions =` or `permutation =` in an op's custom form
/// (not an attribute dictionary's entry, which follows `{` or `,`) that is
/// not followed by a list of i64s. MLIR 22's linalg.reduce, .broadcast and
/// .transpose parsers store DenseI64ArrayAttr::parse's result without
/// checking it, so anything else there (`[1`, `array<i64: 1>`, an integer
/// out of range) dereferences a null attribute (found by
/// trace-parser-fuzzer).
static std::optional<size_t> findMalformedLinalgList(llvm::StringRef text) {
  char prev = 0; // the last non-space character outside strings/comments
  for (size_t i = 0, n = text.size(); i < n; ++i) {
    char c = text[i];
    if (c == '"') {
      for (++i; i < n && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
      prev = '"';
      continue;
    }
    if (c == '/' && i + 1 < n && text[i + 1] == '/') {
      while (i < n && text[i] != '\n')
        ++i;
      continue;
    }
    if (llvm::isSpace(c))
      continue;
    // A word starts after a character that cannot be part of an identifier,
    // whitespace included (prev, the last non-space character, only tells
    // an attribute dictionary's entries apart below).
    char left = i ? text[i - 1] : ' ';
    if (!(llvm::isAlpha(c) || c == '_') || llvm::isAlnum(left) || left == '_' ||
        left == '%' || left == '#' || left == '@' || left == '^' ||
        left == '!' || left == '$' || left == '.') {
      prev = c;
      continue;
    }
    size_t start = i;
    while (i < n && (llvm::isAlnum(text[i]) || text[i] == '_' ||
                     text[i] == '.' || text[i] == '$'))
      ++i;
    llvm::StringRef word = text.slice(start, i);
    char before = prev;
    prev = text[i - 1];
    --i;
    if ((word != "dimensions" && word != "permutation") || before == '{' ||
        before == ',')
      continue;
    size_t eq = i + 1;
    while (eq < n && llvm::isSpace(text[eq]))
      ++eq;
    if (eq >= n || text[eq] != '=')
      continue;
    size_t end;
    if (!isI64List(text, eq + 1, end))
      return start;
  }
  return std::nullopt;
}

std::optional<std::pair<llvm::SMLoc, std::string>>
trace::findUnsafeInput(const llvm::MemoryBuffer &buffer) {
  llvm::StringRef text = buffer.getBuffer();
  if (isBytecode(buffer.getMemBufferRef()))
    return std::make_pair(llvm::SMLoc::getFromPointer(text.data()),
                          std::string("MLIR bytecode is not accepted: TraceIR "
                                      "reads MLIR text only"));
  std::optional<size_t> at =
      traceir::findTooDeepNesting(std::string_view(text.data(), text.size()));
  if (!at) {
    if (std::optional<size_t> list = findMalformedLinalgList(text))
      return std::make_pair(
          llvm::SMLoc::getFromPointer(text.data() + *list),
          std::string("expected a list of 64-bit integers such as [0, 1] "
                      "after '=' (MLIR's linalg parser would crash on "
                      "anything else)"));
    return std::nullopt;
  }
  return std::make_pair(llvm::SMLoc::getFromPointer(text.data() + *at),
                        ("nesting deeper than " +
                         llvm::Twine(traceir::kMaxNestingDepth) +
                         " levels of brackets (TraceIR's limit for any input)")
                            .str());
}

LogicalResult trace::checkInputLimits(const llvm::SourceMgr &sourceMgr,
                                      unsigned bufferId, MLIRContext *context) {
  const llvm::MemoryBuffer *buffer = sourceMgr.getMemoryBuffer(bufferId);
  auto error = findUnsafeInput(*buffer);
  if (!error)
    return success();
  auto [line, col] = sourceMgr.getLineAndColumn(error->first, bufferId);
  return emitError(FileLineColLoc::get(context, buffer->getBufferIdentifier(),
                                       line, col))
         << error->second;
}

OwningOpRef<ModuleOp> trace::parseTraceSource(llvm::SourceMgr &sourceMgr,
                                              const ParserConfig &config) {
  if (failed(checkInputLimits(sourceMgr, sourceMgr.getMainFileID(),
                              config.getContext())))
    return nullptr;
  return parseSourceFile<ModuleOp>(sourceMgr, config);
}

OwningOpRef<ModuleOp> trace::parseTraceSourceFile(llvm::StringRef filename,
                                                  llvm::SourceMgr &sourceMgr,
                                                  const ParserConfig &config) {
  std::string message;
  std::unique_ptr<llvm::MemoryBuffer> file = openInputFile(filename, &message);
  if (!file) {
    emitError(UnknownLoc::get(config.getContext()))
        << "could not open input file " << filename << ": " << message;
    return nullptr;
  }
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  return parseTraceSource(sourceMgr, config);
}

void trace::registerFromMLIRTranslation(
    llvm::StringRef name, llvm::StringRef description,
    const TranslateFromMLIRFunction &function,
    const std::function<void(DialectRegistry &)> &dialectRegistration) {
  TranslateRegistration(
      name, description,
      [function, dialectRegistration](
          const std::shared_ptr<llvm::SourceMgr> &sourceMgr,
          llvm::raw_ostream &output, MLIRContext *context) -> LogicalResult {
        DialectRegistry registry;
        dialectRegistration(registry);
        context->appendDialectRegistry(registry);
        OwningOpRef<ModuleOp> module =
            parseTraceSource(*sourceMgr, ParserConfig(context));
        if (!module || failed(verify(*module)))
          return failure();
        return function(*module, output);
      });
}
