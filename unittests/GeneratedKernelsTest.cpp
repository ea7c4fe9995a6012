//===- GeneratedKernelsTest.cpp - Plans of generated kernels, on the CPU
//---===//
//
// What trace-run --gpu-binary does apart from the CUDA calls themselves: the
// plan read from the per-op host code must match the kernels' real LLVM
// signatures, and the runtime must hand each kernel the op's operands (made
// dense), its results and its temporaries. A recording GpuLibrary stands in
// for the GPU; scripts/gpu-check.sh runs the real one.
//
//===----------------------------------------------------------------------===//

#include "TestTensors.h"
#include "TraceIR/Conversion/KernelPlan.h"
#include "TraceIR/Runtime/Build.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cstring>
#include <map>

using namespace traceir;

namespace {

struct GeneratedKernelsTest : ::testing::Test {
  mlir::MLIRContext ctx;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  GeneratedKernelsTest() {
    mlir::DialectRegistry registry;
    mlir::trace::registerTracePipelineDialects(registry);
    ctx.appendDialectRegistry(registry);
    ctx.loadDialect<mlir::trace::TraceDialect>();
  }

  mlir::trace::GraphOp parse(llvm::StringRef text) {
    module = mlir::parseSourceString<mlir::ModuleOp>(text, &ctx);
    if (!module)
      return {};
    return *module->getOps<mlir::trace::GraphOp>().begin();
  }

  /// The plan without a binary (no ptxas): what --print-kernel-plan reads.
  GeneratedKernels plan(mlir::trace::GraphOp graph) {
    auto gen = mlir::trace::buildGeneratedKernels(
        graph, mlir::trace::GpuPipelineOptions(), std::string());
    EXPECT_TRUE(static_cast<bool>(gen)) << toString(gen.takeError());
    return gen ? std::move(*gen) : GeneratedKernels();
  }
};

constexpr llvm::StringLiteral kMLP = R"(
  trace.graph @mlp(%w: tensor<16x8xf32> {trace.param = "w"},
                   %b: tensor<16xf32> {trace.param = "b"},
                   %x: tensor<4x8xf32> {trace.input = "x"}) -> tensor<4xf32> {
    %0 = pyop "linear"(%x, %w, %b) : (tensor<4x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<4x16xf32>
    %1 = pyop "gelu"(%0) : (tensor<4x16xf32>) -> tensor<4x16xf32>
    %2 = pyop "log_softmax"(%1, -1) : (tensor<4x16xf32>) -> tensor<4x16xf32>
    %3 = pyop "sum"(%2, [1]) : (tensor<4x16xf32>) -> tensor<4xf32>
    %4 = pyop "lt"(%3, 0.5) : (tensor<4xf32>) -> tensor<4xi1>
    %5 = pyop "where"(%4, %3, 0.0) : (tensor<4xi1>, tensor<4xf32>) -> tensor<4xf32>
    ret %5 : tensor<4xf32>
  })";

// Every launch's arguments, kind by kind, are exactly the parameters of the
// kernel's LLVM function as NVVM lowering made it: a mismatch would pass
// garbage to a GPU with no error.
constexpr llvm::StringLiteral kRecurrentAttention = R"(
  trace.graph @ra(%x: tensor<3x4x16xf32> {trace.input = "x"},
                  %h: tensor<1x4x16xf32> {trace.input = "h"},
                  %c: tensor<1x4x16xf32> {trace.input = "c"},
                  %wi: tensor<64x16xf32> {trace.param = "wi"},
                  %wh: tensor<64x16xf32> {trace.param = "wh"},
                  %q: tensor<2x4x5x8xf32> {trace.input = "q"},
                  %m: tensor<5x5xi1> {trace.input = "m"})
      -> (tensor<3x4x16xf32>, tensor<2x4x5x8xf32>, tensor<f32>) {
    %0:3 = pyop "lstm"(%x, %h, %c, %wi, %wh, False, 1, 0.0, False, False, False) : (tensor<3x4x16xf32>, tensor<1x4x16xf32>, tensor<1x4x16xf32>, tensor<64x16xf32>, tensor<64x16xf32>) -> (tensor<3x4x16xf32>, tensor<1x4x16xf32>, tensor<1x4x16xf32>)
    %1 = pyop "scaled_dot_product_attention"(%q, %q, %q, %m) : (tensor<2x4x5x8xf32>, tensor<2x4x5x8xf32>, tensor<2x4x5x8xf32>, tensor<5x5xi1>) -> tensor<2x4x5x8xf32>
    %2 = pyop "sum"(%1) : (tensor<2x4x5x8xf32>) -> tensor<f32>
    ret %0#0, %1, %2 : tensor<3x4x16xf32>, tensor<2x4x5x8xf32>, tensor<f32>
  })";

struct SignatureCase {
  llvm::StringLiteral text;
  size_t numOps;
};

struct PlanSignatures : GeneratedKernelsTest,
                        ::testing::WithParamInterface<SignatureCase> {};

TEST_P(PlanSignatures, MatchKernelSignatures) {
  mlir::trace::GraphOp graph = parse(GetParam().text);
  ASSERT_TRUE(graph);
  GeneratedKernels gen = plan(graph);
  ASSERT_EQ(gen.ops.size(), GetParam().numOps);
  EXPECT_EQ(gen.numCovered(), GetParam().numOps)
      << (gen.notCovered.empty() ? std::string() : gen.notCovered.front());

  // The same pipeline, stopped where the kernels are NVVM functions.
  mlir::OwningOpRef<mlir::ModuleOp> lowered =
      mlir::ModuleOp::create(graph.getLoc());
  lowered->push_back(graph.clone());
  mlir::trace::GpuPipelineOptions options;
  options.perOp = true;
  options.mergeKernelModules = true;
  options.lowerHost = false;
  options.serialize = false;
  mlir::PassManager pm(&ctx, mlir::ModuleOp::getOperationName());
  mlir::trace::buildTraceLowerToGpuPipeline(pm, options);
  ASSERT_TRUE(mlir::succeeded(pm.run(*lowered)));

  unsigned launches = 0;
  for (const auto &op : gen.ops) {
    ASSERT_TRUE(op.has_value());
    for (const KernelLaunch &launch : op->launches) {
      ++launches;
      const std::string &name = gen.kernelNames[launch.kernel];
      mlir::LLVM::LLVMFuncOp kernel;
      lowered->walk([&](mlir::LLVM::LLVMFuncOp f) {
        if (f.getSymName() == name)
          kernel = f;
      });
      ASSERT_TRUE(kernel) << "no kernel " << name;
      auto params = kernel.getFunctionType().getParams();
      ASSERT_EQ(params.size(), launch.numArgs) << name;
      for (unsigned i = 0; i < launch.numArgs; ++i) {
        const KernelArg &a = op->args[launch.argBegin + i];
        mlir::Type t = params[i];
        switch (a.kind) {
        case KernelArg::Kind::Pointer:
          EXPECT_TRUE(mlir::isa<mlir::LLVM::LLVMPointerType>(t))
              << name << " #" << i;
          EXPECT_LT(size_t(a.buffer), op->numBuffers());
          break;
        case KernelArg::Kind::I64:
          EXPECT_TRUE(t.isInteger(64)) << name << " #" << i;
          break;
        case KernelArg::Kind::I32:
          EXPECT_TRUE(t.isInteger(32)) << name << " #" << i;
          break;
        case KernelArg::Kind::F32:
          EXPECT_TRUE(t.isF32()) << name << " #" << i;
          break;
        case KernelArg::Kind::F64:
          EXPECT_TRUE(t.isF64()) << name << " #" << i;
          break;
        }
      }
      // The launch shape the kernel was compiled for.
      auto known = kernel->getAttrOfType<mlir::DenseI32ArrayAttr>(
          "gpu.known_block_size");
      ASSERT_TRUE(known) << name;
      for (int d = 0; d < 3; ++d)
        EXPECT_EQ(int64_t(launch.block[d]), known[d]) << name;
    }
  }
  EXPECT_GE(launches, gen.kernelNames.size());
}

INSTANTIATE_TEST_SUITE_P(Graphs, PlanSignatures,
                         ::testing::Values(SignatureCase{kMLP, 6},
                                           SignatureCase{kRecurrentAttention,
                                                         3}));

// An RNN's host code loops over time steps: the plan is that loop unrolled,
// each step's launches reading and writing that step's slices, and the
// accumulator a step allocates and frees is one buffer reused by all.
TEST_F(GeneratedKernelsTest, LoopsUnrollWithEachStepsOffsets) {
  mlir::trace::GraphOp graph = parse(R"(
    trace.graph @g(%x: tensor<3x4x16xf32> {trace.input = "x"},
                   %h: tensor<1x4x16xf32> {trace.input = "h"},
                   %c: tensor<1x4x16xf32> {trace.input = "c"},
                   %wi: tensor<64x16xf32> {trace.param = "wi"},
                   %wh: tensor<64x16xf32> {trace.param = "wh"})
        -> tensor<3x4x16xf32> {
      %0:3 = pyop "lstm"(%x, %h, %c, %wi, %wh, False, 1, 0.0, False, False, False) : (tensor<3x4x16xf32>, tensor<1x4x16xf32>, tensor<1x4x16xf32>, tensor<64x16xf32>, tensor<64x16xf32>) -> (tensor<3x4x16xf32>, tensor<1x4x16xf32>, tensor<1x4x16xf32>)
      ret %0#0 : tensor<3x4x16xf32>
    })");
  ASSERT_TRUE(graph);
  GeneratedKernels gen = plan(graph);
  ASSERT_EQ(gen.ops.size(), 1u);
  ASSERT_TRUE(gen.ops[0].has_value()) << gen.notCovered.front();
  const GeneratedOp &op = *gen.ops[0];
  // Each memref argument's offset, per launch of each kernel.
  std::map<uint32_t, std::vector<std::vector<int64_t>>> offsets;
  for (const KernelLaunch &l : op.launches) {
    std::vector<int64_t> launchOffsets;
    for (uint32_t i = 0; i + 2 < l.numArgs; ++i) {
      const KernelArg &a = op.args[l.argBegin + i];
      const KernelArg &b = op.args[l.argBegin + i + 1];
      if (a.kind == KernelArg::Kind::Pointer &&
          b.kind == KernelArg::Kind::Pointer) {
        launchOffsets.push_back(op.args[l.argBegin + i + 2].i);
        ++i;
      }
    }
    offsets[l.kernel].push_back(launchOffsets);
  }
  // The step kernel (the gates) runs once per step, reading the input
  // projection at t*B*4H and writing the output at t*B*H.
  bool sawGates = false, sawOutput = false;
  for (auto &[kernel, launches] : offsets) {
    if (launches.size() != 3)
      continue;
    for (size_t arg = 0; arg < launches[0].size(); ++arg) {
      std::vector<int64_t> perStep;
      for (auto &l : launches)
        perStep.push_back(l[arg]);
      sawGates |= perStep == std::vector<int64_t>{0, 256, 512};
      sawOutput |= perStep == std::vector<int64_t>{0, 64, 128};
    }
  }
  EXPECT_TRUE(sawGates && sawOutput);
  // One 4x64 accumulator, not one per step.
  EXPECT_EQ(std::count(op.tempBytes.begin(), op.tempBytes.end(), 4 * 64 * 4),
            1);
}

/// Stands in for the GPU: records each launch and plays the kernel of
/// `relu` (result = 10 * operand) on host memory, finding its buffers
/// through the plan, so the run's output shows which memory was passed.
class RecordingLibrary : public GpuLibrary {
public:
  explicit RecordingLibrary(const GeneratedOp &op) : op(op) {}
  traceir::Error launch(uint32_t index, const uint32_t grid[3],
                        const uint32_t block[3], uint32_t sharedBytes,
                        void **args) override {
    const KernelLaunch &l = op.launches.at(launches.size());
    launches.push_back(index);
    EXPECT_EQ(l.kernel, index);
    for (int d = 0; d < 3; ++d) {
      EXPECT_EQ(l.grid[d], grid[d]);
      EXPECT_EQ(l.block[d], block[d]);
    }
    EXPECT_EQ(l.dynamicSharedBytes, sharedBytes);
    float *in = nullptr, *out = nullptr;
    for (uint32_t i = 0; i < l.numArgs; ++i) {
      const KernelArg &a = op.args[l.argBegin + i];
      if (a.kind != KernelArg::Kind::Pointer)
        continue;
      float *p = *static_cast<float **>(args[i]);
      (a.buffer == 0 ? in : out) = p;
    }
    EXPECT_TRUE(in && out);
    if (!in || !out)
      return traceir::Error::success();
    operand.assign(in, in + 6);
    for (int i = 0; i < 6; ++i)
      out[i] = 10 * in[i];
    return traceir::Error::success();
  }
  traceir::Error copy(void *dst, const void *src, size_t bytes) override {
    std::memcpy(dst, src, bytes);
    ++copies;
    return traceir::Error::success();
  }
  const GeneratedOp &op;
  std::vector<uint32_t> launches;
  unsigned copies = 0;
  std::vector<float> operand;
};

// A covered op gets its operand densely (here a transposed view, gathered
// into scratch), writes the run's own result storage, and the ops around
// it keep the runtime's kernels.
TEST_F(GeneratedKernelsTest, RunsCoveredOpsThroughTheLibrary) {
  mlir::trace::GraphOp graph = parse(R"(
    trace.graph @g(%x: tensor<2x3xf32> {trace.input = "x"}) -> tensor<3x2xf32> {
      %0 = pyop "transpose"(%x, 0, 1) : (tensor<2x3xf32>) -> tensor<3x2xf32>
      %1 = pyop "relu"(%0) : (tensor<3x2xf32>) -> tensor<3x2xf32>
      %2 = pyop "neg"(%1) : (tensor<3x2xf32>) -> tensor<3x2xf32>
      ret %2 : tensor<3x2xf32>
    })");
  ASSERT_TRUE(graph);
  GeneratedKernels gen = plan(graph);
  ASSERT_EQ(gen.ops.size(), 3u);
  ASSERT_TRUE(gen.ops[1].has_value());
  // Only relu is played by the fake GPU; neg keeps the runtime's kernel.
  gen.ops[2].reset();
  auto library = std::make_shared<RecordingLibrary>(*gen.ops[1]);
  auto exe = buildExecutable(graph, Device{}, &gen, library);
  ASSERT_TRUE(static_cast<bool>(exe)) << toString(exe.takeError());
  EXPECT_EQ((*exe)->ops[1].generatedKernels,
            gen.kernelNames[gen.ops[1]->launches[0].kernel]);
  EXPECT_TRUE((*exe)->ops[2].generatedKernels.empty());

  auto out = (*exe)->run({{"x", f32({2, 3}, {1, -2, 3, -4, 5, -6})}});
  ASSERT_TRUE(static_cast<bool>(out)) << toString(out.takeError());
  EXPECT_EQ(library->launches.size(), gen.ops[1]->launches.size());
  // x^T, row-major: the dense copy, not the strided storage of x.
  EXPECT_EQ(library->operand, (std::vector<float>{1, -4, -2, 5, 3, -6}));
  EXPECT_EQ(values((*out)[0]), (std::vector<float>{-10, 40, 20, -50, -30, 60}));
  EXPECT_EQ((*exe)->memoryReport().peakBytes,
            (*exe)->memoryReport().predictedPeakBytes);
}

/// Plays a kernel that writes 10 * its first pointer argument's floats to
/// its second (6 of them).
class ScaleLibrary : public GpuLibrary {
public:
  traceir::Error launch(uint32_t, const uint32_t *, const uint32_t *, uint32_t,
                        void **args) override {
    const float *in = *static_cast<float **>(args[0]);
    float *out = *static_cast<float **>(args[1]);
    for (int i = 0; i < 6; ++i)
      out[i] = 10 * in[i];
    order += "L";
    return traceir::Error::success();
  }
  traceir::Error copy(void *dst, const void *src, size_t bytes) override {
    std::memcpy(dst, src, bytes);
    order += "C";
    return traceir::Error::success();
  }
  std::string order;
};

// Steps run in program order, and a copy moves bytes between the buffers
// it names, at its offsets: here a kernel writes a temporary that a copy
// moves into the result (what a reshaped result bufferizes to).
TEST_F(GeneratedKernelsTest, CopiesFollowTheirKernels) {
  mlir::trace::GraphOp graph = parse(R"(
    trace.graph @g(%x: tensor<2x3xf32> {trace.input = "x"}) -> tensor<2x3xf32> {
      %0 = pyop "neg"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
      ret %0 : tensor<2x3xf32>
    })");
  ASSERT_TRUE(graph);
  GeneratedKernels gen;
  gen.kernelNames = {"scale"};
  GeneratedOp op;
  op.function = "g__op0_neg";
  op.numOperands = 1;
  op.numResults = 1;
  op.tempBytes = {8 + 24}; // the copy reads from byte 8 on
  KernelArg in, temp;
  in.kind = temp.kind = KernelArg::Kind::Pointer;
  in.buffer = 0;
  temp.buffer = 2;
  op.args = {in, temp};
  KernelLaunch launch;
  launch.numArgs = 2;
  op.launches = {launch};
  op.copies = {DeviceCopy{/*src=*/2, /*dst=*/1, /*srcOffset=*/8,
                          /*dstOffset=*/0, /*bytes=*/24}};
  op.steps = {{GeneratedStep::Kind::Launch, 0}, {GeneratedStep::Kind::Copy, 0}};
  gen.ops.push_back(op);
  auto library = std::make_shared<ScaleLibrary>();
  auto exe = buildExecutable(graph, Device{}, &gen, library);
  ASSERT_TRUE(static_cast<bool>(exe)) << toString(exe.takeError());
  auto out = (*exe)->run({{"x", f32({2, 3}, {1, 2, 3, 4, 5, 6})}});
  ASSERT_TRUE(static_cast<bool>(out)) << toString(out.takeError());
  EXPECT_EQ(library->order, "LC");
  // The kernel wrote the temporary from byte 0; the copy took 24 bytes
  // from byte 8: elements 2..6, then whatever followed (scratch), so only
  // the first four are known.
  const float *o = (*out)[0].as<float>();
  EXPECT_EQ(std::vector<float>(o, o + 4), (std::vector<float>{30, 40, 50, 60}));

  // A copy reaching past its source (8 + 32 > 32 bytes) is refused, not
  // done: a plan is checked against the buffers it is given.
  gen.ops[0]->copies[0].bytes = 32;
  auto bad = buildExecutable(graph, Device{}, &gen, library);
  ASSERT_TRUE(static_cast<bool>(bad)) << toString(bad.takeError());
  auto refused = (*bad)->run({{"x", f32({2, 3}, {1, 2, 3, 4, 5, 6})}});
  ASSERT_FALSE(static_cast<bool>(refused));
  EXPECT_NE(
      toString(refused.takeError()).find("a copy reaches outside its buffers"),
      std::string::npos);
}

TEST_F(GeneratedKernelsTest, PlanOfAnotherGraphIsRejected) {
  mlir::trace::GraphOp graph = parse(kMLP);
  ASSERT_TRUE(graph);
  GeneratedKernels gen = plan(graph);
  gen.ops.pop_back();
  auto exe = buildExecutable(graph, Device{}, &gen, nullptr);
  ASSERT_FALSE(static_cast<bool>(exe));
  EXPECT_EQ(toString(exe.takeError()),
            "the generated kernels are for a graph of 5 ops; @mlp has 6");
}

TEST(PackKernelArgs, ValuesByKind) {
  GeneratedOp op;
  op.function = "f";
  op.numOperands = 1;
  op.numResults = 1;
  auto arg = [&](KernelArg::Kind kind, int32_t buffer, int64_t i, double f) {
    KernelArg a;
    a.kind = kind;
    a.buffer = buffer;
    a.i = i;
    a.f = f;
    op.args.push_back(a);
  };
  arg(KernelArg::Kind::Pointer, 1, 0, 0);
  arg(KernelArg::Kind::I64, -1, -5, 0);
  arg(KernelArg::Kind::I32, -1, 7, 0);
  arg(KernelArg::Kind::F32, -1, 0, 0.25);
  arg(KernelArg::Kind::F64, -1, 0, -1.5);
  KernelLaunch launch;
  launch.numArgs = 5;
  int in = 0, out = 0;
  void *buffers[] = {&in, &out};
  PackedKernelArgs packed;
  ASSERT_FALSE(static_cast<bool>(packKernelArgs(op, launch, buffers, packed)));
  ASSERT_EQ(packed.pointers.size(), 5u);
  EXPECT_EQ(*static_cast<void **>(packed.pointers[0]), &out);
  EXPECT_EQ(*static_cast<int64_t *>(packed.pointers[1]), -5);
  EXPECT_EQ(*static_cast<int32_t *>(packed.pointers[2]), 7);
  EXPECT_EQ(*static_cast<float *>(packed.pointers[3]), 0.25f);
  EXPECT_EQ(*static_cast<double *>(packed.pointers[4]), -1.5);

  op.args[0].buffer = 2; // only two buffers
  traceir::Error err = packKernelArgs(op, launch, buffers, packed);
  ASSERT_TRUE(static_cast<bool>(err));
  EXPECT_EQ(toString(std::move(err)),
            "generated code of f: argument #0 names buffer 2 of 2");
}

} // namespace
