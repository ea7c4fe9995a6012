//===- trace-run.cpp - Execute a trace.graph ------------------------------===//
//
//   trace-run model.mlir --params w.safetensors --inputs in.safetensors
//             --outputs out.safetensors --device cpu --memory-report[=json]
//             --profile trace.json --profile-summary
//             --gpu-binary model.fatbin | --compile-gpu-kernels
//             --print-kernel-plan --memory-limit BYTES
//
// Parameters and inputs are bound by name; outputs are written as output0,
// output1, ... in trace.ret order. On any error nothing is written.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Conversion/KernelPlan.h"
#include "TraceIR/Dialect/ParseSource.h"
#include "TraceIR/Dialect/TraceDialect.h"
#include "TraceIR/Runtime/Build.h"
#include "TraceIR/Runtime/Profiler.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

using namespace llvm;

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<graph.mlir>"),
                                      cl::Required);
static cl::opt<std::string>
    graphName("graph", cl::desc("The trace.graph to run (default: "
                                "the only one)"));
static cl::opt<std::string>
    paramsFile("params", cl::desc("safetensors file of parameters"));
static cl::opt<std::string> inputsFile("inputs",
                                       cl::desc("safetensors file of inputs"));
static cl::opt<std::string>
    outputsFile("outputs",
                cl::desc("safetensors file to write output0, output1, ..."));
static cl::opt<std::string> deviceName("device", cl::init("cpu"),
                                       cl::desc("cpu, cuda or cuda:N"));
enum class ReportFormat { None, Text, JSON };
static cl::opt<ReportFormat> memoryReport(
    "memory-report", cl::desc("Print peak bytes measured vs predicted"),
    cl::ValueOptional, cl::init(ReportFormat::None),
    cl::values(clEnumValN(ReportFormat::Text, "", "a line of text"),
               clEnumValN(ReportFormat::Text, "text", "a line of text"),
               clEnumValN(ReportFormat::JSON, "json", "one JSON object")));
static cl::opt<bool> checkFrees(
    "check-frees",
    cl::desc("Poison freed storage; any later read of it is an error"));
static cl::opt<uint64_t> seed("seed", cl::init(0),
                              cl::desc("Seed of random ops (dropout)"));
static cl::opt<int64_t> memoryLimit(
    "memory-limit", cl::init(-1),
    cl::desc("Fail (naming the op and the bytes) any allocation that would "
             "make the device allocator hold more than this many bytes, "
             "parameters, rounding and caches included"),
    cl::value_desc("bytes"));
static cl::opt<unsigned> benchmark(
    "benchmark", cl::init(0),
    cl::desc("Run N more times after the first run and print the mean time "
             "of one run and per instruction (build and I/O excluded)"));

static cl::opt<std::string> profileFile(
    "profile",
    cl::desc("Write a Chrome/Perfetto trace of the run (with --benchmark, of "
             "every run) to this file"),
    cl::value_desc("trace.json"));
static cl::opt<bool> profileSummary(
    "profile-summary",
    cl::desc("Print a table per op name: calls, total, mean, min, max, % of "
             "run (CPU ranges, and kernel times on a device)"));

static cl::opt<std::string> gpuBinary(
    "gpu-binary",
    cl::desc("Run the ops it covers with the kernels of this fatbin "
             "(trace-translate --emit-gpu-binary of the same graph) instead "
             "of the runtime's; needs --device cuda"),
    cl::value_desc("model.fatbin"));
static cl::opt<bool> compileGpuKernels(
    "compile-gpu-kernels",
    cl::desc("Like --gpu-binary, with the fatbin compiled now for the "
             "device's chip"));
static cl::opt<bool> printKernelPlan(
    "print-kernel-plan",
    cl::desc("Print which ops run generated kernels (launches, grids, "
             "temporaries) and why the others do not; without --gpu-binary "
             "or --compile-gpu-kernels, print and exit"));
static cl::opt<std::string>
    cudaToolkit("cuda-toolkit", cl::init("/usr/local/cuda"),
                cl::desc("CUDA toolkit for --compile-gpu-kernels"));

static int fail(const Twine &msg) {
  errs() << "trace-run: error: " << msg << "\n";
  return 1;
}

/// One line per op that runs generated kernels, then why the others do not.
static void printPlan(raw_ostream &os, StringRef graph,
                      const traceir::GeneratedKernels &gen) {
  os << formatv("generated kernels for @{0}: {1} of {2} ops, {3} kernels\n",
                graph, gen.numCovered(), gen.ops.size(),
                gen.kernelNames.size());
  for (auto [k, op] : llvm::enumerate(gen.ops)) {
    if (!op)
      continue;
    int64_t temp = 0;
    for (int64_t b : op->tempBytes)
      temp += b;
    os << formatv("  op {0} ({1}): {2} launches, {3} copies, {4} temporary "
                  "buffers ({5} bytes)\n",
                  k, op->function, op->launches.size(), op->copies.size(),
                  op->tempBytes.size(), temp);
    for (const traceir::KernelLaunch &l : op->launches)
      os << formatv("    {0} grid {1}x{2}x{3} block {4}x{5}x{6} args {7}\n",
                    gen.kernelNames[l.kernel], l.grid[0], l.grid[1], l.grid[2],
                    l.block[0], l.block[1], l.block[2], l.numArgs);
  }
  for (const std::string &why : gen.notCovered)
    os << "  runtime kernel: " << why << "\n";
}

int main(int argc, char **argv) {
  InitLLVM y(argc, argv);
  cl::ParseCommandLineOptions(argc, argv, "TraceIR runner\n");

  std::optional<traceir::Device> device = traceir::Device::parse(deviceName);
  if (!device)
    return fail("unknown device '" + deviceName +
                "' (expected cpu, cuda or cuda:N)");

  mlir::MLIRContext context;
  context.loadDialect<mlir::trace::TraceDialect>();
  llvm::SourceMgr sourceMgr;
  mlir::SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::trace::parseTraceSourceFile(
      inputFile, sourceMgr, mlir::ParserConfig(&context));
  if (!module)
    return 1;
  auto graph = traceir::findGraph(*module, graphName, inputFile);
  if (!graph)
    return fail(toString(graph.takeError()));

  std::optional<traceir::GeneratedKernels> generated;
  std::shared_ptr<traceir::GpuLibrary> library;
  bool launchGenerated = !gpuBinary.empty() || compileGpuKernels;
  if (!gpuBinary.empty() && compileGpuKernels)
    return fail("--gpu-binary and --compile-gpu-kernels exclude each other");
  if (launchGenerated) {
    mlir::trace::GeneratedKernelsSource source;
    source.gpuBinary = gpuBinary;
    source.toolkit = cudaToolkit;
    auto loaded = mlir::trace::loadGeneratedKernels(*graph, *device, source);
    if (!loaded)
      return fail(toString(loaded.takeError()));
    generated = std::move(loaded->kernels);
    library = std::move(loaded->library);
  } else if (printKernelPlan) {
    // Printing the plan needs no binary, hence no ptxas and no GPU.
    mlir::trace::GpuPipelineOptions options;
    options.toolkit = cudaToolkit;
    auto built =
        mlir::trace::buildGeneratedKernels(*graph, options, std::string());
    if (!built)
      return fail(toString(built.takeError()));
    generated = std::move(*built);
  }
  if (printKernelPlan) {
    printPlan(outs(), graph->getSymName(), *generated);
    if (!launchGenerated)
      return 0;
  }

  auto exe = traceir::buildExecutable(
      *graph, *device, generated ? &*generated : nullptr, std::move(library));
  if (!exe)
    return fail(toString(exe.takeError()));

  if (memoryLimit.getNumOccurrences() && memoryLimit < 0)
    return fail("--memory-limit must be a number of bytes >= 0");
  std::optional<int64_t> limit;
  if (memoryLimit >= 0)
    limit = memoryLimit;
  // Before the parameters load, so that they count against it too.
  (*exe)->allocator().setLimit(limit);

  traceir::NamedTensors params, inputs;
  if (!paramsFile.empty()) {
    auto loaded = traceir::readSafetensors(paramsFile);
    if (!loaded)
      return fail(toString(loaded.takeError()));
    params = std::move(*loaded);
  }
  if (!inputsFile.empty()) {
    auto loaded = traceir::readSafetensors(inputsFile);
    if (!loaded)
      return fail(toString(loaded.takeError()));
    inputs = std::move(*loaded);
  }
  if (traceir::Error err = (*exe)->loadParams(params))
    return fail(toString(std::move(err)));

  traceir::RunOptions options;
  options.checkFrees = checkFrees;
  options.seed = seed;
  options.memoryLimitBytes = limit;
  // The trace's sink exists before the run, so an unwritable path fails
  // before any work; it becomes the file only once the profile is complete.
  traceir::Profiler profiler;
  std::unique_ptr<traceir::TraceSink> sink;
  if (!profileFile.empty()) {
    auto file = traceir::ChromeTraceFileSink::create(profileFile);
    if (!file)
      return fail(toString(file.takeError()));
    sink = std::move(*file);
  } else if (profileSummary) {
    sink = std::make_unique<traceir::MemoryTraceSink>();
  }
  if (sink) {
    options.profiler = &profiler;
    profiler.start();
  }
  auto outputs = (*exe)->run(inputs, options);
  if (!outputs)
    return fail(toString(outputs.takeError()));

  // With --benchmark the profile covers every run, so that profiled and
  // unprofiled times compare (bench/profiler_bench.py).
  auto finishProfile = [&]() -> traceir::Error {
    if (!sink)
      return traceir::Error::success();
    if (traceir::Error err = profiler.stop(*sink))
      return err;
    if (profileSummary)
      outs() << profiler.summary().toText();
    return traceir::Error::success();
  };
  if (benchmark == 0)
    if (traceir::Error err = finishProfile())
      return fail(toString(std::move(err)));

  if (benchmark > 0) {
    auto start = std::chrono::steady_clock::now();
    for (unsigned i = 0; i < benchmark; ++i) {
      auto again = (*exe)->run(inputs, options);
      if (!again)
        return fail(toString(again.takeError()));
    }
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count() /
        benchmark;
    size_t instrs = (*exe)->instrs.size();
    outs() << llvm::formatv("benchmark: {0} runs, {1:f3} ms per run, {2} "
                            "instructions, {3:f3} us per instruction\n",
                            unsigned(benchmark), seconds * 1e3, instrs,
                            instrs ? seconds * 1e6 / instrs : 0.0);
    if (traceir::Error err = finishProfile())
      return fail(toString(std::move(err)));
  }
  // Last, so that no later failure (of a benchmark run, or of the profile)
  // leaves an output file behind.
  if (!outputsFile.empty()) {
    traceir::NamedTensors named;
    for (auto [i, t] : llvm::enumerate(*outputs))
      named.emplace("output" + std::to_string(i), std::move(t));
    if (traceir::Error err = traceir::writeSafetensors(outputsFile, named))
      return fail(toString(std::move(err)));
  }
  const traceir::MemoryReport &report = (*exe)->memoryReport();
  if (memoryReport == ReportFormat::JSON)
    outs() << report.toJSON() << "\n";
  else if (memoryReport == ReportFormat::Text)
    outs() << report.toText() << "\n";
  return 0;
}
