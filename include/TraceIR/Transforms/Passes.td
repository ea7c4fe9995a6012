//===- Passes.td - TraceIR transformation passes -----------*- tablegen -*-===//

#ifndef TRACEIR_TRANSFORMS_PASSES_TD
#define TRACEIR_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def FreeDeadTensors : Pass<"free-dead-tensors", "::mlir::trace::GraphOp"> {
  let summary = "Insert trace.free right after each storage's last use";
  let description = [{
    Frees every intermediate tensor at the earliest legal point, which the
    2017 interpreter never did. A storage is a value with everything that
    aliases it (views, in-place results, tuple elements); its `trace.free` goes
    right after the last op that uses any of them, or right after its
    definition when nothing does. Parameters, constants, inputs that are not
    `trace.donated` and returned storages are never freed. Results of ops the
    registry does not know may alias their operands: they keep those operands
    alive and are never freed themselves.

    Idempotent: storages that already have a `trace.free` are skipped. Run it
    last: a later CSE could merge a recomputation into a freed value.

    Example:

    ```mlir
    %0 = pyop "relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    %1 = pyop "neg"(%0) : (tensor<4xf32>) -> tensor<4xf32>
    ret %1 : tensor<4xf32>
    ```

    becomes

    ```mlir
    %0 = pyop "relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    %1 = pyop "neg"(%0) : (tensor<4xf32>) -> tensor<4xf32>
    free %0 : tensor<4xf32>
    ret %1 : tensor<4xf32>
    ```
  }];
  let dependentDialects = ["::mlir::trace::TraceDialect"];
  let statistics = [
    Statistic<"numFrees", "num-frees", "Number of trace.free ops inserted">,
  ];
}

def TraceSplitOps : Pass<"trace-split-ops", "::mlir::ModuleOp"> {
  let summary = "Replace each trace.graph by one graph per compute op";
  let description = [{
    Prepares a graph for the runtime's generated kernels: every `trace.pyop`
    the op registry knows whose results are all fresh storages (no view, no
    in-place op), that neither writes into an operand nor draws random
    numbers, and whose types are static becomes a graph of its own,
    `@<graph>__op<k>_<name>`, where `k` counts the original graph's pyops
    in order. The new graph takes the op's tensor operands, in order, as
    inputs `t0`, `t1`, ... and returns its results. Other ops are not
    copied: the runtime keeps running them itself. The original graphs are
    erased.

    After `--convert-trace-to-linalg` and the GPU pipeline, each such graph
    is one host function of kernel launches that reads exactly the op's
    operands and writes its results; the runtime (`trace-run --gpu-binary`)
    launches those kernels in place of its own for op `k`.

    Example:

    ```mlir
    trace.graph @g(%x: tensor<2x3xf32> {trace.input = "x"}) -> tensor<6xf32> {
      %0 = pyop "relu"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
      %1 = pyop "view"(%0, [6]) : (tensor<2x3xf32>) -> tensor<6xf32>
      ret %1 : tensor<6xf32>
    }
    ```

    becomes

    ```mlir
    trace.graph @g__op0_relu(%t0: tensor<2x3xf32> {trace.input = "t0"}) -> tensor<2x3xf32> {
      %0 = pyop "relu"(%t0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
      ret %0 : tensor<2x3xf32>
    }
    ```
  }];
}

#endif // TRACEIR_TRANSFORMS_PASSES_TD
