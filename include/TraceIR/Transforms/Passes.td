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

#endif // TRACEIR_TRANSFORMS_PASSES_TD
