//===- trace-twin-run.cpp - Run the CPU twin under ExecutionEngine --------===//
//
//   trace-twin-run model.mlir [--func NAME] --params w.safetensors
//                  --inputs in.safetensors --outputs out.safetensors
//
// Takes a trace.graph (lowered here with --convert-trace-to-linalg) or
// linalg-on-tensors funcs: the input of --trace-lower-to-cpu, not its
// output, since once lowered to LLVM the out-params are bare pointers, their
// shapes and dtypes gone; so the tool reads the tensor signature first and
// then runs the pipeline itself. Arguments are bound like trace-run's: by
// their trace.param name from --params, by their trace.input name from
// --inputs, or else as arg0, arg1, ... from --inputs; results are written
// as output0, output1, ... So the twin and trace-run take the same files.
//
// Calling convention: _mlir_ciface_<NAME>(in0*, ..., out0*, ...), one
// pointer to a ranked StridedMemRefType descriptor per argument, results as
// trailing out-params that this tool allocates (the pipeline runs
// buffer-results-to-out-params). Inputs are passed in place: safetensors
// tensors are contiguous, which is the identity layout the pipeline uses at
// function boundaries. On any error nothing is written.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Conversion/Passes.h"
#include "TraceIR/Conversion/Pipelines.h"
#include "TraceIR/Dialect/ParseSource.h"
#include "TraceIR/Runtime/HostTensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

using namespace llvm;

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<funcs.mlir>"),
                                      cl::Required);
static cl::opt<std::string>
    funcName("func", cl::desc("func.func to call (default: the only one)"));
static cl::opt<std::string>
    paramsFile("params", cl::desc("safetensors file of the trace.params"));
static cl::opt<std::string>
    inputsFile("inputs",
               cl::desc("safetensors file of the trace.inputs (or arg0, "
                        "arg1, ...)"));
static cl::opt<std::string>
    outputsFile("outputs",
                cl::desc("safetensors file to write output0, output1, ..."));

static int fail(const Twine &message) {
  errs() << "trace-twin-run: " << message << "\n";
  return 1;
}

/// The runtime dtype of a tensor element type; the twin supports the types
/// its descriptors can hold without conversion.
static std::optional<traceir::DType> dtypeOf(mlir::Type type) {
  if (type.isF32())
    return traceir::DType::F32;
  if (type.isF64())
    return traceir::DType::F64;
  if (type.isInteger(64))
    return traceir::DType::I64;
  if (type.isInteger(32))
    return traceir::DType::I32;
  // LLVM stores an i1 in one byte holding 0 or 1: PyTorch's bool layout.
  if (type.isInteger(1))
    return traceir::DType::Bool;
  return std::nullopt;
}

/// A ranked memref descriptor laid out as StridedMemRefType<T, N>:
/// {T *allocated, T *aligned, int64_t offset, int64_t sizes[N],
/// int64_t strides[N]}. Every field is 8 bytes, so an int64 array of
/// 3 + 2N holds any rank and element type.
static std::vector<int64_t> descriptor(traceir::HostTensor &tensor) {
  std::vector<int64_t> d(3 + 2 * tensor.shape.size());
  auto ptr = reinterpret_cast<int64_t>(tensor.data.data());
  d[0] = d[1] = ptr;
  d[2] = 0;
  int64_t stride = 1;
  size_t rank = tensor.shape.size();
  for (size_t i = rank; i-- > 0;) {
    d[3 + i] = tensor.shape[i];
    d[3 + rank + i] = stride;
    stride *= tensor.shape[i];
  }
  return d;
}

int main(int argc, char **argv) {
  InitLLVM y(argc, argv);
  cl::ParseCommandLineOptions(argc, argv, "TraceIR CPU twin runner\n");
  InitializeNativeTarget();
  InitializeNativeTargetAsmPrinter();

  mlir::DialectRegistry registry;
  mlir::trace::registerTracePipelineDialects(registry);
  mlir::MLIRContext context(registry);
  SourceMgr sourceMgr;
  mlir::SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::trace::parseTraceSourceFile(
      inputFile, sourceMgr, mlir::ParserConfig(&context));
  if (!module)
    return 1;

  // A trace.graph becomes a func.func first (nothing happens to funcs).
  {
    mlir::PassManager lower(&context, mlir::ModuleOp::getOperationName());
    lower.addPass(mlir::trace::createConvertTraceToLinalg());
    if (failed(lower.run(*module)))
      return 1;
  }
  mlir::func::FuncOp func;
  if (funcName.empty()) {
    unsigned count = 0;
    module->walk([&](mlir::func::FuncOp f) {
      func = f;
      ++count;
    });
    if (count != 1)
      return fail(Twine(count) + " funcs in " + inputFile +
                  "; choose one with --func");
  } else {
    func = module->lookupSymbol<mlir::func::FuncOp>(funcName);
  }
  if (!func)
    return fail("no func.func @" + funcName + " in " + inputFile +
                " (give the module before --trace-lower-to-cpu)");
  std::string name0 = func.getSymName().str();
  mlir::FunctionType type = func.getFunctionType();

  traceir::NamedTensors inputs, params;
  for (auto [file, tensors] :
       {std::pair{&inputsFile, &inputs}, std::pair{&paramsFile, &params}}) {
    if (file->empty())
      continue;
    auto loaded = traceir::readSafetensors(*file);
    if (!loaded)
      return fail(toString(loaded.takeError()));
    *tensors = std::move(*loaded);
  }

  // Arguments then results, each checked against the signature.
  std::vector<traceir::HostTensor *> args;
  std::vector<traceir::HostTensor> outputs(type.getNumResults());
  for (auto [i, argType] : llvm::enumerate(type.getInputs())) {
    std::string name = "arg" + std::to_string(i);
    traceir::NamedTensors *from = &inputs;
    const char *kind = "input";
    if (auto attr = func.getArgAttrOfType<mlir::StringAttr>(i, "trace.param")) {
      name = attr.str();
      from = &params;
      kind = "parameter";
    } else if (auto attr =
                   func.getArgAttrOfType<mlir::StringAttr>(i, "trace.input")) {
      name = attr.str();
    }
    auto tensorType = dyn_cast<mlir::RankedTensorType>(argType);
    if (!tensorType || !tensorType.hasStaticShape() ||
        !dtypeOf(tensorType.getElementType()))
      return fail("@" + name0 + " " + name +
                  ": only statically shaped f32/f64/i32/i64/i1 tensors");
    auto it = from->find(name);
    if (it == from->end())
      return fail(Twine("missing ") + kind + " '" + name + "'");
    traceir::HostTensor &t = it->second;
    if (t.dtype != *dtypeOf(tensorType.getElementType()) ||
        ArrayRef<int64_t>(t.shape) != tensorType.getShape()) {
      std::string expected;
      raw_string_ostream os(expected);
      os << tensorType;
      return fail(Twine(kind) + " '" + name + "' does not match " + expected);
    }
    args.push_back(&t);
  }
  for (auto [i, resultType] : llvm::enumerate(type.getResults())) {
    auto tensorType = dyn_cast<mlir::RankedTensorType>(resultType);
    if (!tensorType || !tensorType.hasStaticShape() ||
        !dtypeOf(tensorType.getElementType()))
      return fail("@" + name0 + " result " + std::to_string(i) +
                  ": only statically shaped f32/f64/i32/i64/i1 tensors");
    traceir::HostTensor &t = outputs[i];
    t.dtype = *dtypeOf(tensorType.getElementType());
    t.shape.assign(tensorType.getShape().begin(), tensorType.getShape().end());
    t.data.assign(t.numel() * traceir::dtypeSize(t.dtype), 0);
    args.push_back(&t);
  }

  mlir::PassManager pm(&context, mlir::ModuleOp::getOperationName());
  mlir::trace::buildTraceLowerToCpuPipeline(pm, {});
  if (failed(pm.run(*module)))
    return 1;

  mlir::ExecutionEngineOptions engineOptions;
  llvm::SmallVector<llvm::StringRef, 1> sharedLibs = {TRACEIR_C_RUNNER_UTILS};
  engineOptions.sharedLibPaths = sharedLibs;
  engineOptions.transformer = mlir::makeOptimizingTransformer(
      /*optLevel=*/2, /*sizeLevel=*/0, /*targetMachine=*/nullptr);
  auto engine = mlir::ExecutionEngine::create(*module, engineOptions);
  if (!engine)
    return fail("cannot JIT " + inputFile + ": " +
                toString(engine.takeError()));

  // invokePacked wants, per argument, a pointer to the argument's value; the
  // value of each argument is a pointer to its descriptor.
  std::vector<std::vector<int64_t>> descriptors;
  descriptors.reserve(args.size());
  std::vector<void *> descriptorPtrs, packed;
  for (traceir::HostTensor *t : args) {
    descriptors.push_back(descriptor(*t));
    descriptorPtrs.push_back(descriptors.back().data());
  }
  for (void *&p : descriptorPtrs)
    packed.push_back(&p);
  if (Error err = (*engine)->invokePacked("_mlir_ciface_" + name0, packed))
    return fail("calling @" + name0 + ": " + toString(std::move(err)));

  if (!outputsFile.empty()) {
    traceir::NamedTensors named;
    for (auto [i, t] : llvm::enumerate(outputs))
      named.emplace("output" + std::to_string(i), std::move(t));
    if (traceir::Error err = traceir::writeSafetensors(outputsFile, named))
      return fail(toString(std::move(err)));
  }
  return 0;
}
