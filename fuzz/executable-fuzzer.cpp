//===- executable-fuzzer.cpp - Fuzz building and running Executables ------===//
//
// Input: MLIR text. The first trace.graph that parses and verifies is built
// for the CPU, as trace-run builds it, and run with --check-frees on params
// and inputs made up from their declared types (a fixed pattern: small
// integers, so that index arguments are often in range). Errors (an op the
// runtime refuses, indices out of range, memory over the limit) are
// expected; crashes, sanitizer reports, hangs and a measured peak other than
// the predicted one are findings. A graph without frees or a plan is also
// run freed and planned (--free-dead-tensors, --plan-memory: one arena,
// its owner map checked): it must give the same bytes.
//
// Runs get the runtime's own memory limit (trace-run --memory-limit, here
// 256 MiB): an allocation over it is an error naming the op, as in
// production. Beyond that, graphs whose made-up params and inputs exceed
// 1 MiB, or with any tensor type of more than 2^22 elements, are skipped
// (valid, but too slow to fuzz: a sum over a broadcast view of 2^40
// elements runs for hours in PyTorch as here).
//
//===----------------------------------------------------------------------===//

#include "FuzzCommon.h"

#include "TraceIR/Dialect/TraceDialect.h"
#include "TraceIR/Runtime/Build.h"
#include "TraceIR/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace traceir::fuzz;
using namespace mlir::trace;

static bool smallEnough(mlir::trace::GraphOp graph) {
  bool ok = true;
  auto check = [&](mlir::Type type) {
    if (auto t = mlir::dyn_cast<mlir::RankedTensorType>(type))
      if (t.hasStaticShape() && t.getNumElements() > kMaxElements)
        ok = false;
  };
  for (mlir::Type t : graph.getArgumentTypes())
    check(t);
  graph.walk([&](mlir::Operation *op) {
    for (mlir::Type t : op->getResultTypes())
      check(t);
  });
  return ok;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  FuzzContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module = parseInput(data, size, context);
  if (!module)
    return 0;
  auto graphs = module->getOps<mlir::trace::GraphOp>();
  if (graphs.empty() || !smallEnough(*graphs.begin()))
    return 0;
  mlir::trace::GraphOp graph = *graphs.begin();
  auto exe = traceir::buildExecutable(graph, traceir::Device{});
  if (!exe) {
    ignore(exe.takeError());
    return 0;
  }
  auto outputs = runTwiceChecked(**exe, /*checkPeak=*/true);
  if (!outputs || graph->hasAttr(TraceDialect::kArenaBytesAttrName) ||
      !graph.getBody().front().getOps<FreeOp>().empty())
    return 0;
  mlir::PassManager pm(module->getContext());
  pm.addNestedPass<GraphOp>(createFreeDeadTensors());
  pm.addNestedPass<GraphOp>(createPlanMemory());
  fuzzCheck(mlir::succeeded(pm.run(*module)),
            "--free-dead-tensors,--plan-memory failed on a verified graph");
  auto planned = traceir::buildExecutable(graph, traceir::Device{});
  fuzzCheck(bool(planned), "a planned graph does not build where it did");
  std::string error;
  auto again = runTwiceChecked(**planned, /*checkPeak=*/true, &error);
  // The arena is held the whole run, beside the outputs: a run near the
  // memory limit may fail planned where it ran unplanned.
  if (!again && error.find("the memory limit") != std::string::npos)
    return 0;
  fuzzCheck(bool(again), "a planned graph does not run where it did");
  for (size_t i = 0; i < outputs->size(); ++i)
    fuzzCheck((*again)[i].data == (*outputs)[i].data,
              "a planned run's output differs from the unplanned run's");
  return 0;
}
