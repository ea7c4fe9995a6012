//===- Passes.td - TraceIR conversion passes ---------------*- tablegen -*-===//

#ifndef TRACEIR_CONVERSION_PASSES_TD
#define TRACEIR_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertTraceToLinalg : Pass<"convert-trace-to-linalg", "::mlir::ModuleOp"> {
  let summary = "Lower trace.graph to a func.func on tensors (linalg, tensor, "
                "arith, math)";
  let description = [{
    The entry of the compiled pipelines (GPU and CPU): each `trace.graph`
    becomes a `func.func` of the same name and type whose arguments keep their
    `trace.param` / `trace.input` names. `trace.ret` becomes `func.return`,
    `trace.constant` becomes `arith.constant`, and `trace.free` is erased:
    on tensors, bufferization decides where memory lives and dies.

    Each `trace.pyop` is lowered by the lowering registered for its name
    (elementwise ops with PyTorch broadcasting as `linalg.generic`;
    reductions, softmax and layer_norm as generic reductions; the matmul
    family as `linalg.matmul` / `linalg.batch_matmul` (+ `linalg.transpose`);
    views as `tensor.expand_shape` / `collapse_shape` / `extract_slice` and
    `linalg.transpose`; embedding as a gather; scaled_dot_product_attention
    as two batched contractions around a masked softmax; lstm and gru as an
    `scf.for` over the time steps whose tensor `iter_args` carry the states
    and the output). Type promotion follows the result type the op registry
    inferred.

    Only static shapes are lowered: an op with a dynamic or unranked operand
    or result, an unknown name, or arguments a lowering does not handle
    (e.g. training dropout) stays a `trace.pyop` inside the `func.func` and
    the pass emits a remark "not lowered to linalg: <why>" on it. The pass
    still succeeds so the result can be inspected; the compile pipelines
    reject the remaining pyops.

    Example:

    ```mlir
    trace.graph @g(%x: tensor<2x3xf32> {trace.input = "x"}) -> tensor<2x3xf32> {
      %0 = pyop "relu"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
      ret %0 : tensor<2x3xf32>
    }
    ```

    becomes

    ```mlir
    func.func @g(%x: tensor<2x3xf32> {trace.input = "x"}) -> tensor<2x3xf32> {
      %0 = tensor.empty() : tensor<2x3xf32>
      %1 = linalg.generic {...} ins(%x : tensor<2x3xf32>) outs(%0 : tensor<2x3xf32>) {
      ^bb0(%in: f32, %out: f32):
        %cst = arith.constant 0.000000e+00 : f32
        %2 = arith.maximumf %in, %cst : f32
        linalg.yield %2 : f32
      } -> tensor<2x3xf32>
      return %1 : tensor<2x3xf32>
    }
    ```
  }];
  let dependentDialects = [
    "::mlir::func::FuncDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect", "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect", "::mlir::scf::SCFDialect"
  ];
  let statistics = [
    Statistic<"numLowered", "num-lowered", "Number of trace.pyop ops lowered">,
    Statistic<"numLeft", "num-left", "Number of trace.pyop ops left as they were">,
  ];
}

//===----------------------------------------------------------------------===//
// The passes of --trace-lower-to-gpu and --trace-lower-to-cpu that upstream
// MLIR has no equivalent of (lib/Conversion/Pipelines). They are declared
// here so each can run alone, under its flag, in a lit test of its own.
//===----------------------------------------------------------------------===//

def TraceCheckGpuTarget : Pass<"trace-check-gpu-target", "::mlir::ModuleOp"> {
  let summary = "Check --trace-lower-to-gpu's chip, features, format and "
                "toolkit options";
  let description = [{
    The first pass of `--trace-lower-to-gpu`. `nvvm-attach-target` accepts
    any chip name and LLVM only warns about one it does not know, after which
    ptxas fails far from the cause; a PTX version older than the chip needs
    aborts the process inside the NVPTX backend; a wrong toolkit path fails
    inside `gpu-module-to-binary`. This pass checks the options up front and
    fails with one error naming the bad option, before any pass has changed
    the module. It never changes the module.

    Checked: `chip` is a processor LLVM's NVPTX backend knows; a `+ptxNN` in
    `features` is at least the PTX version the chip needs (for the chips of
    the last generations); `format` is `fatbin`, `bin` or `isa`; with
    `serialize`, `toolkit` is a directory holding the tools the format needs
    (`bin/ptxas` for `bin` and `fatbin`, also `bin/fatbinary` for `fatbin`).
    The options and their defaults are the pipeline's.

    Example: on any module,

    ```mlir
    // trace-opt --trace-check-gpu-target="chip=sm_999"
    module {}
    ```

    fails with `error: trace-lower-to-gpu: unsupported chip 'sm_999': LLVM's
    NVPTX backend does not know it (expected a name such as sm_80 or
    sm_90)`.
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90\"",
           "NVPTX target chip, e.g. sm_80">,
    Option<"features", "features", "std::string", /*default=*/"\"+ptx80\"",
           "NVPTX features, e.g. +ptx80">,
    Option<"format", "format", "std::string", /*default=*/"\"fatbin\"",
           "Object format: fatbin (cubin + PTX), bin (cubin) or isa (PTX)">,
    Option<"toolkit", "toolkit", "std::string",
           /*default=*/"\"/usr/local/cuda\"",
           "CUDA toolkit root (bin/ptxas, bin/fatbinary)">,
    Option<"serialize", "serialize", "bool", /*default=*/"true",
           "Whether the pipeline serializes kernels (runs the toolkit's "
           "tools); without it the toolkit is not checked">,
  ];
}

def TraceMergeGpuModules : Pass<"trace-merge-gpu-modules", "::mlir::ModuleOp"> {
  let summary = "Move every outlined kernel into one gpu.module";
  let description = [{
    `gpu-kernel-outlining` makes one `gpu.module` per launch, and each
    `gpu.module` serializes to a `gpu.binary` of its own. This pass moves
    every kernel into the first `gpu.module`, renamed `trace_kernels` (unless
    that symbol is taken), so the whole program is one fatbin that one
    `cuModuleLoadData` call loads. Each kernel is renamed after its old
    module, whose name outlining already made unique, and every
    `gpu.launch_func` is pointed at the new symbol.

    With `fingerprint` (the pipeline's per-op mode, whose binaries the runtime
    loads apart from the IR that launches them), each kernel's name also gets
    `_<hash>`: a hash of the host function that launches it (grids,
    arguments) and the kernels it launches. A fatbin compiled from another
    graph, shape or tiling then lacks the names the runtime looks up, and
    fails to load instead of being launched with the wrong grid. With
    `fingerprint`, a single `gpu.module` is renamed too.

    A `gpu.module` holding anything but one `gpu.func` (which outlining never
    makes) and a launch of a kernel that does not exist are errors.

    Example:

    ```mlir
    module attributes {gpu.container_module} {
      func.func @f(%m: memref<8xf32>) {
        %c1 = arith.constant 1 : index
        gpu.launch_func @f_kernel::@f_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<8xf32>)
        gpu.launch_func @f_kernel_0::@f_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<8xf32>)
        return
      }
      gpu.module @f_kernel {
        gpu.func @f_kernel(%m: memref<8xf32>) kernel { gpu.return }
      }
      gpu.module @f_kernel_0 {
        gpu.func @f_kernel(%m: memref<8xf32>) kernel { gpu.return }
      }
    }
    ```

    becomes

    ```mlir
    module attributes {gpu.container_module} {
      func.func @f(%m: memref<8xf32>) {
        %c1 = arith.constant 1 : index
        gpu.launch_func @trace_kernels::@f_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<8xf32>)
        gpu.launch_func @trace_kernels::@f_kernel_0 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<8xf32>)
        return
      }
      gpu.module @trace_kernels {
        gpu.func @f_kernel(%m: memref<8xf32>) kernel { gpu.return }
        gpu.func @f_kernel_0(%m: memref<8xf32>) kernel { gpu.return }
      }
    }
    ```
  }];
  let options = [
    Option<"fingerprint", "fingerprint", "bool", /*default=*/"false",
           "Suffix each kernel's name with a hash of its host function and "
           "the kernels that function launches (per-op mode)">,
  ];
}

def TraceInnermostDimFirst
    : Pass<"trace-innermost-dim-first", "::mlir::func::FuncOp"> {
  let summary = "Reverse the dimensions of each scf.parallel, so the "
                "innermost maps onto threadIdx.x";
  let description = [{
    `gpu-map-parallel-loops` gives dimension 0 of a parallel loop nest to
    `threadIdx.x` (and `blockIdx.x`), whose neighbouring threads run
    together. With row-major buffers that must be the innermost dimension,
    whose neighbours are neighbours in memory, or every warp's loads and
    stores scatter over 32 rows instead of falling into a few cache lines.
    The dimensions of a parallel loop commute, so reversing them only swaps
    which induction variable each bound drives. Loops of one dimension and
    loops with reductions (`init` values) are left alone.

    Example:

    ```mlir
    scf.parallel (%i, %j) = (%c0, %c0) to (%c64, %c128) step (%c1, %c1) {
      %v = memref.load %m[%i, %j] : memref<64x128xf32>
      ...
    }
    ```

    becomes

    ```mlir
    scf.parallel (%j, %i) = (%c0, %c0) to (%c128, %c64) step (%c1, %c1) {
      %v = memref.load %m[%i, %j] : memref<64x128xf32>
      ...
    }
    ```
  }];
}

def TraceSerialHostComputeToGpu
    : Pass<"trace-serial-host-compute-to-gpu", "::mlir::func::FuncOp"> {
  let summary = "Move memory accesses left on the host into one-thread "
                "launches";
  let description = [{
    What `convert-linalg-to-parallel-loops` leaves outside parallel loops
    runs on the host: a reduction into a 0-d result (the sum of every
    element, the max of a 1-D softmax) becomes a plain `scf.for` nest of
    loads and stores, or a bare store of its initial value. On a GPU that
    memory is device memory, which the host cannot touch. So each maximal run
    of consecutive ops in the function's body that holds a `memref.load`, a
    `memref.store` or a region op containing one (with the side-effect-free
    arithmetic between them) is moved into a `gpu.launch` of one thread. Constants of the run
    stay before it, on the host; a run whose other values are used after it
    stays on the host (and the runtime's launch-plan reader refuses it). A
    region op that itself launches kernels (an RNN's time loop) is
    orchestration and stays on the host.

    Correct but serial: a tree reduction across threads would be the fast
    form, and is not written yet.

    Example:

    ```mlir
    %cst = arith.constant 0.0 : f32
    memref.store %cst, %out[] : memref<f32>
    ```

    becomes

    ```mlir
    %cst = arith.constant 0.0 : f32
    %c1 = arith.constant 1 : index
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
      memref.store %cst, %out[] : memref<f32>
      gpu.terminator
    }
    ```
  }];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect", "::mlir::arith::ArithDialect"
  ];
}

def TraceCheckLowered : Pass<"trace-check-lowered", "::mlir::ModuleOp"> {
  let summary = "Fail on the trace.pyop ops --convert-trace-to-linalg left";
  let description = [{
    `--convert-trace-to-linalg` leaves an op it cannot lower as a `trace.pyop`
    (with a remark saying why) and succeeds, so its output can be inspected.
    The compile pipelines cannot go on from there: this pass makes each
    remaining `trace.pyop` an error that names the op and the pipeline
    (option `pipeline`, the prefix of the message) at the op's location. A
    module without `trace.pyop` (linalg on tensors, as the pipelines also
    accept) is left alone.

    Example:

    ```mlir
    func.func @g(%x: tensor<?xf32>) -> tensor<?xf32> {
      %0 = trace.pyop "relu"(%x) : (tensor<?xf32>) -> tensor<?xf32>
      return %0 : tensor<?xf32>
    }
    ```

    fails with `error: trace-lower-to-gpu: op 'relu' was not lowered to
    linalg, so it cannot be compiled (see the remark of
    --convert-trace-to-linalg)` on the `trace.pyop`.
  }];
  let options = [
    Option<"pipeline", "pipeline", "std::string",
           /*default=*/"\"trace-check-lowered\"",
           "The pipeline named in the error message">,
  ];
}

def TraceDropUnlowered : Pass<"trace-drop-unlowered", "::mlir::ModuleOp"> {
  let summary = "Erase the per-op functions whose op was not lowered to "
                "linalg";
  let description = [{
    In per-op mode (after `--trace-split-ops` and
    `--convert-trace-to-linalg`) each `func.func` is one op's host code. A
    function that still holds a `trace.pyop` is one whose op did not lower;
    the runtime keeps running that op with its own kernel, so the function
    is erased rather than failing the pipeline (the remark of
    `--convert-trace-to-linalg` says why it did not lower). Functions
    without `trace.pyop` are kept.

    Example:

    ```mlir
    func.func @g__op0_relu(%t0: tensor<?xf32>) -> tensor<?xf32> {
      %0 = trace.pyop "relu"(%t0) : (tensor<?xf32>) -> tensor<?xf32>
      return %0 : tensor<?xf32>
    }
    func.func @g__op1_neg(%t0: tensor<8xf32>) -> tensor<8xf32> {
      ...
    }
    ```

    becomes

    ```mlir
    func.func @g__op1_neg(%t0: tensor<8xf32>) -> tensor<8xf32> {
      ...
    }
    ```
  }];
}

#endif // TRACEIR_CONVERSION_PASSES_TD
