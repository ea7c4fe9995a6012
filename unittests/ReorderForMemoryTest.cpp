//===- ReorderForMemoryTest.cpp - Reordering never raises the peaks -------===//
//
// --reorder-for-memory over random graphs (fresh, view, in-place, random and
// unknown ops on tensors of three sizes): after --free-dead-tensors the
// reordered graph verifies, neither its predicted peak (StorageLiveness)
// nor its arena's lower bound (MemoryPlan) is above the traced order's, and
// a checker written apart from the pass (quadratic, from the registry's
// flags) finds every dependence kept: def-use, reads and writes of each
// storage, and the order of random and unknown ops.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Analysis/MemoryPlan.h"
#include "TraceIR/Analysis/StorageLiveness.h"
#include "TraceIR/Dialect/OpRegistry.h"
#include "TraceIR/Dialect/TraceDialect.h"
#include "TraceIR/Transforms/Passes.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/DenseMap.h"

#include "gtest/gtest.h"

#include <random>
#include <string>
#include <vector>

using namespace mlir;
using namespace mlir::trace;

namespace {

/// A random graph as MLIR text: `numOps` ops over 1-D f32 tensors of 16,
/// 256 and 1024 elements, some reduced to 0-d ones.
std::string randomGraph(unsigned seed, unsigned numOps) {
  std::mt19937 rng(seed);
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  const int64_t sizes[] = {16, 256, 1024};
  struct Val {
    std::string name;
    int64_t size; // 0: a 0-d tensor
  };
  std::vector<Val> vals = {{"%x0", 16}, {"%x1", 256}, {"%x2", 1024}};
  auto type = [](int64_t size) {
    return size ? "tensor<" + std::to_string(size) + "xf32>"
                : std::string("tensor<f32>");
  };
  std::string body;
  auto recent = [&]() -> const Val & {
    // Mostly recent values, as traces use them, sometimes any.
    size_t n = vals.size();
    return pick(4) ? vals[n - 1 - pick(std::min<size_t>(n, 6))] : vals[pick(n)];
  };
  for (unsigned i = 0; i < numOps; ++i) {
    std::string name = "%v" + std::to_string(i);
    const Val a = recent();
    std::string line;
    int64_t size = a.size;
    std::string ta = type(a.size);
    switch (pick(12)) {
    case 0:
    case 1:
    case 2: {
      const char *ops[] = {"exp", "neg", "relu", "tanh"};
      line = "pyop \"" + std::string(ops[pick(4)]) + "\"(" + a.name + ") : (" +
             ta + ") -> " + ta;
      break;
    }
    case 3:
    case 4: {
      // A partner of the same size, else the value with itself.
      Val b = a;
      for (int tries = 0; tries < 8; ++tries) {
        const Val &c = vals[pick(vals.size())];
        if (c.size == a.size) {
          b = c;
          break;
        }
      }
      line = "pyop \"add\"(" + a.name + ", " + b.name + ") : (" + ta + ", " +
             ta + ") -> " + ta;
      break;
    }
    case 5:
      if (!a.size)
        continue;
      size = 0;
      line = "pyop \"sum\"(" + a.name + ") : (" + ta + ") -> tensor<f32>";
      break;
    case 6:
      if (!a.size)
        continue;
      line = "pyop \"view\"(" + a.name + ", [" + std::to_string(a.size) +
             "]) : (" + ta + ") -> " + ta;
      break;
    case 7:
      line = "pyop \"" + std::string(pick(2) ? "add_" : "mul_") + "\"(" +
             a.name + ", 2.0) : (" + ta + ") -> " + ta;
      break;
    case 8:
      size = sizes[pick(3)];
      line =
          "pyop \"rand\"([" + std::to_string(size) + "]) : () -> " + type(size);
      break;
    case 9:
      line =
          "pyop \"dropout\"(" + a.name + ", 0.5, True) : (" + ta + ") -> " + ta;
      break;
    case 10:
      // Unknown, one operand: its result may be that operand.
      line = "pyop \"mystery\"(" + a.name + ") : (" + ta + ") -> " + ta;
      break;
    case 11: {
      // A new branch from an input.
      size_t input = pick(3);
      size = sizes[input];
      line = "pyop \"exp\"(%x" + std::to_string(input) + ") : (" + type(size) +
             ") -> " + type(size);
      break;
    }
    }
    body += "  " + name + " = " + line + "\n";
    vals.push_back({name, size});
  }
  // Return the last value and up to two more (ops' results, not inputs).
  std::vector<Val> rets = {vals.back()};
  for (size_t k = 0, n = pick(3); k < n; ++k) {
    size_t i = 3 + pick(vals.size() - 3);
    if (i + 1 != vals.size() && vals[i].name != rets.back().name)
      rets.push_back(vals[i]);
  }
  std::string names, types;
  for (const Val &v : rets) {
    names += (names.empty() ? "" : ", ") + v.name;
    types += (types.empty() ? "" : ", ") + type(v.size);
  }
  return "trace.graph @g(%x0: tensor<16xf32>, %x1: tensor<256xf32>, "
         "%x2: tensor<1024xf32> {trace.donated}) -> (" +
         types + ") {\n" + body + "  ret " + names + " : " + types + "\n}\n";
}

/// What an op does to storages, decided apart from the pass: the storage
/// roots it reads and writes (an in-place op writes the operand its result
/// is; an unknown op reads and writes every operand, and its result joins
/// its operand's storage), and whether it is ordered with other effects.
struct Access {
  std::vector<Value> reads, writes;
  bool effect = false;
};

struct Checker {
  llvm::DenseMap<Value, Value> joined; // unknown op result -> operand root

  Value root(Value v) {
    v = getStorageRoot(v);
    while (joined.count(v))
      v = getStorageRoot(joined.lookup(v));
    return v;
  }

  Access access(Operation *op) {
    Access a;
    auto py = dyn_cast<PyOp>(op);
    if (!py)
      return a;
    const OpInfo *info = py.getOpInfo();
    if (!info) {
      a.effect = true;
      for (Value v : py.getTensors())
        a.writes.push_back(root(v));
      if (py->getNumResults() == 1 && py.getTensors().size() == 1)
        joined[py->getResult(0)] = py.getTensors()[0];
      return a;
    }
    PyArgs args(py.getCconv(), py.getTensors().getTypes(),
                py.getScalars().getValue());
    a.effect = info->random(args);
    int written = -1;
    if (info->mutates(args)) {
      ResultAlias alias = getResultAlias(py, 0);
      EXPECT_EQ(alias.kind, AliasKind::MustAlias);
      written = alias.operand;
    }
    for (auto [i, v] : llvm::enumerate(py.getTensors()))
      (static_cast<int>(i) == written ? a.writes : a.reads).push_back(root(v));
    return a;
  }
};

bool intersects(const std::vector<Value> &a, const std::vector<Value> &b) {
  for (Value x : a)
    for (Value y : b)
      if (x == y)
        return true;
  return false;
}

/// The predicted peak and the arena's lower bound after --free-dead-tensors.
struct Peaks {
  int64_t total = -1, arena = -1;
};

Peaks freedPeaks(MLIRContext &ctx, ModuleOp module, bool reorder) {
  PassManager pm(&ctx);
  OpPassManager &graphPm = pm.nest<GraphOp>();
  if (reorder)
    graphPm.addPass(createReorderForMemory());
  graphPm.addPass(createFreeDeadTensors());
  EXPECT_TRUE(succeeded(pm.run(module)));
  Peaks peaks;
  module.walk([&](GraphOp g) {
    StorageLiveness liveness(g);
    peaks.total = liveness.getPeakBytes();
    peaks.arena = MemoryPlan(liveness).getLowerBoundBytes();
  });
  return peaks;
}

TEST(ReorderForMemory, NeverRaisesThePeaksAndKeepsEveryDependence) {
  MLIRContext ctx;
  ctx.getOrLoadDialect<TraceDialect>();
  unsigned lowered = 0, arenaLowered = 0, graphs = 0;
  for (unsigned seed = 0; seed < 300; ++seed) {
    std::string text = randomGraph(seed, 10 + seed % 50);
    OwningOpRef<ModuleOp> traced = parseSourceString<ModuleOp>(text, &ctx);
    ASSERT_TRUE(traced) << text;
    OwningOpRef<ModuleOp> reordered = traced->clone();

    // The traced order's ops and what each does, before anything moves.
    std::vector<Operation *> ops;
    std::vector<Access> accesses;
    Checker checker;
    reordered->walk([&](PyOp op) {
      ops.push_back(op);
      accesses.push_back(checker.access(op));
    });

    Peaks before = freedPeaks(ctx, *traced, /*reorder=*/false);
    Peaks after = freedPeaks(ctx, *reordered, /*reorder=*/true);
    ASSERT_TRUE(succeeded(verify(*reordered))) << text;
    ASSERT_LE(after.total, before.total) << text;
    ASSERT_LE(after.arena, before.arena) << text;
    ++graphs;
    lowered += after.total < before.total;
    arenaLowered += after.arena < before.arena;

    // Every pair the traced order puts i before j that must stay so.
    for (size_t j = 0; j < ops.size(); ++j)
      for (size_t i = 0; i < j; ++i) {
        const Access &a = accesses[i], &b = accesses[j];
        bool ordered =
            (a.effect && b.effect) || intersects(a.writes, b.reads) ||
            intersects(a.writes, b.writes) || intersects(a.reads, b.writes);
        if (ordered) {
          ASSERT_TRUE(ops[i]->isBeforeInBlock(ops[j]))
              << "seed " << seed << ": op " << i << " moved after op " << j
              << "\n"
              << text;
        }
      }
  }
  // The property holds trivially when nothing moves: some graphs must gain.
  EXPECT_GT(lowered, graphs / 10);
  EXPECT_GT(arenaLowered, graphs / 10);
}

} // namespace
