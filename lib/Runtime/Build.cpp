//===- Build.cpp - Lower a trace.graph to an Executable -------------------===//

#include "TraceIR/Runtime/Build.h"
#include "TraceIR/Analysis/StorageLiveness.h"
#include "TraceIR/Dialect/OpRegistry.h"
#include "TraceIR/Dialect/Scalars.h"
#include "TraceIR/Runtime/CPU/Kernels.h"
#include "TraceIR/Support/CheckedMath.h"
#include "llvm/Support/MemoryBuffer.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseMap.h"

#include <atomic>

#include <unistd.h>

using namespace mlir;
using namespace mlir::trace;
using traceir::DType;
using traceir::Executable;

static llvm::Error buildError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

static std::string locationString(Location loc) {
  if (auto flc = loc->findInstanceOf<FileLineColLoc>())
    return (flc.getFilename().getValue() + ":" + llvm::Twine(flc.getLine()) +
            ":" + llvm::Twine(flc.getColumn()))
        .str();
  return {};
}

static std::string debugString(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return s;
}

std::optional<DType> traceir::dtypeOf(Type t) {
  if (t.isF32())
    return DType::F32;
  if (t.isF64())
    return DType::F64;
  if (t.isF16())
    return DType::F16;
  if (t.isBF16())
    return DType::BF16;
  if (t.isInteger(1))
    return DType::Bool;
  if (t.isUnsignedInteger(8))
    return DType::U8;
  if (t.isSignlessInteger(64) || t.isSignedInteger(64))
    return DType::I64;
  if (t.isSignlessInteger(32) || t.isSignedInteger(32))
    return DType::I32;
  if (t.isSignlessInteger(16) || t.isSignedInteger(16))
    return DType::I16;
  if (t.isSignlessInteger(8) || t.isSignedInteger(8))
    return DType::I8;
  return std::nullopt;
}

Type traceir::elementTypeOf(MLIRContext *ctx, DType dtype) {
  Builder b(ctx);
  switch (dtype) {
  case DType::F32:
    return b.getF32Type();
  case DType::F64:
    return b.getF64Type();
  case DType::F16:
    return b.getF16Type();
  case DType::BF16:
    return b.getBF16Type();
  case DType::I64:
    return b.getI64Type();
  case DType::I32:
    return b.getI32Type();
  case DType::I16:
    return b.getI16Type();
  case DType::I8:
    return b.getI8Type();
  case DType::U8:
    return b.getIntegerType(8, /*isSigned=*/false);
  case DType::Bool:
    return b.getI1Type();
  }
  return {};
}

/// The runtime type of a value: static shapes only (for now).
static llvm::Error staticType(Type type, const llvm::Twine &what, DType &dtype,
                              traceir::Shape &shape) {
  auto ranked = dyn_cast<RankedTensorType>(type);
  if (!ranked || !ranked.hasStaticShape())
    return buildError(what + " has type " + llvm::Twine(debugString(type)) +
                      "; the runtime needs static shapes");
  std::optional<DType> dt = traceir::dtypeOf(ranked.getElementType());
  if (!dt)
    return buildError(what + " has element type " +
                      debugString(ranked.getElementType()) +
                      ", which the runtime does not support");
  dtype = *dt;
  shape.assign(ranked.getShape().begin(), ranked.getShape().end());
  return llvm::Error::success();
}

static DenseElementsAttr denseOf(ConstantOp op) {
  return dyn_cast<DenseElementsAttr>(op.getValue());
}

static llvm::Error constantData(ConstantOp op, DType dtype,
                                traceir::HostTensor &out) {
  DenseElementsAttr dense = denseOf(op);
  if (!dense)
    return buildError("constant at " + locationString(op.getLoc()) +
                      ": only dense<...> constants are supported by the "
                      "runtime (dense_resource is not yet)");
  size_t es = traceir::dtypeSize(dtype);
  // The type is verified, so its bytes fit; a host that cannot hold them
  // (the data is materialized here, even for a splat) is an error too.
  std::optional<int64_t> bytes =
      traceir::checkedTensorBytes(dense.getType().getShape(), es);
  if (!bytes)
    return buildError("constant at " + locationString(op.getLoc()) +
                      " is over TraceIR's tensor size limit");
  // resize() touches every page, so on a host that overcommits memory a
  // constant larger than the machine ends in an OOM kill, not bad_alloc:
  // refuse what cannot fit in physical memory first.
  long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGESIZE);
  if (pages > 0 && pageSize > 0 &&
      *bytes / pageSize >= static_cast<int64_t>(pages))
    return buildError("constant at " + locationString(op.getLoc()) + " needs " +
                      llvm::Twine(*bytes) + " bytes, more than this host's " +
                      llvm::Twine(int64_t(pages) * pageSize) +
                      " bytes of memory");
  if (llvm::Error err = traceir::toLLVM(allocateHostData(
          out, *bytes, "the constant at " + locationString(op.getLoc()))))
    return err;
  char *p = out.data.data();
  if (dtype == DType::Bool) {
    int64_t k = 0;
    for (bool v : dense.getValues<bool>())
      p[k++] = v;
  } else if (traceir::cpu::isFloating(dtype)) {
    int64_t k = 0;
    for (APFloat v : dense.getValues<APFloat>()) {
      bool lost;
      v.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lost);
      traceir::cpu::storeDouble(p + k++ * es, dtype, v.convertToDouble());
    }
  } else {
    int64_t k = 0;
    for (APInt v : dense.getValues<APInt>())
      traceir::cpu::storeInt(p + k++ * es, dtype,
                             dtype == DType::U8 ? v.getZExtValue()
                                                : v.getSExtValue());
  }
  return llvm::Error::success();
}

llvm::Expected<std::unique_ptr<Executable>>
traceir::buildExecutable(GraphOp graph, Device device,
                         const GeneratedKernels *generated,
                         std::shared_ptr<GpuLibrary> library, bool forSaving) {
  auto created = Executable::create(device, !forSaving);
  if (!created)
    return traceir::toLLVM(created.takeError());
  std::unique_ptr<Executable> exe = std::move(*created);
  exe->name = graph.getSymName().str();

  Block &block = graph.getBody().front();
  llvm::DenseMap<Value, int32_t> slotOf;
  auto slot = [&](Value v) {
    auto [it, inserted] = slotOf.try_emplace(v, slotOf.size());
    return it->second;
  };
  AsmState asmState(graph);
  auto nameOf = [&](Value v) {
    std::string s;
    llvm::raw_string_ostream os(s);
    v.printAsOperand(os, asmState);
    return s;
  };

  unsigned inputIndex = 0;
  for (BlockArgument arg : block.getArguments()) {
    unsigned i = arg.getArgNumber();
    Executable::ArgSpec spec;
    spec.slot = slot(arg);
    spec.donated = graph.isDonated(i);
    if (llvm::Error err =
            staticType(arg.getType(), "argument #" + llvm::Twine(i), spec.dtype,
                       spec.shape))
      return err;
    if (graph.isParam(i)) {
      spec.name = graph.getParamName(i).str();
      exe->params.push_back(spec.name);
      exe->paramSpecs.push_back(spec);
    } else {
      StringRef name = graph.getInputName(i);
      spec.name =
          name.empty() ? "input" + std::to_string(inputIndex) : name.str();
      ++inputIndex;
      exe->inputs.push_back(spec.name);
      exe->inputSpecs.push_back(spec);
    }
  }

  if (generated) {
    size_t numPyOps = llvm::range_size(block.getOps<PyOp>());
    if (generated->ops.size() != numPyOps)
      return buildError("the generated kernels are for a graph of " +
                        llvm::Twine(generated->ops.size()) + " ops; @" +
                        exe->name + " has " + llvm::Twine(numPyOps));
    exe->gpuLibrary = std::move(library);
    exe->gpuBinary = generated->binary;
    exe->gpuChip = generated->chip;
    exe->gpuKernelNames = generated->kernelNames;
  }
  unsigned pyIndex = 0;
  SmallVector<ResultAlias, 4> aliases;
  // The ops without a kernel on the device, each with its locations.
  std::vector<std::pair<std::string, std::vector<std::string>>> missing;
  for (Operation &op : block) {
    if (auto ret = dyn_cast<RetOp>(op)) {
      for (Value v : ret.getOperands())
        exe->outputSlots.push_back(slot(v));
      continue;
    }
    OpInfoRT info;
    info.location = locationString(op.getLoc());
    if (auto free = dyn_cast<FreeOp>(op)) {
      info.name = "trace.free";
      info.valueNames.push_back(nameOf(free.getTensor()));
      Instr instr;
      instr.kind = Instr::Kind::Free;
      instr.freeSlot = slot(free.getTensor());
      instr.op = exe->ops.size();
      exe->ops.push_back(std::move(info));
      exe->instrs.push_back(instr);
      continue;
    }
    if (auto cst = dyn_cast<ConstantOp>(op)) {
      HostTensor t;
      if (llvm::Error err = staticType(
              cst.getType(), "constant at " + info.location, t.dtype, t.shape))
        return err;
      if (llvm::Error err = constantData(cst, t.dtype, t))
        return err;
      exe->constants.push_back({slot(cst.getResult()), std::move(t)});
      continue;
    }
    auto py = dyn_cast<PyOp>(op);
    if (!py)
      return buildError("op '" + op.getName().getStringRef() + "' at " +
                        info.location + " cannot be executed");
    info.name = py.getOpName().str();
    Instr instr;
    KernelFn fn = lookupKernel(py.getOpName(), device.kind);
    if (generated && generated->ops[pyIndex]) {
      // The op's generated kernels stand in for the runtime's.
      const GeneratedOp &gen = *generated->ops[pyIndex];
      fn = runGeneratedOp;
      instr.generated = exe->generatedOps.size();
      exe->generatedOps.push_back(gen);
      for (const KernelLaunch &launch : gen.launches) {
        if (!info.generatedKernels.empty())
          info.generatedKernels += ", ";
        info.generatedKernels += generated->kernelNames[launch.kernel];
      }
    }
    ++pyIndex;
    if (!fn) {
      // Every op without a kernel is reported at once, not the first alone.
      auto it = llvm::find_if(missing, [&](const auto &m) {
        return m.first == py.getOpName();
      });
      if (it == missing.end())
        it = missing.insert(missing.end(), {py.getOpName().str(), {}});
      if (!info.location.empty())
        it->second.push_back(info.location);
      continue;
    }
    instr.fn = fn;
    instr.op = exe->ops.size();
    instr.argBegin = exe->args.size();
    StringRef cconv = py.getCconv();
    auto tensors = py.getTensors();
    ArrayRef<Attribute> scalars = py.getScalars().getValue();
    unsigned t = 0, s = 0;
    for (char c : cconv) {
      ArgRef a;
      if (c == 't') {
        Value v = tensors[t++];
        a.slot = slot(v);
        info.valueNames.push_back(nameOf(v));
      } else {
        a.scalar = exe->scalars.size();
        if (!info.scalars.empty())
          info.scalars += ", ";
        info.scalars += scalarToString(scalars[s]);
        exe->scalarValues.push_back(toScalarValue(scalars[s++]));
        exe->scalars.push_back(traceir::decodeScalar(exe->scalarValues.back()));
        info.valueNames.push_back("a scalar");
      }
      exe->args.push_back(a);
    }
    instr.numArgs = cconv.size();
    instr.resultBegin = exe->results.size();
    aliases.clear();
    getResultAliases(py, aliases);
    for (auto [i, res] : llvm::enumerate(py->getResults())) {
      ResultRef r;
      r.slot = slot(res);
      r.fresh = aliases[i].kind == AliasKind::Fresh;
      if (llvm::Error err =
              staticType(res.getType(),
                         "result #" + llvm::Twine(i) + " of op '" + info.name +
                             "' at " + info.location,
                         r.dtype, r.shape))
        return err;
      exe->results.push_back(std::move(r));
    }
    // The plan's offsets (the verifier checked them against the graph).
    if (auto offsets = py->getAttrOfType<DenseI64ArrayAttr>(
            TraceDialect::kArenaOffsetsAttrName))
      for (auto [i, offset] : llvm::enumerate(offsets.asArrayRef()))
        if (i < py->getNumResults())
          exe->results[instr.resultBegin + i].arenaOffset = offset;
    instr.numResults = py->getNumResults();
    exe->ops.push_back(std::move(info));
    exe->instrs.push_back(instr);
  }
  if (!missing.empty()) {
    // no kernel for op 'a' on cpu (at f.py:3:0), nor for 'b' (at f.py:5:0,
    // f.py:9:0)
    std::string message;
    for (const auto &[name, locations] : missing) {
      message += message.empty() ? "no kernel for op '" + name + "' on " +
                                       device.str()
                                 : ", nor for '" + name + "'";
      for (size_t i = 0; i < locations.size(); ++i)
        message += (i ? ", " : " (at ") + locations[i];
      if (!locations.empty())
        message += ")";
    }
    return buildError(message);
  }
  exe->numSlots = slotOf.size();
  if (auto bytes = graph->getAttrOfType<IntegerAttr>(
          TraceDialect::kArenaBytesAttrName)) {
    exe->arenaBytes = bytes.getInt();
    exe->arenaAlignment =
        graph->getAttrOfType<IntegerAttr>(TraceDialect::kArenaAlignmentAttrName)
            .getInt();
  }

  StorageLiveness liveness(graph);
  exe->report.predictedPeakBytes = liveness.getPeakBytes();
  exe->report.predictionIsLowerBound = liveness.isLowerBound();
  return exe;
}

llvm::Expected<GraphOp> traceir::findGraph(ModuleOp module, StringRef name,
                                           StringRef where) {
  GraphOp graph;
  unsigned count = 0;
  module->walk([&](GraphOp g) {
    ++count;
    if (name.empty() || g.getSymName() == name)
      graph = g;
  });
  if (!graph)
    return buildError(name.empty()
                          ? "no trace.graph in " + where
                          : "no trace.graph @" + name + " in " + where);
  if (name.empty() && count > 1)
    return buildError(llvm::Twine(count) + " graphs in " + where +
                      "; choose one by name (trace-run --graph)");
  return graph;
}

llvm::Expected<traceir::LoadedGeneratedKernels>
traceir::loadGeneratedKernels(GraphOp graph, Device device,
                              const GeneratedKernelsSource &source) {
  std::optional<std::string> prebuilt;
  if (!source.gpuBinary.empty()) {
    auto file = llvm::MemoryBuffer::getFile(source.gpuBinary,
                                            /*IsText=*/false);
    if (!file)
      return buildError("cannot read GPU binary '" + source.gpuBinary +
                        "': " + file.getError().message());
    if (!traceir::looksLikeFatbin((*file)->getBuffer()))
      return buildError("'" + source.gpuBinary +
                        "' is not a CUDA fatbin (no fatbin magic number); "
                        "write one with trace-translate --emit-gpu-binary");
    prebuilt = (*file)->getBuffer().str();
  }
  if (device.kind != traceir::Device::Kind::CUDA)
    return buildError("generated GPU kernels run on a CUDA device, not on " +
                      device.str());
  mlir::trace::GpuPipelineOptions options;
  options.toolkit = source.toolkit;
  if (!prebuilt) {
    auto chip = traceir::cudaDeviceChip(device.index);
    if (!chip)
      return traceir::toLLVM(chip.takeError());
    options.chip = *chip;
    // Whatever the GPU, the PTX version LLVM picks for its chip (the
    // default +ptx80 is too old for sm_100 and later).
    options.features = "";
  }
  auto kernels =
      mlir::trace::buildGeneratedKernels(graph, options, std::move(prebuilt));
  if (!kernels)
    return kernels.takeError();
  auto library = traceir::loadGpuLibrary(device.index, kernels->binary,
                                         kernels->kernelNames);
  if (!library)
    return traceir::toLLVM(library.takeError());
  return LoadedGeneratedKernels{std::move(*kernels), std::move(*library)};
}
