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

#include "TraceIR/Dialect/Scalars.h"
#include "TraceIR/Runtime/Tensor.h"
#include "TraceIR/Support/CheckedMath.h"
#include "TraceIR/Support/NestingDepth.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/MemoryBuffer.h"

#include <utility>

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
  /// The op of id firstLiveId + i; null once erased.
  std::vector<mlir::Operation *> ops;

  int64_t idOf(mlir::Operation *op) {
    auto [it, inserted] = ids.try_emplace(op, nextId);
    if (inserted) {
      ops.push_back(op);
      ++nextId;
    }
    return it->second;
  }

  /// The op of `id`, or an error naming why there is none.
  Expected<mlir::Operation *> resolve(int64_t id) {
    if (id >= firstLiveId && id < nextId) {
      if (mlir::Operation *op = ops[size_t(id - firstLiveId)])
        return op;
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

  /// The MLIR location `loc` names (copyFrom resolved), or an error.
  Expected<mlir::Location> location(const Location &loc);

  /// What edits changed since takeChanges (see there).
  Changes changes;
  /// Logs `op` as changed, if a handle to it is out (one without an id has
  /// nothing cached of it).
  void touched(mlir::Operation *op) {
    if (!op)
      return;
    auto it = ids.find(op);
    if (it != ids.end())
      changes.changed.push_back(it->second);
  }
  /// Logs the definers of `op`'s operands as changed: their users change
  /// when `op` comes or goes (a graph argument's definer is the graph).
  void touchDefiners(mlir::Operation *op) {
    for (mlir::Value v : op->getOperands())
      touched(definerOf(v));
  }
  static mlir::Operation *definerOf(mlir::Value v) {
    if (auto arg = mlir::dyn_cast<mlir::BlockArgument>(v))
      return arg.getOwner()->getParentOp();
    return v.getDefiningOp();
  }

  /// Forgets an op about to be erased (its id stays used: "node erased").
  void forget(mlir::Operation *op) {
    touchDefiners(op);
    auto it = ids.find(op);
    if (it == ids.end())
      return;
    changes.erased.push_back(it->second);
    ops[size_t(it->second - firstLiveId)] = nullptr;
    ids.erase(it);
  }

  /// What node() and nodes() read of `op`, into `n` (reusing its storage).
  void info(mlir::Operation *op, bool full, NodeInfo &n);

  /// Types and locations are uniqued in the context: printing each once
  /// keeps walking a large graph cheap (node() prints both).
  llvm::DenseMap<mlir::Type, TypeInfo> types;
  struct LocationInfo {
    std::string text;
    Location parts;
    bool hasParts = false;
  };
  llvm::DenseMap<const void *, LocationInfo> locations;
  const TypeInfo &typeOf(mlir::Type t);
  const LocationInfo &locationOf(mlir::Location loc);

  /// Whether each graph seen holds a trace.free (see checkEditable).
  llvm::DenseMap<mlir::Operation *, bool> holdsFrees;
  /// Fails for a graph that holds a trace.free.
  Error checkEditable(GraphOp graph);

  /// Forgets every handle (a pipeline may have rewritten anything).
  void invalidate() {
    ids.clear();
    ops.clear();
    holdsFrees.clear();
    changes = {};
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

/// `loc` as a name, a file position or both, as the importers write it;
/// false for any other kind.
bool locationParts(mlir::Location loc, Location &out) {
  mlir::Location inner = loc;
  if (auto name = mlir::dyn_cast<mlir::NameLoc>(loc)) {
    out.name = name.getName().str();
    inner = name.getChildLoc();
  }
  if (mlir::isa<mlir::UnknownLoc>(inner))
    return true;
  if (auto file = mlir::dyn_cast<mlir::FileLineColLoc>(inner)) {
    out.file = file.getFilename().str();
    out.line = file.getLine();
    out.column = file.getColumn();
    return true;
  }
  return false;
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

const TypeInfo &IRModule::Impl::typeOf(mlir::Type t) {
  auto it = types.find(t);
  if (it == types.end())
    it = types.try_emplace(t, typeInfo(t)).first;
  return it->second;
}

const IRModule::Impl::LocationInfo &
IRModule::Impl::locationOf(mlir::Location loc) {
  const void *key = loc.getAsOpaquePointer();
  auto it = locations.find(key);
  if (it == locations.end()) {
    LocationInfo info;
    info.text = locationText(loc);
    info.hasParts = locationParts(loc, info.parts);
    it = locations.try_emplace(key, std::move(info)).first;
  }
  return it->second;
}

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
  // The pass manager verifies after each pass, not before the first: an
  // edit from Python that broke the module is reported as such.
  if (std::string err = verify(); !err.empty())
    return err;
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
    a.type = impl->typeOf(body.getArgument(i).getType());
    const Impl::LocationInfo &where =
        impl->locationOf(body.getArgument(i).getLoc());
    a.hasLocationParts = where.hasParts;
    a.locationParts = where.parts;
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

void IRModule::Impl::info(mlir::Operation *op, bool full, NodeInfo &n) {
  n.target.clear();
  n.args.clear();
  n.cconv.clear();
  n.scalars.clear();
  n.results.clear();
  n.location.clear();
  n.locationParts = {};
  n.hasLocationParts = false;
  n.graph = -1;
  if (mlir::Operation *parent = op->getParentOp();
      parent && mlir::isa<GraphOp>(parent))
    n.graph = idOf(parent);
  n.numResults = int32_t(op->getNumResults());
  if (full) {
    const LocationInfo &where = locationOf(op->getLoc());
    n.location = where.text;
    n.hasLocationParts = where.hasParts;
    n.locationParts = where.parts;
    for (mlir::Type t : op->getResultTypes())
      n.results.push_back(typeOf(t));
  }
  auto tensorArg = [&](mlir::Value v) {
    CallArg a;
    a.isTensor = true;
    a.value = refOf(v);
    return a;
  };
  if (auto py = mlir::dyn_cast<mlir::trace::PyOp>(op)) {
    n.kind = "pyop";
    llvm::StringRef name = py.getOpName();
    n.target.assign(name.data(), name.size());
    llvm::StringRef cconv = py.getCconv();
    mlir::ArrayAttr scalars = py.getScalars();
    auto tensors = py.getTensors();
    n.args.reserve(cconv.size());
    size_t t = 0, s = 0;
    for (char c : cconv) {
      if (c == 't' && t < tensors.size()) {
        n.args.push_back(tensorArg(tensors[t++]));
      } else if (c == 's' && s < scalars.size()) {
        CallArg a;
        a.scalar = mlir::trace::toScalarValue(scalars[s++]);
        n.args.push_back(std::move(a));
      }
    }
    if (full) {
      n.cconv = cconv.str();
      for (const CallArg &a : n.args)
        if (!a.isTensor)
          n.scalars.push_back(a.scalar);
    }
    return;
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
    n.kind.assign(op->getName().getStringRef().str());
  n.args.reserve(op->getNumOperands());
  for (mlir::Value v : op->getOperands())
    n.args.push_back(tensorArg(v));
}

Result<NodeInfo> IRModule::node(int64_t id) {
  auto resolved = impl->resolve(id);
  if (!resolved)
    return {{}, toString(resolved.takeError())};
  NodeInfo n;
  impl->info(*resolved, /*full=*/true, n);
  return {std::move(n), {}};
}

Result<std::vector<NodeInfo>> IRModule::nodes(const std::vector<int64_t> &ids,
                                              bool full) {
  std::vector<NodeInfo> out;
  out.reserve(ids.size());
  for (int64_t id : ids) {
    auto resolved = impl->resolve(id);
    if (!resolved)
      return {{}, toString(resolved.takeError())};
    impl->info(*resolved, full, out.emplace_back());
  }
  return {std::move(out), {}};
}

std::string IRModule::walkGraph(
    int64_t graph, bool full, const std::function<bool(int64_t)> &want,
    const std::function<bool(int64_t, const NodeInfo *)> &visit) {
  auto g = impl->resolveGraph(graph);
  if (!g)
    return toString(g.takeError());
  mlir::Block &body = g->getBody().front();
  impl->ids.reserve(impl->ids.size() + body.getOperations().size());
  NodeInfo n;
  for (mlir::Operation &op : body) {
    int64_t id = impl->idOf(&op);
    const NodeInfo *info = nullptr;
    if (want(id)) {
      impl->info(&op, full, n);
      info = &n;
    }
    if (!visit(id, info))
      break;
  }
  return {};
}

Result<std::vector<std::vector<int64_t>>> IRModule::graphUsers(int64_t graph) {
  auto g = impl->resolveGraph(graph);
  if (!g)
    return {{}, toString(g.takeError())};
  std::vector<std::vector<int64_t>> out;
  llvm::SmallVector<mlir::Operation *> users;
  for (mlir::Operation &op : g->getBody().front()) {
    users.clear();
    for (mlir::Value r : op.getResults())
      users.append(r.getUsers().begin(), r.getUsers().end());
    // Program order, each user once (an op may use a value twice).
    llvm::sort(users, [](mlir::Operation *a, mlir::Operation *b) {
      return a->isBeforeInBlock(b);
    });
    users.erase(std::unique(users.begin(), users.end()), users.end());
    std::vector<int64_t> &ids = out.emplace_back();
    ids.reserve(users.size());
    for (mlir::Operation *u : users)
      ids.push_back(impl->idOf(u));
  }
  return {std::move(out), {}};
}

IRModule::Changes IRModule::takeChanges() {
  return std::exchange(impl->changes, {});
}

Result<TypeInfo> IRModule::valueType(const ValueRef &value) {
  auto v = impl->resolveValue(value);
  if (!v)
    return {{}, toString(v.takeError())};
  return {impl->typeOf(v->getType()), {}};
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

//===----------------------------------------------------------------------===//
// Building and rewriting
//===----------------------------------------------------------------------===//

namespace {

mlir::Attribute fromScalarValue(mlir::MLIRContext *ctx, const ScalarValue &v) {
  using K = ScalarValue::Kind;
  mlir::Builder b(ctx);
  switch (v.kind) {
  case K::None:
    return mlir::trace::NoneAttr::get(ctx);
  case K::Bool:
    return b.getBoolAttr(v.b);
  case K::Int:
    return b.getI64IntegerAttr(v.i);
  case K::Float:
    return b.getF64FloatAttr(v.f);
  case K::String:
    return b.getStringAttr(v.s);
  case K::List:
  case K::Tuple: {
    llvm::SmallVector<mlir::Attribute> elements;
    for (const ScalarValue &e : v.elements)
      elements.push_back(fromScalarValue(ctx, e));
    mlir::ArrayAttr array = b.getArrayAttr(elements);
    if (v.kind == K::Tuple)
      return array;
    return mlir::trace::ListAttr::get(ctx, array);
  }
  }
  return mlir::trace::NoneAttr::get(ctx);
}

mlir::Location toLocation(mlir::MLIRContext *ctx, const Location &loc) {
  mlir::Location file = mlir::UnknownLoc::get(ctx);
  if (!loc.file.empty())
    file = mlir::FileLineColLoc::get(ctx, loc.file, loc.line, loc.column);
  if (loc.name.empty())
    return file;
  return mlir::NameLoc::get(mlir::StringAttr::get(ctx, loc.name), file);
}

size_t depthOf(const ScalarValue &v) {
  size_t d = 0;
  for (const ScalarValue &e : v.elements)
    d = std::max(d, depthOf(e));
  return v.elements.empty() && v.kind != ScalarValue::Kind::List &&
                 v.kind != ScalarValue::Kind::Tuple
             ? 0
             : d + 1;
}

/// A tensor type from Python's text, or an error naming `what`: nested no
/// deeper than every reader of MLIR text allows (MLIR's parser recurses),
/// and the parser's diagnostics kept out of later messages.
Expected<mlir::Type> parseTensorType(Session &session, const std::string &text,
                                     const std::string &what) {
  if (traceir::findTooDeepNesting(text))
    return makeError("'" + text.substr(0, 80) + "...' (" + what +
                     ") nests deeper than " +
                     strCat(traceir::kMaxNestingDepth));
  mlir::Type t = mlir::parseType(text, &session.context, nullptr,
                                 /*isKnownNullTerminated=*/false);
  session.diagnostics.clear();
  if (!t || !mlir::isa<mlir::TensorType>(t))
    return makeError("'" + text + "' is not a tensor type (" + what + ")");
  return t;
}

} // namespace

Expected<mlir::Location> IRModule::Impl::location(const Location &loc) {
  if (loc.copyFrom < 0)
    return toLocation(&session->context, loc);
  auto op = resolve(loc.copyFrom);
  if (!op)
    return makeError("the location's node: " + toString(op.takeError()));
  return (*op)->getLoc();
}

std::unique_ptr<IRModule> IRModule::create(const std::string &name,
                                           const Location &loc) {
  std::unique_ptr<IRModule> m(new IRModule());
  m->impl->session = std::make_shared<Session>();
  m->impl->sourceName = name;
  mlir::MLIRContext *ctx = &m->impl->session->context;
  mlir::Location where = toLocation(ctx, loc);
  if (mlir::isa<mlir::UnknownLoc>(where))
    where = mlir::FileLineColLoc::get(ctx, name, 0, 0);
  m->impl->module = mlir::ModuleOp::create(where);
  return m;
}

bool IRModule::moduleLocation(Location &parts) const {
  return locationParts(impl->module->getLoc(), parts);
}

/// Drops `graph`'s memory plan (plan-memory), which its frees decide.
static void dropPlan(GraphOp graph) {
  using mlir::trace::TraceDialect;
  graph->removeAttr(TraceDialect::kArenaBytesAttrName);
  graph->removeAttr(TraceDialect::kArenaAlignmentAttrName);
  for (mlir::Operation &op : graph.getBody().front())
    op.removeAttr(TraceDialect::kArenaOffsetsAttrName);
}

/// Checks that `graph` may be edited (it holds no trace.free and no memory
/// plan).
Error IRModule::Impl::checkEditable(GraphOp graph) {
  if (graph->hasAttr(mlir::trace::TraceDialect::kArenaBytesAttrName))
    return makeError("graph @" + graph.getSymName().str() +
                     " holds a memory plan (from plan-memory): an edit "
                     "could make two storages alive at once share bytes. "
                     "Strip it first (Module.strip_frees() drops it with the "
                     "frees) and run plan-memory again after editing");
  // Builders never make a free, so whether a graph holds one changes only
  // when a pipeline runs (which clears this cache), a free is erased or
  // frees are stripped: scanning once per graph keeps building linear.
  auto [it, inserted] = holdsFrees.try_emplace(graph.getOperation(), false);
  if (inserted)
    for (mlir::Operation &op : graph.getBody().front())
      if (mlir::isa<mlir::trace::FreeOp>(op)) {
        it->second = true;
        break;
      }
  if (it->second)
    return makeError(
        "graph @" + graph.getSymName().str() +
        " holds trace.free ops (from free-dead-tensors): an edit could "
        "move a use past its free. Strip them first (Module.strip_frees()) "
        "and run free-dead-tensors again after editing");
  return Error::success();
}

namespace {
/// The op the insertion goes before, or an error; sets `graph` and the
/// location `loc` names.
Expected<mlir::Operation *> insertionPoint(IRModule::Impl &impl,
                                           const InsertPoint &at,
                                           const Location &loc, GraphOp &graph,
                                           mlir::Location &where) {
  auto g = impl.resolveGraph(at.graph);
  if (!g)
    return g.takeError();
  graph = *g;
  auto located = impl.location(loc);
  if (!located)
    return located.takeError();
  where = *located;
  if (Error err = impl.checkEditable(graph))
    return err;
  mlir::Block &body = graph.getBody().front();
  if (at.anchor < 0) {
    if (body.empty() || !body.back().hasTrait<mlir::OpTrait::IsTerminator>())
      return makeError("graph @" + graph.getSymName().str() + " has no ret");
    return &body.back();
  }
  auto anchor = impl.resolve(at.anchor);
  if (!anchor)
    return anchor.takeError();
  if ((*anchor)->getBlock() != &body)
    return makeError("the insertion point is not a node of @" +
                     graph.getSymName().str());
  if (!at.after)
    return *anchor;
  if ((*anchor)->hasTrait<mlir::OpTrait::IsTerminator>())
    return makeError("cannot insert after the graph's ret");
  return (*anchor)->getNextNode();
}

/// Checks that `v` is of `graph` and defined before `before`.
Error checkDefinedBefore(mlir::Value v, GraphOp graph, mlir::Operation *before,
                         const std::string &what) {
  mlir::Block &body = graph.getBody().front();
  if (auto arg = mlir::dyn_cast<mlir::BlockArgument>(v)) {
    if (arg.getOwner() != &body)
      return makeError(what + " is an argument of another graph");
    return Error::success();
  }
  mlir::Operation *def = v.getDefiningOp();
  if (def->getBlock() != &body)
    return makeError(what + " is a value of another graph");
  // Every op of the body comes before its terminator; asking MLIR would
  // renumber the block each time, as appending before `ret` uses up the
  // gaps of its order numbers.
  if (before && !before->hasTrait<mlir::OpTrait::IsTerminator>() &&
      !def->isBeforeInBlock(before))
    return makeError(what + " is defined after the insertion point");
  return Error::success();
}
} // namespace

Result<int64_t> IRModule::createPyOp(const InsertPoint &at,
                                     const std::string &target,
                                     const std::vector<CallArg> &args,
                                     const std::vector<std::string> &types,
                                     const Location &loc) {
  GraphOp graph;
  mlir::Location where = mlir::UnknownLoc::get(&impl->session->context);
  auto before = insertionPoint(*impl, at, loc, graph, where);
  if (!before)
    return {-1, toString(before.takeError())};
  if (target.empty())
    return {-1, "a pyop needs an op name"};
  mlir::MLIRContext *ctx = &impl->session->context;
  std::string cconv;
  llvm::SmallVector<mlir::Value> tensors;
  llvm::SmallVector<mlir::Attribute> scalars;
  for (auto [i, a] : llvm::enumerate(args)) {
    std::string what = "argument #" + strCat(i) + " of '" + target + "'";
    if (a.isTensor) {
      auto v = impl->resolveValue(a.value);
      if (!v)
        return {-1, what + ": " + toString(v.takeError())};
      if (Error err = checkDefinedBefore(*v, graph, *before, what))
        return {-1, toString(std::move(err))};
      tensors.push_back(*v);
      cconv += 't';
    } else {
      if (depthOf(a.scalar) > traceir::kMaxScalarDepth)
        return {-1, what + " nests tuples and lists more than " +
                        strCat(traceir::kMaxScalarDepth) + " deep"};
      scalars.push_back(fromScalarValue(ctx, a.scalar));
      cconv += 's';
    }
  }
  llvm::SmallVector<mlir::Type> resultTypes;
  if (!types.empty()) {
    for (const std::string &text : types) {
      auto t = parseTensorType(*impl->session, text,
                               "a result type of '" + target + "'");
      if (!t)
        return {-1, toString(t.takeError())};
      resultTypes.push_back(*t);
    }
  } else {
    const mlir::trace::OpInfo *info = mlir::trace::lookupOp(target);
    if (!info)
      return {-1, "op '" + target +
                      "' is not in the registry: give its result types"};
    llvm::SmallVector<mlir::Type> operandTypes;
    for (mlir::Value v : tensors)
      operandTypes.push_back(v.getType());
    mlir::trace::PyArgs pyArgs(cconv, operandTypes, scalars);
    mlir::trace::InferError err;
    if (!info->infer(pyArgs, ctx, resultTypes, err))
      return {-1, "'" + target + "': " + err.message};
  }
  mlir::OpBuilder b(*before);
  auto op = mlir::trace::PyOp::create(b, where, resultTypes, target, tensors,
                                      scalars, cconv);
  impl->session->diagnostics.clear();
  if (mlir::failed(mlir::verify(op))) {
    std::string msg = impl->session->error("'" + target + "' does not verify");
    op->erase();
    return {-1, msg};
  }
  impl->touchDefiners(op);
  return {impl->idOf(op), {}};
}

Result<int64_t> IRModule::createConstant(const InsertPoint &at,
                                         const std::string &dtypeName,
                                         const std::vector<int64_t> &shape,
                                         const std::string &bytes,
                                         const Location &loc) {
  GraphOp graph;
  mlir::Location where = mlir::UnknownLoc::get(&impl->session->context);
  auto before = insertionPoint(*impl, at, loc, graph, where);
  if (!before)
    return {-1, toString(before.takeError())};
  std::optional<DType> dtype = dtypeFromSafetensors(dtypeName);
  if (!dtype)
    return {-1,
            "a constant of dtype " + dtypeName + ", which TraceIR cannot hold"};
  std::optional<int64_t> want =
      checkedTensorBytes(shape, int64_t(dtypeSize(*dtype)));
  if (!want || *want > kMaxTensorBytes)
    return {-1, "a constant of shape " + shapeToString(shape) +
                    " is over TraceIR's tensor size limit"};
  if (*want != int64_t(bytes.size()))
    return {-1, "a constant of " + std::string(dtypeName) +
                    shapeToString(shape) + " needs " + strCat(*want) +
                    " bytes, got " + strCat(bytes.size())};
  mlir::MLIRContext *ctx = &impl->session->context;
  mlir::Type element = elementTypeOf(ctx, *dtype);
  auto type = mlir::RankedTensorType::get(shape, element);
  mlir::DenseElementsAttr value;
  if (*dtype == DType::Bool) {
    // MLIR packs i1 elements as bits; build them from bools.
    llvm::SmallVector<bool> bits;
    for (char c : bytes)
      bits.push_back(c != 0);
    value = mlir::DenseElementsAttr::get(type, llvm::ArrayRef<bool>(bits));
  } else {
    value = mlir::DenseElementsAttr::getFromRawBuffer(
        type, llvm::ArrayRef<char>(bytes.data(), bytes.size()));
  }
  mlir::OpBuilder ob(*before);
  auto op = mlir::trace::ConstantOp::create(ob, where, type, value);
  return {impl->idOf(op), {}};
}

std::string IRModule::replaceAllUsesWith(const ValueRef &fromRef,
                                         const ValueRef &toRef) {
  auto from = impl->resolveValue(fromRef);
  if (!from)
    return toString(from.takeError());
  auto to = impl->resolveValue(toRef);
  if (!to)
    return toString(to.takeError());
  if (*from == *to)
    return {};
  auto graph = mlir::dyn_cast<GraphOp>(from->getParentBlock()->getParentOp());
  if (!graph || to->getParentBlock() != from->getParentBlock())
    return "replace_all_uses_with: the two values are of different graphs";
  if (Error err = impl->checkEditable(graph))
    return toString(std::move(err));
  // The replacement's own node keeps reading `from`.
  mlir::Operation *toOwner = to->getDefiningOp();
  auto replaced = [&](mlir::OpOperand &use) {
    return !toOwner || use.getOwner() != toOwner;
  };
  for (mlir::OpOperand &use : from->getUses())
    if (!replaced(use))
      continue;
    else if (Error err = checkDefinedBefore(*to, graph, use.getOwner(),
                                            "the replacement"))
      return toString(std::move(err)) +
             " (a use of the replaced value comes first)";

  // Replace, then infer types downstream; undo everything on failure.
  std::vector<std::pair<mlir::OpOperand *, mlir::Value>> operands;
  std::vector<std::pair<mlir::Value, mlir::Type>> types;
  mlir::FunctionType oldType = graph.getFunctionType();
  for (mlir::OpOperand &use : llvm::make_early_inc_range(from->getUses())) {
    if (!replaced(use))
      continue;
    operands.push_back({&use, *from});
    impl->touched(use.getOwner());
    use.set(*to);
  }
  impl->touched(Impl::definerOf(*from));
  impl->touched(Impl::definerOf(*to));
  auto undo = [&] {
    for (auto &[v, t] : llvm::reverse(types))
      v.setType(t);
    for (auto &[use, v] : operands)
      use->set(v);
    graph.setFunctionType(oldType);
  };
  llvm::SmallVector<mlir::Operation *> work;
  for (auto &[use, v] : operands)
    work.push_back(use->getOwner());
  mlir::MLIRContext *ctx = &impl->session->context;
  while (!work.empty()) {
    mlir::Operation *op = work.pop_back_val();
    if (mlir::isa<mlir::trace::RetOp>(op)) {
      graph.setFunctionType(mlir::FunctionType::get(
          ctx, graph.getFunctionType().getInputs(), op->getOperandTypes()));
      continue;
    }
    auto py = mlir::dyn_cast<mlir::trace::PyOp>(op);
    if (!py)
      continue; // free takes any tensor
    const mlir::trace::OpInfo *info = py.getOpInfo();
    llvm::SmallVector<mlir::Type> inferred;
    if (info) {
      mlir::trace::PyArgs args(py.getCconv(), py.getTensors().getTypes(),
                               py.getScalars().getValue());
      mlir::trace::InferError err;
      if (!info->infer(args, ctx, inferred, err)) {
        std::string where = locationText(py.getLoc());
        undo();
        return "replace_all_uses_with: '" + py.getOpName().str() + "' at " +
               where + " no longer type-checks: " + err.message;
      }
    } else {
      // An unknown op keeps its declared types: nothing to infer them from.
      continue;
    }
    if (inferred.size() != py->getNumResults()) {
      undo();
      return "replace_all_uses_with: '" + py.getOpName().str() +
             "' would change its number of results";
    }
    for (auto [r, t] : llvm::zip(py->getResults(), inferred)) {
      if (r.getType() == t)
        continue;
      types.push_back({r, r.getType()});
      impl->touched(py);
      r.setType(t);
      for (mlir::Operation *user : r.getUsers())
        work.push_back(user);
    }
  }
  return {};
}

std::string IRModule::eraseNode(int64_t id) {
  auto op = impl->resolve(id);
  if (!op)
    return toString(op.takeError());
  auto graph = mlir::dyn_cast_or_null<GraphOp>((*op)->getParentOp());
  if (!graph)
    return "node " + strCat(id) + " is not a node of a graph";
  if ((*op)->hasTrait<mlir::OpTrait::IsTerminator>())
    return "the graph's ret cannot be erased (set_outputs changes what it "
           "returns)";
  if (!mlir::isa<mlir::trace::FreeOp>(*op))
    if (Error err = impl->checkEditable(graph))
      return toString(std::move(err));
  for (mlir::Value r : (*op)->getResults())
    if (!r.use_empty()) {
      std::string users;
      for (mlir::Operation *u : r.getUsers()) {
        if (!users.empty())
          users += ", ";
        users += u->getName().getStringRef().str() + " at " +
                 locationText(u->getLoc());
        if (users.size() > 200)
          break;
      }
      return "the node still has users (" + users + "): replace its uses first";
    }
  if (mlir::isa<mlir::trace::FreeOp>(*op)) {
    impl->holdsFrees.erase(graph); // it may hold no other
    // The storage now lives to the end of the run, where the plan may have
    // put another.
    dropPlan(graph);
  }
  impl->forget(*op);
  (*op)->erase();
  return {};
}

Result<int64_t> IRModule::eliminateDeadCode(int64_t graphId) {
  auto graph = impl->resolveGraph(graphId);
  if (!graph)
    return {0, toString(graph.takeError())};
  if (Error err = impl->checkEditable(*graph))
    return {0, toString(std::move(err))};
  int64_t erased = 0;
  mlir::Block &body = graph->getBody().front();
  // Backwards, so a chain of dead ops goes in one sweep.
  for (mlir::Operation &op :
       llvm::make_early_inc_range(llvm::reverse(body.getOperations()))) {
    if (op.hasTrait<mlir::OpTrait::IsTerminator>() ||
        !mlir::isOpTriviallyDead(&op))
      continue;
    impl->forget(&op);
    op.erase();
    ++erased;
  }
  return {erased, {}};
}

int64_t IRModule::stripFrees() {
  impl->holdsFrees.clear();
  int64_t n = 0;
  for (GraphOp g : impl->module->getOps<GraphOp>()) {
    dropPlan(g); // made for these frees
    for (mlir::Operation &op :
         llvm::make_early_inc_range(g.getBody().front().getOperations()))
      if (mlir::isa<mlir::trace::FreeOp>(op)) {
        impl->forget(&op);
        op.erase();
        ++n;
      }
  }
  return n;
}

Result<int64_t> IRModule::addGraph(const std::string &name,
                                   const Location &loc) {
  if (name.empty())
    return {-1, "a graph needs a name"};
  mlir::SymbolTable symbols(*impl->module);
  if (symbols.lookup(name))
    return {-1, "the module already has a @" + name};
  auto located = impl->location(loc);
  if (!located)
    return {-1, toString(located.takeError())};
  mlir::MLIRContext *ctx = &impl->session->context;
  mlir::OpBuilder b(ctx);
  b.setInsertionPointToEnd(impl->module->getBody());
  auto graph = GraphOp::create(b, *located, name, b.getFunctionType({}, {}));
  b.setInsertionPointToEnd(&graph.getBody().front());
  mlir::trace::RetOp::create(b, graph.getLoc());
  return {impl->idOf(graph), {}};
}

Result<ValueRef> IRModule::addArgument(int64_t graphId, const std::string &name,
                                       bool isParam, bool donated,
                                       const std::string &typeText,
                                       const Location &loc) {
  auto graph = impl->resolveGraph(graphId);
  if (!graph)
    return {{}, toString(graph.takeError())};
  if (name.empty())
    return {{},
            std::string(isParam ? "a parameter" : "an input") +
                " needs a name"};
  if (isParam && donated)
    return {{}, "parameter '" + name + "': only inputs can be donated"};
  auto located = impl->location(loc);
  if (!located)
    return {{}, toString(located.takeError())};
  mlir::MLIRContext *ctx = &impl->session->context;
  auto parsed =
      parseTensorType(*impl->session, typeText, "argument '" + name + "'");
  if (!parsed)
    return {{}, toString(parsed.takeError())};
  mlir::Type type = *parsed;
  mlir::Block &body = graph->getBody().front();
  for (unsigned i = 0; i < body.getNumArguments(); ++i)
    if ((graph->isParam(i) ? graph->getParamName(i) : graph->getInputName(i)) ==
        name)
      return {{},
              "graph @" + graph->getSymName().str() +
                  " already has an argument '" + name + "'"};
  mlir::Builder b(ctx);
  llvm::SmallVector<mlir::NamedAttribute> attrs = {
      b.getNamedAttr(isParam ? mlir::trace::TraceDialect::kParamAttrName
                             : mlir::trace::TraceDialect::kInputAttrName,
                     b.getStringAttr(name))};
  if (donated)
    attrs.push_back(b.getNamedAttr(mlir::trace::TraceDialect::kDonatedAttrName,
                                   b.getUnitAttr()));
  unsigned index = body.getNumArguments();
  if (mlir::failed(graph->insertArgument(index, type,
                                         b.getDictionaryAttr(attrs), *located)))
    return {{},
            "cannot add argument '" + name + "' to @" +
                graph->getSymName().str()};
  ValueRef ref;
  ref.node = graphId;
  ref.index = index;
  ref.isArg = true;
  return {ref, {}};
}

std::string IRModule::setOutputs(int64_t graphId,
                                 const std::vector<ValueRef> &values,
                                 const Location &loc) {
  auto graph = impl->resolveGraph(graphId);
  if (!graph)
    return toString(graph.takeError());
  mlir::Block &body = graph->getBody().front();
  mlir::Operation *ret = body.empty() ? nullptr : &body.back();
  if (!ret || !mlir::isa<mlir::trace::RetOp>(ret))
    return "graph @" + graph->getSymName().str() + " has no ret";
  llvm::SmallVector<mlir::Value> outs;
  for (auto [i, ref] : llvm::enumerate(values)) {
    auto v = impl->resolveValue(ref);
    if (!v)
      return "output #" + strCat(i) + ": " + toString(v.takeError());
    if (Error err =
            checkDefinedBefore(*v, *graph, nullptr, "output #" + strCat(i)))
      return toString(std::move(err));
    outs.push_back(*v);
  }
  if (Error err = impl->checkEditable(*graph))
    return toString(std::move(err));
  auto located = impl->location(loc);
  if (!located)
    return toString(located.takeError());
  impl->touchDefiners(ret);
  ret->setOperands(outs);
  impl->touchDefiners(ret);
  impl->touched(ret);
  if (!mlir::isa<mlir::UnknownLoc>(*located))
    ret->setLoc(*located);
  graph->setFunctionType(mlir::FunctionType::get(
      &impl->session->context, graph->getFunctionType().getInputs(),
      ret->getOperandTypes()));
  return {};
}

Result<api::Tensor> IRModule::constantValue(int64_t id) {
  auto op = impl->resolve(id);
  if (!op)
    return {{}, toString(op.takeError())};
  auto constant = mlir::dyn_cast<mlir::trace::ConstantOp>(*op);
  if (!constant)
    return {{}, "node " + strCat(id) + " is not a constant"};
  auto dense = mlir::dyn_cast<mlir::DenseElementsAttr>(constant.getValue());
  if (!dense)
    return {{},
            "the constant is not a dense literal (a dense_resource "
            "blob): its bytes are not in the IR"};
  auto type = mlir::cast<mlir::RankedTensorType>(dense.getType());
  auto dtype = traceir::dtypeOf(type.getElementType());
  if (!dtype)
    return {{}, "a constant of an element type TraceIR cannot hold"};
  api::Tensor t;
  t.shape.assign(type.getShape().begin(), type.getShape().end());
  t.dtype = dtypeSafetensorsName(*dtype);
  int64_t n = type.getNumElements();
  if (*dtype == DType::Bool) {
    for (bool b : dense.getValues<bool>())
      t.data.push_back(b ? 1 : 0);
    return {std::move(t), {}};
  }
  size_t elementBytes = dtypeSize(*dtype);
  llvm::ArrayRef<char> raw = dense.getRawData();
  t.data.resize(size_t(n) * elementBytes);
  // A splat holds one element.
  for (int64_t i = 0; i < n; ++i)
    std::memcpy(t.data.data() + i * elementBytes,
                raw.data() + (dense.isSplat() ? 0 : i * elementBytes),
                elementBytes);
  return {std::move(t), {}};
}
