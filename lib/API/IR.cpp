//===- IR.cpp - A TraceIR module held for language bindings ---------------===//
//
// Handles are ids in one table per module: an op gets the next id the first
// time a caller sees it, an id is never reused, and every call resolves ids
// through the table, so a stale one is an error and never a dangling
// pointer. A pass pipeline may erase or replace any op, so running one
// empties the table: ids from before it are "changed by a pass".
//
//===----------------------------------------------------------------------===//

#include "TraceIR/API/IR.h"
#include "APIImpl.h"
#include "CompilerSession.h"
#include "TraceIR/Dialect/OpRegistry.h"
#include "TraceIR/Import/ANFImporter.h"
#include "TraceIR/Runtime/Build.h"

#include "mlir/IR/Verifier.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/MemoryBuffer.h"

#include <unordered_map>

using namespace traceir;
using namespace traceir::api;
using namespace traceir::api::detail;
using mlir::trace::GraphOp;

struct IRModule::Impl {
  /// Shared with clones: a clone's ops live in the same context.
  std::shared_ptr<Session> session;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::string sourceName;
  uint64_t generation = 0;
  /// Ids below this one were handed out before the last pipeline ran.
  int64_t firstLiveId = 0;
  int64_t nextId = 0;
  llvm::DenseMap<mlir::Operation *, int64_t> ids;
  std::unordered_map<int64_t, mlir::Operation *> ops;

  int64_t idOf(mlir::Operation *op) {
    auto [it, inserted] = ids.try_emplace(op, nextId);
    if (inserted) {
      ops.emplace(nextId, op);
      ++nextId;
    }
    return it->second;
  }

  /// The op of `id`, or an error naming why there is none.
  Expected<mlir::Operation *> resolve(int64_t id) {
    if (id >= firstLiveId && id < nextId) {
      auto it = ops.find(id);
      if (it != ops.end())
        return it->second;
      return makeError("node erased");
    }
    if (id >= 0 && id < firstLiveId)
      return makeError("module changed by a pass: this handle predates it; "
                       "walk the module again");
    return makeError("no node " + strCat(id) + " in this module");
  }

  Expected<GraphOp> resolveGraph(int64_t id) {
    auto op = resolve(id);
    if (!op)
      return op.takeError();
    auto graph = mlir::dyn_cast<GraphOp>(*op);
    if (!graph)
      return makeError("node " + strCat(id) + " is not a graph");
    return graph;
  }

  Expected<mlir::Value> resolveValue(const ValueRef &ref) {
    if (ref.isArg) {
      auto graph = resolveGraph(ref.node);
      if (!graph)
        return graph.takeError();
      mlir::Block &body = graph->getBody().front();
      if (ref.index < 0 || unsigned(ref.index) >= body.getNumArguments())
        return makeError("graph @" + graph->getSymName().str() +
                         " has no argument #" + strCat(ref.index));
      return mlir::Value(body.getArgument(ref.index));
    }
    auto op = resolve(ref.node);
    if (!op)
      return op.takeError();
    if (ref.index < 0 || unsigned(ref.index) >= (*op)->getNumResults())
      return makeError("node " + strCat(ref.node) + " has no result #" +
                       strCat(ref.index));
    return (*op)->getResult(ref.index);
  }

  ValueRef refOf(mlir::Value v) {
    ValueRef ref;
    if (auto arg = mlir::dyn_cast<mlir::BlockArgument>(v)) {
      ref.node = idOf(arg.getOwner()->getParentOp());
      ref.index = arg.getArgNumber();
      ref.isArg = true;
    } else {
      auto result = mlir::cast<mlir::OpResult>(v);
      ref.node = idOf(result.getOwner());
      ref.index = result.getResultNumber();
    }
    return ref;
  }

  /// Forgets every handle (a pipeline may have rewritten anything).
  void invalidate() {
    ids.clear();
    ops.clear();
    firstLiveId = nextId;
    ++generation;
  }
};

std::string traceir::api::opSignature(const std::string &op) {
  const mlir::trace::OpInfo *info = mlir::trace::lookupOp(op);
  return info ? info->signature.str() : std::string();
}

IRModule::IRModule() : impl(std::make_unique<Impl>()) {}
IRModule::~IRModule() = default;

namespace {
TypeInfo typeInfo(mlir::Type type) {
  TypeInfo t;
  llvm::raw_string_ostream os(t.text);
  type.print(os);
  if (auto ranked = mlir::dyn_cast<mlir::RankedTensorType>(type)) {
    t.ranked = true;
    for (int64_t d : ranked.getShape())
      t.shape.push_back(mlir::ShapedType::isDynamic(d) ? -1 : d);
  }
  if (auto shaped = mlir::dyn_cast<mlir::ShapedType>(type)) {
    llvm::raw_string_ostream es(t.dtype);
    shaped.getElementType().print(es);
  }
  return t;
}

std::string locationText(mlir::Location loc) {
  std::string s;
  llvm::raw_string_ostream os(s);
  loc.print(os);
  llvm::StringRef text(s);
  if (text.consume_front("loc(") && text.consume_back(")"))
    return text.str();
  return s;
}
} // namespace

Result<std::unique_ptr<IRModule>> IRModule::parse(const std::string &text,
                                                  const std::string &name) {
  std::unique_ptr<IRModule> m(new IRModule());
  m->impl->session = std::make_shared<Session>();
  m->impl->sourceName = name;
  m->impl->module = m->impl->session->parse(text, name);
  if (!m->impl->module)
    return {nullptr, m->impl->session->error("cannot parse " + name)};
  return {std::move(m), {}};
}

Result<std::unique_ptr<IRModule>> IRModule::importANF(const std::string &text,
                                                      const std::string &name) {
  std::unique_ptr<IRModule> m(new IRModule());
  auto session = std::make_shared<Session>();
  m->impl->session = session;
  m->impl->sourceName = name;
  session->sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(text, name), llvm::SMLoc());
  m->impl->module =
      mlir::trace::importANFTrace(session->sourceMgr, &session->context);
  if (!m->impl->module)
    return {nullptr, session->error("cannot import " + name)};
  return {std::move(m), {}};
}

std::unique_ptr<IRModule> IRModule::clone() const {
  std::unique_ptr<IRModule> m(new IRModule());
  m->impl->session = impl->session;
  m->impl->sourceName = impl->sourceName;
  m->impl->module = impl->module->clone();
  return m;
}

std::string IRModule::print() const { return detail::print(*impl->module); }

std::string IRModule::verify() {
  impl->session->diagnostics.clear();
  if (mlir::succeeded(mlir::verify(*impl->module)))
    return {};
  return impl->session->error("the module does not verify");
}

std::string IRModule::runPasses(const std::string &pipeline) {
  // Before the run: a failing pipeline may have rewritten part of it.
  impl->invalidate();
  return runPipeline(*impl->session, *impl->module, pipeline);
}

uint64_t IRModule::generation() const { return impl->generation; }

std::vector<int64_t> IRModule::graphs() {
  std::vector<int64_t> out;
  for (GraphOp g : impl->module->getOps<GraphOp>())
    out.push_back(impl->idOf(g));
  return out;
}

Result<std::string> IRModule::graphName(int64_t graph) {
  auto g = impl->resolveGraph(graph);
  if (!g)
    return {{}, toString(g.takeError())};
  return {g->getSymName().str(), {}};
}

Result<std::vector<GraphArg>> IRModule::graphArgs(int64_t graph) {
  auto g = impl->resolveGraph(graph);
  if (!g)
    return {{}, toString(g.takeError())};
  std::vector<GraphArg> out;
  mlir::Block &body = g->getBody().front();
  for (unsigned i = 0; i < body.getNumArguments(); ++i) {
    GraphArg a;
    a.isParam = g->isParam(i);
    a.name = (a.isParam ? g->getParamName(i) : g->getInputName(i)).str();
    a.donated = g->isDonated(i);
    a.type = typeInfo(body.getArgument(i).getType());
    out.push_back(std::move(a));
  }
  return {std::move(out), {}};
}

Result<std::vector<int64_t>> IRModule::graphNodes(int64_t graph) {
  auto g = impl->resolveGraph(graph);
  if (!g)
    return {{}, toString(g.takeError())};
  std::vector<int64_t> out;
  for (mlir::Operation &op : g->getBody().front())
    out.push_back(impl->idOf(&op));
  return {std::move(out), {}};
}

Result<NodeInfo> IRModule::node(int64_t id) {
  auto resolved = impl->resolve(id);
  if (!resolved)
    return {{}, toString(resolved.takeError())};
  mlir::Operation *op = *resolved;
  NodeInfo n;
  if (mlir::Operation *parent = op->getParentOp();
      parent && mlir::isa<GraphOp>(parent))
    n.graph = impl->idOf(parent);
  n.location = locationText(op->getLoc());
  for (mlir::Type t : op->getResultTypes())
    n.results.push_back(typeInfo(t));
  auto tensorArg = [&](mlir::Value v) {
    CallArg a;
    a.isTensor = true;
    a.value = impl->refOf(v);
    return a;
  };
  if (auto py = mlir::dyn_cast<mlir::trace::PyOp>(op)) {
    n.kind = "pyop";
    n.target = py.getOpName().str();
    n.cconv = py.getCconv().str();
    for (mlir::Attribute s : py.getScalars())
      n.scalars.push_back(toScalarValue(s));
    auto tensors = py.getTensors();
    size_t t = 0, s = 0;
    for (char c : n.cconv) {
      if (c == 't' && t < tensors.size()) {
        n.args.push_back(tensorArg(tensors[t++]));
      } else if (c == 's' && s < n.scalars.size()) {
        CallArg a;
        a.scalar = n.scalars[s++];
        n.args.push_back(std::move(a));
      }
    }
    return {std::move(n), {}};
  }
  if (mlir::isa<mlir::trace::ConstantOp>(op))
    n.kind = "constant";
  else if (mlir::isa<mlir::trace::FreeOp>(op))
    n.kind = "free";
  else if (mlir::isa<mlir::trace::RetOp>(op))
    n.kind = "ret";
  else if (mlir::isa<GraphOp>(op))
    n.kind = "graph";
  else
    n.kind = op->getName().getStringRef().str();
  for (mlir::Value v : op->getOperands())
    n.args.push_back(tensorArg(v));
  return {std::move(n), {}};
}

Result<TypeInfo> IRModule::valueType(const ValueRef &value) {
  auto v = impl->resolveValue(value);
  if (!v)
    return {{}, toString(v.takeError())};
  return {typeInfo(v->getType()), {}};
}

Result<std::vector<int64_t>> IRModule::users(const ValueRef &value) {
  auto v = impl->resolveValue(value);
  if (!v)
    return {{}, toString(v.takeError())};
  // Program order, each user once (an op may use a value twice).
  llvm::SmallVector<mlir::Operation *> users(v->getUsers().begin(),
                                             v->getUsers().end());
  llvm::sort(users, [](mlir::Operation *a, mlir::Operation *b) {
    return a->isBeforeInBlock(b);
  });
  users.erase(std::unique(users.begin(), users.end()), users.end());
  std::vector<int64_t> out;
  for (mlir::Operation *u : users)
    out.push_back(impl->idOf(u));
  return {std::move(out), {}};
}

//===----------------------------------------------------------------------===//
// Building executables from a held module
//===----------------------------------------------------------------------===//

mlir::ModuleOp traceir::api::detail::moduleOf(IRModule &module) {
  return *module.impl->module;
}

std::string traceir::api::detail::sourceNameOf(const IRModule &module) {
  return module.impl->sourceName;
}

Session &traceir::api::detail::sessionOf(IRModule &module) {
  return *module.impl->session;
}
