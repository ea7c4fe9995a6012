//===- IRModuleTest.cpp - The held module's walk and change log -----------===//
//
// What the Python handles rely on (python/IRHandles.cpp): walkGraph and
// graphUsers agree with node() and users(), and takeChanges names every
// node an edit changed or erased, so that nothing cached goes stale.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/API/IR.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace traceir::api;

namespace {

const char *kChain = R"(module {
  trace.graph @f(%x: tensor<3xf32> {trace.input = "x"}) -> tensor<3xf32> {
    %a = trace.pyop "relu"(%x) : (tensor<3xf32>) -> tensor<3xf32>
    %b = trace.pyop "neg"(%a) : (tensor<3xf32>) -> tensor<3xf32>
    %c = trace.pyop "add"(%b, %a) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    trace.ret %c : tensor<3xf32>
  }
}
)";

bool has(const std::vector<int64_t> &ids, int64_t id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

struct Walked {
  std::vector<int64_t> ids;
  std::vector<NodeInfo> infos;
};

Walked walk(IRModule &m, int64_t graph) {
  Walked w;
  std::string err = m.walkGraph(
      graph, /*full=*/false, [](int64_t) { return true; },
      [&](int64_t id, const NodeInfo *info) {
        w.ids.push_back(id);
        w.infos.push_back(*info);
        return true;
      });
  EXPECT_EQ(err, "");
  return w;
}

TEST(IRModule, WalkAndUsersAgreeWithTheOneNodeCalls) {
  auto parsed = IRModule::parse(kChain);
  ASSERT_TRUE(parsed.ok()) << parsed.error;
  IRModule &m = *parsed.value;
  int64_t g = m.graphs().at(0);
  Walked w = walk(m, g);
  ASSERT_EQ(w.ids, m.graphNodes(g).value);
  ASSERT_EQ(w.ids.size(), 4u);
  std::vector<std::vector<int64_t>> users = m.graphUsers(g).value;
  ASSERT_EQ(users.size(), 4u);
  for (size_t i = 0; i < w.ids.size(); ++i) {
    NodeInfo one = m.node(w.ids[i]).value;
    EXPECT_EQ(w.infos[i].kind, one.kind);
    EXPECT_EQ(w.infos[i].target, one.target);
    EXPECT_EQ(w.infos[i].numResults, int32_t(one.results.size()));
    EXPECT_EQ(w.infos[i].args.size(), one.args.size());
    EXPECT_TRUE(w.infos[i].location.empty()); // not `full`
    if (one.results.size() == 1) {
      EXPECT_EQ(users[i], m.users({w.ids[i], 0, false}).value);
    }
  }
  // relu's result feeds neg and add, in program order.
  EXPECT_EQ(users[0], (std::vector<int64_t>{w.ids[1], w.ids[2]}));
  // A visit returning false stops the walk; `want` false gives no info.
  int visits = 0;
  EXPECT_EQ(m.walkGraph(
                g, true, [](int64_t) { return false; },
                [&](int64_t, const NodeInfo *info) {
                  EXPECT_EQ(info, nullptr);
                  return ++visits < 2;
                }),
            "");
  EXPECT_EQ(visits, 2);
  EXPECT_NE(m.walkGraph(
                w.ids[0], false, [](int64_t) { return true; },
                [](int64_t, const NodeInfo *) { return true; }),
            "");
}

TEST(IRModule, TakeChangesNamesWhatEachEditTouched) {
  auto parsed = IRModule::parse(kChain);
  ASSERT_TRUE(parsed.ok()) << parsed.error;
  IRModule &m = *parsed.value;
  int64_t g = m.graphs().at(0);
  std::vector<int64_t> n = m.graphNodes(g).value; // relu, neg, add, ret
  (void)m.takeChanges();

  // A new user of relu: relu's users changed.
  CallArg a;
  a.isTensor = true;
  a.value = {n[0], 0, false};
  auto exp = m.createPyOp({g, n[1], false}, "exp", {a}, {}, {});
  ASSERT_TRUE(exp.ok()) << exp.error;
  IRModule::Changes c = m.takeChanges();
  EXPECT_TRUE(has(c.changed, n[0]));
  EXPECT_TRUE(c.erased.empty());
  EXPECT_TRUE(m.takeChanges().changed.empty()); // taken

  // neg's uses go to exp: add (its user) and both definers changed.
  ASSERT_EQ(m.replaceAllUsesWith({n[1], 0, false}, {exp.value, 0, false}), "");
  c = m.takeChanges();
  EXPECT_TRUE(has(c.changed, n[2]));
  EXPECT_TRUE(has(c.changed, n[1]));
  EXPECT_TRUE(has(c.changed, exp.value));

  // Erasing neg: it is erased, relu (its operand's definer) changed.
  ASSERT_EQ(m.eraseNode(n[1]), "");
  c = m.takeChanges();
  EXPECT_EQ(c.erased, std::vector<int64_t>{n[1]});
  EXPECT_TRUE(has(c.changed, n[0]));

  // set_outputs: the ret and the definers of what it returned and returns.
  ASSERT_EQ(m.setOutputs(g, {{n[0], 0, false}}, {}), "");
  c = m.takeChanges();
  EXPECT_TRUE(has(c.changed, n[3]));
  EXPECT_TRUE(has(c.changed, n[2]));
  EXPECT_TRUE(has(c.changed, n[0]));

  // Dead code: add and exp go.
  auto dead = m.eliminateDeadCode(g);
  ASSERT_TRUE(dead.ok());
  EXPECT_EQ(dead.value, 2);
  c = m.takeChanges();
  EXPECT_EQ(c.erased.size(), 2u);
  EXPECT_TRUE(has(c.erased, n[2]) && has(c.erased, exp.value));

  // A pipeline makes every handle stale: nothing to report.
  ASSERT_EQ(m.createPyOp({g, -1, false}, "exp", {a}, {}, {}).error, "");
  ASSERT_EQ(m.runPasses("canonicalize"), "");
  c = m.takeChanges();
  EXPECT_TRUE(c.changed.empty() && c.erased.empty());
}

} // namespace
