// An MLP-like graph on the CPU, with values worked out by hand: linear
// (x @ W^T + b), relu, softmax over dim 1, a transposed view as an output,
// and a keepdim sum broadcast back. With and without freeing, the outputs
// agree and the measured peak equals the analysis' prediction.
// RUN: %st write %t.params.st fc.weight=f32[4,3]:1,0,0,0,1,0,0,0,1,1,1,1 fc.bias=f32[4]:0,0,0,-100
// RUN: %st write %t.inputs.st x=f32[2,3]:1,2,3,-1,-2,-3
// RUN: trace-opt %s -free-dead-tensors -o %t.freed.mlir
// RUN: trace-run %t.freed.mlir --params %t.params.st --inputs %t.inputs.st --outputs %t.out.st --memory-report --check-frees | FileCheck %s --check-prefix=FREED
// RUN: %st dump %t.out.st | %fpcheck %s
// RUN: trace-run %s --params %t.params.st --inputs %t.inputs.st --outputs %t.out2.st --memory-report=json | FileCheck %s --check-prefix=KEPT
// RUN: %st dump %t.out2.st | %fpcheck %s
// Planned (--plan-memory): the same bytes out, from one arena.
// RUN: trace-opt %s -free-dead-tensors -plan-memory -o %t.planned.mlir
// RUN: trace-run %t.planned.mlir --params %t.params.st --inputs %t.inputs.st --outputs %t.out3.st --memory-report=json --check-frees | FileCheck %s --check-prefix=PLANNED
// RUN: cmp %t.out.st %t.out3.st

// Row 0: relu([1, 2, 3, -94]) = [1, 2, 3, 0]; softmax = [0.0871, 0.2369,
// 0.6439, 0.0321]. Row 1 is all zeros after relu: softmax = 0.25 each.
// FP: output0: f32[2, 4] = 0.424289 0.723766 1.53783 0.314117 0.587144 0.736883 1.14391 0.532059
// FP: output1: f32[4, 2] = 0.0871443 0.25 0.236883 0.25 0.643914 0.25 0.0320586 0.25

// Freed: the peak is at the add, with the softmax (kept alive by the
// returned transposed view), its sum and the result live: 32 + 16 + 32
// bytes, exactly what the analysis predicts.
// FREED: memory on cpu: peak 80 bytes measured, 80 bytes predicted (equal)
// FREED-SAME: 4 frees
// Without frees the 2017 interpreter's leak: every intermediate stays.
// KEPT: {"devices": [{"device": "cpu", "peak_bytes": 144, "predicted_peak_bytes": 144, "prediction_is_lower_bound": false,
// KEPT-SAME: "frees": 0, "planned_arena_bytes": 0, "arena_scratch_bytes": 0, "lower_bound_bytes": 0, "allocations": 5, "arena_allocations": 0, "output_allocations": 2}]}
// Planned: linear's and relu's results (32 bytes each, rounded to 64) are
// alive at once, the bound; sum's reuses linear's bytes. One allocator call
// for the arena and one per output (softmax's storage, returned through
// the view, and add's); the input is read where it lies.
// PLANNED: "peak_bytes": 80, "predicted_peak_bytes": 80,
// PLANNED-SAME: "frees": 4, "planned_arena_bytes": 128, "arena_scratch_bytes": 0, "lower_bound_bytes": 128, "allocations": 3, "arena_allocations": 1, "output_allocations": 2}]}

trace.graph @mlp(%w: tensor<4x3xf32> {trace.param = "fc.weight"}, %b: tensor<4xf32> {trace.param = "fc.bias"},
                 %x: tensor<2x3xf32> {trace.input = "x", trace.donated}) -> (tensor<2x4xf32>, tensor<4x2xf32>) {
  %0 = pyop "linear"(%x, %w, %b) : (tensor<2x3xf32>, tensor<4x3xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %1 = pyop "relu"(%0) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %2 = pyop "softmax"(%1, 1) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %3 = pyop "t"(%2) : (tensor<2x4xf32>) -> tensor<4x2xf32>
  %4 = pyop "sum"(%2, (0,), True) : (tensor<2x4xf32>) -> tensor<1x4xf32>
  %5 = pyop "add"(%2, %4) : (tensor<2x4xf32>, tensor<1x4xf32>) -> tensor<2x4xf32>
  ret %5, %3 : tensor<2x4xf32>, tensor<4x2xf32>
}
