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

def PlanMemory : Pass<"plan-memory", "::mlir::trace::GraphOp"> {
  let summary = "Record an arena offset for every storage a run allocates";
  let description = [{
    Runs the MemoryPlan analysis (`Analysis/MemoryPlan.h`) and records its
    placement: `trace.arena_bytes` and `trace.arena_alignment` on the graph,
    and on each `trace.pyop` with planned results `trace.arena_offsets`, one
    offset per result (-1 for a result not in the arena). A storage is
    planned when the run allocates it, its size is static and the graph
    does not return it; its views and in-place results share its offset.
    Lifetimes follow the graph's `trace.free` ops, so run it after
    `--free-dead-tensors` (without frees every storage lives to the end).
    Returned values are allocated apart, for the caller to take; storages
    of dynamic shape are left to the allocator. The verifier checks a
    recorded plan: offsets aligned and inside the arena, no two storages
    alive at once overlapping.

    Idempotent: an existing plan is dropped and made again (the same).

    With `budget=N`, a graph whose arena would take more than N bytes fails
    the pass with the bytes it needs and its lower bound (the most bytes
    alive at once in its order: below that budget, no placement fits, and
    `--reorder-for-memory` first may lower it), and is left unplanned.

    Example (after `--free-dead-tensors`):

    ```mlir
    trace.graph @g(%x: tensor<1024xf32>) -> tensor<1024xf32>
        attributes {trace.arena_alignment = 64 : i64,
                    trace.arena_bytes = 8192 : i64} {
      %0 = pyop "exp"(%x) {trace.arena_offsets = array<i64: 0>} : ...
      %1 = pyop "neg"(%0) {trace.arena_offsets = array<i64: 4096>} : ...
      free %0 : tensor<1024xf32>
      %2 = pyop "tanh"(%1) : ...
      free %1 : tensor<1024xf32>
      ret %2 : tensor<1024xf32>
    }
    ```
  }];
  let dependentDialects = ["::mlir::trace::TraceDialect"];
  let options = [
    Option<"alignment", "alignment", "int64_t",
           /*default=*/"64",
           "Bytes every offset is a multiple of (a power of two; 64 is the "
           "CPU allocator's, 256 cudaMalloc's)">,
    Option<"budget", "budget", "int64_t", /*default=*/"0",
           "Fail, saying by how much, where a graph's arena would take more "
           "than this many bytes (0: no budget)">,
  ];
  let statistics = [
    Statistic<"numPlanned", "num-planned", "Number of storages planned">,
    Statistic<"arenaBytes", "arena-bytes", "Bytes of the arenas planned">,
  ];
}

def Reinplace : Pass<"reinplace", "::mlir::trace::GraphOp"> {
  let summary = "Run elementwise ops in the storage of an operand that dies "
                "there";
  let description = [{
    An elementwise op makes a fresh result while its operand is still
    alive, so both storages are held while it runs, even where nothing
    reads the operand afterwards. A training step's backward is full of
    such chains (GELU's derivative is eight elementwise ops on tensors of
    one size), and their temporaries sit on top of every saved activation
    at the step's peak. As torch.fx's `reinplace` pass, this rewrites a
    pure elementwise op into its in-place form (`exp` -> `exp_`, `mul` ->
    `mul_`; Ops.def's rows, run by the same elementwise kernels) where its
    first argument's storage dies at the op, so the result takes that
    storage over and no new one is made.

    An op is rewritten when:
    - its in-place form exists (OpRegistry's lookupInPlaceVariant: same
      arguments, same elementwise kernels) and its result has its first
      argument's type, so the in-place op computes the same values;
    - its first argument's storage is allocated by the run (not a
      parameter, input or constant), has a static size, is not returned
      and no unknown op uses it, and this op is its last use;
    - the first argument covers its storage exactly, contiguously
      (ViewAlgebra's layout), as a fresh result would, so what later ops
      read is laid out as before, and the storage is held no longer;
    - no other argument of the op is another value of that storage (a
      transposed view of it would be read after being written).

    Of those, it keeps the rewrites the graph's peaks need: both peaks
    `--reorder-for-memory` prices (the total live bytes, and the arena's:
    the aligned bytes `--plan-memory` places), each storage freed after its
    last use. A rewrite joins two storages into one, which the plan must
    keep at one offset over both lifetimes; where the bytes alive at its op
    stay under the peaks that all rewrites reach, it lowers nothing and
    only constrains the placement, so it is left out (unless leaving it out
    raises a peak after all, when all are kept).

    Each op is decided from the graph as it came (a chain of such ops
    becomes a chain of in-place ops on one storage). Run it after
    `--reorder-for-memory`, which picks the order whose last uses this
    reads, and before `--free-dead-tensors` and `--plan-memory`: it refuses
    a graph that has `trace.free` ops or a plan, whose frees and offsets the
    new aliasing would break.

    Example:

    ```mlir
    %0 = pyop "mul"(%x, %x) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
    %1 = pyop "exp"(%0) : (tensor<64xf32>) -> tensor<64xf32>
    %2 = pyop "mul"(%1, 0.5) : (tensor<64xf32>) -> tensor<64xf32>
    ret %2 : tensor<64xf32>
    ```

    becomes (`%x`, an input, is not written; `%0` dies at `exp`, `%1` at
    the second `mul`):

    ```mlir
    %0 = pyop "mul"(%x, %x) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
    %1 = pyop "exp_"(%0) : (tensor<64xf32>) -> tensor<64xf32>
    %2 = pyop "mul_"(%1, 0.5) : (tensor<64xf32>) -> tensor<64xf32>
    ret %2 : tensor<64xf32>
    ```
  }];
  let dependentDialects = ["::mlir::trace::TraceDialect"];
  let options = [
    Option<"alignment", "alignment", "int64_t", /*default=*/"64",
           "What --plan-memory will round each storage up to, for the "
           "arena's peak (a power of two)">,
  ];
  let statistics = [
    Statistic<"numReinplaced", "num-reinplaced",
              "Number of ops rewritten into their in-place form">,
    Statistic<"bytesReused", "bytes-reused",
              "Bytes of the results that took over a dying operand's "
              "storage">,
  ];
}

def ReorderForMemory : Pass<"reorder-for-memory", "::mlir::trace::GraphOp"> {
  let summary = "Reorder a graph's ops to lower its peaks of live bytes";
  let description = [{
    The traced order is one order among many the graph's dependences allow,
    and often not the one that needs the least memory: a trace that builds
    two large temporaries before reducing either holds both at once. This
    pass reorders the ops of each `trace.graph` to lower two peaks, both
    with every storage freed right after its last use, which is what
    `--free-dead-tensors` then makes true:

    - the total peak of live bytes as StorageLiveness counts it (storages
      the run allocates, from their op to their last use, returned values
      included; parameters, inputs and constants not counted): what the
      process holds;
    - the arena's peak, MemoryPlan's lower bound: the most bytes, each
      storage rounded up to `alignment`, of the storages `--plan-memory`
      places (static shape, allocated by the run, not returned) alive at
      once: what the arena must hold. Returned values are allocated apart
      and cost it nothing.

    An order is chosen by the total peak first, then by the arena's; and
    neither may rise above the traced order's: an order that lowers one and
    raises the other is not taken. On a training step (forward and backward,
    returning every gradient) the gradients alive at the end fix the total
    peak whatever the order, and the arena's is what reordering can lower.

    Kept, whatever the order: SSA def-use; for each storage (a value with
    its views and in-place results), a read through any of its values stays
    on its side of every write to it, and writes stay in order (an in-place
    op writes the operand its result is; another mutating op, such as
    training batch norm, any operand); random ops and unknown ops keep their
    relative order. An unknown op (not in the op registry) is taken to read
    and write every operand's storage, and its results to be any of them
    from then on. `trace.ret` stays last; a `trace.constant` moves like any
    op (it has no operands and costs nothing in the peak).

    A few near-linear schedulers propose orders: a list scheduler whose
    ready ops are keyed by the bytes they free minus the bytes they
    allocate, with a look-ahead over a few successors they make ready (ties
    to the traced order); the same key with ties to the op made ready last,
    which finishes one branch before starting the next; and depth-first
    post-orders from the graph's sinks, heaviest operand subgraph first (as
    XLA's DFS scheduler) or in operand order. The two list schedulers run
    twice, keyed by the total bytes (ties by the arena's) and by the arena's
    (ties by the total), where a returned value costs nothing to make: an
    op that reads a saved activation last and makes a returned gradient
    frees arena bytes, and is preferred once its operands exist. Each order
    is priced exactly, both peaks; the traced order is kept unless one is
    strictly better as above, so neither peak ever rises.

    Run it before `--free-dead-tensors` and `--plan-memory`: it refuses a
    graph that has `trace.free` ops or a plan (`trace.arena_bytes`), since
    another order would break both. With `budget` set, it fails when the
    best order found needs more bytes than that.

    Example: two branches that each make a 4 KiB temporary and reduce it
    to 4 bytes,

    ```mlir
    %0 = pyop "exp"(%x) : (tensor<1024xf32>) -> tensor<1024xf32>
    %1 = pyop "exp"(%y) : (tensor<1024xf32>) -> tensor<1024xf32>
    %2 = pyop "sum"(%0) : (tensor<1024xf32>) -> tensor<f32>
    %3 = pyop "sum"(%1) : (tensor<1024xf32>) -> tensor<f32>
    %4 = pyop "add"(%2, %3) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    ret %4 : tensor<f32>
    ```

    peak at 8 KiB with both temporaries alive; reordered, one branch ends
    before the other starts (4 KiB and 4 bytes):

    ```mlir
    %0 = pyop "exp"(%x) : (tensor<1024xf32>) -> tensor<1024xf32>
    %2 = pyop "sum"(%0) : (tensor<1024xf32>) -> tensor<f32>
    %1 = pyop "exp"(%y) : (tensor<1024xf32>) -> tensor<1024xf32>
    %3 = pyop "sum"(%1) : (tensor<1024xf32>) -> tensor<f32>
    %4 = pyop "add"(%2, %3) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    ret %4 : tensor<f32>
    ```
  }];
  let dependentDialects = ["::mlir::trace::TraceDialect"];
  let options = [
    Option<"alignment", "alignment", "int64_t", /*default=*/"64",
           "What --plan-memory will round each storage up to, for the "
           "arena's peak (a power of two)">,
    Option<"budget", "budget", "int64_t", /*default=*/"0",
           "Fail when the best order found needs more live bytes than this "
           "(0: no budget)">,
  ];
  let statistics = [
    Statistic<"numReordered", "num-reordered", "Number of graphs reordered">,
    Statistic<"peakBytesBefore", "peak-bytes-before",
              "Predicted peak live bytes of the traced orders">,
    Statistic<"peakBytesAfter", "peak-bytes-after",
              "Predicted peak live bytes of the orders kept">,
    Statistic<"arenaBytesBefore", "arena-bytes-before",
              "Arena lower bounds (aligned planned bytes) of the traced "
              "orders">,
    Statistic<"arenaBytesAfter", "arena-bytes-after",
              "Arena lower bounds of the orders kept">,
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
