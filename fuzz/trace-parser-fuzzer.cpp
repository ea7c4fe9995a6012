//===- trace-parser-fuzzer.cpp - Fuzz parse, verify and the trace passes --===//
//
// Input: MLIR text, as trace-opt reads it. What parses and verifies must
// print as text that parses again; --free-dead-tensors must succeed on it,
// leave it verified and be idempotent (running it twice changes nothing),
// and so must --plan-memory after it; --reorder-for-memory and
// --reinplace must succeed where no graph holds frees or a plan (what they
// refuse), each leave a module that verifies, and together one that frees
// and plans;
// --convert-trace-to-linalg may refuse an op (an error) but what it returns
// must verify.
//
//===----------------------------------------------------------------------===//

#include "FuzzCommon.h"

#include "TraceIR/Conversion/Passes.h"
#include "TraceIR/Dialect/TraceDialect.h"
#include "TraceIR/Transforms/Passes.h"

#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"

using namespace traceir::fuzz;

/// Runs one pass on `module`; the pass manager's own verifier is off so that
/// a pass that succeeds but leaves invalid IR is told apart from one that
/// fails.
static mlir::LogicalResult runPass(mlir::ModuleOp module,
                                   std::unique_ptr<mlir::Pass> pass,
                                   bool onGraphs) {
  mlir::PassManager pm(module.getContext());
  pm.enableVerifier(false);
  if (onGraphs)
    pm.addNestedPass<mlir::trace::GraphOp>(std::move(pass));
  else
    pm.addPass(std::move(pass));
  return pm.run(module);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  FuzzContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module = parseInput(data, size, context);
  if (!module)
    return 0;
  std::string text = printed(*module);
  fuzzCheck(bool(parse(text, context)),
            "a verified module's text does not parse again");
  fuzzCheck(bool(parse(printed(*module, /*generic=*/true), context)),
            "a verified module's generic form does not parse again");

  mlir::OwningOpRef<mlir::ModuleOp> lowered(module->clone());
  mlir::OwningOpRef<mlir::ModuleOp> reordered(module->clone());
  bool hasGraphs = !module->getOps<mlir::trace::GraphOp>().empty();
  // What --reorder-for-memory and --reinplace refuse: a graph with frees or
  // a plan.
  bool reorderable = true;
  for (mlir::trace::GraphOp g : module->getOps<mlir::trace::GraphOp>())
    if (g->hasAttr(mlir::trace::TraceDialect::kArenaBytesAttrName) ||
        !g.getBody().front().getOps<mlir::trace::FreeOp>().empty())
      reorderable = false;
  if (hasGraphs) {
    fuzzCheck(mlir::succeeded(
                  runPass(*module, mlir::trace::createFreeDeadTensors(), true)),
              "--free-dead-tensors failed on a verified module");
    fuzzCheck(mlir::succeeded(mlir::verify(*module)),
              "--free-dead-tensors left a module that does not verify");
    std::string freed = printed(*module);
    fuzzCheck(bool(parse(freed, context)),
              "--free-dead-tensors' output does not parse again");
    fuzzCheck(mlir::succeeded(
                  runPass(*module, mlir::trace::createFreeDeadTensors(), true)),
              "--free-dead-tensors failed on its own output");
    fuzzCheck(printed(*module) == freed,
              "--free-dead-tensors run twice changed the module");
    fuzzCheck(mlir::succeeded(
                  runPass(*module, mlir::trace::createPlanMemory(), true)),
              "--plan-memory failed on a freed module");
    fuzzCheck(mlir::succeeded(mlir::verify(*module)),
              "--plan-memory left a module that does not verify");
    std::string planned = printed(*module);
    fuzzCheck(mlir::succeeded(
                  runPass(*module, mlir::trace::createPlanMemory(), true)),
              "--plan-memory failed on its own output");
    fuzzCheck(printed(*module) == planned,
              "--plan-memory run twice changed the module");
  }
  if (hasGraphs && reorderable) {
    fuzzCheck(mlir::succeeded(runPass(
                  *reordered, mlir::trace::createReorderForMemory(), true)),
              "--reorder-for-memory failed on a module without frees or plans");
    fuzzCheck(mlir::succeeded(mlir::verify(*reordered)),
              "--reorder-for-memory left a module that does not verify");
    fuzzCheck(mlir::succeeded(
                  runPass(*reordered, mlir::trace::createReinplace(), true)),
              "--reinplace failed on a module without frees or plans");
    fuzzCheck(mlir::succeeded(mlir::verify(*reordered)),
              "--reinplace left a module that does not verify");
    fuzzCheck(
        mlir::succeeded(
            runPass(*reordered, mlir::trace::createFreeDeadTensors(), true)) &&
            mlir::succeeded(
                runPass(*reordered, mlir::trace::createPlanMemory(), true)) &&
            mlir::succeeded(mlir::verify(*reordered)),
        "a reordered and reinplaced module does not free, plan and verify");
  }
  if (mlir::succeeded(
          runPass(*lowered, mlir::trace::createConvertTraceToLinalg(), false)))
    fuzzCheck(mlir::succeeded(mlir::verify(*lowered)),
              "--convert-trace-to-linalg left a module that does not verify");
  return 0;
}
