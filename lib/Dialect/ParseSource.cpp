//===- ParseSource.cpp - Parsing TraceIR modules from user input ----------===//

#include "TraceIR/Dialect/ParseSource.h"
#include "TraceIR/Support/NestingDepth.h"

#include "mlir/Bytecode/BytecodeReader.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Support/FileUtilities.h"

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
    size_t start = pos;
    if (pos < text.size() && text[pos] == '-')
      ++pos;
    size_t digits = pos;
    while (pos < text.size() && llvm::isAlnum(text[pos]))
      ++pos;
    int64_t value;
    if (pos == digits || text.substr(start, pos - start).getAsInteger(0, value))
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
    if (!(llvm::isAlpha(c) || c == '_') ||
        (prev && (llvm::isAlnum(prev) || prev == '_' || prev == '%' ||
                  prev == '#' || prev == '@' || prev == '^' || prev == '!' ||
                  prev == '$' || prev == '.'))) {
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
