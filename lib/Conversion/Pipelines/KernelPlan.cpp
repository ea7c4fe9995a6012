//===- KernelPlan.cpp - Reading per-op host code into GeneratedOps --------===//

#include "TraceIR/Conversion/KernelPlan.h"
#include "TraceIR/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

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

/// Reads one per-op host function. Anything but straight-line allocations,
/// constants, views, launches and deallocations makes the op keep the
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
    buffers.clear();
    constants.clear();
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
      if (!type || !type.getLayout().isIdentity()) {
        why = "a host function argument is not a dense memref";
        return std::nullopt;
      }
      buffers[arg] = arg.getArgNumber();
    }
    for (Operation &inst : func.getBody().front()) {
      if (!readOp(inst, op, why))
        return std::nullopt;
    }
    return op;
  }

private:
  bool readOp(Operation &inst, GeneratedOp &op, std::string &why) {
    if (auto cst = dyn_cast<arith::ConstantOp>(inst)) {
      constants[cst.getResult()] = cst.getValue();
      return true;
    }
    if (isa<memref::DeallocOp, func::ReturnOp>(inst))
      return true; // temporaries live until the op's call ends
    if (auto alloc = dyn_cast<memref::AllocOp>(inst)) {
      MemRefType type = alloc.getType();
      if (!type.hasStaticShape() || !type.getLayout().isIdentity()) {
        why = "its host code allocates a dynamically shaped buffer";
        return false;
      }
      int64_t bytes =
          type.getNumElements() *
          ((type.getElementTypeBitWidth() + 7) / 8); // i1 takes a byte
      buffers[alloc.getResult()] =
          op.numOperands + op.numResults + op.tempBytes.size();
      op.tempBytes.push_back(bytes);
      return true;
    }
    if (auto view = dyn_cast<ViewLikeOpInterface>(inst)) {
      // A view's layout is in its (static) type; it only needs its root.
      auto it = buffers.find(view.getViewSource());
      if (inst.getNumResults() != 1 || it == buffers.end()) {
        why = "its host code has a view '" +
              inst.getName().getStringRef().str() +
              "' of something other than a buffer";
        return false;
      }
      buffers[inst.getResult(0)] = it->second;
      return true;
    }
    if (auto launch = dyn_cast<gpu::LaunchFuncOp>(inst))
      return readLaunch(launch, op, why);
    if (auto copy = dyn_cast<memref::CopyOp>(inst))
      return readCopy(copy, op, why);
    why = "its host code has '" + inst.getName().getStringRef().str() + "'";
    return false;
  }

  /// A buffer, or a view of one, with a static layout: its buffer number
  /// and its offset and strides in elements.
  bool layoutOf(Value v, int32_t &buffer, int64_t &offset,
                SmallVectorImpl<int64_t> &strides) {
    auto type = dyn_cast<MemRefType>(v.getType());
    auto it = buffers.find(v);
    if (!type || it == buffers.end() || !type.hasStaticShape() ||
        failed(type.getStridesAndOffset(strides, offset)) ||
        ShapedType::isDynamic(offset) ||
        llvm::any_of(strides, ShapedType::isDynamic))
      return false;
    buffer = it->second;
    return true;
  }

  /// A copy between dense (row-major) layouts is one device memcpy; this
  /// is what bufferization leaves when a result is a reshaped temporary.
  bool readCopy(memref::CopyOp copy, GeneratedOp &op, std::string &why) {
    auto srcType = cast<MemRefType>(copy.getSource().getType());
    auto dstType = cast<MemRefType>(copy.getTarget().getType());
    traceir::DeviceCopy c;
    int64_t srcOffset, dstOffset;
    SmallVector<int64_t> srcStrides, dstStrides;
    if (!layoutOf(copy.getSource(), c.src, srcOffset, srcStrides) ||
        !layoutOf(copy.getTarget(), c.dst, dstOffset, dstStrides) ||
        srcType.getElementType() != dstType.getElementType() ||
        srcStrides != computeStrides(srcType.getShape()) ||
        dstStrides != computeStrides(dstType.getShape())) {
      why = "its host code copies between buffers that are not dense";
      return false;
    }
    int64_t elementBytes = (srcType.getElementTypeBitWidth() + 7) / 8;
    c.srcOffset = srcOffset * elementBytes;
    c.dstOffset = dstOffset * elementBytes;
    c.bytes = srcType.getNumElements() * elementBytes;
    op.steps.push_back({traceir::GeneratedStep::Kind::Copy,
                        static_cast<uint32_t>(op.copies.size())});
    op.copies.push_back(c);
    return true;
  }

  std::optional<int64_t> constInt(Value v) {
    if (auto attr = dyn_cast_or_null<IntegerAttr>(constants.lookup(v)))
      return attr.getInt();
    return std::nullopt;
  }

  bool readLaunch(gpu::LaunchFuncOp launch, GeneratedOp &op, std::string &why) {
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
      if (auto type = dyn_cast<MemRefType>(arg.getType())) {
        SmallVector<int64_t> strides;
        int64_t offset;
        int32_t buffer;
        if (!layoutOf(arg, buffer, offset, strides)) {
          why = "a kernel reads a memref that is not a buffer with a static "
                "layout";
          return false;
        }
        KernelArg ptr;
        ptr.kind = KernelArg::Kind::Pointer;
        ptr.buffer = buffer;
        op.args.push_back(ptr); // allocated
        op.args.push_back(ptr); // aligned
        auto i64 = [&](int64_t v) {
          KernelArg a;
          a.kind = KernelArg::Kind::I64;
          a.i = v;
          op.args.push_back(a);
        };
        i64(offset);
        for (int64_t size : type.getShape())
          i64(size);
        for (int64_t stride : strides)
          i64(stride);
        continue;
      }
      Attribute value = constants.lookup(arg);
      KernelArg a;
      if (auto i = dyn_cast_or_null<IntegerAttr>(value)) {
        unsigned width = isa<IndexType>(i.getType())
                             ? 64
                             : i.getType().getIntOrFloatBitWidth();
        if (width != 64 && width != 32) {
          why = "a kernel takes a " + std::to_string(width) + "-bit integer";
          return false;
        }
        a.kind = width == 64 ? KernelArg::Kind::I64 : KernelArg::Kind::I32;
        a.i = i.getInt();
      } else if (auto f = dyn_cast_or_null<FloatAttr>(value)) {
        if (!f.getType().isF32() && !f.getType().isF64()) {
          why = "a kernel takes a float that is neither f32 nor f64";
          return false;
        }
        a.kind =
            f.getType().isF32() ? KernelArg::Kind::F32 : KernelArg::Kind::F64;
        a.f = f.getValueAsDouble();
      } else {
        why = "a kernel takes a value that is not a buffer or a constant";
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
  llvm::DenseMap<Value, int32_t> buffers;
  llvm::DenseMap<Value, Attribute> constants;
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

  GpuPipelineOptions opts;
  opts.chip = options.chip;
  opts.features = options.features;
  opts.toolkit = options.toolkit;
  opts.format = options.format;
  opts.tileSizes = options.tileSizes;
  opts.perOp = true;
  opts.mergeKernelModules = true;
  opts.lowerHost = false;
  opts.serialize = !prebuilt;

  // Collect the pipeline's diagnostics into the error; remarks (ops left
  // to the runtime) are reported through notCovered instead.
  std::string diagnostics;
  ScopedDiagnosticHandler handler(ctx, [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error) {
      if (!diagnostics.empty())
        diagnostics += "\n";
      llvm::raw_string_ostream os(diagnostics);
      os << diag.getLocation() << ": " << diag;
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
    if (!isSplittableOp(pyop)) {
      out.notCovered.push_back(where + ": a view, an in-place or random op, "
                                       "or dynamic shapes");
      continue;
    }
    std::string name = splitOpSymbol(graph.getSymName(), k, pyop.getOpName());
    auto func = module->lookupSymbol<func::FuncOp>(name);
    if (!func) {
      out.notCovered.push_back(where + ": not lowered to linalg");
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
  return out;
}
