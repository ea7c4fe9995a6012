//===- ParseSource.cpp - Parsing TraceIR modules from user input ----------===//

#include "TraceIR/Dialect/ParseSource.h"
#include "TraceIR/Support/NestingDepth.h"

#include "mlir/Bytecode/BytecodeReader.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Support/FileUtilities.h"

#include "llvm/ADT/Twine.h"

using namespace mlir;

std::optional<std::pair<llvm::SMLoc, std::string>>
trace::findUnsafeInput(const llvm::MemoryBuffer &buffer) {
  llvm::StringRef text = buffer.getBuffer();
  if (isBytecode(buffer.getMemBufferRef()))
    return std::make_pair(llvm::SMLoc::getFromPointer(text.data()),
                          std::string("MLIR bytecode is not accepted: TraceIR "
                                      "reads MLIR text only"));
  std::optional<size_t> at =
      traceir::findTooDeepNesting(std::string_view(text.data(), text.size()));
  if (!at)
    return std::nullopt;
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
