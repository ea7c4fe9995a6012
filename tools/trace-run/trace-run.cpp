//===- trace-run.cpp - Execute a trace.graph ------------------------------===//
//
//   trace-run model.mlir|model.trx --params w.safetensors --inputs
//   in.safetensors
//             --outputs out.safetensors --device cpu --memory-report[=json]
//             --profile trace.json --profile-summary
//             --gpu-binary model.fatbin | --compile-gpu-kernels
//             --print-kernel-plan --memory-limit BYTES
//
// Parameters and inputs are bound by name; outputs are written as output0,
// output1, ... in trace.ret order. On any error nothing is written.
//
//===----------------------------------------------------------------------===//

#include "RunDriver.h"
#include "TraceIR/Conversion/KernelPlan.h"
#include "TraceIR/Dialect/ParseSource.h"
#include "TraceIR/Dialect/TraceDialect.h"
#include "TraceIR/Runtime/Build.h"
#include "TraceIR/Runtime/ExecutableFile.h"
#include "TraceIR/Runtime/Profiler.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <sstream>

using namespace llvm;

static cl::opt<std::string> inputFile(cl::Positional,
                                      cl::desc("<graph.mlir or saved .trx>"),
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
static cl::opt<std::string> saveExecutable(
    "save-executable",
    cl::desc("Also save the executable it builds as a .trx file (what "
             "trace-translate --emit-executable writes) before running it"),
    cl::value_desc("model.trx"));
static cl::opt<bool>
    describe("describe",
             cl::desc("Print what a saved executable (.trx) holds, and exit"));
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

/// Everything after the executable exists: the run driver trace-exec
/// shares.
static int runLoaded(traceir::Executable &exe) {
  if (memoryLimit.getNumOccurrences() && memoryLimit < 0)
    return fail("--memory-limit must be a number of bytes >= 0");
  traceir::RunDriverOptions options;
  options.paramsFile = paramsFile;
  options.inputsFile = inputsFile;
  options.outputsFile = outputsFile;
  options.profileFile = profileFile;
  options.memoryReport = memoryReport == ReportFormat::JSON
                             ? traceir::RunDriverOptions::Report::JSON
                         : memoryReport == ReportFormat::Text
                             ? traceir::RunDriverOptions::Report::Text
                             : traceir::RunDriverOptions::Report::None;
  options.checkFrees = checkFrees;
  options.profileSummary = profileSummary;
  options.seed = seed;
  if (memoryLimit >= 0)
    options.memoryLimit = memoryLimit;
  options.benchmark = benchmark;
  std::ostringstream out;
  traceir::Error err = traceir::runDriver(exe, options, out);
  outs() << out.str();
  if (err)
    return fail(err.message());
  return 0;
}

/// A saved executable (.trx): loaded, described or run as trace-exec does.
static int runSaved(const std::string &bytes, bool deviceGiven,
                    traceir::Device device) {
  if (!gpuBinary.empty() || compileGpuKernels || printKernelPlan ||
      !graphName.empty())
    return fail("--gpu-binary, --compile-gpu-kernels, --print-kernel-plan "
                "and --graph apply to MLIR input; a saved executable holds "
                "its graph and kernels");
  if (describe) {
    auto text = traceir::describeExecutable(bytes, inputFile);
    if (!text)
      return fail(toString(text.takeError()));
    outs() << *text;
    return 0;
  }
  auto exe = traceir::loadExecutableBuffer(
      bytes, inputFile,
      deviceGiven ? std::optional<traceir::Device>(device) : std::nullopt);
  if (!exe)
    return fail(toString(exe.takeError()));
  return runLoaded(**exe);
}

int main(int argc, char **argv) {
  InitLLVM y(argc, argv);
  cl::ParseCommandLineOptions(argc, argv, "TraceIR runner\n");

  std::optional<traceir::Device> device = traceir::Device::parse(deviceName);
  if (!device)
    return fail("unknown device '" + deviceName +
                "' (expected cpu, cuda or cuda:N)");
  if (inputFile != "-") {
    auto bytes = traceir::readFileBytes(inputFile);
    if (!bytes)
      return fail(toString(bytes.takeError()));
    // A .trx name is a saved executable even without its prefix: a corrupt
    // one gets the loader's "not a TraceIR saved executable", not MLIR's
    // parse error quoting binary bytes.
    if (traceir::looksLikeExecutableFile(*bytes) ||
        llvm::StringRef(inputFile).ends_with(".trx"))
      return runSaved(*bytes, deviceName.getNumOccurrences() > 0, *device);
  }
  if (describe)
    return fail("--describe reads saved executables (.trx); " + inputFile +
                " is MLIR");

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
    traceir::GeneratedKernelsSource source;
    source.gpuBinary = gpuBinary;
    source.toolkit = cudaToolkit;
    auto loaded = traceir::loadGeneratedKernels(*graph, *device, source);
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
  if (!saveExecutable.empty())
    if (traceir::Error err = traceir::saveExecutable(
            **exe, saveExecutable, "trace-run --save-executable"))
      return fail(err.message());
  return runLoaded(**exe);
}
