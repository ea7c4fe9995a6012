//===- executable-fuzzer.cpp - Fuzz building and running Executables ------===//
//
// Input: MLIR text. The first trace.graph that parses and verifies is built
// for the CPU, as trace-run builds it, and run with --check-frees on params
// and inputs made up from their declared types (a fixed pattern: small
// integers, so that index arguments are often in range). Errors (an op the
// runtime refuses, indices out of range, memory over the limit) are
// expected; crashes, sanitizer reports, hangs and a measured peak other than
// the predicted one are findings.
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

#include "mlir/IR/BuiltinTypes.h"

using namespace traceir::fuzz;

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
  runTwiceChecked(**exe, /*checkPeak=*/true);
  return 0;
}
