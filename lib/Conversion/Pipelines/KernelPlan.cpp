//===- KernelPlan.cpp - Reading per-op host code into GeneratedOps --------===//

#include "TraceIR/Conversion/KernelPlan.h"
#include "TraceIR/Dialect/OpRegistry.h"
#include "TraceIR/Support/CheckedMath.h"
#include "TraceIR/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace mlir;
using namespace mlir::trace;
using traceir::GeneratedKernels;
using traceir::GeneratedOp;
using traceir::KernelArg;
using traceir::KernelLaunch;

namespace {

llvm::Error makeError(const Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

/// A host value while the host code is evaluated: a constant, or a view
/// of a buffer (its number, and its offset, sizes and strides in
/// elements).
struct HostValue {
  Attribute constant;
  int32_t buffer = -1;
  int64_t offset = 0;
  SmallVector<int64_t, 4> sizes, strides;
  bool isView() const { return buffer >= 0; }
};

/// Evaluates one per-op host function into a GeneratedOp, the way a CPU
/// would run it but with every kernel launch and device copy recorded
/// instead of done: constants and index arithmetic are folded by the ops'
/// own folders, views get their layouts, loops with constant bounds (the
/// time loop of an RNN) are unrolled, and a deallocated temporary is
/// reused by the next allocation of its size. Anything else (data-dependent
/// control flow, host reads or writes of buffers) makes the op keep the
/// runtime's kernel: `why` says what was found.
class HostReader {
public:
  HostReader(GeneratedKernels &out, llvm::StringMap<uint32_t> &kernelIndex)
      : out(out), kernelIndex(kernelIndex) {}

  std::optional<GeneratedOp> read(func::FuncOp func, unsigned numOperands,
                                  unsigned numResults, std::string &why) {
    GeneratedOp op;
    op.function = func.getSymName().str();
    op.numOperands = numOperands;
    op.numResults = numResults;
    values.clear();
    freeTemps.clear();
    tempOf.clear();
    if (func.getNumArguments() != numOperands + numResults) {
      why = "its host function takes " +
            std::to_string(func.getNumArguments()) + " buffers, not " +
            std::to_string(numOperands + numResults) +
            " (operands and result out-params)";
      return std::nullopt;
    }
    if (!func.getBody().hasOneBlock()) {
      why = "its host code branches";
      return std::nullopt;
    }
    for (BlockArgument arg : func.getArguments()) {
      auto type = dyn_cast<MemRefType>(arg.getType());
      if (!type || !type.getLayout().isIdentity() || !type.hasStaticShape()) {
        why = "a host function argument is not a dense memref";
        return std::nullopt;
      }
      values[arg] = denseView(arg.getArgNumber(), type);
    }
    size_t namesBefore = out.kernelNames.size();
    if (!runBlock(func.getBody().front(), op, why)) {
      // The op keeps the runtime's kernel: its kernels are not looked up.
      for (size_t i = namesBefore; i < out.kernelNames.size(); ++i)
        kernelIndex.erase(out.kernelNames[i]);
      out.kernelNames.resize(namesBefore);
      return std::nullopt;
    }
    return op;
  }

private:
  // Unrolling stops here: past it the plan would be larger than the code.
  static constexpr size_t kMaxSteps = 1 << 16;

  static HostValue denseView(int32_t buffer, MemRefType type) {
    HostValue v;
    v.buffer = buffer;
    v.sizes.assign(type.getShape().begin(), type.getShape().end());
    v.strides = computeStrides(type.getShape());
    return v;
  }

  bool runBlock(Block &block, GeneratedOp &op, std::string &why) {
    for (Operation &inst : block)
      if (!runOp(inst, op, why))
        return false;
    return true;
  }

  bool runOp(Operation &inst, GeneratedOp &op, std::string &why) {
    if (isa<func::ReturnOp, scf::YieldOp>(inst))
      return true; // loops read their yields themselves
    if (auto alloc = dyn_cast<memref::AllocOp>(inst))
      return runAlloc(alloc, op, why);
    if (auto dealloc = dyn_cast<memref::DeallocOp>(inst)) {
      // Its storage is free for the next allocation of the same size:
      // every step runs in order on one stream.
      auto it = values.find(dealloc.getMemref());
      if (it != values.end() && tempOf.count(it->second.buffer))
        freeTemps[tempOf[it->second.buffer]].push_back(it->second.buffer);
      return true;
    }
    if (auto loop = dyn_cast<scf::ForOp>(inst))
      return runFor(loop, op, why);
    if (auto subview = dyn_cast<memref::SubViewOp>(inst))
      return runSubView(subview, why);
    if (isa<memref::ExpandShapeOp, memref::CollapseShapeOp, memref::CastOp>(
            inst))
      return runReshape(inst, why);
    if (auto launch = dyn_cast<gpu::LaunchFuncOp>(inst))
      return runLaunch(launch, op, why);
    if (auto copy = dyn_cast<memref::CopyOp>(inst))
      return runCopy(copy, op, why);
    if (inst.getNumRegions() == 0 && inst.getNumResults() > 0 &&
        isMemoryEffectFree(&inst) && fold(inst))
      return true; // constants and index arithmetic
    why = "its host code has '" + inst.getName().getStringRef().str() + "'";
    return false;
  }

  /// Folds a side-effect-free op whose operands are all constants.
  bool fold(Operation &inst) {
    SmallVector<Attribute> operands;
    for (Value v : inst.getOperands()) {
      auto it = values.find(v);
      if (it == values.end() || !it->second.constant)
        return false;
      operands.push_back(it->second.constant);
    }
    SmallVector<OpFoldResult> results;
    if (auto cst = dyn_cast<arith::ConstantOp>(inst))
      results.push_back(cst.getValue());
    else if (failed(inst.fold(operands, results)) ||
             results.size() != inst.getNumResults())
      return false;
    for (auto [result, folded] : llvm::zip(inst.getResults(), results)) {
      HostValue v;
      if (auto attr = dyn_cast<Attribute>(folded))
        v.constant = attr;
      else if (auto it = values.find(cast<Value>(folded)); it != values.end())
        v = it->second; // folded to one of its operands
      if (!v.constant)
        return false;
      values[result] = v;
    }
    return true;
  }

  std::optional<int64_t> constInt(Value v) {
    auto it = values.find(v);
    if (it == values.end())
      return std::nullopt;
    if (auto attr = dyn_cast_or_null<IntegerAttr>(it->second.constant))
      return attr.getInt();
    return std::nullopt;
  }

  bool runAlloc(memref::AllocOp alloc, GeneratedOp &op, std::string &why) {
    MemRefType type = alloc.getType();
    if (!type.hasStaticShape() || !type.getLayout().isIdentity()) {
      why = "its host code allocates a dynamically shaped buffer";
      return false;
    }
    std::optional<int64_t> fits = traceir::checkedTensorBytes(
        type.getShape(), mlir::trace::elementByteSize(type.getElementType()));
    if (!fits) {
      why = "its host code allocates a buffer over TraceIR's size limit";
      return false;
    }
    int64_t bytes = *fits;
    int32_t buffer;
    auto &reusable = freeTemps[bytes];
    if (!reusable.empty()) {
      buffer = reusable.pop_back_val();
    } else {
      buffer = op.numOperands + op.numResults + op.tempBytes.size();
      op.tempBytes.push_back(bytes);
      tempOf[buffer] = bytes;
    }
    values[alloc.getResult()] = denseView(buffer, type);
    return true;
  }

  bool runFor(scf::ForOp loop, GeneratedOp &op, std::string &why) {
    std::optional<int64_t> lb = constInt(loop.getLowerBound());
    std::optional<int64_t> ub = constInt(loop.getUpperBound());
    std::optional<int64_t> step = constInt(loop.getStep());
    if (!lb || !ub || !step || *step <= 0) {
      why = "its host code has a loop without constant bounds";
      return false;
    }
    Block &body = *loop.getBody();
    SmallVector<HostValue> carried;
    for (Value init : loop.getInitArgs()) {
      auto it = values.find(init);
      if (it == values.end()) {
        why = "a host loop carries a value it cannot follow";
        return false;
      }
      carried.push_back(it->second);
    }
    for (int64_t i = *lb; i < *ub; i += *step) {
      HostValue iv;
      iv.constant = IntegerAttr::get(loop.getInductionVar().getType(), i);
      values[loop.getInductionVar()] = iv;
      for (auto [arg, v] : llvm::zip(loop.getRegionIterArgs(), carried))
        values[arg] = v;
      if (!runBlock(body, op, why))
        return false;
      if (op.steps.size() > kMaxSteps) {
        why = "its host loops launch more than " + std::to_string(kMaxSteps) +
              " kernels";
        return false;
      }
      auto yield = cast<scf::YieldOp>(body.getTerminator());
      for (auto [k, v] : llvm::enumerate(yield.getOperands()))
        carried[k] = values[v];
    }
    for (auto [result, v] : llvm::zip(loop.getResults(), carried))
      values[result] = v;
    return true;
  }

  /// Sizes and strides from the (static) result type; the offset from the
  /// source's, which may depend on a loop's induction variable.
  bool viewOf(Value result, const HostValue &source, int64_t offset,
              std::string &why) {
    auto type = cast<MemRefType>(result.getType());
    SmallVector<int64_t> strides;
    int64_t typeOffset;
    if (!type.hasStaticShape() ||
        failed(type.getStridesAndOffset(strides, typeOffset)) ||
        llvm::any_of(strides, ShapedType::isDynamic)) {
      why = "its host code makes a view without static sizes and strides";
      return false;
    }
    HostValue v;
    v.buffer = source.buffer;
    v.offset = offset;
    v.sizes.assign(type.getShape().begin(), type.getShape().end());
    v.strides.assign(strides.begin(), strides.end());
    values[result] = v;
    return true;
  }

  const HostValue *viewAt(Value v) {
    auto it = values.find(v);
    return it != values.end() && it->second.isView() ? &it->second : nullptr;
  }

  bool runSubView(memref::SubViewOp subview, std::string &why) {
    const HostValue *src = viewAt(subview.getSource());
    if (!src) {
      why = "its host code has a view of something other than a buffer";
      return false;
    }
    int64_t offset = src->offset;
    for (auto [d, ofr] : llvm::enumerate(subview.getMixedOffsets())) {
      std::optional<int64_t> o = getConstantIntValue(ofr);
      if (!o)
        o = constInt(cast<Value>(ofr));
      if (!o || d >= src->strides.size()) {
        why = "its host code has a view at an offset it cannot compute";
        return false;
      }
      offset += *o * src->strides[d];
    }
    HostValue source = *src;
    return viewOf(subview.getResult(), source, offset, why);
  }

  bool runReshape(Operation &inst, std::string &why) {
    const HostValue *src = viewAt(inst.getOperand(0));
    if (!src) {
      why = "its host code has a view of something other than a buffer";
      return false;
    }
    HostValue source = *src;
    return viewOf(inst.getResult(0), source, source.offset, why);
  }

  /// Row-major without gaps (a size-1 dimension's stride does not matter).
  static bool isDense(const HostValue &v) {
    int64_t expected = 1;
    for (int64_t d = v.sizes.size() - 1; d >= 0; --d) {
      if (v.sizes[d] != 1 && v.strides[d] != expected)
        return false;
      expected *= v.sizes[d];
    }
    return true;
  }

  /// A copy between dense (row-major) views is one device memcpy; this is
  /// what bufferization leaves when a result is a reshaped temporary.
  bool runCopy(memref::CopyOp copy, GeneratedOp &op, std::string &why) {
    const HostValue *src = viewAt(copy.getSource());
    const HostValue *dst = viewAt(copy.getTarget());
    auto srcType = cast<MemRefType>(copy.getSource().getType());
    auto dstType = cast<MemRefType>(copy.getTarget().getType());
    if (!src || !dst || srcType.getElementType() != dstType.getElementType() ||
        !isDense(*src) || !isDense(*dst)) {
      why = "its host code copies between buffers that are not dense";
      return false;
    }
    int64_t elementBytes =
        mlir::trace::elementByteSize(srcType.getElementType());
    std::optional<int64_t> bytes =
        traceir::checkedTensorBytes(srcType.getShape(), elementBytes);
    std::optional<int64_t> srcOffset =
        traceir::checkedMul(src->offset, elementBytes);
    std::optional<int64_t> dstOffset =
        traceir::checkedMul(dst->offset, elementBytes);
    if (!bytes || !srcOffset || !dstOffset) {
      why = "its host code copies a buffer over TraceIR's size limit";
      return false;
    }
    traceir::DeviceCopy c;
    c.src = src->buffer;
    c.dst = dst->buffer;
    c.srcOffset = *srcOffset;
    c.dstOffset = *dstOffset;
    c.bytes = *bytes;
    op.steps.push_back({traceir::GeneratedStep::Kind::Copy,
                        static_cast<uint32_t>(op.copies.size())});
    op.copies.push_back(c);
    return true;
  }

  bool runLaunch(gpu::LaunchFuncOp launch, GeneratedOp &op, std::string &why) {
    if (!launch.getAsyncDependencies().empty() || launch.getAsyncToken() ||
        launch.hasClusterSize()) {
      why = "a launch is asynchronous or uses clusters";
      return false;
    }
    KernelLaunch k;
    gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
    gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
    Value dims[6] = {grid.x, grid.y, grid.z, block.x, block.y, block.z};
    uint32_t *slots[6] = {&k.grid[0],  &k.grid[1],  &k.grid[2],
                          &k.block[0], &k.block[1], &k.block[2]};
    for (int d = 0; d < 6; ++d) {
      std::optional<int64_t> n = constInt(dims[d]);
      if (!n || *n < 1 || *n > std::numeric_limits<uint32_t>::max()) {
        why = "a launch has a grid or block size that is not a constant";
        return false;
      }
      *slots[d] = static_cast<uint32_t>(*n);
    }
    if (Value shared = launch.getDynamicSharedMemorySize()) {
      std::optional<int64_t> n = constInt(shared);
      if (!n || *n < 0) {
        why = "a launch's shared memory size is not a constant";
        return false;
      }
      k.dynamicSharedBytes = static_cast<uint32_t>(*n);
    }
    StringRef name = launch.getKernelName().getValue();
    auto [it, inserted] = kernelIndex.try_emplace(name, out.kernelNames.size());
    if (inserted)
      out.kernelNames.push_back(name.str());
    k.kernel = it->second;
    k.argBegin = op.args.size();
    // The kernel's LLVM signature, as gpu-to-llvm would pass it.
    for (Value arg : launch.getKernelOperands()) {
      auto found = values.find(arg);
      if (found == values.end()) {
        why = "a kernel takes a value the host code does not compute";
        return false;
      }
      const HostValue &v = found->second;
      if (v.isView()) {
        KernelArg ptr;
        ptr.kind = KernelArg::Kind::Pointer;
        ptr.buffer = v.buffer;
        op.args.push_back(ptr); // allocated
        op.args.push_back(ptr); // aligned
        auto i64 = [&](int64_t x) {
          KernelArg a;
          a.kind = KernelArg::Kind::I64;
          a.i = x;
          op.args.push_back(a);
        };
        i64(v.offset);
        for (int64_t size : v.sizes)
          i64(size);
        for (int64_t stride : v.strides)
          i64(stride);
        continue;
      }
      KernelArg a;
      if (auto i = dyn_cast_or_null<IntegerAttr>(v.constant)) {
        unsigned width = isa<IndexType>(i.getType())
                             ? 64
                             : i.getType().getIntOrFloatBitWidth();
        if (width != 64 && width != 32) {
          why = "a kernel takes a " + std::to_string(width) + "-bit integer";
          return false;
        }
        a.kind = width == 64 ? KernelArg::Kind::I64 : KernelArg::Kind::I32;
        a.i = i.getInt();
      } else if (auto f = dyn_cast_or_null<FloatAttr>(v.constant)) {
        if (!f.getType().isF32() && !f.getType().isF64()) {
          why = "a kernel takes a float that is neither f32 nor f64";
          return false;
        }
        a.kind =
            f.getType().isF32() ? KernelArg::Kind::F32 : KernelArg::Kind::F64;
        a.f = f.getValueAsDouble();
      } else {
        why = "a kernel takes a value that is not a buffer or a number";
        return false;
      }
      op.args.push_back(a);
    }
    k.numArgs = op.args.size() - k.argBegin;
    op.steps.push_back({traceir::GeneratedStep::Kind::Launch,
                        static_cast<uint32_t>(op.launches.size())});
    op.launches.push_back(k);
    return true;
  }

  GeneratedKernels &out;
  llvm::StringMap<uint32_t> &kernelIndex;
  llvm::DenseMap<Value, HostValue> values;
  /// Temporaries by size that a dealloc made free, and each one's size.
  llvm::DenseMap<int64_t, SmallVector<int32_t, 2>> freeTemps;
  llvm::DenseMap<int32_t, int64_t> tempOf;
};

} // namespace

llvm::Expected<GeneratedKernels>
mlir::trace::buildGeneratedKernels(GraphOp graph,
                                   const GpuPipelineOptions &options,
                                   std::optional<std::string> prebuilt) {
  MLIRContext *ctx = graph.getContext();
  DialectRegistry registry;
  registerTracePipelineDialects(registry);
  ctx->appendDialectRegistry(registry);

  // The pyops as --trace-split-ops numbers them, before the graph is cloned.
  SmallVector<PyOp> pyops(graph.getBody().front().getOps<PyOp>());
  OwningOpRef<ModuleOp> module = ModuleOp::create(graph.getLoc());
  module->push_back(graph.clone());

  // The caller's chip, features, toolkit and tiling; the runtime's form.
  GpuPipelineOptions opts;
  opts.copyOptionValuesFrom(options);
  opts.perOp = true;
  opts.mergeKernelModules = true;
  opts.lowerHost = false;
  opts.serialize = !prebuilt;

  // Collect the pipeline's errors into the error; its remarks (why an op
  // was not lowered, at the op's location) go into notCovered.
  std::string diagnostics;
  SmallVector<std::pair<Location, std::string>> remarks;
  ScopedDiagnosticHandler handler(ctx, [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error) {
      if (!diagnostics.empty())
        diagnostics += "\n";
      llvm::raw_string_ostream os(diagnostics);
      os << diag.getLocation() << ": " << diag;
    } else if (diag.getSeverity() == DiagnosticSeverity::Remark) {
      remarks.emplace_back(diag.getLocation(), diag.str());
    }
    return success();
  });
  PassManager pm(ctx, ModuleOp::getOperationName());
  buildTraceLowerToGpuPipeline(pm, opts);
  if (failed(pm.run(*module)))
    return makeError("compiling the generated kernels of @" +
                     graph.getSymName() + " failed" +
                     (diagnostics.empty() ? "" : ":\n" + diagnostics));

  GeneratedKernels out;
  out.ops.resize(pyops.size());
  llvm::StringMap<uint32_t> kernelIndex;
  HostReader reader(out, kernelIndex);
  for (auto [k, pyop] : llvm::enumerate(pyops)) {
    std::string where =
        "op " + std::to_string(k) + " '" + pyop.getOpName().str() + "'";
    if (std::optional<std::string> why = whyNotSplittable(pyop)) {
      out.notCovered.push_back(where + ": " + *why);
      continue;
    }
    std::string name = splitOpSymbol(graph.getSymName(), k, pyop.getOpName());
    auto func = module->lookupSymbol<func::FuncOp>(name);
    if (!func) {
      // The split copy of the op kept its location, and so did the remark.
      auto remark = llvm::find_if(
          remarks, [&](const auto &r) { return r.first == pyop.getLoc(); });
      out.notCovered.push_back(where + ": " +
                               (remark != remarks.end()
                                    ? remark->second
                                    : std::string("not lowered to linalg")));
      continue;
    }
    std::string why;
    std::optional<GeneratedOp> op =
        reader.read(func, pyop->getNumOperands(), pyop->getNumResults(), why);
    if (!op) {
      out.notCovered.push_back(where + ": " + why);
      continue;
    }
    out.ops[k] = std::move(*op);
  }

  if (prebuilt) {
    out.binary = std::move(*prebuilt);
  } else {
    SmallVector<gpu::BinaryOp> binaries(module->getOps<gpu::BinaryOp>());
    if (binaries.size() > 1)
      return makeError("expected one gpu.binary after lowering @" +
                       graph.getSymName() + ", found " +
                       Twine(binaries.size()));
    if (!binaries.empty()) {
      auto object =
          cast<gpu::ObjectAttr>(binaries.front().getObjects().getValue()[0]);
      out.binary = object.getObject().getValue().str();
    }
  }
  out.chip = std::string(options.chip);
  return out;
}
