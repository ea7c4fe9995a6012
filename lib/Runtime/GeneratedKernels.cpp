//===- GeneratedKernels.cpp - Running an op with generated kernels --------===//
//
// Host logic only: the device side is GpuLibrary (CUDA/GpuLibrary.cpp), so
// everything here runs, and is tested, on machines without a GPU.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/GeneratedKernels.h"
#include "TraceIR/Runtime/Executable.h"

#include <vector>

#include <algorithm>
#include <cstring>

using namespace traceir;

GpuLibrary::~GpuLibrary() = default;

Error traceir::packKernelArgs(const GeneratedOp &op, const KernelLaunch &launch,
                              std::span<void *const> buffers,
                              PackedKernelArgs &out) {
  if (size_t(launch.argBegin) + launch.numArgs > op.args.size())
    return makeError("generated code of " + op.function +
                     ": a launch's arguments are out of range");
  out.values.assign(launch.numArgs, 0);
  out.pointers.resize(launch.numArgs);
  for (uint32_t i = 0; i < launch.numArgs; ++i) {
    const KernelArg &a = op.args[launch.argBegin + i];
    uint64_t &slot = out.values[i];
    switch (a.kind) {
    case KernelArg::Kind::Pointer: {
      if (a.buffer < 0 || size_t(a.buffer) >= buffers.size())
        return makeError("generated code of " + op.function + ": argument #" +
                         strCat(i) + " names buffer " + strCat(a.buffer) +
                         " of " + strCat(buffers.size()));
      void *p = buffers[a.buffer];
      std::memcpy(&slot, &p, sizeof(p));
      break;
    }
    case KernelArg::Kind::I64:
      std::memcpy(&slot, &a.i, sizeof(int64_t));
      break;
    case KernelArg::Kind::I32: {
      int32_t v = static_cast<int32_t>(a.i);
      std::memcpy(&slot, &v, sizeof(v));
      break;
    }
    case KernelArg::Kind::F32: {
      float v = static_cast<float>(a.f);
      std::memcpy(&slot, &v, sizeof(v));
      break;
    }
    case KernelArg::Kind::F64:
      std::memcpy(&slot, &a.f, sizeof(double));
      break;
    }
    out.pointers[i] = &slot;
  }
  return Error::success();
}

void traceir::runGeneratedOp(KernelContext &ctx) {
  const GeneratedOp &op = ctx.generatedOp();
  GpuLibrary *library = ctx.gpuLibrary();
  if (!library)
    return ctx.fail("no GPU binary is loaded for its generated kernels");
  std::vector<void *> buffers;
  std::vector<int64_t> sizes; // bytes of each buffer
  // Storages for dense copies of strided operands; kept until the kernels
  // are launched (their memory is scratch, freed after the call).
  std::vector<Storage> copies;
  copies.reserve(op.numOperands);
  for (unsigned i = 0; i < ctx.numArgs(); ++i) {
    if (!ctx.isTensor(i))
      continue;
    const Tensor &t = ctx.tensor(i);
    sizes.push_back(t.nbytes());
    if (t.isContiguous()) {
      buffers.push_back(t.bytes());
      continue;
    }
    // The generated code reads dense row-major memory (identity layouts
    // at function boundaries); a view with other strides is gathered.
    Storage &st = copies.emplace_back();
    st.nbytes = t.nbytes();
    st.device = t.storage->device;
    st.data = ctx.scratch(std::max<int64_t>(st.nbytes, 1));
    if (!st.data)
      return;
    Tensor dense = t;
    dense.storage = &st;
    dense.offset = 0;
    dense.strides = Tensor::contiguousStrides(t.shape);
    if (!ctx.allocator().copyStrided(t, dense))
      return ctx.fail("copying operand #" + strCat(buffers.size()) +
                      " into dense memory failed");
    buffers.push_back(st.data);
  }
  if (buffers.size() != op.numOperands || ctx.numResults() != op.numResults)
    return ctx.fail("its generated code (" + op.function + ") takes " +
                    strCat(op.numOperands) + " operands and " +
                    strCat(op.numResults) + " results, the op has " +
                    strCat(buffers.size()) + " and " +
                    strCat(ctx.numResults()));
  for (unsigned r = 0; r < op.numResults; ++r) {
    buffers.push_back(ctx.result(r).bytes());
    sizes.push_back(ctx.result(r).nbytes());
  }
  for (int64_t bytes : op.tempBytes) {
    sizes.push_back(bytes);
    void *p = ctx.scratch(std::max<int64_t>(bytes, 1));
    if (!p)
      return;
    buffers.push_back(p);
  }
  PackedKernelArgs packed;
  for (const GeneratedStep &step : op.steps) {
    if (step.kind == GeneratedStep::Kind::Copy) {
      const DeviceCopy &c = op.copies[step.index];
      auto inside = [&](int32_t b, int64_t offset) {
        return b >= 0 && size_t(b) < buffers.size() && offset >= 0 &&
               c.bytes >= 0 && offset + c.bytes <= sizes[b];
      };
      if (!inside(c.src, c.srcOffset) || !inside(c.dst, c.dstOffset))
        return ctx.fail("generated code of " + op.function +
                        ": a copy reaches outside its buffers");
      if (Error err = library->copy(
              static_cast<char *>(buffers[c.dst]) + c.dstOffset,
              static_cast<char *>(buffers[c.src]) + c.srcOffset, c.bytes))
        return ctx.fail(toString(std::move(err)));
      continue;
    }
    const KernelLaunch &launch = op.launches[step.index];
    if (Error err = packKernelArgs(op, launch, buffers, packed))
      return ctx.fail(toString(std::move(err)));
    if (Error err =
            library->launch(launch.kernel, launch.grid, launch.block,
                            launch.dynamicSharedBytes, packed.pointers.data()))
      return ctx.fail(toString(std::move(err)));
  }
}
