//===- ExecutableFile.cpp - Saving and loading executables (.trx) ---------===//
//
// The writer walks an Executable into the FlatBuffer of ExecutableFile.fbs;
// the loader verifies the FlatBuffer, then checks what its Verifier cannot
// (slots, types, def-before-use, kernels, chips) while it rebuilds the
// Executable. Every message names the file and what in it is wrong.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/ExecutableFile.h"
#include "TraceIR/Runtime/CPU/Gemm.h"
#include "TraceIR/Runtime/CUDA/Backend.h"
#include "TraceIR/Runtime/ExecutableFile_generated.h"
#include "TraceIR/Runtime/Files.h"
#include "TraceIR/Support/CheckedMath.h"
#include "TraceIR/Support/NestingDepth.h"
#include "TraceIR/Support/OpArgs.h"
#include "TraceIR/Support/ViewAlgebra.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>

using namespace traceir;
namespace fb = flatbuffers;

namespace {

constexpr char kMagic[8] = {'T', 'R', 'A', 'C', 'E', 'I', 'R', 'X'};
/// More slots than this is no graph a file of this format describes (and
/// keeps a hostile count from sizing the run's slot array).
constexpr uint32_t kMaxSlots = 1u << 26;

void putU32(std::string &out, uint32_t v) {
  for (int i = 0; i < 4; ++i)
    out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}
uint32_t getU32(const char *p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i)
    v |= uint32_t(static_cast<unsigned char>(p[i])) << (8 * i);
  return v;
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

class Writer {
public:
  explicit Writer(const Executable &exe) : exe(exe) {}

  std::string write(const std::string &producer) {
    std::vector<fb::Offset<trx::Argument>> params, inputs;
    for (const Executable::ArgSpec &a : exe.paramSpecs)
      params.push_back(argument(a));
    for (const Executable::ArgSpec &a : exe.inputSpecs)
      inputs.push_back(argument(a));
    std::vector<fb::Offset<trx::Constant>> constants;
    for (const auto &[slot, t] : exe.constants) {
      auto type = tensorType(t.dtype, t.shape);
      auto data = b.CreateVector(
          reinterpret_cast<const uint8_t *>(t.data.data()), t.data.size());
      constants.push_back(trx::CreateConstant(b, slot, type, data));
    }
    std::vector<fb::Offset<trx::Instr>> instrs;
    for (const Instr &instr : exe.instrs)
      instrs.push_back(instruction(instr));
    std::vector<fb::Offset<trx::GeneratedOp>> generated;
    for (const GeneratedOp &op : exe.generatedOps)
      generated.push_back(generatedOp(op));
    fb::Offset<trx::GpuBinary> gpu;
    // Generated ops need the table even when it is empty (the loader
    // refuses them without one).
    if (!exe.generatedOps.empty() || !exe.gpuBinary.empty() ||
        !exe.gpuKernelNames.empty() || !exe.gpuChip.empty())
      gpu =
          trx::CreateGpuBinary(b, b.CreateString(exe.gpuChip),
                               b.CreateVector(reinterpret_cast<const uint8_t *>(
                                                  exe.gpuBinary.data()),
                                              exe.gpuBinary.size()),
                               b.CreateVectorOfStrings(exe.gpuKernelNames));
    auto root = trx::CreateExecutable(
        b, b.CreateString(exe.name), b.CreateString(producer),
        exe.dev.kind == Device::Kind::CPU ? trx::DeviceKind::CPU
                                          : trx::DeviceKind::CUDA,
        exe.dev.index, static_cast<uint32_t>(exe.numSlots),
        b.CreateVector(params), b.CreateVector(inputs),
        b.CreateVector(constants), b.CreateVector(instrs),
        b.CreateVector(exe.outputSlots), exe.report.predictedPeakBytes,
        exe.report.predictionIsLowerBound, b.CreateVector(generated), gpu,
        exe.arenaBytes, exe.arenaAlignment);
    trx::FinishExecutableBuffer(b, root);

    std::string out(kMagic, sizeof kMagic);
    putU32(out, kExecutableFormatMajor);
    putU32(out, kExecutableFormatMinor);
    out.append(reinterpret_cast<const char *>(b.GetBufferPointer()),
               b.GetSize());
    return out;
  }

private:
  fb::Offset<trx::TensorType> tensorType(DType dtype, const Shape &shape) {
    return trx::CreateTensorType(b, static_cast<trx::DType>(dtype),
                                 b.CreateVector(shape));
  }
  fb::Offset<trx::Argument> argument(const Executable::ArgSpec &a) {
    return trx::CreateArgument(b, b.CreateString(a.name), a.slot,
                               tensorType(a.dtype, a.shape), a.donated);
  }
  fb::Offset<trx::Scalar> scalar(const ScalarValue &v) {
    std::vector<fb::Offset<trx::Scalar>> elements;
    for (const ScalarValue &e : v.elements)
      elements.push_back(scalar(e));
    return trx::CreateScalar(b, static_cast<trx::ScalarKind>(v.kind), v.b, v.i,
                             v.f, v.s.empty() ? 0 : b.CreateString(v.s),
                             elements.empty() ? 0 : b.CreateVector(elements));
  }
  fb::Offset<trx::Instr> instruction(const Instr &instr) {
    const OpInfoRT &info = exe.ops[instr.op];
    auto location = b.CreateString(info.location);
    auto valueNames = b.CreateVectorOfStrings(info.valueNames);
    if (instr.kind == Instr::Kind::Free)
      return trx::CreateInstr(b, trx::InstrKind::Free,
                              b.CreateString(info.name), 0, 0, 0, 0,
                              instr.freeSlot, -1, location, valueNames);
    std::string cconv;
    std::vector<int32_t> tensorSlots;
    std::vector<fb::Offset<trx::Scalar>> scalars;
    for (uint32_t k = 0; k < instr.numArgs; ++k) {
      const ArgRef &a = exe.args[instr.argBegin + k];
      if (a.slot >= 0) {
        cconv += 't';
        tensorSlots.push_back(a.slot);
      } else {
        cconv += 's';
        scalars.push_back(scalar(exe.scalarValues[a.scalar]));
      }
    }
    std::vector<fb::Offset<trx::Result>> results;
    for (uint32_t r = 0; r < instr.numResults; ++r) {
      const ResultRef &res = exe.results[instr.resultBegin + r];
      results.push_back(trx::CreateResult(b, res.slot, res.fresh,
                                          tensorType(res.dtype, res.shape),
                                          res.arenaOffset));
    }
    bool generated = instr.fn == runGeneratedOp;
    return trx::CreateInstr(
        b, trx::InstrKind::Call, b.CreateString(info.name),
        b.CreateString(cconv), b.CreateVector(tensorSlots),
        b.CreateVector(scalars), b.CreateVector(results), -1,
        generated ? static_cast<int32_t>(instr.generated) : -1, location,
        valueNames, b.CreateString(info.scalars),
        b.CreateString(info.generatedKernels));
  }
  fb::Offset<trx::GeneratedOp> generatedOp(const GeneratedOp &op) {
    std::vector<trx::KernelLaunch> launches;
    for (const KernelLaunch &l : op.launches)
      launches.emplace_back(
          l.kernel, std::array<uint32_t, 3>{l.grid[0], l.grid[1], l.grid[2]},
          std::array<uint32_t, 3>{l.block[0], l.block[1], l.block[2]},
          l.dynamicSharedBytes, l.argBegin, l.numArgs);
    std::vector<trx::DeviceCopy> copies;
    for (const DeviceCopy &c : op.copies)
      copies.emplace_back(c.src, c.dst, c.srcOffset, c.dstOffset, c.bytes);
    std::vector<trx::GeneratedStep> steps;
    for (const GeneratedStep &s : op.steps)
      steps.emplace_back(static_cast<uint8_t>(s.kind), s.index);
    std::vector<fb::Offset<trx::KernelArg>> args;
    for (const KernelArg &a : op.args)
      args.push_back(trx::CreateKernelArg(b, static_cast<uint8_t>(a.kind),
                                          a.buffer, a.i, a.f));
    return trx::CreateGeneratedOp(
        b, b.CreateString(op.function), op.numOperands, op.numResults,
        b.CreateVector(op.tempBytes), b.CreateVectorOfStructs(launches),
        b.CreateVectorOfStructs(copies), b.CreateVectorOfStructs(steps),
        b.CreateVector(args));
  }

  const Executable &exe;
  fb::FlatBufferBuilder b{1 << 16};
};

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

/// Checks a verified FlatBuffer and, with `exe`, fills it.
class Reader {
public:
  Reader(std::string_view name, const trx::Executable &root)
      : name(name), root(root) {}

  /// The file's header checks, then its FlatBuffer's. A FlatBuffer not at
  /// an 8-byte boundary is copied into `aligned` first: its 8-byte fields
  /// are aligned only relative to its start.
  static Expected<const trx::Executable *>
  open(std::string_view bytes, std::string_view name,
       std::vector<uint64_t> &aligned) {
    std::string file(name);
    if (bytes.size() < sizeof kMagic ||
        std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
      return makeError(file + ": not a TraceIR saved executable (no "
                              "\"TRACEIRX\" header)");
    if (bytes.size() < kExecutableHeaderBytes)
      return makeError(file + ": truncated saved executable: " +
                       std::to_string(bytes.size()) +
                       " bytes, shorter than "
                       "its " +
                       std::to_string(kExecutableHeaderBytes) + "-byte header");
    uint32_t major = getU32(bytes.data() + 8),
             minor = getU32(bytes.data() + 12);
    if (major > kExecutableFormatMajor)
      return makeError(file + ": written in executable format " +
                       std::to_string(major) + "." + std::to_string(minor) +
                       " by a newer TraceIR; this runtime reads format " +
                       std::to_string(kExecutableFormatMajor) +
                       ".x: rebuild it with this version's trace-translate "
                       "--emit-executable");
    if (major == 0)
      return makeError(file + ": executable format 0." + std::to_string(minor) +
                       " does not exist");
    const auto *buf = reinterpret_cast<const uint8_t *>(bytes.data() +
                                                        kExecutableHeaderBytes);
    size_t size = bytes.size() - kExecutableHeaderBytes;
    if (reinterpret_cast<uintptr_t>(buf) % alignof(uint64_t)) {
      aligned.assign((size + 7) / 8, 0);
      std::memcpy(aligned.data(), buf, size);
      buf = reinterpret_cast<const uint8_t *>(aligned.data());
    }
    // Scalars nest (tuples of lists); the depth the parser allows, plus the
    // tables above a scalar.
    fb::Verifier::Options options;
    options.max_depth = kMaxScalarDepth + 8;
    options.max_tables = 1u << 28;
    fb::Verifier verifier(buf, size, options);
    if (!trx::VerifyExecutableBuffer(verifier))
      return makeError(file + ": corrupt saved executable (its FlatBuffer "
                              "fails verification: truncated, or an offset "
                              "out of bounds)");
    return trx::GetExecutable(buf);
  }

  /// Checks the file and, when `exe` is given, fills it.
  Error read(Executable *exe) {
    if (root.device() != trx::DeviceKind::CPU &&
        root.device() != trx::DeviceKind::CUDA)
      return fail("unknown device kind " + std::to_string(int(root.device())));
    numSlots = root.num_slots();
    if (numSlots > kMaxSlots)
      return fail("num_slots " + std::to_string(numSlots) + " is over " +
                  std::to_string(kMaxSlots));
    // Each slot is defined once, by an argument, a constant or a result (as
    // buildExecutable numbers them): a count beyond the definitions would
    // only size the state below and every run's slot array (72 bytes a
    // slot) from a number in the file.
    uint64_t definitions = 0;
    for (const auto *args : {root.params(), root.inputs()})
      definitions += args ? args->size() : 0;
    definitions += root.constants() ? root.constants()->size() : 0;
    if (root.instrs())
      for (const trx::Instr *in : *root.instrs())
        if (in->kind() == trx::InstrKind::Call && in->results())
          definitions += in->results()->size();
    if (numSlots != definitions)
      return fail("num_slots is " + std::to_string(numSlots) + ", but " +
                  std::to_string(definitions) + " values are defined");
    state.assign(numSlots, SlotState::Undefined);
    if (root.predicted_peak_bytes() < 0)
      return fail("predicted peak of " +
                  std::to_string(root.predicted_peak_bytes()) + " bytes");
    Device::Kind kind = root.device() == trx::DeviceKind::CPU
                            ? Device::Kind::CPU
                            : Device::Kind::CUDA;
    if (exe) {
      exe->name = str(root.name());
      exe->producer = str(root.producer());
      exe->numSlots = numSlots;
      exe->report.predictedPeakBytes = root.predicted_peak_bytes();
      exe->report.predictionIsLowerBound = root.prediction_is_lower_bound();
    }
    // The plan: each offset is checked against it as its result is read,
    // and the run checks that no two storages alive at once overlap.
    int64_t align = root.arena_alignment();
    if (root.arena_bytes() < 0 || align < 0 || (align & (align - 1)) != 0 ||
        (align == 0 && root.arena_bytes() != 0))
      return fail("memory plan of " + std::to_string(root.arena_bytes()) +
                  " bytes aligned to " + std::to_string(align) +
                  " (the alignment must be a power of two, or 0 without a "
                  "plan)");
    if (exe) {
      exe->arenaBytes = root.arena_bytes();
      exe->arenaAlignment = align;
    }
    if (Error err = readArguments(root.params(), "parameter",
                                  exe ? &exe->paramSpecs : nullptr,
                                  exe ? &exe->params : nullptr))
      return err;
    if (Error err = readArguments(root.inputs(), "input",
                                  exe ? &exe->inputSpecs : nullptr,
                                  exe ? &exe->inputs : nullptr))
      return err;
    if (Error err = readConstants(exe))
      return err;
    if (Error err = readGenerated(exe))
      return err;
    // Generated code is GPU code: loading it for the CPU would query a GPU,
    // and a run would launch its kernels on host memory.
    if (kind == Device::Kind::CPU && numGenerated)
      return fail(std::to_string(numGenerated) +
                  " ops run generated GPU code, but the file is for the cpu");
    if (Error err = readInstrs(kind, exe))
      return err;
    if (root.outputs())
      for (int32_t slot : *root.outputs()) {
        if (Error err = use(slot, "output"))
          return err;
        if (exe)
          exe->outputSlots.push_back(slot);
      }
    return Error::success();
  }

  const trx::Executable &file() const { return root; }

private:
  enum class SlotState : uint8_t { Undefined, Live, Freed };

  Error fail(const std::string &what) const {
    return makeError(std::string(name) + ": corrupt saved executable: " + what);
  }
  static std::string str(const fb::String *s) {
    return s ? std::string(s->data(), s->size()) : std::string();
  }
  /// FlatBuffers 2.0.8's Verifier checks a vector's length field for 4-byte
  /// alignment, not its elements for theirs: a vector of 8-byte elements
  /// that a hostile file misaligns would be read misaligned (undefined
  /// behaviour, and a fault on some CPUs). The writer aligns every vector
  /// that has elements (an empty one it does not align, nor need to).
  template <typename T>
  Error checkAligned(const fb::Vector<T> *v, const std::string &what) const {
    if (v && v->size() &&
        reinterpret_cast<uintptr_t>(v->data()) % alignof(T) != 0)
      return fail(what + " is misaligned in the file");
    return Error::success();
  }
  Error checkSlot(int32_t slot, const std::string &what) const {
    if (slot < 0 || uint32_t(slot) >= numSlots)
      return fail(what + " names slot " + std::to_string(slot) + " of " +
                  std::to_string(numSlots));
    return Error::success();
  }
  Error define(int32_t slot, const std::string &what) {
    if (Error err = checkSlot(slot, what))
      return err;
    if (state[slot] != SlotState::Undefined)
      return fail(what + " defines slot " + std::to_string(slot) +
                  ", which is already defined");
    state[slot] = SlotState::Live;
    return Error::success();
  }
  Error use(int32_t slot, const std::string &what) const {
    if (Error err = checkSlot(slot, what))
      return err;
    if (state[slot] == SlotState::Undefined)
      return fail(what + " reads slot " + std::to_string(slot) +
                  " before anything defines it");
    if (state[slot] == SlotState::Freed)
      return fail(what + " reads slot " + std::to_string(slot) +
                  " after it was freed");
    return Error::success();
  }
  Error type(const trx::TensorType *t, const std::string &what, DType &dtype,
             Shape &shape) const {
    if (!t || !t->shape())
      return fail(what + " has no type");
    if (Error err = checkAligned(t->shape(), what + "'s shape"))
      return err;
    if (uint8_t(t->dtype()) > uint8_t(trx::DType::MAX))
      return fail(what + " has unknown dtype " +
                  std::to_string(int(t->dtype())));
    dtype = static_cast<DType>(t->dtype());
    shape.assign(t->shape()->begin(), t->shape()->end());
    for (int64_t d : shape)
      if (d < 0)
        return fail(what + " has a negative dimension in " +
                    shapeToString(shape));
    std::optional<int64_t> bytes = checkedTensorBytes(shape, dtypeSize(dtype));
    if (!bytes || *bytes > kMaxTensorBytes)
      return fail(what + " has type " + dtypeName(dtype) +
                  shapeToString(shape) + ", over TraceIR's tensor size limit");
    return Error::success();
  }

  Error readArguments(const fb::Vector<fb::Offset<trx::Argument>> *args,
                      const char *what, std::vector<Executable::ArgSpec> *specs,
                      std::vector<std::string> *names) {
    if (!args)
      return Error::success();
    std::map<std::string, bool> seen;
    for (uint32_t k = 0; k < args->size(); ++k) {
      const trx::Argument *a = args->Get(k);
      std::string label = std::string(what) + " #" + std::to_string(k);
      Executable::ArgSpec spec;
      spec.name = str(a->name());
      spec.slot = a->slot();
      spec.donated = a->donated();
      if (spec.name.empty())
        return fail(label + " has no name");
      if (!seen.emplace(spec.name, true).second)
        return fail(std::string("two ") + what + "s are named '" + spec.name +
                    "'");
      if (Error err = define(spec.slot, label))
        return err;
      if (Error err = type(a->type(), label, spec.dtype, spec.shape))
        return err;
      persistentOrInput[spec.slot] = true;
      if (specs) {
        names->push_back(spec.name);
        specs->push_back(std::move(spec));
      }
    }
    return Error::success();
  }

  Error readConstants(Executable *exe) {
    if (!root.constants())
      return Error::success();
    for (uint32_t k = 0; k < root.constants()->size(); ++k) {
      const trx::Constant *c = root.constants()->Get(k);
      std::string label = "constant #" + std::to_string(k);
      HostTensor t;
      if (Error err = define(c->slot(), label))
        return err;
      if (Error err = type(c->type(), label, t.dtype, t.shape))
        return err;
      int64_t bytes = *checkedTensorBytes(t.shape, dtypeSize(t.dtype));
      size_t have = c->data() ? c->data()->size() : 0;
      if (int64_t(have) != bytes)
        return fail(label + " holds " + std::to_string(have) +
                    " bytes; its type " + dtypeName(t.dtype) +
                    shapeToString(t.shape) + " needs " + std::to_string(bytes));
      persistentOrInput[c->slot()] = true;
      if (!exe)
        continue;
      if (Error err = allocateHostData(t, bytes, "the " + label))
        return err;
      if (bytes)
        std::memcpy(t.data.data(), c->data()->data(), bytes);
      exe->constants.push_back({c->slot(), std::move(t)});
    }
    return Error::success();
  }

  Error readGenerated(Executable *exe) {
    const trx::GpuBinary *gpu = root.gpu_binary();
    uint32_t numKernels =
        gpu && gpu->kernel_names() ? gpu->kernel_names()->size() : 0;
    numGenerated = root.generated_ops() ? root.generated_ops()->size() : 0;
    if (numGenerated && !gpu)
      return fail("generated ops without a GPU binary");
    if (exe && gpu) {
      exe->gpuChip = str(gpu->chip());
      if (gpu->fatbin())
        exe->gpuBinary.assign(
            reinterpret_cast<const char *>(gpu->fatbin()->data()),
            gpu->fatbin()->size());
      for (uint32_t k = 0; k < numKernels; ++k)
        exe->gpuKernelNames.push_back(str(gpu->kernel_names()->Get(k)));
    }
    for (uint32_t g = 0; g < numGenerated; ++g) {
      const trx::GeneratedOp *f = root.generated_ops()->Get(g);
      std::string label = "generated op #" + std::to_string(g);
      GeneratedOp op;
      op.function = str(f->function());
      op.numOperands = f->num_operands();
      op.numResults = f->num_results();
      if (Error err = checkAligned(f->temp_bytes(), label + "'s temp_bytes"))
        return err;
      if (Error err = checkAligned(f->copies(), label + "'s copies"))
        return err;
      if (f->temp_bytes())
        for (int64_t t : *f->temp_bytes()) {
          if (t < 0 || t > kMaxTensorBytes)
            return fail(label + " has a temporary of " + std::to_string(t) +
                        " bytes");
          op.tempBytes.push_back(t);
        }
      uint64_t numBuffers =
          uint64_t(op.numOperands) + op.numResults + op.tempBytes.size();
      if (f->args())
        for (const trx::KernelArg *a : *f->args()) {
          if (a->kind() > uint8_t(KernelArg::Kind::F64))
            return fail(label + " has a kernel argument of unknown kind " +
                        std::to_string(a->kind()));
          KernelArg arg;
          arg.kind = static_cast<KernelArg::Kind>(a->kind());
          arg.buffer = a->buffer();
          arg.i = a->i();
          arg.f = a->f();
          if (arg.kind == KernelArg::Kind::Pointer &&
              (arg.buffer < 0 || uint64_t(arg.buffer) >= numBuffers))
            return fail(label + " passes buffer " + std::to_string(arg.buffer) +
                        " of " + std::to_string(numBuffers));
          op.args.push_back(arg);
        }
      if (f->launches())
        for (const trx::KernelLaunch *l : *f->launches()) {
          if (l->kernel() >= numKernels)
            return fail(label + " launches kernel " +
                        std::to_string(l->kernel()) + " of " +
                        std::to_string(numKernels));
          if (uint64_t(l->arg_begin()) + l->num_args() > op.args.size())
            return fail(label + " has a launch whose arguments run past its " +
                        std::to_string(op.args.size()));
          KernelLaunch launch;
          launch.kernel = l->kernel();
          for (int d = 0; d < 3; ++d) {
            launch.grid[d] = l->grid()->Get(d);
            launch.block[d] = l->block()->Get(d);
          }
          launch.dynamicSharedBytes = l->dynamic_shared_bytes();
          launch.argBegin = l->arg_begin();
          launch.numArgs = l->num_args();
          op.launches.push_back(launch);
        }
      if (f->copies())
        for (const trx::DeviceCopy *c : *f->copies()) {
          if (c->src() < 0 || uint64_t(c->src()) >= numBuffers ||
              c->dst() < 0 || uint64_t(c->dst()) >= numBuffers ||
              c->src_offset() < 0 || c->dst_offset() < 0 || c->bytes() < 0)
            return fail(label + " has a copy out of its buffers");
          op.copies.push_back({c->src(), c->dst(), c->src_offset(),
                               c->dst_offset(), c->bytes()});
        }
      if (f->steps())
        for (const trx::GeneratedStep *s : *f->steps()) {
          bool launch = s->kind() == uint8_t(GeneratedStep::Kind::Launch);
          if (s->kind() > uint8_t(GeneratedStep::Kind::Copy) ||
              s->index() >= (launch ? op.launches.size() : op.copies.size()))
            return fail(label + " has a step out of range");
          op.steps.push_back(
              {static_cast<GeneratedStep::Kind>(s->kind()), s->index()});
        }
      if (exe)
        exe->generatedOps.push_back(std::move(op));
    }
    return Error::success();
  }

  Error readScalar(const trx::Scalar *s, const std::string &what,
                   ScalarValue &out, int depth) const {
    if (depth > kMaxScalarDepth)
      return fail(what + " nests deeper than " +
                  std::to_string(kMaxScalarDepth) + " levels");
    if (uint8_t(s->kind()) > uint8_t(trx::ScalarKind::MAX))
      return fail(what + " has unknown kind " + std::to_string(int(s->kind())));
    out.kind = static_cast<ScalarValue::Kind>(s->kind());
    out.b = s->b();
    out.i = s->i();
    out.f = s->f();
    out.s = str(s->s());
    bool sequence = out.kind == ScalarValue::Kind::List ||
                    out.kind == ScalarValue::Kind::Tuple;
    if (s->elements() && s->elements()->size() && !sequence)
      return fail(what + " has elements but is no list or tuple");
    if (s->elements())
      for (const trx::Scalar *e : *s->elements()) {
        out.elements.emplace_back();
        if (Error err = readScalar(e, what, out.elements.back(), depth + 1))
          return err;
      }
    return Error::success();
  }

  Error readInstrs(Device::Kind kind, Executable *exe) {
    if (!root.instrs())
      return Error::success();
    for (uint32_t k = 0; k < root.instrs()->size(); ++k) {
      const trx::Instr *in = root.instrs()->Get(k);
      std::string opName = str(in->name());
      std::string label =
          "instruction #" + std::to_string(k) + " ('" + opName + "')";
      OpInfoRT info;
      info.name = opName;
      info.location = str(in->location());
      if (in->value_names())
        for (const fb::String *v : *in->value_names())
          info.valueNames.push_back(str(v));
      info.scalars = str(in->scalars_text());
      info.generatedKernels = str(in->generated_kernels());
      Instr instr;
      if (in->kind() == trx::InstrKind::Free) {
        int32_t slot = in->free_slot();
        if (Error err = use(slot, label))
          return err;
        if (persistentOrInput.count(slot) && !donated(slot))
          return fail(label + " frees slot " + std::to_string(slot) +
                      ", a parameter, constant or input that is not donated");
        state[slot] = SlotState::Freed;
        if (info.valueNames.size() != 1)
          info.valueNames.assign(1, "slot " + std::to_string(slot));
        instr.kind = Instr::Kind::Free;
        instr.freeSlot = slot;
      } else if (in->kind() == trx::InstrKind::Call) {
        if (Error err = readCall(in, kind, label, info, instr, exe))
          return err;
      } else {
        return fail(label + " has unknown kind " +
                    std::to_string(int(in->kind())));
      }
      if (exe) {
        instr.op = exe->ops.size();
        exe->ops.push_back(std::move(info));
        exe->instrs.push_back(instr);
      }
    }
    return Error::success();
  }

  bool donated(int32_t slot) const {
    for (const auto *args : {root.params(), root.inputs()})
      if (args)
        for (const trx::Argument *a : *args)
          if (a->slot() == slot)
            return a->donated();
    return false;
  }

  Error readCall(const trx::Instr *in, Device::Kind kind,
                 const std::string &label, OpInfoRT &info, Instr &instr,
                 Executable *exe) {
    std::string cconv = str(in->cconv());
    size_t numTensors = in->tensor_slots() ? in->tensor_slots()->size() : 0;
    size_t numScalars = in->scalars() ? in->scalars()->size() : 0;
    size_t t = 0, s = 0;
    for (char c : cconv) {
      if (c != 't' && c != 's')
        return fail(label + " has cconv \"" + cconv +
                    "\": only 't' and 's' may appear");
      (c == 't' ? t : s)++;
    }
    if (t != numTensors || s != numScalars)
      return fail(label + " has cconv \"" + cconv + "\" for " +
                  std::to_string(numTensors) + " tensors and " +
                  std::to_string(numScalars) + " scalars");
    if (info.valueNames.size() != cconv.size())
      info.valueNames.assign(cconv.size(), "an argument");
    int32_t generated = in->generated();
    if (generated >= 0 && uint32_t(generated) >= numGenerated)
      return fail(label + " runs generated op " + std::to_string(generated) +
                  " of " + std::to_string(numGenerated));
    KernelFn fn =
        generated >= 0 ? runGeneratedOp : lookupKernel(info.name, kind);
    if (!fn)
      return makeError(
          std::string(name) + ": no kernel for op '" + info.name + "' on " +
          (kind == Device::Kind::CPU ? "cpu" : "cuda") + " in this runtime" +
          (info.location.empty() ? "" : " (at " + info.location + ")") +
          "; it was saved by a TraceIR that has one");
    instr.fn = fn;
    instr.generated = generated >= 0 ? generated : 0;
    instr.numArgs = cconv.size();
    if (exe)
      instr.argBegin = exe->args.size();
    t = s = 0;
    // The call's arguments, for checkAliasing to decode dropout's as the
    // registry does.
    ListCallArgs callArgs;
    for (size_t k = 0; k < cconv.size(); ++k) {
      char c = cconv[k];
      ArgRef a;
      if (c == 't') {
        a.slot = in->tensor_slots()->Get(t++);
        if (Error err = use(a.slot, label))
          return err;
        callArgs.addTensor();
      } else {
        ScalarValue v;
        if (Error err =
                readScalar(in->scalars()->Get(s++), label + "'s scalar", v, 0))
          return err;
        Scalar decoded = decodeScalar(v);
        callArgs.addScalar(decoded);
        if (exe) {
          a.scalar = exe->scalars.size();
          exe->scalars.push_back(std::move(decoded));
          exe->scalarValues.push_back(std::move(v));
        }
      }
      if (exe)
        exe->args.push_back(a);
    }
    size_t numResults = in->results() ? in->results()->size() : 0;
    // Every op with a kernel returns something, and every kernel writes its
    // result 0 (a call without one would write another call's).
    if (numResults == 0)
      return fail(label + " has no result");
    instr.numResults = numResults;
    if (exe)
      instr.resultBegin = exe->results.size();
    if (generated >= 0) {
      const trx::GeneratedOp *g = root.generated_ops()->Get(generated);
      if (g->num_operands() != numTensors || g->num_results() != numResults)
        return fail(label + " has " + std::to_string(numTensors) +
                    " tensors and " + std::to_string(numResults) +
                    " results; its generated op expects " +
                    std::to_string(g->num_operands()) + " and " +
                    std::to_string(g->num_results()));
    }
    std::vector<bool> fresh;
    for (size_t r = 0; r < numResults; ++r) {
      const trx::Result *res = in->results()->Get(r);
      std::string what = label + "'s result #" + std::to_string(r);
      ResultRef ref;
      ref.slot = res->slot();
      ref.fresh = res->fresh();
      if (Error err = define(ref.slot, what))
        return err;
      if (Error err = type(res->type(), what, ref.dtype, ref.shape))
        return err;
      ref.arenaOffset = res->arena_offset();
      if (Error err = checkArenaOffset(ref, what))
        return err;
      fresh.push_back(ref.fresh);
      if (exe)
        exe->results.push_back(std::move(ref));
    }
    return checkAliasing(info.name, cconv, generated >= 0, callArgs, fresh,
                         label);
  }

  /// A result's arena offset: -1, or an aligned offset of a fresh result
  /// whose bytes fit the plan's arena.
  Error checkArenaOffset(const ResultRef &ref, const std::string &what) const {
    int64_t offset = ref.arenaOffset, arena = root.arena_bytes();
    if (offset == -1)
      return Error::success();
    std::string at = what + " has arena offset " + std::to_string(offset);
    if (root.arena_alignment() == 0)
      return fail(at + ", but the file has no memory plan");
    if (!ref.fresh)
      return fail(at + ", but shares an operand's storage");
    // A read type: its bytes fit (type() checked them).
    int64_t bytes = *checkedTensorBytes(ref.shape, dtypeSize(ref.dtype));
    if (offset < 0 || offset % root.arena_alignment() != 0 || offset > arena ||
        bytes > arena - offset)
      return fail(
          at + " for " + std::to_string(bytes) + " bytes: not aligned to " +
          std::to_string(root.arena_alignment()) +
          " or not inside the arena of " + std::to_string(arena) + " bytes");
    return Error::success();
  }

  /// Checks the results' fresh flags against what buildExecutable derives
  /// from the op registry (getResultAliases): a view or in-place op returns
  /// its first operand's storage, dropout does in eval mode or with p == 0,
  /// and every other op, generated code included, writes fresh storages the
  /// runtime allocates. The flag is no mere claim about memory: a kernel
  /// writes through a fresh result's storage, which a non-fresh result of a
  /// pure op leaves null, and a view kernel replaces a fresh result's
  /// storage, which is then counted but never freed.
  Error checkAliasing(const std::string &op, const std::string &cconv,
                      bool generated, const CallArgs &args,
                      const std::vector<bool> &fresh,
                      const std::string &label) const {
    DropoutArgs dropout;
    std::string why;
    bool aliases = views::isViewOp(op) || views::isInPlaceOp(op) ||
                   (op == "dropout" && decodeDropout(args, dropout, why) &&
                    dropout.isIdentity());
    if (!aliases) {
      for (size_t r = 0; r < fresh.size(); ++r)
        if (!fresh[r])
          return fail(label + "'s result #" + std::to_string(r) +
                      " is marked as sharing an operand's storage, but op '" +
                      op + "' returns fresh tensors");
      return Error::success();
    }
    // The view and in-place kernels read argument 0 and set result 0.
    if (fresh.size() != 1 || cconv.empty() || cconv[0] != 't')
      return fail(label + " has " + std::to_string(fresh.size()) +
                  " results and cconv \"" + cconv + "\"; op '" + op +
                  "' returns its first argument (or a view of it), so it "
                  "takes a tensor first and has one result");
    if (fresh[0])
      return fail(label + "'s result is marked fresh, but op '" + op +
                  "' returns its first argument (or a view of it) here");
    if (generated)
      return fail(label +
                  " runs generated code, which writes fresh results, "
                  "but op '" +
                  op + "' returns its first argument (or a view of it) here");
    return Error::success();
  }

  std::string_view name;
  const trx::Executable &root;
  uint32_t numSlots = 0, numGenerated = 0;
  std::vector<SlotState> state;
  std::map<int32_t, bool> persistentOrInput;
};

Error fileError(std::string_view path, const std::string &msg) {
  return makeError(std::string(path) + ": " + msg);
}

} // namespace

bool traceir::looksLikeExecutableFile(std::string_view bytes) {
  return bytes.size() >= sizeof kMagic &&
         std::memcmp(bytes.data(), kMagic, sizeof kMagic) == 0;
}

Expected<std::string>
traceir::serializeExecutable(const Executable &exe,
                             const std::string &producer) {
  // FlatBuffers address with 32-bit offsets: a graph whose constants and
  // fatbin pass 2 GiB does not fit one file.
  int64_t bytes = exe.gpuBinary.size();
  for (const auto &[slot, t] : exe.constants)
    bytes += t.data.size();
  if (bytes > (int64_t(1) << 31) - (int64_t(1) << 24))
    return makeError("@" + exe.name + " holds " + std::to_string(bytes) +
                     " bytes of constants and kernels; a saved executable "
                     "holds at most 2 GiB (keep weights as parameters)");
  try {
    return Writer(exe).write(producer);
  } catch (const std::bad_alloc &) {
    return makeError("out of host memory saving @" + exe.name);
  }
}

Error traceir::saveExecutable(const Executable &exe, std::string_view path,
                              const std::string &producer) {
  auto bytes = serializeExecutable(exe, producer);
  if (!bytes)
    return bytes.takeError();
  std::string_view chunks[] = {*bytes};
  return writeFileAtomically(path, chunks);
}

Expected<std::string> traceir::readFileBytes(std::string_view path) {
  std::string p(path);
  std::unique_ptr<std::FILE, int (*)(std::FILE *)> file(
      std::fopen(p.c_str(), "rb"), &std::fclose);
  if (!file)
    return fileError(path, std::string("cannot open: ") + std::strerror(errno));
  std::string bytes;
  char buf[1 << 16];
  try {
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, file.get())) > 0)
      bytes.append(buf, n);
  } catch (const std::bad_alloc &) {
    return fileError(path, "too large to read into host memory");
  }
  if (std::ferror(file.get()))
    return fileError(path, std::string("read failed: ") + std::strerror(errno));
  return bytes;
}

/// A runtime built without CUDA has no CUDA kernels to check a CUDA file's
/// ops against: it says why once, rather than that the first op has no
/// kernel.
static Error checkCUDABackend(const trx::Executable &root,
                              std::string_view name,
                              std::optional<Device> device) {
  bool forCUDA = root.device() != trx::DeviceKind::CPU;
  if (!forCUDA && !(device && device->kind == Device::Kind::CUDA))
    return Error::success();
  Error err = cuda::checkBackend();
  if (!err)
    return err;
  return makeError(
      std::string(name) +
      (forCUDA ? " was compiled for " +
                     Device{Device::Kind::CUDA, root.device_index()}.str()
               : " cannot run on " + device->str()) +
      ": " + toString(std::move(err)));
}

Expected<std::unique_ptr<Executable>>
traceir::loadExecutableBuffer(std::string_view bytes, std::string_view name,
                              std::optional<Device> device) {
  std::vector<uint64_t> aligned;
  auto root = Reader::open(bytes, name, aligned);
  if (!root)
    return root.takeError();
  if (Error err = checkCUDABackend(**root, name, device))
    return err;
  Reader reader(name, **root);
  // Check the whole file before touching a device.
  if (Error err = reader.read(nullptr))
    return err;
  Device fileDevice{(*root)->device() == trx::DeviceKind::CPU
                        ? Device::Kind::CPU
                        : Device::Kind::CUDA,
                    (*root)->device_index()};
  if (device && device->kind != fileDevice.kind)
    return makeError(std::string(name) + " was compiled for " +
                     fileDevice.str() + "; it cannot run on " + device->str() +
                     " (compile it for that device)");
  Device target = device ? *device : fileDevice;
  if (target.index < 0)
    return makeError(std::string(name) + ": device index " +
                     std::to_string(target.index) + " is negative");
  auto exe = Executable::create(target);
  if (!exe)
    return exe.takeError();
  Reader filler(name, **root);
  if (Error err = filler.read(exe->get()))
    return err;
  Executable &e = **exe;
  if (!e.generatedOps.empty()) {
    auto chip = cudaDeviceChip(target.index);
    if (!chip)
      return chip.takeError();
    if (*chip != e.gpuChip)
      return makeError(std::string(name) + ": its generated kernels are for " +
                       e.gpuChip + ", but " + target.str() + " is " + *chip +
                       " (compile it with --chip " + *chip + ")");
    auto library = loadGpuLibrary(target.index, e.gpuBinary, e.gpuKernelNames);
    if (!library)
      return library.takeError();
    e.gpuLibrary = std::move(*library);
  }
  return exe;
}

Expected<std::unique_ptr<Executable>>
traceir::loadExecutable(std::string_view path, std::optional<Device> device) {
  auto bytes = readFileBytes(path);
  if (!bytes)
    return bytes.takeError();
  return loadExecutableBuffer(*bytes, path, device);
}

Expected<std::string> traceir::describeExecutable(std::string_view bytes,
                                                  std::string_view name) {
  std::vector<uint64_t> aligned;
  auto root = Reader::open(bytes, name, aligned);
  if (!root)
    return root.takeError();
  if (Error err = checkCUDABackend(**root, name, std::nullopt))
    return err;
  if (Error err = Reader(name, **root).read(nullptr))
    return err;
  const trx::Executable &f = **root;
  auto str = [](const fb::String *s) {
    return s ? std::string(s->data(), s->size()) : std::string();
  };
  auto typeText = [](const trx::TensorType *t) {
    Shape shape(t->shape()->begin(), t->shape()->end());
    return std::string(dtypeName(static_cast<DType>(t->dtype()))) +
           shapeToString(shape);
  };
  std::string out;
  out += "saved executable " + std::string(name) + ": @" + str(f.name()) +
         ", format " + std::to_string(getU32(bytes.data() + 8)) + "." +
         std::to_string(getU32(bytes.data() + 12)) + ", written by " +
         str(f.producer()) + "\n";
  Device dev{f.device() == trx::DeviceKind::CPU ? Device::Kind::CPU
                                                : Device::Kind::CUDA,
             f.device_index()};
  out += "  device: " + dev.str() + "\n";
  auto args = [&](const char *what,
                  const fb::Vector<fb::Offset<trx::Argument>> *list) {
    size_t n = list ? list->size() : 0;
    out += "  " + std::to_string(n) + " " + what + (n == 1 ? "" : "s") +
           (n ? ":" : "") + "\n";
    for (size_t k = 0; k < n; ++k) {
      const trx::Argument *a = list->Get(k);
      out += "    " + str(a->name()) + ": " + typeText(a->type()) +
             (a->donated() ? " (donated)" : "") + "\n";
    }
  };
  args("parameter", f.params());
  args("input", f.inputs());
  size_t outputs = f.outputs() ? f.outputs()->size() : 0;
  out += "  " + std::to_string(outputs) + " output" +
         (outputs == 1 ? "" : "s") + "\n";
  int64_t constantBytes = 0;
  size_t numConstants = f.constants() ? f.constants()->size() : 0;
  for (size_t k = 0; k < numConstants; ++k)
    if (const auto *data = f.constants()->Get(k)->data())
      constantBytes += data->size(); // absent for a constant of no bytes
  out += "  " + std::to_string(numConstants) + " constants (" +
         std::to_string(constantBytes) + " bytes)\n";
  size_t calls = 0, frees = 0;
  std::map<std::string, size_t> perOp;
  if (f.instrs())
    for (const trx::Instr *in : *f.instrs()) {
      if (in->kind() == trx::InstrKind::Free) {
        ++frees;
      } else {
        ++calls;
        ++perOp[str(in->name())];
      }
    }
  out += "  " + std::to_string(calls) + " ops, " + std::to_string(frees) +
         " frees, " + std::to_string(f.num_slots()) + " values\n";
  std::string list;
  for (const auto &[op, n] : perOp)
    list += (list.empty() ? "" : ", ") + op + " x" + std::to_string(n);
  if (!list.empty())
    out += "  ops: " + list + "\n";
  out += "  predicted peak: " + std::to_string(f.predicted_peak_bytes()) +
         " bytes" + (f.prediction_is_lower_bound() ? " (a lower bound)" : "") +
         "\n";
  if (f.arena_alignment() > 0)
    out += "  memory plan: one arena of " + std::to_string(f.arena_bytes()) +
           " bytes, aligned to " + std::to_string(f.arena_alignment()) + "\n";
  if (const trx::GpuBinary *gpu = f.gpu_binary()) {
    size_t ops = f.generated_ops() ? f.generated_ops()->size() : 0;
    out +=
        "  generated kernels: " + std::to_string(ops) + " ops, " +
        std::to_string(gpu->kernel_names() ? gpu->kernel_names()->size() : 0) +
        " kernels, fatbin for " + str(gpu->chip()) + " (" +
        std::to_string(gpu->fatbin() ? gpu->fatbin()->size() : 0) + " bytes)\n";
  }
  out += std::string("  runtime: CPU GEMM ") + cpu::gemmBackend() + "\n";
  return out;
}
